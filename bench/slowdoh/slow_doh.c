/* slow_doh: a deliberately slow RFC 8484 upstream for the benchmark's "slow upstream" measurement.
 *
 * Serves GET /dns-query?dns=BASE64URL over plain HTTP/1.1 (keep-alive): waits the current delay,
 * then forwards the query over UDP to a loopback DNS server (the benchmark's caching unbound) and
 * returns its answer as application/dns-message (502 if none comes within 5 s).
 * GET /_delay?ms=N sets the delay (0 at start, so that the benchmark can warm names through it
 * quickly); GET /_health answers 200.
 *
 *     slow_doh --port 8055 --dns 127.0.0.1:5353
 *
 * Why C: it runs on the same (two) cores as the server being measured, with hundreds of queries
 * waiting; the asyncio version it replaces took 4-5 % of a core there, taken from the server.
 * So: one thread, non-blocking sockets, epoll (level-triggered), the epoll_wait timeout as the only
 * timer (pending delays and UDP timeouts in one min-heap: the delay may change between requests),
 * one connected UDP socket towards the DNS server (each outstanding query gets a free DNS ID, the
 * client's ID is put back in the answer). Responses on a connection go out in request order.
 * Build: gcc -O2 -Wall -Wextra -o slow_doh slow_doh.c   (bench/run.py does).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX 8192             /* longest request head accepted (request line + headers) */
#define IN_CAP (HEAD_MAX + 4096)  /* per-connection input buffer */
#define PIPE_MAX 64               /* requests queued on one connection before we stop reading it */
#define UDP_TIMEOUT_US 5000000LL
#define NIDS 65536
#define USAGE "usage: slow_doh --port N --dns 127.0.0.1:PORT\n" \
              "A deliberately slow RFC 8484 upstream for the benchmark's \"slow upstream\" measurement.\n"

enum { NEW, DELAYING, ASKING, READY };

struct conn;
struct req {                      /* one request, queued on its connection in arrival order */
    struct req *next;
    struct conn *conn;
    int state;
    size_t hidx;                  /* index in the heap while DELAYING or ASKING */
    int64_t due;                  /* DELAYING: when to ask; ASKING: when to give up */
    unsigned char *q; size_t qlen; /* the DNS query */
    uint16_t id, orig_id;         /* ASKING: our ID on the wire; the client's */
    char *out; size_t outlen;     /* READY: the whole response */
};

struct conn {
    int fd, dead, eof, closing;   /* closing: after Connection: close or a bad request, parse no more */
    uint32_t events;              /* what epoll watches for */
    struct req *head, *tail; int nreq;
    size_t inlen, hlen, body_left; /* hlen: the parsed head waiting for its body to be discarded */
    int is_get, want_close; size_t tgt_off, tgt_len;  /* of the parsed head */
    char *out; size_t outlen, outoff, outcap;
    struct conn *next_dead;
    char in[IN_CAP];
};

static int ep, lfd, ufd, listen_paused;
static char listen_tag, udp_tag;
static int64_t delay_us;
static struct req **heap; static size_t heap_n, heap_cap;
static struct req *ids[NIDS];     /* outstanding queries by wire ID */
static unsigned inflight, next_id;
static struct conn *graveyard;    /* closed this round, freed after the round's events */

static void *xrealloc(void *p, size_t n) {
    if (!(p = realloc(p, n))) { perror("slow_doh: realloc"); exit(1); }
    return p;
}

static int64_t now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

/* ---- min-heap on due, each request knowing its index */

static void heap_set(size_t i, struct req *r) { heap[i] = r; r->hidx = i; }

static void heap_up(size_t i) {
    struct req *r = heap[i];
    for (; i > 0 && heap[(i - 1) / 2]->due > r->due; i = (i - 1) / 2) heap_set(i, heap[(i - 1) / 2]);
    heap_set(i, r);
}

static void heap_down(size_t i) {
    struct req *r = heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= heap_n) break;
        if (c + 1 < heap_n && heap[c + 1]->due < heap[c]->due) c++;
        if (heap[c]->due >= r->due) break;
        heap_set(i, heap[c]);
        i = c;
    }
    heap_set(i, r);
}

static void heap_push(struct req *r, int64_t due) {
    if (heap_n == heap_cap) heap = xrealloc(heap, (heap_cap = heap_cap ? 2 * heap_cap : 1024) * sizeof *heap);
    r->due = due;
    heap_set(heap_n++, r);
    heap_up(heap_n - 1);
}

