#ifndef CPOSIXTTY_H
#define CPOSIXTTY_H

#include <stddef.h>

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

#endif
