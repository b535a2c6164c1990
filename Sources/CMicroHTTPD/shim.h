#ifndef CHTTPDNS_MHD_SHIM_H
#define CHTTPDNS_MHD_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <malloc.h>
#include <microhttpd.h>

/// Returns freed heap memory to the kernel (glibc `malloc_trim(0)`); the service calls it after
/// bulk work (a preload, the warm load) whose transient allocations would otherwise stay in RSS.
/// Not a libmicrohttpd call: it sits in this shim because every module that needs it imports it.
static inline int chttpdns_malloc_trim(void) {
    return malloc_trim(0);
}

/// Caps the number of glibc malloc arenas (`mallopt(M_ARENA_MAX, count)`); returns 1 on success.
static inline int chttpdns_malloc_arena_max(int count) {
    return mallopt(M_ARENA_MAX, count);
}

/// Starts a daemon with the options given as an MHD_OPTION_ARRAY (Swift cannot call the variadic
/// MHD_start_daemon). `options` must end with an item whose option is MHD_OPTION_END.
static inline struct MHD_Daemon *chttpdns_mhd_start(unsigned int flags, uint16_t port,
                                                     MHD_AccessHandlerCallback handler, void *handler_cls,
                                                     struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// The peer address of a connection (MHD_get_connection_info is variadic), or NULL.
static inline const struct sockaddr *chttpdns_mhd_client_address(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : NULL;
}

/// The listening port the daemon bound (useful with port 0), or 0.
static inline uint16_t chttpdns_mhd_bound_port(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// MHD_OPTION_NOTIFY_COMPLETED takes a function pointer through an intptr_t field.
static inline struct MHD_OptionItem chttpdns_mhd_option_completed(MHD_RequestCompletedCallback cb, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)cb, cls };
    return item;
}

static inline struct MHD_OptionItem chttpdns_mhd_option_value(enum MHD_OPTION option, intptr_t value) {
    struct MHD_OptionItem item = { option, value, NULL };
    return item;
}

static inline struct MHD_OptionItem chttpdns_mhd_option_pointer(enum MHD_OPTION option, void *pointer) {
    struct MHD_OptionItem item = { option, 0, pointer };
    return item;
}

/// Logger callback (MHD_OPTION_EXTERNAL_LOGGER takes a va_list printer): formats the message and
/// hands it to `sink`, which travels as the logger's closure argument.
typedef void (*chttpdns_mhd_log_sink)(const char *message);
static inline void chttpdns_mhd_logger(void *cls, const char *fmt, va_list ap) {
    char buffer[512];
    vsnprintf(buffer, sizeof buffer, fmt, ap);
    if (cls) ((chttpdns_mhd_log_sink)cls)(buffer);
}
static inline struct MHD_OptionItem chttpdns_mhd_option_logger(chttpdns_mhd_log_sink sink) {
    struct MHD_OptionItem item = { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)&chttpdns_mhd_logger, (void *)sink };
    return item;
}

#endif
