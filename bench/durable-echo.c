/*
 * The C durable echo for `make bench`: the physical limit of "acked means durable" on a pty.
 *
 * Like bench/echo-baseline.c (opens the device the way workoutd does, answers every newline with one fixed
 * reply line, everything one read() delivered in one write()), but before it answers it appends what it read
 * to STATE_DIR/durable-echo.log and fdatasync()s that file: one write and one sync per read, so lines that
 * arrive together share one sync, as workoutd's group commit does. What lies between this program and
 * workoutd's durable store is the protocol and the storage format, not the disk.
 *
 * Build: cc -O2 -o durable-echo bench/durable-echo.c    Run: durable-echo /dev/pts/N STATE_DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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
    if (argc != 3) {
        fprintf(stderr, "usage: %s DEVICE STATE_DIR\n", argv[0]);
        return 64;
    }
    if (mkdir(argv[2], 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "durable-echo: mkdir %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    char path[4096];
    if (snprintf(path, sizeof path, "%s/durable-echo.log", argv[2]) >= (int)sizeof path) {
        fprintf(stderr, "durable-echo: state directory path too long\n");
        return 64;
    }
    int log = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log < 0) {
        fprintf(stderr, "durable-echo: open %s: %s\n", path, strerror(errno));
        return 1;
    }
    int fd = open(argv[1], O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "durable-echo: open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct termios tio;
    if (tcgetattr(fd, &tio) != 0) {
        fprintf(stderr, "durable-echo: tcgetattr %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    cfmakeraw(&tio);
    tio.c_cflag |= CLOCAL | CREAD;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (tcsetattr(fd, TCSANOW, &tio) != 0) {
        fprintf(stderr, "durable-echo: tcsetattr %s: %s\n", argv[1], strerror(errno));
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
            fprintf(stderr, "durable-echo: read: %s\n", strerror(errno));
            return 1;
        }
        /* Durable before acknowledged: the read's bytes are on disk before any reply to them goes out. */
        if (write_all(log, input, (size_t)n) != 0 || fdatasync(log) != 0) {
            fprintf(stderr, "durable-echo: %s: %s\n", path, strerror(errno));
            return 1;
        }
        size_t out = 0;
        for (const char *p = input, *end = input + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) {
            memcpy(output + out, reply, reply_length);
            out += reply_length;
        }
        if (out > 0 && write_all(fd, output, out) != 0) {
            if (errno == EIO) return 0;
            fprintf(stderr, "durable-echo: write: %s\n", strerror(errno));
            return 1;
        }
    }
}
