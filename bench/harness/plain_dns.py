"""Section (14), issue 26: plain-DNS cache hits. dnsperf (UDP) asks the warmed names of (1) of
httpdnsd's `dnsListen` (account `bench`, an instance of its own), and (14u) of the caching
unbound, whose cache holds the same names: the same queries, the same load generator, the same
cores, one serving thread each (httpdnsd's DNS listener has one thread, the unbound is
`num-threads: 1`). The two alternate in each repetition, (14) first in even ones."""

import os
import re
import statistics
import subprocess

from .clients import dns_ask
from .load import write_list
from .processes import free_port
from .servers import HTTPDNSD
from .settings import CONNECTIONS, DURATION, PLAINDNS, REPS, WRK_THREADS, log

# dnsperf's queries in flight at most (-q), over CONNECTIONS sockets (-c) and WRK_THREADS threads.
OUTSTANDING = 4 * CONNECTIONS


def dnsperf_hits(port, path, label):
    """One dnsperf run over the query file `path` (cycled until DURATION) against 127.0.0.1:`port`;
    returns its queries/s, completed and lost queries and average latency (ms)."""
    out = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", path, "-l", str(DURATION),
                          "-c", str(CONNECTIONS), "-T", str(WRK_THREADS), "-q", str(OUTSTANDING)],
                         capture_output=True, text=True, timeout=DURATION + 120)
    figures = {}
    for key, pattern in (("qps", r"Queries per second:\s+([\d.]+)"), ("completed", r"Queries completed:\s+(\d+)"),
                         ("lost", r"Queries lost:\s+(\d+)"), ("latency_s", r"Average Latency \(s\):\s+([\d.]+)"),
                         ("noerror", r"NOERROR (\d+)")):
        match = re.search(pattern, out.stdout)
        if not match:
            raise RuntimeError(f"dnsperf {label} printed no {key}:\n{out.stdout}\n{out.stderr}")
        figures[key] = float(match.group(1))
    log(f"  dnsperf {label}: {figures['qps']:.0f} q/s, lost {figures['lost']:.0f}, "
        f"average latency {figures['latency_s'] * 1000:.2f} ms")
    return figures


def summary(runs):
    """The medians of a side's repetitions."""
    return {"qps": statistics.median(r["qps"] for r in runs), "reps": [round(r["qps"]) for r in runs],
            "latency_ms": statistics.median(r["latency_s"] for r in runs) * 1000,
            "lost": sum(r["lost"] for r in runs), "completed": sum(r["completed"] for r in runs),
            "noerror": sum(r["noerror"] for r in runs)}


def measure_plain_dns(work, processes, binary, stack, names, results):
    """(14) and (14u), REPS times each, alternating; stores their figures and what was checked:
    every query answered NOERROR, httpdnsd's hit counter moved once per query and its miss counter
    not at all, unbound's cache missed nothing."""
    dns_port = free_port()
    upstream = f"doh:http://127.0.0.1:{stack.dnss_port}/dns-query"
    server = HTTPDNSD(processes, work, binary, "httpdnsd-dns", {"bench": upstream}, cache_limit=4 * len(names),
                      extra={"dnsListen": f"127.0.0.1:{dns_port}", "dnsAccount": "bench"})
    server.start()
    # Through dnss and the caching unbound: the one preload warms both caches with the same names.
    seconds = server.preload("bench", names)
    log(f"section {PLAINDNS}: warmed {len(names)} names into httpdnsd and the caching unbound in {seconds:.1f} s")
    for port, who in ((dns_port, "httpdnsd"), (stack.cache_port, "unbound")):
        if dns_ask(port, names[0]) != (0, 2):
            raise RuntimeError(f"{who} does not answer {names[0]} with two records over plain DNS")
    path = write_list(os.path.join(work, "plain-dns-queries.txt"), (f"{name} A" for name in names))
    runs, runs_unbound = [], []
    hits = misses = cachemiss = 0.0
    for rep in range(REPS):
        log(f"section {PLAINDNS}, repetition {rep + 1}/{REPS}")
        for side in ((0, 1) if rep % 2 == 0 else (1, 0)):
            if side == 0:
                hits_before = server.counter("httpdns_cache_hits_total", "bench")
                misses_before = server.counter("httpdns_cache_misses_total", "bench")
                runs.append(dnsperf_hits(dns_port, path, f"({PLAINDNS}) httpdnsd dnsListen hits"))
                hits += server.counter("httpdns_cache_hits_total", "bench") - hits_before
                misses += server.counter("httpdns_cache_misses_total", "bench") - misses_before
            else:
                before = stack.cache_stats()
                runs_unbound.append(dnsperf_hits(stack.cache_port, path, f"({PLAINDNS}u) unbound cache hits"))
                cachemiss += stack.cache_stats().get("total.num.cachemiss", 0) - before.get("total.num.cachemiss", 0)
    processes.stop(server.process)
    results[f"s{PLAINDNS}"] = summary(runs)
    results[f"s{PLAINDNS}u"] = summary(runs_unbound)
    results[f"s{PLAINDNS}"]["check"] = (f"({PLAINDNS}) {summary(runs)['completed']:.0f} queries answered, "
                                        f"{summary(runs)['noerror']:.0f} NOERROR; hit counter +{hits:.0f}, "
                                        f"miss counter +{misses:.0f}; ({PLAINDNS}u) "
                                        f"{summary(runs_unbound)['completed']:.0f} answered, "
                                        f"{summary(runs_unbound)['noerror']:.0f} NOERROR, unbound cache misses "
                                        f"+{cachemiss:.0f}")
