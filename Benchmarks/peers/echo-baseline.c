/*
 * The echo baseline for `make bench`: the least work a program serving a pty can do.
 *
 * Opens the device given as argv[1] the way workoutd does (O_RDWR|O_NOCTTY, raw termios) and answers every
 * newline it reads with one fixed reply line, about as long as a real reply. Replies for everything one
 * read() delivered go out in one write(), as workoutd batches them, so the figures measured against this
 * program are the limit of a pty on this machine, not of a protocol.
 *
 * Build: cc -O2 -o echo-baseline Benchmarks/peers/echo-baseline.c    Run: echo-baseline /dev/pts/N
 */
#include "raw-tty.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
        return 64;
    }
    int fd = open_raw_tty("echo-baseline", argv[1]);
    if (fd < 0) return 1;

    return serve_lines("echo-baseline", fd, NULL);
}
