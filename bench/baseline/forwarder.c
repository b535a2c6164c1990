/*
 * The floor of a miss on libmicrohttpd: what a forwarder built the way httpdnsd is built pays for
 * one, with nothing of httpdnsd's own (no cache, accounts, statistics, store, single flight, JSON).
 * Section (4f) of the benchmark runs it where (4) runs httpdnsd, against the same dnss.
 *
 * THREADS threads, each one libmicrohttpd daemon in external polling mode with the flags of
 * httpdnsd's HTTPServer.swift (epoll, turbo, suspend/resume, ITC; 4096 connections, 30 s timeout,
 * MEMORY_LIMIT bytes per connection) and its own HTTP/1.1 keep-alive connections to the RFC 8484
 * upstream, all in one epoll set per thread, as httpdnsd's HTTPLoop runs them. The first daemon
 * binds 127.0.0.1:PORT, the others accept from its socket.
 *
 * A request `GET <any path>?host=NAME` is suspended; the query for NAME (type A, id 0, RD) goes
 * upstream as `GET /dns-query?dns=BASE64URL` on an idle connection of the thread (a new one when
 * none is idle, connected blocking: on loopback that is at once, and connections are reused after
 * the first requests); the upstream's answer, read with one `recv` when it fits, resumes the
 * request, whose response is the upstream's DNS message as it came. No host: 400; an upstream
 * failure: 502.
 *
 * usage: forwarder PORT THREADS MEMORY_LIMIT UPSTREAM_PORT   (stops on SIGTERM/SIGINT)
 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <microhttpd.h>

#define MAX_UPSTREAM 256
#define UPSTREAM_BUFFER 8192

struct loop;

/* One client request while it waits for the upstream, then its answer. */
struct request {
    struct MHD_Connection *connection;
    struct loop *loop;
    int suspended;
    unsigned status;       /* 0 until answered */
    char *body;            /* the answer's body (malloc'd), handed to libmicrohttpd */
    size_t body_length;
};

/* One keep-alive connection to the upstream. */
struct upstream {
    int fd;
    struct request *request; /* NULL when idle */
    char in[UPSTREAM_BUFFER + 1]; /* NUL-terminated for the head's search */
    size_t in_length;
};

/* One thread: its daemon, its epoll set, its upstream connections. */
struct loop {
    struct MHD_Daemon *daemon;
    int epoll;
    int resumed;
    struct upstream *upstreams[MAX_UPSTREAM];
    int upstream_count;
    pthread_t thread;
};

static uint16_t upstream_port;
static unsigned memory_limit;

static void fail(const char *what) {
    perror(what);
    exit(1);
}

/* The RFC 1035 query for `name` (type A, class IN, id 0, RD) into `out`; its length, 0 when the
 * name does not fit or has an empty or too long label. */
static size_t dns_query(const char *name, unsigned char *out, size_t capacity) {
    static const unsigned char header[12] = {0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    size_t length = sizeof header;
    if (capacity < length + 255 + 4) return 0;
    memcpy(out, header, sizeof header);
    const char *label = name;
    while (*label) {
        const char *dot = strchr(label, '.');
        size_t size = dot ? (size_t)(dot - label) : strlen(label);
        if (size == 0 || size > 63 || length + size + 1 > sizeof header + 254) return 0;
        out[length++] = (unsigned char)size;
        memcpy(out + length, label, size);
        length += size;
        label += size + (dot ? 1 : 0);
    }
    out[length++] = 0;
    static const unsigned char question[4] = {0, 1, 0, 1};
    memcpy(out + length, question, sizeof question);
    return length + sizeof question;
}

/* `bytes` in base64url without padding, appended at `out`; the characters written. */
static size_t base64url(const unsigned char *bytes, size_t count, char *out) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t written = 0;
    for (size_t i = 0; i < count; i += 3) {
        uint32_t group = (uint32_t)bytes[i] << 16;
        if (i + 1 < count) group |= (uint32_t)bytes[i + 1] << 8;
        if (i + 2 < count) group |= bytes[i + 2];
        out[written++] = alphabet[(group >> 18) & 63];
        out[written++] = alphabet[(group >> 12) & 63];
        if (i + 1 < count) out[written++] = alphabet[(group >> 6) & 63];
        if (i + 2 < count) out[written++] = alphabet[group & 63];
    }
    return written;
}

static struct upstream *connect_upstream(struct loop *loop) {
    if (loop->upstream_count == MAX_UPSTREAM) return NULL;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return NULL;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(upstream_port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        close(fd);
        return NULL;
    }
    struct upstream *upstream = calloc(1, sizeof *upstream);
    if (upstream == NULL) fail("calloc");
    upstream->fd = fd;
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = upstream};
    if (epoll_ctl(loop->epoll, EPOLL_CTL_ADD, fd, &event) != 0) fail("epoll_ctl");
    loop->upstreams[loop->upstream_count++] = upstream;
    return upstream;
}

