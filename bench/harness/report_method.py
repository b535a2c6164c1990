"""The "How it is measured" section of RESULTS.md: what each figure's numbers mean, with the
settings of the run filled in."""

from .settings import (CONNECTION_MEMORY, CONNECTIONS, DOHJSON, DURATION, EMAS, LIMITED_KEYS, MISS_PRELOAD, NAMES,
                       PRELOAD_BATCH, REDIS, REDIS_NAMES, RFC8484, SCALE, SCALE_MID, SIGNED, SIGNED_MAX_AGE, SLOW_INFLIGHT,
                       SLOW_MS, TTL, ZONE)


def method(add):
    """The section's heading and its list, one item per section."""
    add("## How it is measured")
    add("")
    add(hit_items())
    add(other_items())
    add("")


def hit_items():
    """The names and the hit sections on (1)'s instance: (1)-(3), (8), (9), (10)-(12)."""
    return f"""- Names: every name below `{ZONE}` exists. An authoritative unbound answers them all from one
  `redirect` local zone (two A records, TTL {TTL}); a second, caching unbound forwards `{ZONE}` to it
  and refuses everything else (`local-zone: "." refuse`); dnss serves RFC 8484 in front of the caching
  unbound. httpdnsd's accounts have `localDNSFallback: false`, `maxCacheTTL: {TTL}`.
- (1) wrk cycles through {NAMES} names preloaded into account `bench` (requests pre-formatted in the
  Lua `init`, each wrk thread starting at another offset); the hit and miss counters of `/metrics`
  are checked afterwards. (2) the same wrk script against `bench/baseline/baseline.c`, given the same
  per-connection buffer as httpdnsd ({CONNECTION_MEMORY} bytes, `connectionMemoryLimit`); (3) the same
  names as pre-encoded base64url queries (written by run.py) against dnss, whose unbound has them
  cached (checked with `unbound-control stats_noreset`). (1), (8), ({SIGNED}), (2), (3), (5q), (5), (6q) and
  (6) run in that order in each repetition, so a repetition of (5) or (6) is measured about a minute after its (1).
  The counters are read on the instance's operations listener (`opsListen`), the only one whose
  `/metrics` has the `account` label.
- (8) the same names preloaded into account `limited`, whose `rateLimit` and `rateBurst` are
  {LIMITED_KEYS["rateLimit"]:,} and {LIMITED_KEYS["rateBurst"]:,}: every hit takes a token from its
  client's bucket (wrk's connections all come from 127.0.0.1, so they share one bucket: the most
  contended case), and none is refused.
- ({SIGNED}) the same names preloaded (signed `POST`s, a `manage` key) into account `signed` of the same
  instance, which has two client keys and `requireSignedRequests: true` (`maxSignatureAge` {SIGNED_MAX_AGE}):
  run.py signs each name's `GET /v1/signed/resolve?host=NAME` once, with Python's `hmac` and `hashlib` as
  `docs/security.md` specifies (`kid`, `t`, `sign` in the query; `t` a day ahead, so the same URLs serve
  the whole run: a GET signature may be reused until it expires), and `cycle.lua` cycles through the
  signed URLs. Before the loop, an unsigned request and one with a wrong signature must get 401 and a
  signed one a cache hit. A signed hit is answered by the fast path (1) takes, which copies the
  request and runs the general path's signature and role checks on it (a refusal is left to the
  general path): the ratio ({SIGNED}) / (1) is what signing costs a hit, the copy and the HMAC.
- ({RFC8484}) the names of (1), as the pre-encoded RFC 8484 queries of (3) (ID 0, RD, one A question),
  `GET /v1/bench/dns-query?dns=` with `Accept: application/dns-message` against the same instance and
  account `bench`: each is answered from the cache on the fast path (its RFC 8484 row) and written as a
  DNS message by libknot, by the general path's writer. Before
  the loop one query must come back `application/dns-message`, RCODE 0, two records.
- ({EMAS}) and ({DOHJSON}) the names of (1) through the EMAS HTTPDNS API (`GET /bench/d?host=NAME`) and
  the DoH JSON API (`GET /resolve?uid=bench&name=NAME`), same instance and account: cache hits
  answered on the fast path (its EMAS and DoH JSON rows) by each API's one answer writer. Before the loop the
  first name must be one cache hit whose JSON answer carries the two addresses."""