static void heap_remove(struct req *r) {
    struct req *last = heap[--heap_n];
    if (r != last) {
        heap_set(r->hidx, last);
        heap_up(last->hidx);
        heap_down(last->hidx);
    }
}

/* ---- requests */

static void detach(struct req *r) {  /* out of the heap and the ID table */
    if (r->state == DELAYING || r->state == ASKING) heap_remove(r);
    if (r->state == ASKING) { ids[r->id] = NULL; inflight--; }
    r->state = NEW;
}

static void finish(struct req *r, int status, const char *type, const void *body, size_t len) {
    const char *reason = status == 200 ? "OK" : status == 400 ? "Bad Request"
                       : status == 404 ? "Not Found" : "Bad Gateway";
    char head[200];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: keep-alive\r\n\r\n", status, reason, type, len);
    detach(r);
    r->out = xrealloc(NULL, n + len);
    memcpy(r->out, head, n);
    memcpy(r->out + n, body, len);
    r->outlen = n + len;
    r->state = READY;
    free(r->q), r->q = NULL;
}

static void text(struct req *r, int status, const char *body) { finish(r, status, "text/plain", body, strlen(body)); }

static void ask(struct req *r) {  /* send the query with a free ID; 502 if there is none or send fails */
    if (inflight == NIDS) { text(r, 502, "upstream failed"); return; }
    while (ids[next_id]) next_id = (next_id + 1) % NIDS;
    r->id = next_id, next_id = (next_id + 1) % NIDS;
    r->orig_id = r->q[0] << 8 | r->q[1];
    r->q[0] = r->id >> 8, r->q[1] = r->id & 0xff;
    /* an ICMP error for an earlier datagram fails the next send (without sending it): once more */
    ssize_t n = send(ufd, r->q, r->qlen, 0);
    if (n < 0 && errno != EAGAIN) n = send(ufd, r->q, r->qlen, 0);
    if (n != (ssize_t)r->qlen) { text(r, 502, "upstream failed"); return; }
    ids[r->id] = r, inflight++;
    r->state = ASKING;
    heap_push(r, now_us() + UDP_TIMEOUT_US);
}

/* ---- connections */

static void free_req(struct req *r) { free(r->q), free(r->out), free(r); }

static void close_conn(struct conn *c) {
    close(c->fd);
    c->dead = 1;
    while (c->head) {  /* pending queries go too: nothing will write to this fd number later */
        struct req *r = c->head;
        c->head = r->next;
        detach(r);
        free_req(r);
    }
    c->next_dead = graveyard;
    graveyard = c;
    if (listen_paused) {  /* out of file descriptors before: there is one now */
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = &listen_tag};
        listen_paused = epoll_ctl(ep, EPOLL_CTL_MOD, lfd, &e) < 0;
    }
}

static void bad(struct conn *c) { c->closing = 1; c->inlen = c->hlen = 0; }

static void trim(char **s, char **e) {
    while (*s < *e && (**s == ' ' || **s == '\t')) ++*s;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t')) --*e;
}

static int is_name(const char *s, const char *e, const char *name) {
    return (size_t)(e - s) == strlen(name) && !strncasecmp(s, name, e - s);
}

/* The head is in[0, hlen): the request line, whether it is a GET, Connection: close, Content-Length. */
static int parse_head(struct conn *c, size_t hlen) {
    char *p = c->in, *end = p + hlen - 2, *eol = memmem(p, hlen, "\r\n", 2);
    char *sp1 = memchr(p, ' ', eol - p), *sp2 = sp1 ? memchr(sp1 + 1, ' ', eol - sp1 - 1) : NULL;
    if (hlen > HEAD_MAX || !sp2) return 0;
    c->is_get = sp1 - p == 3 && !memcmp(p, "GET", 3);
    c->tgt_off = sp1 + 1 - p, c->tgt_len = sp2 - sp1 - 1;
    c->want_close = 0, c->body_left = 0;
    for (char *line = eol + 2; line < end; line = eol + 2) {
        eol = memmem(line, end + 2 - line, "\r\n", 2);
        char *colon = memchr(line, ':', eol - line);
        if (!colon) continue;
        char *ns = line, *ne = colon, *vs = colon + 1, *ve = eol;
        trim(&ns, &ne);
        trim(&vs, &ve);
        if (is_name(ns, ne, "content-length")) {
            if (vs == ve) return 0;
            c->body_left = 0;
            for (char *d = vs; d < ve; d++) {
                if (*d < '0' || *d > '9' || c->body_left > (SIZE_MAX - 9) / 10) return 0;
                c->body_left = c->body_left * 10 + (*d - '0');
            }
        } else if (is_name(ns, ne, "connection") && is_name(vs, ve, "close")) {
            c->want_close = 1;
        }
    }
    c->hlen = hlen;
    return 1;
}

