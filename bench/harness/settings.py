"""The run's settings: the `BENCH_*` variables (listed with their defaults at the top of
`bench/run.py`), the section numbers, and the constants every section and the report share.
Read once, at import, so that every module sees the same values."""

import os
import sys
import time

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH_DIR)
LUA_DIR = os.path.join(BENCH_DIR, "lua")
ZONE = "bench.test"
ADDRESSES = ("127.0.0.11", "127.0.0.12")  # data only: nothing is ever sent to them
TTL = 86400


def env_int(name, default):
    """The integer in environment variable `name`, or `default` when it is unset or blank."""
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


DURATION = env_int("BENCH_DURATION", 10)
REPS = env_int("BENCH_REPS", 3)
CONNECTIONS = env_int("BENCH_CONNECTIONS", 64)
WRK_THREADS = env_int("BENCH_WRK_THREADS", 2)
NAMES = env_int("BENCH_NAMES", 10000)
SCALE = env_int("BENCH_SCALE", 1_000_000)
SCALE_MID = env_int("BENCH_SCALE_MID", 100_000)
SLOW_MS = env_int("BENCH_SLOW_MS", 500)
SLOW_INFLIGHT = env_int("BENCH_SLOW_INFLIGHT", 200)
PROFILE = os.environ.get("BENCH_PROFILE", "")
HISTOGRAMS = os.environ.get("BENCH_HISTOGRAMS", "1").strip() not in ("0", "false", "off", "no")
SIGNED = 9  # the number of the signed-request section
RFC8484 = 10  # the number of the RFC 8484 hit section
EMAS = 11  # the EMAS HTTPDNS hit section
DOHJSON = 12  # the DoH JSON hit section
REDIS = 13  # the Redis section: hits with Redis configured, shared-tier misses, 3 replicas
PLAINDNS = 14  # plain-DNS cache hits (dnsListen) against unbound's own, with dnsperf (issue 26)
DOT = 15  # DNS over TLS cache hits (dotListen) against unbound's own DoT, with dnsperf -m dot
POLICY = 16  # hits of an account with 1000 rules and a 10000-name domain list against an account without
REDIS_NAMES = env_int("BENCH_REDIS_NAMES", 2000)
MISS_PRELOAD = env_int("BENCH_MISS_PRELOAD", 40000)  # never-asked names preloaded per repetition of (4)
ALL_SECTIONS = set(range(1, 17))
SECTIONS = {int(s) for s in os.environ.get("BENCH_SECTIONS", "").split(",") if s.strip()} or set(ALL_SECTIONS)
# Every section but (4) and (14)-(16) is a ratio to (1) and runs with (1)-(3); (4) alone (BENCH_SECTIONS=4)
# runs without the hit loop: the misses, their CPU per thread and the preload, in a few minutes;
# (14) and (15) alone the plain-DNS and DoT hits against unbound's, (16) alone the hits with and
# without policy, in a few minutes too.
if SECTIONS & {1, 2, 3, 5, 6, 7, 8, SIGNED, RFC8484, EMAS, DOHJSON, REDIS}:
    SECTIONS |= {1}  # every ratio is to (1)
if 1 in SECTIONS:
    SECTIONS |= {2, 3}
FORMAT_NAMES = {RFC8484: "RFC 8484", EMAS: "EMAS HTTPDNS", DOHJSON: "DoH JSON"}
PRELOAD_BATCH = 10000
# Every httpdnsd here and the C baseline get the same per-connection buffer (httpdnsd's default
# `connectionMemoryLimit`): libmicrohttpd zeroes all of it after every keep-alive request, so a
# larger one in the baseline costs it about 3 us a request and flatters every ratio against it.
CONNECTION_MEMORY = 16384
PRELOAD_PARALLEL = 4
PRELOAD_CONCURRENCY = 128
# (8): account `limited` has a client rate limit no benchmark reaches, so every hit pays the
# bucket check (one bucket: wrk's connections all come from 127.0.0.1) and none is refused. Not
# persisted: its preload's write-behind would otherwise still be flushing during (1).
LIMITED_KEYS = {"rateLimit": 1_000_000, "rateBurst": 10_000_000, "persistentCacheIPEnabled": False}
# (9): account `signed` has client keys and `requireSignedRequests`; its resolve URLs are signed
# once, before the loop, with an expiry a day ahead, so `maxSignatureAge` is raised to its maximum.
SIGNED_MAX_AGE = 86400


def log(message):
    """A progress line on stderr (stdout carries the report)."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