def other_items():
    """The sections with instances of their own or run after the loop: (13), (4), (5), (6)."""
    return f"""- ({REDIS}) issue 15: a redis-server on loopback (no persistence) and three replicas a, b, c with `redis`
  set and account `bench` as in (1). ({REDIS}) is (1)'s wrk run against replica a, which had the names
  preloaded (and published the preload: b and c preload them too, awaited before the loop).
  ({REDIS}c) is the same run against a control instance whose configuration is replica a's without
  `redis`, started with the replicas and preloaded the same way; ({REDIS}) and ({REDIS}c) run back to back
  in each repetition, in alternating order. A hit must not touch Redis, so ({REDIS}) / ({REDIS}c) is the cost
  of having Redis configured (the issue's figure); ({REDIS}) / (1) also differs by (1)'s instance (more
  accounts, a larger cache limit) and by when in the repetition it runs. For each of the two runs the
  server's CPU (all threads, `/proc/PID/stat`) per request is read too: the split of wrk's connections
  between libmicrohttpd's workers caps a run's requests/s at random, not its CPU per request.
  ({REDIS}u) and ({REDIS}n) are wrk runs at saturation ({CONNECTIONS} connections, {DURATION} s), every request a name
  nobody asked (`distinct.lua`), back to back in alternating order: ({REDIS}u) on replica b (Redis is asked and
  misses, b takes the name's lock, asks the upstream, stores the answer and releases the lock), ({REDIS}n) on the
  control, which has no Redis; before each, 64 fresh names from Python clients check that the instance answers
  them from the upstream, and the miss counter must grow by wrk's requests. The server's and redis-server's CPU
  (`/proc/PID/stat`) per miss are read around each run. ({REDIS}s) asks {REDIS_NAMES} names replica a resolved
  just before (not preloaded: a preload is replicated into b's cache), once each from 16 Python keep-alive
  clients, on replica b (a shared hit, every answer's source `shared`, cached on b from then on), against ({REDIS}up), as many never-asked names on b from the same clients (also the check of (13u)). ({REDIS}r) sends each of
  a few hundred fresh names to the three replicas at once and counts their upstream requests
  (`httpdns_upstream_requests_total`), then the same against (1)'s instance and two more without Redis.
- (4) every request asks for a name never asked before (`distinct.lua` builds them, so each repetition
  asks {DURATION} s worth of distinct names, at least the issue's 10 000), through dnss → caching unbound →
  authoritative unbound. (4f) the same requests through `bench/baseline/forwarder.c`, the floor of a
  miss on this HTTP layer: C, one libmicrohttpd daemon per core in external epoll mode with httpdnsd's
  flags and {CONNECTION_MEMORY // 1024} KiB per connection, each request suspended while its query goes to dnss over
  the thread's own keep-alive HTTP/1.1 connections, then resumed with dnss's DNS message as the body;
  no cache, accounts, statistics, store or JSON. (4u) the same against dnss directly (wrk, RFC 8484 queries built in Lua);
  (4d) dnsperf against the caching unbound (UDP). Around each wrk run of (4), (4f) and (4u), every thread's
  `utime` + `stime` is read from `/proc/PID/task/TID/stat` (clock ticks, so ±1 tick per thread) of httpdnsd
  and dnss (and of the forwarder around (4f)), and grouped by the thread's name (`comm`): httpdnsd's curl loop (`httpdnsd-curl`), its
  HTTP threads (`httpdnsd-http`, which also run the upstream exchange of their misses; `MHD-*` in
  builds on libmicrohttpd's thread pool), every other thread (the time of threads that exited meanwhile is the
  process's total less its threads'); dnss and the forwarder counted whole. Divided by the requests wrk completed,
  that is CPU µs per miss; wrk itself and unbound are not counted. (4p) after each (4u),
  `POST /v1/bench/preload` of {MISS_PRELOAD:,} never-asked names in batches of {PRELOAD_BATCH} (as (6) fills),
  timed: names/s against (4u)'s requests/s.
- (5) account `slow` has `bench/slowdoh/slow_doh.c` as its upstream: an RFC 8484 proxy that waits {SLOW_MS} ms before
  asking the caching unbound. The {NAMES} names are preloaded with the delay at 0; then, with the delay
  on, a second wrk keeps {SLOW_INFLIGHT} connections asking never-asked names of that account (so
  {SLOW_INFLIGHT} misses are always waiting), starting 3 s before and ending 3 s after the hit measurement
  on the same account.
- (6) a second httpdnsd, started and filled before the hit loop, fills account `bench` by
  `POST /v1/bench/preload` (batches of {PRELOAD_BATCH}); RSS is read at {SCALE_MID:,} and {SCALE:,} entries
  (the main instance sits idle meanwhile), and the loop starts once it is idle; hits then cycle over all cached names, each repetition
  just after (6q), {NAMES} of those names as in (1), the same-time reference (wrk's threads
  wait for each other's list to be built before the first request: see `bench/lua/common.lua`; without
  that, a million-name list let one thread send uncounted-time requests and inflated (6) by 20-60 %); then SIGTERM
  (the write-behind queue is flushed) and a restart on the same database, timed to `/readyz` 200
  (polled every 5 ms)."""
