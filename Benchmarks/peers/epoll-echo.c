/*
 * The C echo behind epoll for `make bench`'s part cpu: the echo baseline's work, waited for the way an event loop
 * waits.
 *
 * The device is non-blocking and registered with epoll; each wake-up is one epoll_wait(), one read() and the
 * replies in one write(), the system calls workoutd's event loop makes per single-flight command. Measured beside
 * the C echo (a blocking read()) and the echo over NIO, it splits the transport's cost into what waiting for
 * readiness costs the kernel and what the event loop's own machinery costs.
 *
 * Build: cc -O2 -o epoll-echo Benchmarks/peers/epoll-echo.c    Run: epoll-echo /dev/pts/N
 */
#include <sys/epoll.h>

#include "raw-tty.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
        return 64;
    }
    int fd = open_raw_tty("epoll-echo", argv[1]);
    if (fd < 0) return 1;
    int flags = fcntl(fd, F_GETFL);
    int poller = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event interest = {.events = EPOLLIN, .data.fd = fd};
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 || poller < 0 ||
        epoll_ctl(poller, EPOLL_CTL_ADD, fd, &interest) != 0) {
        fprintf(stderr, "epoll-echo: setting up epoll: %s\n", strerror(errno));
        return 1;
    }

    static char input[input_size];
    for (;;) {
        struct epoll_event ready;
        int count = epoll_wait(poller, &ready, 1, -1);
        if (count < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "epoll-echo: epoll_wait: %s\n", strerror(errno));
            return 1;
        }
        ssize_t n = read(fd, input, sizeof input);
        if (n == 0 || (n < 0 && errno == EIO)) return 0; /* the master closed: the run is over */
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            fprintf(stderr, "epoll-echo: read: %s\n", strerror(errno));
            return 1;
        }
        /* Single flight only (part cpu): the master reads each reply before it writes again, so a reply never
         * meets a full pty and a non-blocking write never stops short. */
        if (answer_lines(fd, input, (size_t)n) != 0) {
            if (errno == EIO) return 0;
            fprintf(stderr, "epoll-echo: write: %s\n", strerror(errno));
            return 1;
        }
    }
}