/* The first non-empty value of name in the query string [q, end), as parse_qs()[name][0]. */
static const char *param(const char *q, const char *end, const char *name, size_t *len) {
    size_t n = strlen(name);
    while (q < end) {
        const char *amp = memchr(q, '&', end - q);
        if (!amp) amp = end;
        if ((size_t)(amp - q) > n + 1 && !memcmp(q, name, n) && q[n] == '=') {
            *len = amp - q - n - 1;
            return q + n + 1;
        }
        q = amp + 1;
    }
    return NULL;
}

static long b64url(const char *s, size_t n, unsigned char *out) {  /* length, or -1 */
    uint32_t acc = 0;
    int bits = 0;
    long len = 0;
    while (n && s[n - 1] == '=') n--;  /* tolerate padding */
    if (n % 4 == 1) return -1;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        int v = ch >= 'A' && ch <= 'Z' ? ch - 'A' : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26
              : ch >= '0' && ch <= '9' ? ch - '0' + 52 : ch == '-' ? 62 : ch == '_' ? 63 : -1;
        if (v < 0) return -1;
        acc = acc << 6 | v;
        if ((bits += 6) >= 8) out[len++] = acc >> (bits -= 8);
    }
    return len;
}

static struct req *new_req(struct conn *c) {
    struct req *r = xrealloc(NULL, sizeof *r);
    memset(r, 0, sizeof *r);
    r->conn = c;
    if (c->tail) c->tail->next = r; else c->head = r;
    c->tail = r;
    c->nreq++;
    return r;
}

/* A complete request (head in[0, hlen), body discarded). 0: malformed, close the connection. */
static int handle(struct conn *c) {
    const char *t = c->in + c->tgt_off, *end = t + c->tgt_len, *hash = memchr(t, '#', end - t);
    if (hash) end = hash;
    const char *qm = memchr(t, '?', end - t), *path_end = qm ? qm : end, *qs = qm ? qm + 1 : end, *v;
    size_t plen = path_end - t, vlen;
    if (!c->is_get) { text(new_req(c), 404, "GET only"); return 1; }
    if (plen == 8 && !memcmp(t, "/_health", 8)) {
        finish(new_req(c), 200, "application/json", "{\"ok\":true}", 11);
        return 1;
    }
    if (plen == 7 && !memcmp(t, "/_delay", 7)) {
        long long ms = 0;
        if ((v = param(qs, end, "ms", &vlen))) {
            char buf[32], *e;
            if (vlen >= sizeof buf) return 0;
            memcpy(buf, v, vlen), buf[vlen] = 0;
            errno = 0;
            ms = strtoll(buf, &e, 10);
            while (*e == ' ') e++;
            if (e == buf || *e || errno) return 0;  /* like int() failing in the Python version */
        }
        delay_us = ms <= 0 ? 0 : (ms > 86400000 ? 86400000 : ms) * 1000;
        finish(new_req(c), 200, "application/json", "{\"ok\":true}", 11);
        return 1;
    }
    if (plen != 10 || memcmp(t, "/dns-query", 10) || !(v = param(qs, end, "dns", &vlen))) {
        text(new_req(c), 404, "not found");
        return 1;
    }
    struct req *r = new_req(c);
    r->q = xrealloc(NULL, vlen * 3 / 4 + 3);
    long n = b64url(v, vlen, r->q);
    if (n < 12) { text(r, 400, "bad dns parameter"); return 1; }
    r->qlen = n;
    if (delay_us > 0) r->state = DELAYING, heap_push(r, now_us() + delay_us);
    else ask(r);
    return 1;
}

