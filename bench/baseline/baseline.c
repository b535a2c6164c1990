/*
 * The limit for the httpdnsd benchmark: libmicrohttpd with the same daemon flags and options
 * as httpdnsd's HTTPServer.swift (epoll internal thread pool, turbo, suspend/resume, ITC, one
 * pool thread per core by default, 4096 connections, 30 s timeout, MEMORY_LIMIT bytes per
 * connection: the driver passes httpdnsd's `connectionMemoryLimit`), answering every request
 * with the same fixed JSON body (read from a file: the driver stores a real cache-hit response
 * there) and the same Content-Type.
 *
 * The per-connection buffer is part of the cost compared: libmicrohttpd zeroes all of it after
 * every keep-alive request, so a baseline with a 64 KiB buffer against httpdnsd's 16 KiB spends
 * about 3 us more per request in memset than httpdnsd does, and flatters every ratio.
 *
 * With CERT_FILE and KEY_FILE (PEM) it serves HTTPS with httpdnsd's TLS settings (GnuTLS priority
 * string TLS 1.2/1.3 only), the certificate given in memory.
 *
 * usage: baseline PORT THREADS MEMORY_LIMIT BODY_FILE [CERT_FILE KEY_FILE]   (stops on SIGTERM/SIGINT)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *body;
static size_t body_len;

/* The whole file as a NUL-terminated string, or NULL. */
static char *read_text(const char *path) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) { perror(path); return NULL; }
    char *text = calloc(1, 1 << 20);
    size_t n = text ? fread(text, 1, (1 << 20) - 1, file) : 0;
    fclose(file);
    if (text == NULL || n == 0) { free(text); return NULL; }
    return text;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    /* The first call brings the headers only. Answering then (before the request is complete)
     * makes libmicrohttpd close the connection, so wait for the call that completes it, as
     * httpdnsd does. */
    static int seen;
    if (*con_cls == NULL) {
        *con_cls = &seen;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        *upload_data_size = 0; /* discard any body */
        return MHD_YES;
    }
    struct MHD_Response *response = MHD_create_response_from_buffer(body_len, body, MHD_RESPMEM_PERSISTENT);
    if (response == NULL) return MHD_NO;
    MHD_add_response_header(response, "Content-Type", "application/json; charset=utf-8");
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return result;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 7) {
        fprintf(stderr, "usage: %s PORT THREADS MEMORY_LIMIT BODY_FILE [CERT_FILE KEY_FILE]\n", argv[0]);
        return 2;
    }
    char *cert = NULL, *key = NULL;
    if (argc == 7) {
        cert = read_text(argv[5]);
        key = read_text(argv[6]);
        if (cert == NULL || key == NULL) return 1;
    }
    unsigned port = (unsigned)atoi(argv[1]);
    long threads = atol(argv[2]);
    if (threads <= 0) threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads <= 0) threads = 1;
    long memory_limit = atol(argv[3]);
    if (memory_limit < 4096) {
        fprintf(stderr, "baseline: MEMORY_LIMIT must be at least 4096 bytes, got %s\n", argv[3]);
        return 2;
    }
    FILE *file = fopen(argv[4], "rb");
    if (file == NULL) { perror(argv[4]); return 1; }
    body = malloc(1 << 16);
    body_len = fread(body, 1, 1 << 16, file);
    fclose(file);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* the pool threads inherit the mask */

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO |
                         MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, key},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"},
        {MHD_OPTION_END, 0, NULL},
    };
    struct MHD_OptionItem none[] = {{MHD_OPTION_END, 0, NULL}};
    if (cert) flags |= MHD_USE_TLS;
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, answer, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4096,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)0,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)memory_limit,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
        MHD_OPTION_ARRAY, cert ? tls : none,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "baseline: cannot listen on 127.0.0.1:%u\n", port);
        return 1;
    }
    fprintf(stderr, "baseline listening on 127.0.0.1:%u (%s, %ld threads, %ld bytes per connection, %zu-byte body)\n",
            port, cert ? "HTTPS" : "HTTP", threads, memory_limit, body_len);
    int signal_number = 0;
    sigwait(&set, &signal_number);
    MHD_stop_daemon(daemon);
    free(body);
    free(cert);
    free(key);
    return 0;
}
