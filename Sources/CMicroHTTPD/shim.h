#ifndef CHTTPDNS_MHD_SHIM_H
#define CHTTPDNS_MHD_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>
#include <gnutls/x509.h>

/// Starts a daemon with the options given as an MHD_OPTION_ARRAY (Swift cannot call the variadic
/// MHD_start_daemon). `options` must end with an item whose option is MHD_OPTION_END.
/// `accept_policy` (may be NULL) is asked for every accepted socket before libmicrohttpd
/// allocates anything for it; a NO closes the socket at once.
static inline struct MHD_Daemon *chttpdns_mhd_start(unsigned int flags, uint16_t port,
                                                     MHD_AcceptPolicyCallback accept_policy, void *accept_cls,
                                                     MHD_AccessHandlerCallback handler, void *handler_cls,
                                                     struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, accept_policy, accept_cls, handler, handler_cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// The socket context set by the MHD_OPTION_NOTIFY_CONNECTION callback, or NULL.
static inline void *chttpdns_mhd_socket_context(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/// The connection's socket, or -1.
static inline int chttpdns_mhd_connection_fd(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/// The daemon a connection belongs to, or NULL.
static inline struct MHD_Daemon *chttpdns_mhd_connection_daemon(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_DAEMON);
    return info ? info->daemon : NULL;
}

/// MHD_OPTION_NOTIFY_CONNECTION takes a function pointer through an intptr_t field.
static inline struct MHD_OptionItem chttpdns_mhd_option_notify_connection(MHD_NotifyConnectionCallback cb, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)cb, cls };
    return item;
}

/// MHD_OPTION_URI_LOG_CALLBACK: called once per request when its request line is parsed; what it
/// returns becomes the request's initial `con_cls`.
typedef void *(*chttpdns_mhd_uri_log)(void *cls, const char *uri, struct MHD_Connection *connection);
static inline struct MHD_OptionItem chttpdns_mhd_option_uri_log(chttpdns_mhd_uri_log cb, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)cb, cls };
    return item;
}

/// The GnuTLS certificate callback (`gnutls_certificate_retrieve_function2`) as a pointer type
/// Swift can name.
typedef int (*chttpdns_tls_retrieve)(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                                     const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                                     gnutls_pcert_st **pcert, unsigned int *pcert_length,
                                     gnutls_privkey_t *privkey);
/// MHD_OPTION_HTTPS_CERT_CALLBACK takes the function pointer as its pointer argument.
static inline struct MHD_OptionItem chttpdns_mhd_option_cert_callback(chttpdns_tls_retrieve cb) {
    struct MHD_OptionItem item = { MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)cb };
    return item;
}

/// The MHD connection a TLS session belongs to (libmicrohttpd stores it with
/// `gnutls_session_set_ptr`), or NULL.
static inline struct MHD_Connection *chttpdns_tls_session_connection(gnutls_session_t session) {
    return (struct MHD_Connection *)gnutls_session_get_ptr(session);
}

/// A datum over caller-owned bytes (GnuTLS reads them, never frees them).
static inline gnutls_datum_t chttpdns_tls_datum(const unsigned char *data, unsigned int size) {
    gnutls_datum_t datum = { (unsigned char *)data, size };
    return datum;
}

/// Frees memory GnuTLS allocated for the caller (`gnutls_free` is a macro over a variable).
static inline void chttpdns_tls_free(void *p) {
    gnutls_free(p);
}

/// A non-blocking GnuTLS server session for DNS over TLS, over socket `fd` (`GNUTLS_SERVER`
/// and the other init flags are both an enum and macros, which Swift cannot name unambiguously;
/// `gnutls_transport_set_int` is a macro). No SIGPIPE on send; GnuTLS's own handshake timeout
/// is off (the listener's read deadline cuts a slow handshake). Returns a GnuTLS result.
static inline int chttpdns_tls_server_session(gnutls_session_t *session, int fd) {
    int result = gnutls_init(session, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL);
    if (result != GNUTLS_E_SUCCESS) return result;
    gnutls_transport_set_int2(*session, fd, fd);
    gnutls_handshake_set_timeout(*session, 0);
    return GNUTLS_E_SUCCESS;
}

/// The peer address of a connection (MHD_get_connection_info is variadic), or NULL.
static inline const struct sockaddr *chttpdns_mhd_client_address(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : NULL;
}

/// The size of the request's head as received (request line and header fields), or 0 when
/// unknown (`MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE`).
static inline size_t chttpdns_mhd_request_head_size(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info ? info->header_size : 0;
}

/// The listening port the daemon bound (useful with port 0), or 0.
static inline uint16_t chttpdns_mhd_bound_port(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// The daemon's listening socket, or -1 (none, or quiesced).
static inline int chttpdns_mhd_listen_fd(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    return info ? info->listen_fd : -1;
}

/// The daemon's own epoll descriptor (a daemon started with MHD_USE_EPOLL), or -1. In external
/// polling mode it is readable whenever the daemon has work: the caller's loop watches it and
/// then calls MHD_run.
static inline int chttpdns_mhd_epoll_fd(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -1;
}

/// MHD_get_timeout: the milliseconds until MHD_run must be called again, or -1 for no limit.
static inline long long chttpdns_mhd_timeout(struct MHD_Daemon *d) {
    MHD_UNSIGNED_LONG_LONG timeout = 0;
    if (MHD_get_timeout(d, &timeout) != MHD_YES) return -1;
    return timeout > (MHD_UNSIGNED_LONG_LONG)0x7fffffff ? 0x7fffffff : (long long)timeout;
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
/// hands it to `sink`, which travels as the logger's closure argument, with the format string
/// (one of libmicrohttpd's constants: what the message says, without its variable parts).
typedef void (*chttpdns_mhd_log_sink)(const char *format, const char *message);
static inline void chttpdns_mhd_logger(void *cls, const char *fmt, va_list ap) {
    char buffer[512];
    vsnprintf(buffer, sizeof buffer, fmt, ap);
    if (cls) ((chttpdns_mhd_log_sink)cls)(fmt, buffer);
}
static inline struct MHD_OptionItem chttpdns_mhd_option_logger(chttpdns_mhd_log_sink sink) {
    struct MHD_OptionItem item = { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)&chttpdns_mhd_logger, (void *)sink };
    return item;
}

#endif