static int parse_one(struct conn *c) {  /* 1: a request was taken */
    if (!c->hlen) {
        char *e = memmem(c->in, c->inlen, "\r\n\r\n", 4);
        if (!e && c->inlen > HEAD_MAX) bad(c);
        if (!e) return 0;
        if (!parse_head(c, e + 4 - c->in)) { bad(c); return 0; }
    }
    size_t rest = c->inlen - c->hlen, d = rest < c->body_left ? rest : c->body_left;
    if (d) {
        memmove(c->in + c->hlen, c->in + c->hlen + d, rest - d);
        c->inlen -= d, c->body_left -= d;
    }
    if (c->body_left) return 0;
    int ok = handle(c);
    memmove(c->in, c->in + c->hlen, c->inlen - c->hlen);
    c->inlen -= c->hlen, c->hlen = 0;
    if (!ok) { bad(c); return 0; }
    if (c->want_close) c->closing = 1;
    return 1;
}

/* Move the ready responses at the head of the queue out, parse what can be parsed, write,
 * close when done, and watch for what is needed next. */
static void service(struct conn *c) {
    if (c->dead) return;
    for (;;) {
        while (c->head && c->head->state == READY) {
            struct req *r = c->head;  /* (out is emptied whenever all of it is written) */
            if (c->outlen + r->outlen > c->outcap)
                c->out = xrealloc(c->out, c->outcap = 2 * (c->outlen + r->outlen));
            memcpy(c->out + c->outlen, r->out, r->outlen);
            c->outlen += r->outlen;
            if (!(c->head = r->next)) c->tail = NULL;
            c->nreq--;
            free_req(r);
        }
        if (c->closing || c->nreq >= PIPE_MAX || !parse_one(c)) break;
    }
    while (c->outoff < c->outlen) {
        ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
        if (n < 0 && errno == EAGAIN) break;
        if (n < 0 && errno != EINTR) { close_conn(c); return; }
        if (n > 0) c->outoff += n;
    }
    if (c->outoff == c->outlen) c->outoff = c->outlen = 0;
    if ((c->closing || c->eof) && !c->head && !c->outlen) { close_conn(c); return; }
    uint32_t ev = (!c->closing && !c->eof && c->nreq < PIPE_MAX && c->inlen < IN_CAP ? EPOLLIN : 0)
                | (c->outlen ? EPOLLOUT : 0);
    if (ev != c->events) {
        struct epoll_event e = {.events = ev, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
        c->events = ev;
    }
}

static void conn_event(struct conn *c, uint32_t ev) {
    if (c->dead) return;  /* closed earlier in this round */
    if (ev & (EPOLLERR | EPOLLHUP)) { close_conn(c); return; }
    if ((ev & EPOLLIN) && (c->events & EPOLLIN)) {
        ssize_t n = recv(c->fd, c->in + c->inlen, IN_CAP - c->inlen, 0);
        if (n > 0) c->inlen += n;
        else if (n == 0) c->eof = 1;
        else if (errno != EAGAIN && errno != EINTR) { close_conn(c); return; }
    }
    service(c);
}

static void accept_all(void) {
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), one = 1;
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                struct epoll_event e = {.events = 0, .data.ptr = &listen_tag};  /* until a close */
                epoll_ctl(ep, EPOLL_CTL_MOD, lfd, &e);
                listen_paused = 1;
            }
            return;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = xrealloc(NULL, sizeof *c);
        memset(c, 0, offsetof(struct conn, in));
        c->fd = fd, c->events = EPOLLIN;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0) { close(fd); free(c); }
    }
}

static void fail_all_asking(void) {  /* the DNS server refused (ICMP): we can't tell which query */
    for (unsigned i = 0; i < NIDS; i++) {
        struct req *r = ids[i];
        if (!r) continue;
        struct conn *c = r->conn;
        text(r, 502, "upstream failed");
        service(c);
    }
}

static void udp_read(void) {
    static unsigned char buf[65536];
    for (;;) {
        ssize_t n = recv(ufd, buf, sizeof buf, 0);
        if (n < 0) {
            if (errno == EAGAIN) return;
            if (errno != EINTR) fail_all_asking();
            continue;
        }
        struct req *r = n >= 12 ? ids[buf[0] << 8 | buf[1]] : NULL;
        if (!r) continue;  /* a stray: no such query outstanding (any more) */
        buf[0] = r->orig_id >> 8, buf[1] = r->orig_id & 0xff;
        struct conn *c = r->conn;
        finish(r, 200, "application/dns-message", buf, n);
        service(c);
    }
}

