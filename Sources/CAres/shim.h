#ifndef CHTTPDNS_ARES_SHIM_H
#define CHTTPDNS_ARES_SHIM_H
#include <sys/types.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <ares.h>
#include <ares_dns.h>
#include <poll.h>

/// ARES_GETSOCK_READABLE / ARES_GETSOCK_WRITABLE are function-like macros.
static inline int chttpdns_ares_sock_readable(int bits, int num) { return ARES_GETSOCK_READABLE(bits, num) ? 1 : 0; }
static inline int chttpdns_ares_sock_writable(int bits, int num) { return ARES_GETSOCK_WRITABLE(bits, num) ? 1 : 0; }

#endif
