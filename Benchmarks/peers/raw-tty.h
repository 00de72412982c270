/*
 * What the C echoes of `make bench` share (Benchmarks/peers/echo-baseline.c, Benchmarks/peers/durable-echo.c): the device opened the
 * way workoutd opens it, and one fixed reply line, about as long as a real reply, for every newline of a read,
 * all in one write(), as workoutd batches them.
 */
#ifndef WORKOUTD_BENCH_RAW_TTY_H
#define WORKOUTD_BENCH_RAW_TTY_H

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

/* O_RDWR|O_NOCTTY, raw termios; -1 (reported on stderr as `program`) when the device cannot be set up. */
static int open_raw_tty(const char *program, const char *device) {
    int fd = open(device, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: open %s: %s\n", program, device, strerror(errno));
        return -1;
    }
    struct termios tio;
    if (tcgetattr(fd, &tio) != 0) {
        fprintf(stderr, "%s: tcgetattr %s: %s\n", program, device, strerror(errno));
        return -1;
    }
    cfmakeraw(&tio);
    tio.c_cflag |= CLOCAL | CREAD;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (tcsetattr(fd, TCSANOW, &tio) != 0) {
        fprintf(stderr, "%s: tcsetattr %s: %s\n", program, device, strerror(errno));
        return -1;
    }
    return fd;
}

enum { reply_length = sizeof reply - 1, input_size = 65536 };

/* Answers every newline in input[0..<n] with `reply`, in one write. -1 with errno set when the write failed. */
static int answer_lines(int fd, const char *input, size_t n) {
    /* Room for one reply per input byte: a read can hold at most that many newlines. */
    static char output[input_size * reply_length];
    size_t out = 0;
    for (const char *p = input, *end = input + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) {
        memcpy(output + out, reply, reply_length);
        out += reply_length;
    }
    return out > 0 ? write_all(fd, output, out) : 0;
}

/* Reads until the master closes (0) or something fails (1, reported as `program`), answering each read's lines;
 * `before_answer` (if not NULL) runs first and stops the program with 1 when it returns non-zero. */
static inline int serve_lines(const char *program, int fd, int (*before_answer)(const char *input, size_t n)) {
    static char input[input_size];
    for (;;) {
        ssize_t n = read(fd, input, sizeof input);
        if (n == 0 || (n < 0 && errno == EIO)) return 0; /* the master closed: the run is over */
        if (n < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "%s: read: %s\n", program, strerror(errno));
            return 1;
        }
        if (before_answer != NULL && before_answer(input, (size_t)n) != 0) return 1;
        if (answer_lines(fd, input, (size_t)n) != 0) {
            if (errno == EIO) return 0;
            fprintf(stderr, "%s: write: %s\n", program, strerror(errno));
            return 1;
        }
    }
}

#endif
