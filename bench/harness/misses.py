"""Section (4): misses, each request a name never asked before, through httpdnsd, dnss, the
caching unbound and the authoritative one; beside (4u), the same chain without httpdnsd, and
(4d), dnsperf against the caching unbound alone: what httpdnsd adds to a miss."""

import os
import random
import re
import statistics
import subprocess

from .load import summarize, wrk, write_list
from .settings import CONNECTIONS, DURATION, REPS, WRK_THREADS, ZONE, log


def measure_misses(work, main, stack, results):
    """(4), (4u) and (4d), repetition by repetition, with fresh names each time; stores their
    figures and the check that (4) moved the miss counter once per request."""
    runs4, runs4_dnss, dnsperf_runs = [], [], []
    misses_before = main.counter("httpdns_cache_misses_total", "bench")
    for rep in range(REPS):
        log(f"section 4, repetition {rep + 1}/{REPS}")
        tag = f"m{rep}r{random.randrange(10**6)}"
        runs4.append(wrk(main.port, "distinct.lua", {"BENCH_MODE": "resolve", "BENCH_TAG": tag,
                                                     "BENCH_PREFIX": "/v1/bench/resolve?host=",
                                                     "BENCH_ZONE": ZONE}, label="(4) httpdnsd misses"))
        tag = f"d{rep}r{random.randrange(10**6)}"
        runs4_dnss.append(wrk(stack.dnss_port, "distinct.lua", {"BENCH_MODE": "doh", "BENCH_TAG": tag,
                                                                "BENCH_ZONE": ZONE},
                              label="(4) dnss+unbound misses"))
        dnsperf_runs.append(dnsperf(work, stack.cache_port, rep))
    misses_delta = main.counter("httpdns_cache_misses_total", "bench") - misses_before
    results["s4"] = summarize(runs4)
    total = sum(r["requests"] for r in runs4)
    results["s4"]["check"] = (f"{total} requests, each a distinct name never asked before; "
                              f"miss counter +{misses_delta:.0f}")
    results["s4_dnss"] = summarize(runs4_dnss)
    results["s4_dnsperf"] = {"qps": statistics.median(d["qps"] for d in dnsperf_runs),
                             "reps": [round(d["qps"]) for d in dnsperf_runs],
                             "lost": sum(d["lost"] for d in dnsperf_runs)}


def dnsperf(work, port, rep):
    """The caching unbound's own miss rate: dnsperf with distinct never-asked names (UDP)."""
    count = 3_000_000 if DURATION >= 5 else 600_000
    tag = f"u{rep}r{random.randrange(10**6)}"
    path = write_list(os.path.join(work, f"dnsperf-{rep}.txt"), (f"{tag}-{i}.{ZONE} A" for i in range(count)))
    out = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", path, "-l", str(DURATION),
                          "-n", "1", "-c", str(CONNECTIONS), "-T", str(WRK_THREADS), "-q", str(CONNECTIONS * 10)],
                         capture_output=True, text=True, timeout=DURATION + 120)
    os.remove(path)
    qps = re.search(r"Queries per second:\s+([\d.]+)", out.stdout)
    lost = re.search(r"Queries lost:\s+(\d+)", out.stdout)
    if not qps:
        raise RuntimeError(f"dnsperf gave no rate:\n{out.stdout}\n{out.stderr}")
    result = {"qps": float(qps.group(1)), "lost": int(lost.group(1)) if lost else 0}
    log(f"  dnsperf unbound misses: {result['qps']:.0f} q/s, lost {result['lost']}")
    return result
