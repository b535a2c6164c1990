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
#endif