static void run_timers(void) {
    int64_t now = now_us();
    while (heap_n && heap[0]->due <= now) {
        struct req *r = heap[0];
        struct conn *c = r->conn;
        if (r->state == ASKING) {
            text(r, 502, "upstream failed");
        } else {
            detach(r);
            ask(r);
        }
        if (r->state == READY) service(c);
    }
}

static const char *opt(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n)) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] || *i + 1 >= argc) return NULL;
    return argv[++*i];
}

static void usage_exit(const char *why) {
    fprintf(stderr, "%sslow_doh: %s\n", USAGE, why);
    exit(2);
}

int main(int argc, char **argv) {
    const char *port_s = NULL, *dns = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(USAGE, stdout); return 0; }
        if ((v = opt(argc, argv, &i, "--port"))) port_s = v;
        else if ((v = opt(argc, argv, &i, "--dns"))) dns = v;
        else usage_exit("unknown or incomplete argument");
    }
    char *e, host[64];
    long port = port_s ? strtol(port_s, &e, 10) : -1;
    if (!port_s || !*port_s || *e || port < 0 || port > 65535) usage_exit("--port N is required (0-65535)");
    const char *colon = dns ? strrchr(dns, ':') : NULL;
    long dport = colon ? strtol(colon + 1, &e, 10) : -1;
    if (!colon || !colon[1] || *e || dport < 1 || dport > 65535 || (size_t)(colon - dns) >= sizeof host)
        usage_exit("--dns HOST:PORT is required");
    memcpy(host, dns, colon - dns), host[colon - dns] = 0;
    struct sockaddr_in la = {.sin_family = AF_INET, .sin_port = htons(port)};
    struct sockaddr_in da = {.sin_family = AF_INET, .sin_port = htons(dport)};
    inet_pton(AF_INET, "127.0.0.1", &la.sin_addr);
    if (inet_pton(AF_INET, host, &da.sin_addr) != 1 || ntohl(da.sin_addr.s_addr) >> 24 != 127) {
        fprintf(stderr, "slow_doh: --dns must be on loopback (127.0.0.0/8), got %s\n", dns);
        return 2;
    }

    struct rlimit rl;  /* hundreds of connections: the soft limit of open files can be 1024 */
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max)
        rl.rlim_cur = rl.rlim_max, setrlimit(RLIMIT_NOFILE, &rl);
    int one = 1, rcvbuf = 4 << 20;
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ufd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (lfd < 0 || ufd < 0 || ep < 0) { perror("slow_doh: socket"); return 1; }
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(ufd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);  /* capped by net.core.rmem_max */
    if (bind(lfd, (struct sockaddr *)&la, sizeof la) < 0 || listen(lfd, 1024) < 0)
        return perror("slow_doh: listen"), 1;
    if (connect(ufd, (struct sockaddr *)&da, sizeof da) < 0) { perror("slow_doh: connect"); return 1; }
    socklen_t alen = sizeof la;
    getsockname(lfd, (struct sockaddr *)&la, &alen);
    struct epoll_event le = {.events = EPOLLIN, .data.ptr = &listen_tag};
    struct epoll_event ue = {.events = EPOLLIN, .data.ptr = &udp_tag};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &le) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ufd, &ue) < 0) {
        perror("slow_doh: epoll_ctl");
        return 1;
    }
    fprintf(stderr, "slow_doh listening on 127.0.0.1:%d, forwarding to %s\n", ntohs(la.sin_port), dns);

    struct epoll_event evs[256];
    for (;;) {
        int timeout = -1;
        if (heap_n) {
            int64_t wait = heap[0]->due - now_us();
            timeout = wait <= 0 ? 0 : wait > 3600000000LL ? 3600000 : (int)((wait + 999) / 1000);
        }
        int n = epoll_wait(ep, evs, 256, timeout);
        if (n < 0 && errno != EINTR) { perror("slow_doh: epoll_wait"); return 1; }
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &listen_tag) accept_all();
            else if (p == &udp_tag) udp_read();
            else conn_event(p, evs[i].events);
        }
        run_timers();
        while (graveyard) {
            struct conn *c = graveyard;
            graveyard = c->next_dead;
            free(c->out), free(c);
        }
    }
}
