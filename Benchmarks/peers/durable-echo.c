/*
 * The C durable echo for `make bench`: the physical limit of "acked means durable" on a pty.
 *
 * Like Benchmarks/peers/echo-baseline.c (opens the device the way workoutd does, answers every newline with one fixed
 * reply line, everything one read() delivered in one write()), but before it answers it appends what it read
 * to STATE_DIR/durable-echo.log and fdatasync()s that file: one write and one sync per read, so lines that
 * arrive together share one sync, as workoutd's group commit does. What lies between this program and
 * workoutd's durable store is the protocol and the storage format, not the disk.
 *
 * Build: cc -O2 -o durable-echo Benchmarks/peers/durable-echo.c    Run: durable-echo /dev/pts/N STATE_DIR
 */
#include <sys/stat.h>

#include "raw-tty.h"

static int log_fd = -1;
static char log_path[4096];

/* Durable before acknowledged: the read's bytes are on disk before any reply to them goes out. */
static int append_and_sync(const char *input, size_t n) {
    if (write_all(log_fd, input, n) != 0 || fdatasync(log_fd) != 0) {
        fprintf(stderr, "durable-echo: %s: %s\n", log_path, strerror(errno));
        return -1;
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
    if (snprintf(log_path, sizeof log_path, "%s/durable-echo.log", argv[2]) >= (int)sizeof log_path) {
        fprintf(stderr, "durable-echo: state directory path too long\n");
        return 64;
    }
    log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) {
        fprintf(stderr, "durable-echo: open %s: %s\n", log_path, strerror(errno));
        return 1;
    }
    int fd = open_raw_tty("durable-echo", argv[1]);
    if (fd < 0) return 1;
    return serve_lines("durable-echo", fd, append_and_sync);
}
