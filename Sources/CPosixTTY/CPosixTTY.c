#include "CPosixTTY.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/timex.h>

int wd_openpty(char *name, size_t name_len, int nonblocking) {
    int flags = O_RDWR | O_NOCTTY | O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0);
    int fd = posix_openpt(flags);
    if (fd < 0) return -1;
    if (grantpt(fd) != 0 || unlockpt(fd) != 0 || ptsname_r(fd, name, name_len) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

static speed_t speed_for(unsigned int baud) {
    switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 921600: return B921600;
    case 1000000: return B1000000;
    case 2000000: return B2000000;
    case 3000000: return B3000000;
    case 4000000: return B4000000;
    default: return 0;
    }
}

int wd_configure_raw(int fd, unsigned int baud) {
    speed_t speed = speed_for(baud);
    if (speed == 0) {
        errno = EINVAL;
        return -1;
    }
    struct termios tio;
    if (tcgetattr(fd, &tio) != 0) return -1;
    cfmakeraw(&tio);
    tio.c_cflag |= CLOCAL | CREAD;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (cfsetispeed(&tio, speed) != 0 || cfsetospeed(&tio, speed) != 0) return -1;
    return tcsetattr(fd, TCSANOW, &tio);
}

int wd_set_exclusive(int fd) {
    return ioctl(fd, TIOCEXCL);
}

int wd_bytes_available(int fd) {
    int n = 0;
    if (ioctl(fd, FIONREAD, &n) != 0) return -1;
    return n;
}

int wd_terminal_columns(int fd) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0) return -1;
    return size.ws_col;
}

int wd_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int wd_pidfd_send_signal(int pidfd, int signal) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0);
}

int wd_spawn_add_close_from(posix_spawn_file_actions_t *actions, int lowfd) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowfd);
}

int wd_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

_Static_assert(sizeof(wd_peer_credentials) == sizeof(struct ucred), "wd_peer_credentials must match struct ucred");

int wd_group_id(const char *name, unsigned int *gid) {
    struct group entry, *found = NULL;
    char buffer[16384];
    int error = getgrnam_r(name, &entry, buffer, sizeof buffer, &found);
    if (error != 0) {
        errno = error;
        return -1;
    }
    if (found == NULL) return 1;
    *gid = found->gr_gid;
    return 0;
}

int wd_user_in_group(unsigned int uid, unsigned int primary_gid, unsigned int group) {
    struct passwd entry, *found = NULL;
    char buffer[16384];
    int error = getpwuid_r(uid, &entry, buffer, sizeof buffer, &found);
    if (error != 0) {
        errno = error;
        return -1;
    }
    if (found == NULL) return 0;
    int count = 64;
    for (int attempt = 0; attempt < 4; attempt++) {
        gid_t *groups = malloc(sizeof(gid_t) * (size_t)count);
        if (groups == NULL) return -1;
        int wanted = count;
        if (getgrouplist(found->pw_name, primary_gid, groups, &wanted) >= 0) {
            int member = 0;
            for (int i = 0; i < wanted; i++) {
                if (groups[i] == group) member = 1;
            }
            free(groups);
            return member;
        }
        free(groups);
        // Too small: `wanted` now says how many there are.
        count = wanted > count ? wanted : count * 2;
    }
    errno = ERANGE;
    return -1;
}

int wd_kernel_clock_synchronized(void) {
    struct timex status = {0};
    int state = adjtimex(&status);
    if (state < 0) return -1;
    return state != TIME_ERROR && !(status.status & STA_UNSYNC);
}
