"""RESULTS.md from the figures of a run: the machine, one table of every measurement, the
checks made during the run, the cache's scale, the targets with PASS or FAIL, and how each figure
is measured (`report_method`). A pure function of `results` and the settings, so that a change
here can be checked against a stored `results` without a run."""

import datetime
import os
import platform
import statistics
import subprocess

from .procstat import arenas_text
from .report_method import method
from .report_misses import miss_section, miss_targets
from .report_plaindns import plain_dns_section, plain_dns_targets
from .report_policy import policy_section, policy_targets
from .servers import cpu_text
from .settings import (CONNECTION_MEMORY, CONNECTIONS, DOHJSON, DURATION, EMAS, FORMAT_NAMES, HISTOGRAMS, NAMES,
                       PRELOAD_BATCH, PRELOAD_CONCURRENCY, PRELOAD_PARALLEL, REDIS, REDIS_NAMES, REPO, REPS,
                       RFC8484, SCALE, SECTIONS, SIGNED, SLOW_INFLIGHT, SLOW_MS, WRK_THREADS)

# A section of RESULTS.md that a run does not measure and keeps as it is (the cache simulator's
# table, `bench/cachesim`).
KEPT_SECTION = "## Cache simulator"


def machine():
    """The machine and the versions the figures were measured with."""
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) // 1024

    def version(argv):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            return (out.stdout or out.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unknown"

    def package(name):
        return version(["dpkg-query", "-W", "-f=${Version}", name])

    commit = version(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--", "Sources", "Package.swift"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "cpu": model, "cores": os.cpu_count(), "memory_mib": memory, "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit + (" (with uncommitted changes in Sources/)" if dirty else ""),
        "libmicrohttpd": package("libmicrohttpd12"), "unbound": package("unbound"), "dnss": package("dnss"),
        "wrk": package("wrk"), "dnsperf": package("dnsperf"),
    }


def fmt_rate(value):
    """A rate as the tables show it: thousands separated, no decimals; "—" for none."""
    return f"{value:,.0f}" if value is not None else "—"


def spread(reps):
    """(max - min) / median of the repetitions: how noisy the figure was."""
    if len(reps) < 2 or not statistics.median(reps):
        return "—"
    return f"{(max(reps) - min(reps)) / statistics.median(reps) * 100:.0f} %"


def report(results):
    """The text of RESULTS.md (without the kept section, which the caller appends)."""
    lines = []
    add = lines.append
    header(add, results)
    measurements(add, results)
    checks(add, results)
    miss_section(add, results)
    plain_dns_section(add, results)
    policy_section(add, results)
    scale_table(add, results)
    targets(add, results)
    notes(add, results)
    method(add)
    return "\n".join(lines)


def header(add, results):
    """The title and the machine, with the settings of the run."""
    m = results["machine"]
    add("# httpdnsd benchmark results")
    add("")
    add("Written by `make bench` (`bench/run.py`); replaced on every run. Do not edit by hand.")
    add("")
    add("## Machine")
    add("")
    add(f"- CPU: {m['cpu']}, {m['cores']} cores; memory {m['memory_mib']} MiB; kernel {m['kernel']}")
    add(f"- {results.get('swift', 'swift: unknown')}; httpdnsd commit {m['commit']}, release build")
    add(f"- libmicrohttpd {m['libmicrohttpd']}, unbound {m['unbound']}, dnss {m['dnss']}, "
        f"wrk {m['wrk']}, dnsperf {m['dnsperf']}")
    add(f"- date: {m['date']}")
    add(f"- settings: {DURATION} s per measurement, {REPS} repetitions (medians), wrk -t{WRK_THREADS} "
        f"-c{CONNECTIONS} HTTP/1.1 keep-alive, {NAMES} warmed names, scale {SCALE} entries; request-duration "
        f"histograms {'on' if HISTOGRAMS else 'off (BENCH_HISTOGRAMS=0)'}")
    add(f"- **The load generator (wrk) and every server share the same {m['cores']} cores** (and other "
        "people's builds may have been running): absolute figures are low and noisy; the ratios, measured "
        "in the same run on the same workload, are the figures to read. The hit measurements run repetition by "
        f"repetition in one loop, (1) (8) ({SIGNED}) (2) (3) (5q) (5) (6q) (6), so that drift hits them alike; (5q) and (6q), "
        "measured just before each (5) and (6) on the same instance, are the closest same-time references.")
    add("")


def measurements(add, results):
    """The table of every measurement: requests/s, latency, each repetition and its spread."""
    s1, s2, s3 = results.get("s1"), results.get("s2"), results.get("s3")
    s4, s5, s6 = results.get("s4"), results.get("s5"), results.get("s6")
    add("## Measurements")
    add("")
    add("| # | measurement | requests/s (median) | p50 ms | p99 ms | per repetition (req/s) | spread |")
    add("|---|---|---|---|---|---|---|")

    def row(num, what, s):
        if s:
            add(f"| {num} | {what} | {fmt_rate(s['rps'])} | {s['p50_ms']:.2f} | {s['p99_ms']:.2f} | "
                f"{', '.join(str(r) for r in s['reps'])} | {spread(s['reps'])} |")

    row(1, f"httpdnsd cache hits, `GET /v1/bench/resolve`, {NAMES} warmed names", s1)
    row(8, "  the same hits on account `limited`, client rate limit on (never reached), just after each (1)",
        results.get("s8"))
    row(SIGNED, "  the same hits with signed requests (signature v1) on account `signed` (`requireSignedRequests`), "
        "in each repetition of (1)", results.get(f"s{SIGNED}"))
    row(RFC8484, "  the same hits as RFC 8484 queries, `GET /v1/bench/dns-query?dns=` (the queries of (3)), "
        "in each repetition of (1)", results.get(f"s{RFC8484}"))
    row(EMAS, "  the same hits through the EMAS HTTPDNS API, `GET /bench/d?host=`, in each repetition of (1)",
        results.get(f"s{EMAS}"))
    row(DOHJSON, "  the same hits through the DoH JSON API, `GET /resolve?uid=bench&name=`, in each repetition of (1)",
        results.get(f"s{DOHJSON}"))
    row(REDIS, "  the same hits on replica a, an instance with `redis` set (issue 15), in each repetition of (1)",
        results.get(f"s{REDIS}"))
    row(f"{REDIS}c", f"  the same hits on the control: replica a's configuration without `redis`, started and warmed as a, "
        f"just before or after each ({REDIS})", results.get(f"s{REDIS}c"))
    row(2, f"baseline: C on libmicrohttpd, same pool settings and {CONNECTION_MEMORY // 1024} KiB per connection, fixed body of the same size", s2)
    row(3, "peer: dnss `GET /dns-query?dns=` → unbound cache, same names", s3)
    row(4, "httpdnsd misses: a never-asked name every request → dnss → unbound → authoritative unbound", s4)
    row("4f", "the floor: the same misses through `bench/baseline/forwarder.c` (C, libmicrohttpd as httpdnsd runs it, "
        "nothing else) → dnss", results.get("s4_floor"))
    row("4u", "upstream alone: dnss with a never-asked name every request (same chain)", results.get("s4_dnss"))
    if results.get("s4_dnsperf"):
        d = results["s4_dnsperf"]
        add(f"| 4d | upstream alone: dnsperf (UDP) against the caching unbound, never-asked names | "
            f"{fmt_rate(d['qps'])} | — | — | {', '.join(str(r) for r in d['reps'])} | {spread(d['reps'])} |")
    row(5, f"httpdnsd cache hits while {SLOW_INFLIGHT} misses wait on a +{SLOW_MS} ms upstream", s5)
    row("5m", f"  the {SLOW_INFLIGHT} concurrent slow misses themselves", results.get("s5_misses"))
    row("5q", "  the same hits on the same account just before each (5), without misses", results.get("s5_quiet"))
    python = f"{REDIS_NAMES} names, 16 Python keep-alive clients"
    for key, what in (("u", "local miss, then Redis misses too, then the upstream (replica b, names never asked); wrk, distinct.lua"),
                      ("n", "local miss, then the upstream, without Redis (the control, names never asked); wrk, distinct.lua"),
                      ("up", f"as ({REDIS}u), {python}"),
                      ("s", f"local miss, then a shared hit in Redis (replica b, names replica a resolved first); {python}")):
        row(f"{REDIS}{key}", what, results.get(f"s{REDIS}{key}"))
    row(7, "httpdnsd cache hits as (1), over HTTPS (TLS 1.3, keep-alive), an instance of its own", results.get("s7"))
    row("7b", "baseline over HTTPS, same certificate and TLS settings", results.get("s7b"))
    if s6:
        row(6, f"httpdnsd cache hits cycling over all {s6['entries']:,} cached names", s6["hits"])
        if s6.get("hits_quiet"):
            row("6q", f"  the same instance just before each (6), hits over {NAMES} of its names (as in (1))",
                s6["hits_quiet"])
    add("")


def checks(add, results):
    """What the run checked while it measured: counters, statuses, worker splits, arenas, the
    response measured."""
    s6 = results.get("s6")
    add("Checks made during the run:")
    add("")
    for key, label in (("s1", "(1)"), (f"s{SIGNED}", f"({SIGNED})"), ("s3", "(3)"), ("s4", "(4)")):
        if results.get(key) and results[key].get("check"):
            add(f"- {label} {results[key]['check']}")
    for key in ("u", "s", "n", "up"):
        if results.get(f"s{REDIS}{key}"):
            add(f"- ({REDIS}{key}) sources answered in the last repetition: {results[f's{REDIS}{key}']['sources']}")
    check = results.get(f"s{REDIS}_check")
    if check:
        for key, label in (("a", f"({REDIS}) replica a"), ("c", f"({REDIS}c) the control")):
            hits, misses, requests = check[key]
            add(f"- {label}: hit counter +{hits:.0f} for {requests} requests, miss counter +{misses:.0f}")
        add(f"- ({REDIS}) commands replica a sent on its `answers` Redis connection during its hit runs: {check['answers']:.0f}")
    if results.get("arenas"):
        add("- malloc arena of each HTTP worker thread after the hit loop (gdb; whether two share one is decided "
            "at random when an instance starts, and lasts its life): "
            + "; ".join(f"{label} {arenas_text(arenas)}" for label, arenas in results["arenas"].items()))
    redis_splits = results.get(f"s{REDIS}_splits")
    if redis_splits and redis_splits["a"]:
        add(f"- CPU of the HTTP worker threads per repetition, busiest first (in %): ({REDIS}) {', '.join(redis_splits['a'])}; "
            f"({REDIS}c) {', '.join(redis_splits['c'])}")
    if results.get(f"s{REDIS}_tier"):
        add(f"- ({REDIS}) replica b's shared-tier counters at the end: {results[f's{REDIS}_tier']}")
    splits = results.get("worker_splits")
    if splits:
        add(f"- CPU of the {len(splits[1][0].split('/'))} HTTP worker threads per repetition, busiest first "
            f"(in %): (1) {', '.join(splits[1])}; (2) {', '.join(splits[2])}. libmicrohttpd's workers race to "
            f"accept, so wrk's {CONNECTIONS} connections, opened at once, split between them at random, and a "
            "lopsided split caps that run; compare (1) and (2) on repetitions with similar splits")
    for key, label in (("s1", "(1)"), ("s8", "(8)"), (f"s{SIGNED}", f"({SIGNED})"), (f"s{RFC8484}", f"({RFC8484})"),
                       (f"s{EMAS}", f"({EMAS})"), (f"s{DOHJSON}", f"({DOHJSON})"),
                       ("s2", "(2)"), ("s3", "(3)"),
                       ("s4", "(4)"), ("s4_floor", "(4f)"), ("s4_dnss", "(4u)"), ("s5", "(5)"), ("s5_misses", "(5m)")):
        s = results.get(key)
        if s:
            add(f"- {label} non-2xx responses: {s['non2xx']}, socket errors/timeouts: {s['errors']}")
    if s6:
        add(f"- (6) non-2xx responses: {s6['hits']['non2xx']}, socket errors/timeouts: {s6['hits']['errors']}")
    if results.get("hit_body"):
        add(f"- hit response measured: {len(results['hit_body'])} bytes, `{results['hit_body']}`; "
            "the baseline sends exactly these bytes with the same Content-Type")
    add("")


def scale_table(add, results):
    """The scale of the cache (6): RSS per entry, fill rate, warm restart, the cache alone."""
    s6 = results.get("s6")
    if s6:
        add("## Scale of the cache")
        add("")
        add("| figure | value |")
        add("|---|---|")
        add(f"| RSS before filling | {s6['rss0_kib'] / 1024:.1f} MiB |")
        for key, value in s6.items():
            if key.startswith("rss_") and isinstance(value, dict):
                add(f"| RSS at {value['entries']:,} entries | {value['rss_kib'] / 1024:.1f} MiB → "
                    f"**{value['bytes_per_entry']:.0f} bytes per entry** |")
        stops = [v for k, v in s6.items() if k.startswith("rss_") and isinstance(v, dict)]
        if len(stops) == 2 and stops[1]["entries"] > stops[0]["entries"]:
            marginal = (stops[1]["rss_kib"] - stops[0]["rss_kib"]) * 1024 / (stops[1]["entries"] - stops[0]["entries"])
            add(f"| growth from {stops[0]['entries']:,} to {stops[1]['entries']:,} entries | "
                f"{marginal:.0f} bytes per added entry |")
        add(f"| fill rate (preload, {PRELOAD_PARALLEL} requests of {PRELOAD_BATCH} hosts at once, "
            f"preloadConcurrency {PRELOAD_CONCURRENCY}) | {s6['fill_rate']:,.0f} names/s |")
        add(f"| SIGTERM to exit (flushes the write-behind queue) | {s6['stop_seconds']:.2f} s |")
        add(f"| warm restart: start to `/readyz` 200 | **{s6['restart_seconds']:.2f} s**, "
            f"{s6['entries_after_restart']:,} entries loaded, hit after restart: {s6['hit_after_restart']} |")
        if s6.get("restart_load_ms") is not None:
            add(f"| the warm load itself (its log line), and the process's CPU by `/readyz` | "
                f"{s6['restart_load_ms']} ms; {cpu_text(s6['restart_cpu'])} |")
        add(f"| RSS after the warm restart | {s6['rss_after_restart_kib'] / 1024:.1f} MiB |")
        memory = s6.get("in_process", {})
        if not memory:
            add("| the answer cache alone, in process (`cachesim --memory`) | not measured: cachesim did not build or run "
                "(the run's log says why) |")
        if "answercache" in memory:
            full, evicting = memory["answercache"]
            add(f"| the answer cache alone, in process, at {SCALE:,} entries (`cachesim --memory`) | "
                f"**{full} bytes per entry**, {evicting} once it evicts |")
        if "lru" in memory and "s3fifo" in memory:
            add(f"| the same keys and answers in `BoundedCache` shards: LRU (before issue 16) / S3-FIFO | "
                f"{memory['lru'][0]} / {memory['s3fifo'][0]} bytes per entry, "
                f"{memory['lru'][1]} / {memory['s3fifo'][1]} once they evict |")
        add("")
        add("RSS is `VmRSS` of `/proc/PID/status`; bytes per entry = (RSS after filling − RSS before) / entries "
            "(one entry = one host × family; only A is asked). It includes everything the process grew by: "
            "cache, SQLite page cache, allocator slack. The in-process rows fill the cache alone with the same "
            "names and answers, each layout in a process of its own, and read RSS again after a tenth more "
            "names (the policy's eviction-time structures then exist).")
        add("")


def targets(add, results):
    """The targets' table: each figure against its goal, PASS or FAIL, with the ratios beside."""
    add("## Targets (issue 4; the later issues' rows name theirs)")
    add("")
    add("| figure | target | measured | |")
    add("|---|---|---|---|")

    def target(figure, goal, value, ok, shown=None):
        if value is None:
            add(f"| {figure} | {goal} | not measured | — |")
        else:
            # Three decimals: a ratio of 0.897 must not read as a failing 0.90.
            add(f"| {figure} | {goal} | {shown or f'{value:.3f}'} | {'PASS' if ok else '**FAIL**'} |")

    if results.get("s1"):
        hit_ratios(add, target, results)
    miss_targets(add, target, results)
    plain_dns_targets(target, results)
    policy_targets(target, results)
    redis_ratios(add, target, results)
    scale_ratios(add, target, results)
    add("")


def hit_ratios(add, target, results):
    """The hit sections against (2), (3) and (1): baseline, peer, limiter, slow upstream, TLS,
    signed requests and the wire formats."""
    s1, s2, s3, s5 = results.get("s1"), results.get("s2"), results.get("s3"), results.get("s5")
    target("hit throughput / baseline", "≥ 0.85", s1 and s2 and s1["rps"] / s2["rps"],
           s1 and s2 and s1["rps"] / s2["rps"] >= 0.85)
    if s1 and s2 and len(s1["reps"]) == len(s2["reps"]):
        # (1) and (2) of one repetition run back to back: their ratio drifts less with the machine.
        pairs = [a / b for a, b in zip(s1["reps"], s2["reps"])]
        add(f"| (1) / (2) per repetition, their median (not the issue's figure) | — | "
            f"{statistics.median(pairs):.3f} ({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
    target("hit p99 / baseline p99", "≤ 1.5", s1 and s2 and s1["p99_ms"] / s2["p99_ms"],
           s1 and s2 and s1["p99_ms"] / s2["p99_ms"] <= 1.5)
    target("hit throughput / dnss+unbound peer", "≥ 1.4", s1 and s3 and s1["rps"] / s3["rps"],
           s1 and s3 and s1["rps"] / s3["rps"] >= 1.4)
    s8 = results.get("s8")
    target("hit throughput with the limiter on / (1) (issue 11)", "≥ 0.95", s1 and s8 and s8["rps"] / s1["rps"],
           s1 and s8 and s8["rps"] / s1["rps"] >= 0.95)
    if s1 and s8 and len(s1["reps"]) == len(s8["reps"]):
        pairs = [b / a for a, b in zip(s1["reps"], s8["reps"])]
        add(f"| (8) / (1) per repetition, their median | — | {statistics.median(pairs):.3f} "
            f"({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
    target("hit throughput with slow upstream / (1)", "≥ 0.9", s1 and s5 and s5["rps"] / s1["rps"],
           s1 and s5 and s5["rps"] / s1["rps"] >= 0.9)
    s7, s7b = results.get("s7"), results.get("s7b")
    if s7 and s7b:
        add(f"| hits over TLS / baseline over TLS, (7) / (7b) (issue 11) | — | {s7['rps'] / s7b['rps']:.3f} | — |")
    s_signed = results.get(f"s{SIGNED}")
    if s1 and s2 and s_signed:
        add(f"| hits with signed requests / (1), ({SIGNED}) / (1) (issue 11) | — | {s_signed['rps'] / s1['rps']:.3f} | — |")
        if len(s1["reps"]) == len(s_signed["reps"]):
            pairs = [b / a for a, b in zip(s1["reps"], s_signed["reps"])]
            add(f"| ({SIGNED}) / (1) per repetition, their median | — | {statistics.median(pairs):.3f} "
                f"({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
        add(f"| hits with signed requests / baseline, ({SIGNED}) / (2) (issue 11) | — | "
            f"{s_signed['rps'] / s2['rps']:.3f} | — |")
        add(f"| hits with signed requests, p99 / (1)'s p99 | — | {s_signed['p99_ms'] / s1['p99_ms']:.2f} | — |")
    for number in (RFC8484, EMAS, DOHJSON):
        s_format = results.get(f"s{number}")
        if s1 and s2 and s_format:
            ratio = s_format["rps"] / s2["rps"]
            target(f"{FORMAT_NAMES[number]} hit throughput / baseline, ({number}) / (2) (issue 12)", "≥ 0.85", ratio,
                   ratio >= 0.85)
            add(f"| {FORMAT_NAMES[number]} hits / v1 hits, ({number}) / (1) | — | {s_format['rps'] / s1['rps']:.3f} | — |")


def redis_ratios(add, target, results):
    """Section (13)'s rows: Redis configured against the control and (1), misses, replicas."""
    s1 = results.get("s1")
    s_redis, s_control = results.get(f"s{REDIS}"), results.get(f"s{REDIS}c")
    if s_redis and s_control:
        ratio = s_redis["rps"] / s_control["rps"]
        target(f"hit throughput with Redis configured / without, ({REDIS}) / ({REDIS}c) (issue 15)", "≥ 0.97", ratio,
               ratio >= 0.97)
        if len(s_control["reps"]) == len(s_redis["reps"]):
            pairs = [b / a for a, b in zip(s_control["reps"], s_redis["reps"])]
            add(f"| ({REDIS}) / ({REDIS}c) per repetition, their median | — | {statistics.median(pairs):.3f} "
                f"({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
    cpu = results.get(f"s{REDIS}_cpu")
    if cpu and cpu["a"] and cpu["c"]:
        pairs = [a / c for a, c in zip(cpu["a"], cpu["c"])]
        add(f"| server CPU per hit, ({REDIS}) / ({REDIS}c), per repetition, their median | — | {statistics.median(pairs):.3f} "
            f"({', '.join(f'{x:.2f}' for x in pairs)}; µs per hit {statistics.median(cpu['a']):.1f} against "
            f"{statistics.median(cpu['c']):.1f}) | — |")
    if s1 and s_redis:
        add(f"| ({REDIS}) / (1), against (1)'s instance (not like with like: four accounts, another cache limit, "
            f"measured earlier in the repetition) | — | {s_redis['rps'] / s1['rps']:.3f} | — |")
        if s_control:
            add(f"| ({REDIS}c) / (1), the control against (1)'s instance, neither with Redis | — | "
                f"{s_control['rps'] / s1['rps']:.3f} | — |")
    shared, upstream = results.get(f"s{REDIS}s"), results.get(f"s{REDIS}u")
    # (13s) comes from Python clients: compared with (13up), never-asked names from the same clients.
    python_upstream = results.get(f"s{REDIS}up")
    if shared and python_upstream:
        add(f"| local miss then shared hit / local miss then upstream, ({REDIS}s) / ({REDIS}up), Python clients, requests/s "
            f"(issue 15) | — | {shared['rps'] / python_upstream['rps']:.2f} (p50 {shared['p50_ms']:.2f} ms against "
            f"{python_upstream['p50_ms']:.2f} ms) | — |")
    if results.get(f"s{REDIS}n") and upstream:
        plain = results[f"s{REDIS}n"]
        ratio = upstream["rps"] / plain["rps"]
        target(f"misses/s with Redis / without, ({REDIS}u) / ({REDIS}n) (issue 24)", "≥ 0.9", ratio, ratio >= 0.9,
               f"{ratio:.3f} (p50 {upstream['p50_ms']:.2f} ms against {plain['p50_ms']:.2f} ms)")
        if len(upstream["reps"]) == len(plain["reps"]):
            # Each repetition runs the two back to back: its pair shares the hour.
            pairs = [u / n for u, n in zip(upstream["reps"], plain["reps"])]
            add(f"| ({REDIS}u) / ({REDIS}n) per repetition, their median | — | {statistics.median(pairs):.3f} "
                f"({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
    miss_cpu = results.get(f"s{REDIS}_misscpu")
    if miss_cpu:
        u, n = miss_cpu["u"], miss_cpu["n"]
        add(f"| CPU per miss with Redis / without, ({REDIS}u) / ({REDIS}n), µs, medians | — | "
            f"httpdnsd {statistics.median(u['server']):.1f} against {statistics.median(n['server']):.1f}; "
            f"redis-server {statistics.median(u['redis']):.1f} per miss of ({REDIS}u) | — |")
    per_name = results.get(f"s{REDIS}r")
    if per_name:
        add(f"| upstream queries per unique name, 3 replicas each asked it at once, shared tier on / off (issue 15) | — | "
            f"{per_name['on']:.2f} / {per_name['off']:.2f} ({per_name['names']} names) | — |")


def scale_ratios(add, target, results):
    """(5) and (6) against their same-time references, and the scale targets of (6)."""
    s1, s5, s6 = results.get("s1"), results.get("s5"), results.get("s6")
    s5q = results.get("s5_quiet")
    if s5 and s5q:
        add(f"| (5) / (5q), the same-time reference (not the issue's figure) | — | {s5['rps'] / s5q['rps']:.2f} | — |")
    if 6 not in SECTIONS:
        return  # not run: no "not measured" rows
    target("hit throughput at 1M entries / (1)", "≥ 0.9", s1 and s6 and s6["hits"]["rps"] / s1["rps"],
           s1 and s6 and s6["hits"]["rps"] / s1["rps"] >= 0.9)
    if s6 and s6.get("hits_quiet"):
        add(f"| (6) / (6q), the same-time reference (not the issue's figure) | — | "
            f"{s6['hits']['rps'] / s6['hits_quiet']['rps']:.2f} | — |")
    if s6:
        worst = max(v["bytes_per_entry"] for k, v in s6.items() if k.startswith("rss_") and isinstance(v, dict))
        target("RSS per cached entry (worst of the stops)", "≤ 400 bytes", worst, worst <= 400, f"{worst:.0f} bytes")
        for limit, issue in ((3, ""), (1, " (issue 24)")):
            target(f"warm restart with {s6['entries_after_restart']:,} entries{issue}", f"≤ {limit:.1f} s to ready",
                   s6["restart_seconds"], s6["restart_seconds"] <= limit and s6["entries_after_restart"] >= SCALE,
                   f"{s6['restart_seconds']:.2f} s")
    else:
        target("RSS per cached entry", "≤ 400 bytes", None, False)
        target("warm restart with 1M entries", "≤ 3 s to ready", None, False)
        target("warm restart with 1M entries (issue 24)", "≤ 1.0 s to ready", None, False)


def notes(add, results):
    """The figure without a target: the slow upstream's CPU."""
    if results.get("s5_upstream_cpu") is not None:
        add(f"Slow upstream: the delaying upstream (`bench/slowdoh/slow_doh.c`) used "
            f"{results['s5_upstream_cpu'] * 100:.0f} % of one core during (5), on the same {results['machine']['cores']} "
            "cores as the server and the load; a `tc netem` delay would cost no CPU, but needs a network "
            "namespace with its own loopback for all the processes.")
        add("")


def kept_section(path):
    """The kept section of the RESULTS.md at `path`, up to the next section; "" if none."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return ""
    start = text.find("\n" + KEPT_SECTION)
    if start < 0:
        return ""
    end = text.find("\n## ", start + 1)
    return text[start + 1:] if end < 0 else text[start + 1:end + 1]
