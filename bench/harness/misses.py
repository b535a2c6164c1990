"""Section (4): misses, each request a name never asked before, through httpdnsd, dnss, the
caching unbound and the authoritative one; beside (4u), the same chain without httpdnsd, and
(4d), dnsperf against the caching unbound alone: what httpdnsd adds to a miss. (4f) sends the same
requests through `bench/baseline/forwarder.c`, a C forwarder built as httpdnsd's HTTP threads are
(libmicrohttpd in external epoll mode, suspend and resume, keep-alive HTTP/1.1 to dnss) that does
nothing else: the floor of a miss on this HTTP layer. Around (4), (4f) and (4u) the CPU of the
processes' threads is read from /proc (CPU per miss, thread by thread), and (4p) times a preload of
never-asked names: names/s against (4u)'s rate."""

import os
import random
import re
import statistics
import subprocess

from .clients import http_get
from .load import summarize, wrk, write_list
from .processes import free_port, wait_until
from .procstat import (cpu_by_group, is_http_thread, switches_between, thread_switches, thread_ticks,
                       user_system_seconds)
from .settings import CONNECTION_MEMORY, CONNECTIONS, DURATION, MISS_PRELOAD, REPS, WRK_THREADS, ZONE, log

# httpdnsd's threads as the report groups them: the curl loop (libcurl's transfers, and the
# HTTP/1.1 requests of threads that carry no client of their own), the HTTP threads (each runs a
# libmicrohttpd daemon and the HTTP/1.1 client of its misses: `httpdnsd-http`; `MHD-...` for a
# build still on libmicrohttpd's own thread pool); every other thread counts under its own name.
HTTPDNSD_GROUPS = [("curl loop", lambda name: name == "httpdnsd-curl"),
                   ("HTTP", is_http_thread)]
# dnss is one Go process whose threads all carry its name: counted whole.
WHOLE = [("all threads", lambda name: True)]


def with_cpu(pids, run):
    """Runs `run()` (a wrk run) and adds to its summary `cpu`: for each (label, pid, groups) of
    `pids`, the CPU µs that process used meanwhile per request, by thread group; and `switches`:
    its threads' (voluntary, involuntary) context switches per request; and `user_system`: its CPU
    µs per request in its own code and libraries (user) and in the kernel (system), every thread."""
    before = {label: thread_ticks(pid) for label, pid, _ in pids}
    switched = {label: thread_switches(pid) for label, pid, _ in pids}
    split = {label: user_system_seconds(pid) for label, pid, _ in pids}
    result = run()
    requests = max(1, result["requests"])
    result["user_system"] = {label: tuple((after - was) * 1e6 / requests for was, after in
                                          zip(split[label], user_system_seconds(pid)))
                             for label, pid, _ in pids}
    result["cpu"] = {label: {group: us / requests for group, us in cpu_by_group(before[label], thread_ticks(pid),
                                                                                 groups).items()}
                     for label, pid, groups in pids}
    result["switches"] = {label: tuple(n / requests for n in switches_between(switched[label], thread_switches(pid)))
                          for label, pid, _ in pids}
    return result


def start_forwarder(processes, work, dnss_port):
    """The C forwarder of (4f) (built by `servers.build` into `work`), one thread per core as
    httpdnsd's default, dnss as its upstream; returns (process, port) once it forwards."""
    port = free_port()
    process = processes.start("forwarder", [os.path.join(work, "forwarder"), str(port), str(os.cpu_count() or 1),
                                            str(CONNECTION_MEMORY), str(dnss_port)])
    wait_until(lambda: http_get(port, f"/?host=probe.{ZONE}")[0] == 200, 15, "forwarder", process)
    return process, port


