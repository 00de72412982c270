/*
 * The echo baseline for `make bench`: the least work a program serving a pty can do.
 *
 * Opens the device given as argv[1] the way workoutd does (O_RDWR|O_NOCTTY, raw termios) and answers every
 * newline it reads with one fixed reply line, about as long as a real reply. Replies for everything one
 * read() delivered go out in one write(), as workoutd batches them, so the figures measured against this
 * program are the limit of a pty on this machine, not of a protocol.
 *
 * Build: cc -O2 -o echo-baseline bench/echo-baseline.c    Run: echo-baseline /dev/pts/N
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static const char reply[] = "{\"command_type\":\"start_workout\",\"status\":\"ok\",\"workout_id\":1}\n";

static int write_all(int fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t n = write(fd, bytes, count);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        bytes += n;
        count -= (size_t)n;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
        return 64;
    }
    int fd = open(argv[1], O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "echo-baseline: open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct termios tio;
    if (tcgetattr(fd, &tio) != 0) {
        fprintf(stderr, "echo-baseline: tcgetattr %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    cfmakeraw(&tio);
    tio.c_cflag |= CLOCAL | CREAD;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (tcsetattr(fd, TCSANOW, &tio) != 0) {
        fprintf(stderr, "echo-baseline: tcsetattr %s: %s\n", argv[1], strerror(errno));
        return 1;
    }

    enum { reply_length = sizeof reply - 1 };
    static char input[65536];
    /* Room for one reply per input byte: a read can hold at most that many newlines. */
    static char output[sizeof input * reply_length];
    for (;;) {
        ssize_t n = read(fd, input, sizeof input);
        if (n == 0 || (n < 0 && errno == EIO)) return 0; /* the master closed: the run is over */
        if (n < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "echo-baseline: read: %s\n", strerror(errno));
            return 1;
        }
        size_t out = 0;
        for (const char *p = input, *end = input + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) {
            memcpy(output + out, reply, reply_length);
            out += reply_length;
        }
        if (out > 0 && write_all(fd, output, out) != 0) {
            if (errno == EIO) return 0;
            fprintf(stderr, "echo-baseline: write: %s\n", strerror(errno));
            return 1;
        }
    }
}
