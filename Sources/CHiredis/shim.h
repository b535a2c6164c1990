#ifndef CHTTPDNS_HIREDIS_SHIM_H
#define CHTTPDNS_HIREDIS_SHIM_H
/* hiredis 0.14 (Debian 12, libhiredis-dev): the async API driven by our own epoll loop through
 * the context's `ev` hooks (no adapter header: each adapter binds an event library). */
#include <hiredis/hiredis.h>
#include <hiredis/async.h>

/* The reply kinds and results are macros Swift imports as plain Int32 constants; these name them. */
static inline int chttpdns_redis_ok(void) { return REDIS_OK; }

/* The file descriptor of an async context (inside its embedded redisContext). */
static inline int chttpdns_redis_async_fd(const redisAsyncContext *ac) { return ac->c.fd; }
/* Whether the context has completed its TCP connect (REDIS_CONNECTED). */
static inline int chttpdns_redis_async_connected(const redisAsyncContext *ac) { return (ac->c.flags & REDIS_CONNECTED) != 0; }

/* Installs the event hooks (the adapter's job): all five take `data` as their argument. */
static inline void chttpdns_redis_attach(redisAsyncContext *ac, void *data,
    void (*addRead)(void *), void (*delRead)(void *), void (*addWrite)(void *), void (*delWrite)(void *),
    void (*cleanup)(void *)) {
    ac->ev.data = data;
    ac->ev.addRead = addRead;
    ac->ev.delRead = delRead;
    ac->ev.addWrite = addWrite;
    ac->ev.delWrite = delWrite;
    ac->ev.cleanup = cleanup;
}

/* A PING on a subscribed context, sent without a callback. hiredis 0.14 files a command sent on
 * a subscribed context under `sub.invalid`, which only a non-array reply ever shifts; Redis
 * answers PING there with the array ["pong", ""] (RESP2), so each such callback would stay
 * queued until the context is freed. Appended to the output buffer instead (what
 * redisAsyncCommand does besides the bookkeeping) and the write scheduled through the `ev` hook;
 * the reply then reaches the subscribe dispatch, which finds no pattern named "" and hands it
 * to no callback (or to the channel callback of the message read just before it in the same
 * read, which must ignore what is not a message). Only when the context is subscribed: a plain +PONG with no callback queued would fail hiredis'
 * assertion that a reply without a callback comes to a subscriber. REDIS_ERR otherwise, or when
 * the context is closing or the append fails. */
static inline int chttpdns_redis_subscriber_ping(redisAsyncContext *ac) {
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    if (!(ac->c.flags & REDIS_SUBSCRIBED) || (ac->c.flags & (REDIS_DISCONNECTING | REDIS_FREEING))) return REDIS_ERR;
    if (redisAppendFormattedCommand(&ac->c, ping, sizeof(ping) - 1) != REDIS_OK) return REDIS_ERR;
    if (ac->ev.addWrite) ac->ev.addWrite(ac->ev.data);
    return REDIS_OK;
}
#endif