def measure_misses(work, processes, main, stack, results):
    """(4), (4f), (4u), (4p) and (4d), repetition by repetition, with fresh names each time; stores
    their figures, the CPU per miss by thread, and the check that (4) moved the miss counter once
    per request."""
    runs4, runs4_floor, runs4_dnss, preloads, dnsperf_runs = [], [], [], [], []
    misses_delta = 0
    httpdnsd_pid, dnss_pid = main.process.pid, stack.dnss.pid
    forwarder, forwarder_port = start_forwarder(processes, work, stack.dnss_port)
    for rep in range(REPS):
        log(f"section 4, repetition {rep + 1}/{REPS}")
        tag = f"m{rep}r{random.randrange(10**6)}"
        env = {"BENCH_MODE": "resolve", "BENCH_TAG": tag, "BENCH_PREFIX": "/v1/bench/resolve?host=", "BENCH_ZONE": ZONE}
        misses_before = main.counter("httpdns_cache_misses_total", "bench")
        runs4.append(with_cpu([("httpdnsd", httpdnsd_pid, HTTPDNSD_GROUPS), ("dnss", dnss_pid, WHOLE)],
                              lambda: wrk(main.port, "distinct.lua", env, label="(4) httpdnsd misses")))
        misses_delta += main.counter("httpdns_cache_misses_total", "bench") - misses_before
        log("  (4) CPU per miss, µs: " + ", ".join(f"{group} {us:.1f}" for group, us in runs4[-1]["cpu"]["httpdnsd"].items())
            + f"; dnss {runs4[-1]['cpu']['dnss']['all threads']:.1f}; httpdnsd context switches per miss "
            + "{:.2f} voluntary, {:.2f} involuntary".format(*runs4[-1]["switches"]["httpdnsd"]))
        env = dict(env, BENCH_TAG=f"f{rep}r{random.randrange(10**6)}")
        runs4_floor.append(with_cpu([("forwarder", forwarder.pid, WHOLE), ("dnss", dnss_pid, WHOLE)],
                                    lambda: wrk(forwarder_port, "distinct.lua", env, label="(4f) C forwarder misses")))
        log(f"  (4f) C forwarder CPU per miss: {runs4_floor[-1]['cpu']['forwarder']['all threads']:.1f} µs")
        tag = f"d{rep}r{random.randrange(10**6)}"
        env = {"BENCH_MODE": "doh", "BENCH_TAG": tag, "BENCH_ZONE": ZONE}
        runs4_dnss.append(with_cpu([("dnss", dnss_pid, WHOLE)],
                                   lambda: wrk(stack.dnss_port, "distinct.lua", env, label="(4) dnss+unbound misses")))
        log(f"  (4u) dnss CPU per request: {runs4_dnss[-1]['cpu']['dnss']['all threads']:.1f} µs")
        if MISS_PRELOAD:
            names = [f"p{rep}r{random.randrange(10**6)}-{i}.{ZONE}" for i in range(MISS_PRELOAD)]
            seconds = main.preload("bench", names)
            preloads.append(MISS_PRELOAD / seconds)
            log(f"  (4p) preload of {MISS_PRELOAD} never-asked names: {MISS_PRELOAD / seconds:.0f} names/s")
        dnsperf_runs.append(dnsperf(work, stack.cache_port, rep))
    processes.stop(forwarder)
    results["s4"] = summarize(runs4)
    total = sum(r["requests"] for r in runs4)
    results["s4"]["check"] = (f"{total} requests, each a distinct name never asked before; "
                              f"miss counter +{misses_delta:.0f}")
    results["s4_dnss"] = summarize(runs4_dnss)
    results["s4_floor"] = summarize(runs4_floor)
    results["s4_cpu"] = {"httpdnsd": [r["cpu"]["httpdnsd"] for r in runs4],
                         "dnss_in_4": [r["cpu"]["dnss"]["all threads"] for r in runs4],
                         "dnss": [r["cpu"]["dnss"]["all threads"] for r in runs4_dnss],
                         "floor": [r["cpu"]["forwarder"]["all threads"] for r in runs4_floor],
                         "switches": [r["switches"]["httpdnsd"] for r in runs4],
                         "user_system": {"httpdnsd": [r["user_system"]["httpdnsd"] for r in runs4],
                                         "floor": [r["user_system"]["forwarder"] for r in runs4_floor],
                                         "dnss": [r["user_system"]["dnss"] for r in runs4_dnss]}}
    if preloads:
        results["s4_preload"] = {"rate": statistics.median(preloads), "reps": [round(p) for p in preloads],
                                 "names": MISS_PRELOAD}
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
