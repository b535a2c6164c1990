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
from .procstat import cpu_seconds
from .servers import HTTPDNSD
from .settings import CONNECTIONS, DURATION, PLAINDNS, REPS, WRK_THREADS, log

# dnsperf's queries in flight at most (-q), over CONNECTIONS sockets (-c) and WRK_THREADS threads.
OUTSTANDING = 4 * CONNECTIONS


def dnsperf_hits(port, path, label, mode="udp"):
    """One dnsperf run over the query file `path` (cycled until DURATION) against 127.0.0.1:`port`
    over `mode` (udp, tcp, dot); returns its queries/s, completed and lost queries and average
    latency (s). Over TCP and DoT each of the CONNECTIONS clients holds one connection for the
    whole run (dnsperf reconnects only when the server closes one: `reconnections`)."""
    out = subprocess.run(["dnsperf", "-m", mode, "-s", "127.0.0.1", "-p", str(port), "-d", path, "-l", str(DURATION),
                          "-c", str(CONNECTIONS), "-T", str(WRK_THREADS), "-q", str(OUTSTANDING)],
                         capture_output=True, text=True, timeout=DURATION + 120)
    return parse_dnsperf(out.stdout, out.stderr, label)


def parse_dnsperf(stdout, stderr, label):
    """The figures of dnsperf's summary (see `dnsperf_hits`); raises when one is missing."""
    figures = {}
    for key, pattern in (("qps", r"Queries per second:\s+([\d.]+)"), ("completed", r"Queries completed:\s+(\d+)"),
                         ("lost", r"Queries lost:\s+(\d+)"), ("latency_s", r"Average Latency \(s\):\s+([\d.]+)"),
                         ("noerror", r"NOERROR (\d+)")):
        match = re.search(pattern, stdout)
        if not match:
            raise RuntimeError(f"dnsperf {label} printed no {key}:\n{stdout}\n{stderr}")
        figures[key] = float(match.group(1))
    reconnections = re.search(r"Reconnections:\s+(\d+)", stdout)
    figures["reconnections"] = float(reconnections.group(1)) if reconnections else 0.0
    log(f"  dnsperf {label}: {figures['qps']:.0f} q/s, lost {figures['lost']:.0f}, "
        f"average latency {figures['latency_s'] * 1000:.2f} ms")
    return figures


def summary(runs):
    """The medians of a side's repetitions."""
    return {"qps": statistics.median(r["qps"] for r in runs), "reps": [round(r["qps"]) for r in runs],
            "latency_ms": statistics.median(r["latency_s"] for r in runs) * 1000,
            "lost": sum(r["lost"] for r in runs), "completed": sum(r["completed"] for r in runs),
            "noerror": sum(r["noerror"] for r in runs), "reconnections": sum(r["reconnections"] for r in runs)}


def alternate(number, path, mode, sides):
    """REPS repetitions of one dnsperf run per side, the sides alternating (the first side first in
    even repetitions). `sides` is two (port, label, counters) where `counters()` reads that server's
    cumulative counters as a dict. Returns each side's runs and how much its counters moved in all."""
    runs, moved = ([], []), ({}, {})
    for rep in range(REPS):
        log(f"section {number}, repetition {rep + 1}/{REPS}")
        for side in ((0, 1) if rep % 2 == 0 else (1, 0)):
            port, label, counters = sides[side]
            before = counters()
            runs[side].append(dnsperf_hits(port, path, label, mode))
            for key, value in counters().items():
                moved[side][key] = moved[side].get(key, 0) + value - before.get(key, 0)
    return runs, moved


def query_file(work, names):
    """dnsperf's input: each name's A question, one a line."""
    return write_list(os.path.join(work, "plain-dns-queries.txt"), (f"{name} A" for name in names))


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
    (runs, runs_unbound), (ours, theirs) = alternate(PLAINDNS, query_file(work, names), "udp", (
        (dns_port, f"({PLAINDNS}) httpdnsd dnsListen hits", lambda: hit_counters(server, "bench")),
        (stack.cache_port, f"({PLAINDNS}u) unbound cache hits", lambda: unbound_counters(stack))))
    processes.stop(server.process)
    results[f"s{PLAINDNS}"] = summary(runs)
    results[f"s{PLAINDNS}u"] = summary(runs_unbound)
    results[f"s{PLAINDNS}"]["check"] = check_text(PLAINDNS, summary(runs), summary(runs_unbound), ours, theirs)


def hit_counters(server, account):
    """The counters a hit run must move (hits) and must not (misses) of `account`, and the
    server's CPU seconds (all threads)."""
    return {"hits": server.counter("httpdns_cache_hits_total", account),
            "misses": server.counter("httpdns_cache_misses_total", account),
            "cpu_s": cpu_seconds(server.process.pid)}


def unbound_counters(stack):
    """The caching unbound's cache misses and queries (`num.query.tls` would need its extended
    statistics, which cost it time)."""
    stats = stack.cache_stats()
    return {"cachemiss": stats.get("total.num.cachemiss", 0), "queries": stats.get("total.num.queries", 0),
            "cpu_s": cpu_seconds(stack.cache.pid)}


def check_text(number, ours, theirs, moved, moved_unbound):
    """What the run checked, for the report: answers, NOERROR, the counters that moved, and each
    server's CPU (/proc, all threads) per query answered over all its runs."""
    return (f"({number}) {ours['completed']:.0f} queries answered, {ours['noerror']:.0f} NOERROR; hit counter "
            f"+{moved.get('hits', 0):.0f}, miss counter +{moved.get('misses', 0):.0f}; ({number}u) "
            f"{theirs['completed']:.0f} answered, {theirs['noerror']:.0f} NOERROR, unbound cache misses "
            f"+{moved_unbound.get('cachemiss', 0):.0f}; server CPU per query answered: httpdnsd "
            f"{per_query(moved, ours)} µs, unbound {per_query(moved_unbound, theirs)} µs")


def per_query(moved, side):
    """CPU µs per completed query of a side's runs, as text ("—" without both figures)."""
    if not moved.get("cpu_s") or not side["completed"]:
        return "—"
    return f"{moved['cpu_s'] * 1e6 / side['completed']:.1f}"
