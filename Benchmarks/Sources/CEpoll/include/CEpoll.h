// epoll and eventfd, which Swift's Glibc module does not export, for SessionBehindEpoll.
#include <sys/epoll.h>
#include <sys/eventfd.h>