static void drop_upstream(struct loop *loop, struct upstream *upstream) {
    close(upstream->fd); /* leaves the epoll set with it */
    for (int i = 0; i < loop->upstream_count; i++) {
        if (loop->upstreams[i] == upstream) {
            loop->upstreams[i] = loop->upstreams[--loop->upstream_count];
            break;
        }
    }
    free(upstream);
}

/* Gives `request` its answer and resumes it. */
static void answer(struct request *request, unsigned status, char *body, size_t length) {
    request->status = status;
    request->body = body;
    request->body_length = length;
    if (request->suspended) {
        request->suspended = 0;
        MHD_resume_connection(request->connection);
        request->loop->resumed = 1;
    }
}

/* Sends the query for `host` upstream on an idle connection; 0 when it went out. */
static int send_upstream(struct loop *loop, struct request *request, const char *host) {
    unsigned char query[300];
    size_t query_length = dns_query(host, query, sizeof query);
    if (query_length == 0) return -1;
    char head[600];
    int length = snprintf(head, sizeof head, "GET /dns-query?dns=");
    length += (int)base64url(query, query_length, head + length);
    length += snprintf(head + length, sizeof head - (size_t)length,
                       " HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAccept: application/dns-message\r\n\r\n", upstream_port);
    for (int attempt = 0; attempt < 2; attempt++) {
        struct upstream *upstream = NULL;
        for (int i = 0; i < loop->upstream_count && upstream == NULL; i++) {
            if (loop->upstreams[i]->request == NULL) upstream = loop->upstreams[i];
        }
        if (upstream == NULL) upstream = connect_upstream(loop);
        if (upstream == NULL) return -1;
        if (send(upstream->fd, head, (size_t)length, MSG_NOSIGNAL) == length) {
            upstream->request = request;
            upstream->in_length = 0;
            return 0;
        }
        drop_upstream(loop, upstream); /* closed by the upstream while idle: try a new one */
    }
    return -1;
}

/* The upstream's bytes: when a whole response is in, it answers the connection's request. */
static void upstream_readable(struct loop *loop, struct upstream *upstream) {
    ssize_t got = recv(upstream->fd, upstream->in + upstream->in_length, UPSTREAM_BUFFER - upstream->in_length, 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (got <= 0) {
        if (upstream->request) answer(upstream->request, MHD_HTTP_BAD_GATEWAY, NULL, 0);
        drop_upstream(loop, upstream);
        return;
    }
    upstream->in_length += (size_t)got;
    upstream->in[upstream->in_length] = 0;
    char *end = memmem(upstream->in, upstream->in_length, "\r\n\r\n", 4);
    if (end == NULL) return;
    size_t head_length = (size_t)(end - upstream->in) + 4;
    long content_length = -1;
    for (char *line = strstr(upstream->in, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "Content-Length:", 15) == 0) content_length = atol(line + 17);
    }
    int ok = strncmp(upstream->in, "HTTP/1.1 200", 12) == 0 && content_length >= 0 &&
             head_length + (size_t)content_length <= UPSTREAM_BUFFER;
    if (ok && upstream->in_length < head_length + (size_t)content_length) return;
    struct request *request = upstream->request;
    upstream->request = NULL;
    if (request == NULL) {
        drop_upstream(loop, upstream);
        return;
    }
    if (!ok) {
        answer(request, MHD_HTTP_BAD_GATEWAY, NULL, 0);
        drop_upstream(loop, upstream);
        return;
    }
    char *body = malloc((size_t)content_length + 1);
    if (body == NULL) fail("malloc");
    memcpy(body, upstream->in + head_length, (size_t)content_length);
    answer(request, MHD_HTTP_OK, body, (size_t)content_length);
}

static enum MHD_Result queue(struct MHD_Connection *connection, struct request *request) {
    struct MHD_Response *response =
        request->body ? MHD_create_response_from_buffer(request->body_length, request->body, MHD_RESPMEM_MUST_FREE)
                      : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (response == NULL) return MHD_NO;
    request->body = NULL;
    if (request->status == MHD_HTTP_OK) MHD_add_response_header(response, "Content-Type", "application/dns-message");
    enum MHD_Result result = MHD_queue_response(connection, request->status, response);
    MHD_destroy_response(response);
    return result;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url,
                                      const char *method, const char *version, const char *upload_data,
                                      size_t *upload_data_size, void **con_cls) {
    (void)url; (void)method; (void)version; (void)upload_data;
    struct loop *loop = cls;
    struct request *request = *con_cls;
    if (request == NULL) {
        /* The first call brings the headers only: answer on the call that completes the request. */
        request = calloc(1, sizeof *request);
        if (request == NULL) return MHD_NO;
        request->connection = connection;
        request->loop = loop;
        *con_cls = request;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        *upload_data_size = 0; /* discard any body */
        return MHD_YES;
    }
    if (request->status != 0) return queue(connection, request);
    const char *host = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "host");
    if (host == NULL) {
        request->status = MHD_HTTP_BAD_REQUEST;
        return queue(connection, request);
    }
    if (send_upstream(loop, request, host) != 0) {
        request->status = MHD_HTTP_BAD_GATEWAY;
        return queue(connection, request);
    }
    request->suspended = 1;
    MHD_suspend_connection(connection);
    return MHD_YES;
}

