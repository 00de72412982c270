#ifndef CPOSIXTTY_H
#define CPOSIXTTY_H

#include <stddef.h>
#include <spawn.h>
#include <sys/types.h>

/// Opens a new pseudo-terminal master (O_RDWR|O_NOCTTY|O_CLOEXEC|O_NONBLOCK if nonblocking), unlocks it,
/// and writes the slave's path into `name`. Returns the master fd, or -1 with errno set.
int wd_openpty(char *name, size_t name_len, int nonblocking);

/// Puts a tty into raw mode (cfmakeraw) at the given baud rate, with CLOCAL|CREAD, VMIN=1, VTIME=0.
/// `baud` is a plain number such as 115200. Returns 0, or -1 with errno set (EINVAL for an unknown baud).
int wd_configure_raw(int fd, unsigned int baud);

/// Asks for exclusive use of a tty (TIOCEXCL). Returns 0, or -1 with errno set.
int wd_set_exclusive(int fd);

/// Bytes waiting to be read on a tty (FIONREAD), or -1 with errno set.
int wd_bytes_available(int fd);

/// The width in columns of the terminal `fd` is (TIOCGWINSZ), 0 when it reports none, or -1 with errno set
/// (ENOTTY when `fd` is not a terminal).
int wd_terminal_columns(int fd);

/// pidfd_open(2): a descriptor for the process `pid` that keeps naming that process even after its pid is
/// reused. Returns the descriptor (O_CLOEXEC), or -1 with errno set (ENOSYS before Linux 5.3). Swift cannot
/// call the variadic syscall(2).
int wd_pidfd_open(pid_t pid);

/// pidfd_send_signal(2): `signal` to the process `pidfd` names; ESRCH once it has been reaped.
int wd_pidfd_send_signal(int pidfd, int signal);

/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34): the child closes every descriptor from `lowfd` on,
/// whatever its close-on-exec flag. Returns 0 or an error number.
int wd_spawn_add_close_from(posix_spawn_file_actions_t *actions, int lowfd);

/// pipe2(fds, O_CLOEXEC), which Glibc's module does not export. Returns 0, or -1 with errno set.
int wd_pipe_cloexec(int fds[2]);

/// The layout of `struct ucred` (what getsockopt(SO_PEERCRED) fills in), which Swift's Glibc module does not
/// export: the pid, uid and gid of the process on the other end of a Unix socket when it connected.
typedef struct {
    int pid;
    unsigned int uid;
    unsigned int gid;
} wd_peer_credentials;

/// The gid of the group `name` in the group database (getgrnam_r). Returns 0 and sets `*gid`, 1 when there is
/// no such group, or -1 with errno set.
int wd_group_id(const char *name, unsigned int *gid);

/// Whether the user `uid` has `group` among its groups in the user and group databases (getpwuid_r, then
/// getgrouplist with `primary_gid`). Returns 1 (member), 0 (not, or no such user) or -1 with errno set.
/// Blocking: NSS may ask a directory server; never call it on an event loop.
int wd_user_in_group(unsigned int uid, unsigned int primary_gid, unsigned int group);

/// 1 when adjtimex(2) reports the kernel's clock synchronised (no STA_UNSYNC, not TIME_ERROR), 0 when it
/// reports it unsynchronised, -1 with errno set when it cannot be asked (EPERM under ProtectClock=yes).
int wd_kernel_clock_synchronized(void);

#endif
