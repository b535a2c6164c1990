#!/usr/bin/env python3
"""Section (4)'s misses and (4p)'s preload, two builds alternating on one upstream stack: which
build's miss costs less.

    python3 bench/ab_misses.py BASELINE_BINARY CANDIDATE_BINARY [ROUNDS]

On loopback only: the stack of `make bench` (unbound answering every name below bench.test, a
caching unbound, dnss as the RFC 8484 front) is started once, then one instance of each binary,
each with one account whose upstream is dnss. ROUNDS times (default 5) each instance takes a wrk
run of BENCH_DURATION seconds (default 10) asking a never-asked name every request, the order of
the two swapped every round so that drift hits both alike. Around each run it reads the CPU of
httpdnsd's threads and of dnss (`/proc`, kernel time included) and httpdnsd's context switches;
then it preloads BENCH_MISS_PRELOAD never-asked names (default 40000, as section (4p)) and times it.

With BENCH_AB_REDIS=1 both instances have `redis` set to one redis-server started for the run (as
section (13u): every miss also misses in Redis, takes the name's lock and stores the answer there),
and redis-server's CPU per miss is read beside dnss's.

Prints each run, then per build the medians of misses/s, p99, httpdnsd's CPU µs per miss, that
CPU over dnss's CPU per request in the same run (the machine's speed moves during a run; the
ratio to the upstream beside it moves less), that CPU's user-space and kernel parts, and the
voluntary context switches per miss (each one a thread that slept and was woken); then
candidate / baseline for each.
"""

import os
import random
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.load import wrk  # noqa: E402
from harness.misses import HTTPDNSD_GROUPS, WHOLE, with_cpu  # noqa: E402
from harness.processes import Processes  # noqa: E402
from harness.servers import HTTPDNSD, Stack, start_redis  # noqa: E402
from harness.settings import BENCH_DIR, MISS_PRELOAD, ZONE, log  # noqa: E402


def one_run(instance, dnss_pid, redis_pid, label):
    """One wrk run of never-asked names against `instance`: requests/s, p99 ms, CPU µs per miss
    (httpdnsd, all threads; dnss; redis-server when there is one), voluntary context switches
    per miss."""
    env = {"BENCH_MODE": "resolve", "BENCH_TAG": f"ab{random.randrange(10**9)}",
           "BENCH_PREFIX": "/v1/bench/resolve?host=", "BENCH_ZONE": ZONE}
    pids = [("httpdnsd", instance.process.pid, HTTPDNSD_GROUPS), ("dnss", dnss_pid, WHOLE)]
    if redis_pid:
        pids.append(("redis", redis_pid, WHOLE))
    result = with_cpu(pids, lambda: wrk(instance.port, "distinct.lua", env, label=label))
    if result["non2xx"] or result["errors"]:
        raise RuntimeError(f"{label}: {result['non2xx']} non-2xx answers, {result['errors']} socket errors")
    cpu = sum(result["cpu"]["httpdnsd"].values())
    dnss = result["cpu"]["dnss"]["all threads"]
    names = [f"ab{random.randrange(10**9)}-{i}.{ZONE}" for i in range(max(1, MISS_PRELOAD))]
    preload = len(names) / instance.preload("bench", names)
    return {"rps": result["rps"], "p99": result["p99_us"] / 1000, "cpu": cpu, "ratio": cpu / dnss if dnss else 0.0,
            "switches": result["switches"]["httpdnsd"][0], "preload": preload,
            "user": result["user_system"]["httpdnsd"][0], "kernel": result["user_system"]["httpdnsd"][1],
            "redis": result["cpu"]["redis"]["all threads"] if redis_pid else 0.0}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binaries = {"baseline": os.path.abspath(sys.argv[1]), "candidate": os.path.abspath(sys.argv[2])}
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    work = tempfile.mkdtemp(prefix="httpdnsd-ab-")
    subprocess.run(["gcc", "-O2", "-o", os.path.join(work, "slow_doh"),
                    os.path.join(BENCH_DIR, "slowdoh", "slow_doh.c")], check=True)
    processes = Processes(work)
    try:
        stack = Stack(processes, work)
        stack.start()
        upstream = f"doh:http://127.0.0.1:{stack.dnss_port}/dns-query"
        redis, extra = None, {}
        if os.environ.get("BENCH_AB_REDIS") == "1":
            redis, port = start_redis(processes, work)
            extra = {"redis": f"redis://127.0.0.1:{port}"}
        instances = {}
        for name, binary in binaries.items():
            instances[name] = HTTPDNSD(processes, work, binary, f"httpdnsd-{name}", {"bench": upstream},
                                       cache_limit=4_000_000, extra=extra)
            instances[name].start()
        runs = {name: [] for name in binaries}
        for number in range(rounds):
            order = list(binaries) if number % 2 == 0 else list(reversed(binaries))
            for name in order:
                run = one_run(instances[name], stack.dnss.pid, redis.pid if redis else None, f"{name} {number + 1}")
                runs[name].append(run)
                log(f"round {number + 1} {name}: {run['rps']:.0f} misses/s, p99 {run['p99']:.2f} ms, "
                    f"{run['cpu']:.1f} µs CPU per miss ({run['ratio']:.2f} × dnss's), "
                    f"{run['switches']:.2f} voluntary switches per miss; preload {run['preload']:.0f} names/s"
                    + (f"; redis-server {run['redis']:.1f} µs CPU per miss" if redis else ""))
    finally:
        processes.stop_all()
    medians = {name: {key: statistics.median(run[key] for run in runs[name]) for key in runs[name][0]}
               for name in binaries}
    print()
    print("| figure (median) | baseline | candidate | candidate / baseline |")
    print("|---|---|---|---|")
    for key, what in (("rps", "misses/s"), ("p99", "p99 ms"), ("cpu", "httpdnsd CPU µs per miss"),
                      ("ratio", "httpdnsd CPU per miss / dnss CPU per request"),
                      ("user", "of which user space, µs per miss"), ("kernel", "of which kernel, µs per miss"),
                      ("switches", "voluntary context switches per miss"), ("preload", "preload, names/s"),
                      ("redis", "redis-server CPU µs per miss")):
        if key == "redis" and not os.environ.get("BENCH_AB_REDIS") == "1":
            continue
        base, cand = medians["baseline"][key], medians["candidate"][key]
        print(f"| {what} | {base:.2f} | {cand:.2f} | {cand / base if base else float('nan'):.2f} |")


if __name__ == "__main__":
    main()
