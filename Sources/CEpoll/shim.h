#ifndef CHTTPDNS_EPOLL_SHIM_H
#define CHTTPDNS_EPOLL_SHIM_H
/* The event loops wait with epoll, which Glibc's Swift module does not have. */
#include <sys/epoll.h>
#endif