static void completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                      enum MHD_RequestTerminationCode code) {
    (void)cls; (void)connection; (void)code;
    struct request *request = *con_cls;
    if (request == NULL) return;
    /* A request whose connection went while it waited keeps its upstream slot until the answer:
     * forget it there first. */
    for (int i = 0; i < request->loop->upstream_count; i++) {
        if (request->loop->upstreams[i]->request == request) request->loop->upstreams[i]->request = NULL;
    }
    free(request->body);
    free(request);
    *con_cls = NULL;
}

/* The thread's turns: run the daemon when its descriptor was ready, its timeout came or a request
 * was resumed; read the upstream connections that are readable; wait for the next of these. */
static void *run(void *argument) {
    struct loop *loop = argument;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(loop->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    if (info == NULL) fail("MHD_DAEMON_INFO_EPOLL_FD");
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(loop->epoll, EPOLL_CTL_ADD, info->epoll_fd, &event) != 0) fail("epoll_ctl");
    int daemon_due = 1;
    struct epoll_event events[64];
    for (;;) {
        if (daemon_due) {
            MHD_run(loop->daemon);
            daemon_due = 0;
        }
        MHD_UNSIGNED_LONG_LONG timeout = 1000;
        if (MHD_get_timeout(loop->daemon, &timeout) != MHD_YES || timeout > 1000) timeout = 1000;
        int ready = epoll_wait(loop->epoll, events, 64, loop->resumed ? 0 : (int)timeout);
        if (ready < 0 && errno != EINTR) fail("epoll_wait");
        for (int i = 0; i < ready; i++) {
            if (events[i].data.ptr == NULL) daemon_due = 1;
            else upstream_readable(loop, events[i].data.ptr);
        }
        if (loop->resumed || ready == 0) daemon_due = 1;
        loop->resumed = 0;
    }
    return NULL;
}

static struct MHD_Daemon *start_daemon(struct loop *loop, uint16_t port, int listen_socket) {
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    unsigned int flags = MHD_USE_EPOLL | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem bind[] = {
        {MHD_OPTION_SOCK_ADDR, 0, &address},
        {MHD_OPTION_END, 0, NULL},
    };
    struct MHD_OptionItem shared[] = {
        {MHD_OPTION_LISTEN_SOCKET, listen_socket, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    return MHD_start_daemon(flags, port, NULL, NULL, access_handler, loop,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4096,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)memory_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                            MHD_OPTION_ARRAY, listen_socket < 0 ? bind : shared,
                            MHD_OPTION_END);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s PORT THREADS MEMORY_LIMIT UPSTREAM_PORT\n", argv[0]);
        return 2;
    }
    uint16_t port = (uint16_t)atoi(argv[1]);
    long threads = atol(argv[2]);
    if (threads <= 0) threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads <= 0) threads = 1;
    memory_limit = (unsigned)atol(argv[3]);
    upstream_port = (uint16_t)atoi(argv[4]);
    if (memory_limit < 4096 || upstream_port == 0) {
        fprintf(stderr, "forwarder: MEMORY_LIMIT must be at least 4096 bytes and UPSTREAM_PORT a port\n");
        return 2;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* the loop threads inherit the mask */

    int listen_socket = -1;
    for (long i = 0; i < threads; i++) {
        struct loop *loop = calloc(1, sizeof *loop);
        if (loop == NULL) fail("calloc");
        loop->epoll = epoll_create1(EPOLL_CLOEXEC);
        if (loop->epoll < 0) fail("epoll_create1");
        loop->daemon = start_daemon(loop, port, listen_socket);
        if (loop->daemon == NULL) {
            fprintf(stderr, "forwarder: cannot listen on 127.0.0.1:%u\n", port);
            return 1;
        }
        if (listen_socket < 0) listen_socket = MHD_get_daemon_info(loop->daemon, MHD_DAEMON_INFO_LISTEN_FD)->listen_fd;
        if (pthread_create(&loop->thread, NULL, run, loop) != 0) fail("pthread_create");
    }
    fprintf(stderr, "forwarder listening on 127.0.0.1:%u (%ld threads, %u bytes per connection, upstream 127.0.0.1:%u)\n",
            port, threads, memory_limit, upstream_port);
    int signal_number = 0;
    sigwait(&set, &signal_number);
    return 0; /* the threads end with the process */
}
