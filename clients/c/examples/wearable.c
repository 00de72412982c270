/*
 * wearable: the reference client's worked example. Opens a tty, sends start_workout, end_workout and
 * share_workout (twitter) with fresh ids, one at a time, and prints every line it sends and receives.
 *
 *   wearable [--timeout-ms N] TTY
 *
 * Exits 0 when all three were answered ok, 1 when one was refused or never answered, 64 on usage errors.
 */
#include "workout_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MAX_TRIES 5

static uint32_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

/* Raw mode: no echo, no line editing, no CR/LF translation, 8 data bits. */
static int make_raw(int fd)
{
    struct termios t;
    if (tcgetattr(fd, &t) != 0) {
        return -1;
    }
    t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
    t.c_oflag &= ~(tcflag_t)OPOST;
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB);
    t.c_cflag |= CS8 | CREAD | CLOCAL;
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    return tcsetattr(fd, TCSANOW, &t);
}

/* Ids fresh across runs: the hub remembers the last 1024 ids per device, so a reused id gets an old reply. */
static int64_t fresh_id(void)
{
    unsigned char bytes[6];
    int64_t id = 0;
    size_t i;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0 && read(fd, bytes, sizeof bytes) == (ssize_t)sizeof bytes) {
        for (i = 0; i < sizeof bytes; i++) {
            id = (id << 8) | bytes[i];
        }
    } else {
        id = (int64_t)time(NULL) * 100000 + (int64_t)getpid();
    }
    if (fd >= 0) {
        close(fd);
    }
    return id + 1;
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Sends one command until it is answered; returns 1 for an ok reply, 0 otherwise. */
static int run_command(int fd, wc_parser *parser, const char *line, size_t len, int64_t id, uint32_t timeout_ms)
{
    wc_retry retry;
    wc_retry_init(&retry, id, timeout_ms, MAX_TRIES, now_ms());
    for (;;) {
        wc_action action = wc_retry_poll(&retry, now_ms());
        struct pollfd pfd;
        int32_t wait;
        int ready;
        if (action == WC_ACT_SEND) {
            printf("> %.*s (try %u)\n", (int)(len - 1), line, (unsigned)retry.tries + 1u);
            fflush(stdout);
            if (write_all(fd, line, len) != 0) {
                perror("wearable: write");
                return 0;
            }
            wc_retry_sent(&retry, now_ms());
            continue;
        }
        if (action == WC_ACT_GIVE_UP) {
            fprintf(stderr, "wearable: no answer to id %lld after %d tries\n", (long long)id, MAX_TRIES);
            return 0;
        }
        wait = (int32_t)(retry.deadline - now_ms());
        pfd.fd = fd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        ready = poll(&pfd, 1, wait < 0 ? 0 : (int)wait);
        if (ready < 0 && errno != EINTR) {
            perror("wearable: poll");
            return 0;
        }
        if (ready > 0) {
            uint8_t buf[256];
            ssize_t n = read(fd, buf, sizeof buf);
            size_t used = 0;
            if (n < 0 && errno != EINTR && errno != EAGAIN) {
                perror("wearable: read");
                return 0;
            }
            if (n == 0) {
                fprintf(stderr, "wearable: the tty closed\n");
                return 0;
            }
            while (n > 0 && used < (size_t)n) {
                wc_reply reply;
                int got;
                used += wc_parser_feed(parser, buf + used, (size_t)n - used, &reply, &got);
                if (!got) {
                    continue;
                }
                printf("< %.*s\n", (int)parser->last_len, parser->line);
                fflush(stdout);
                switch (wc_retry_on_reply(&retry, &reply, now_ms())) {
                case WC_ACT_DONE:
                    if (!reply.ok) {
                        fprintf(stderr, "wearable: id %lld refused: %s\n", (long long)id, reply.error_code);
                    }
                    return reply.ok;
                case WC_ACT_GIVE_UP:
                    fprintf(stderr, "wearable: id %lld still %s after %d tries\n", (long long)id,
                            reply.error_code, MAX_TRIES);
                    return 0;
                default:
                    if (wc_reply_is_error(&reply, "rate_limited")) {
                        printf("  rate limited: resending in %lu ms\n", (unsigned long)reply.retry_after_ms);
                    }
                    break;
                }
            }
        }
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: wearable [--timeout-ms N] TTY\n");
    return 64;
}

int main(int argc, char **argv)
{
    uint32_t timeout_ms = 1000;
    const char *tty = NULL;
    char line[512];
    wc_parser parser;
    int64_t id;
    size_t len;
    int fd;
    int i;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc) {
            char *end;
            unsigned long value = strtoul(argv[++i], &end, 10);
            if (*end != '\0' || value == 0 || value > 600000ul) {
                return usage();
            }
            timeout_ms = (uint32_t)value;
        } else if (argv[i][0] == '-' || tty != NULL) {
            return usage();
        } else {
            tty = argv[i];
        }
    }
    if (tty == NULL) {
        return usage();
    }
    fd = open(tty, O_RDWR | O_NOCTTY);
    if (fd < 0) {
        perror(tty);
        return 1;
    }
    if (make_raw(fd) != 0) {
        perror("wearable: raw mode");
        return 1;
    }
    wc_parser_init(&parser);
    id = fresh_id();

    len = wc_build_start_workout(line, sizeof line, id, "Gary's Gym", strlen("Gary's Gym"),
                                 "2020-03-16 19:45:13 +0000", 5);
    if (len == 0 || !run_command(fd, &parser, line, len, id, timeout_ms)) {
        return 1;
    }
    len = wc_build_end_workout(line, sizeof line, id + 1);
    if (len == 0 || !run_command(fd, &parser, line, len, id + 1, timeout_ms)) {
        return 1;
    }
    len = wc_build_share_workout(line, sizeof line, id + 2, WC_SERVICE_TWITTER);
    if (len == 0 || !run_command(fd, &parser, line, len, id + 2, timeout_ms)) {
        return 1;
    }
    close(fd);
    return 0;
}
