#ifndef CHTTPDNS_ARES_SHIM_H
#define CHTTPDNS_ARES_SHIM_H
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <ares.h>
#include <ares_dns.h>
#endif
