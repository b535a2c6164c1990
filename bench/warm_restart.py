#!/usr/bin/env python3
"""The warm restart of section 6 alone, repeated: start of the process to /readyz 200 on the store
of a service that held WARM_ENTRIES entries and was stopped by SIGTERM.

    python3 bench/warm_restart.py PATH/TO/release/httpdnsd

On loopback only: unbound answers every name below bench.test (a `redirect` local zone, as in
`make bench`), dnss is its RFC 8484 front and the account's only upstream. The first run fills an
instance through `/v1/bench/preload` (as section 6 does, about three minutes for 1M names at this
machine's rate), waits until its write-behind has reached SQLite, stops it with SIGTERM and keeps
a copy of the database in WARM_STORE (default bench/out/warm-store-N.sqlite); later runs reuse
that copy (delete it to fill again). Then WARM_RESTARTS times (default 5): the copy is put back,
httpdnsd is started on it and timed to /readyz 200, the entries it loaded are checked, and it is
stopped with SIGTERM (also timed). Prints each restart and the medians, with the load's own time
(from httpdnsd's log) and the CPU the process used by /readyz. WARM_CPUS=0 runs the restarts on
one core. A copy older than half the answers' TTL is filled again (they would load expired).
"""

import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.clients import b64url_query, http_get  # noqa: E402
from harness.processes import Processes, free_port, wait_until  # noqa: E402
from harness.procstat import wait_idle  # noqa: E402
from harness.servers import HTTPDNSD, cpu_text, unbound_config  # noqa: E402
from harness.settings import ADDRESSES, BENCH_DIR, TTL, ZONE, env_int, log  # noqa: E402

ENTRIES = env_int("WARM_ENTRIES", 1_000_000)
# WARM_CPUS=0 starts each restarted httpdnsd on those CPUs only (e.g. one core: the load's reading
# and storing then cannot overlap, as when the other core is busy).
CPUS = {int(c) for c in os.environ.get("WARM_CPUS", "").split(",") if c.strip()}
RESTARTS = env_int("WARM_RESTARTS", 5)
STORE = os.environ.get("WARM_STORE") or os.path.join(BENCH_DIR, "out", f"warm-store-{ENTRIES}.sqlite")
SUFFIXES = ("", "-wal", "-shm")


def copy_database(source, target):
    """Copies a database with its WAL and shared-memory files (a missing one is removed at the target)."""
    for suffix in SUFFIXES:
        if os.path.exists(source + suffix):
            shutil.copyfile(source + suffix, target + suffix)
        elif os.path.exists(target + suffix):
            os.remove(target + suffix)


def start_upstream(processes, work):
    """unbound answering every name below the zone, dnss in front; returns the upstream URL."""
    dns_port, doh_port = free_port(), free_port()
    config = unbound_config(work, "unbound-auth", dns_port,
                            f'  local-zone: "{ZONE}." redirect\n'
                            + "".join(f'  local-data: "{ZONE}. {TTL} IN A {a}"\n' for a in ADDRESSES))
    processes.start("unbound-auth", ["unbound", "-d", "-c", config])
    dnss = processes.start("dnss", [
        "dnss", "-enable_https_to_dns", "-dns_upstream", f"127.0.0.1:{dns_port}",
        "-https_server_addr", f"127.0.0.1:{doh_port}", "-insecure_http_server"])
    probe = "/dns-query?dns=" + b64url_query(f"ready.{ZONE}")
    wait_until(lambda: http_get(doh_port, probe)[0] == 200, 15, "dnss", dnss)
    return f"doh:http://127.0.0.1:{doh_port}/dns-query"


def start_on_cpus(server):
    """`server.start()`, on WARM_CPUS when set (the child inherits this process's affinity)."""
    if not CPUS:
        return server.start()
    every = os.sched_getaffinity(0)
    os.sched_setaffinity(0, CPUS)
    try:
        return server.start()
    finally:
        os.sched_setaffinity(0, every)


def fill(server):
    """Preloads ENTRIES names, waits for the write-behind, stops by SIGTERM; returns the stop's seconds."""
    server.start()
    names = [f"s{i:07d}.{ZONE}" for i in range(ENTRIES)]
    seconds = server.preload("bench", names)
    log(f"filled {ENTRIES} names in {seconds:.1f} s ({ENTRIES / seconds:.0f} names/s)")
    wait_idle(server.process.pid, server.name)
    entries = server.entries("bench")
    if entries != ENTRIES:
        raise RuntimeError(f"{entries} entries cached, expected {ENTRIES}")
    return server.stop()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="warm-restart-")
    processes = Processes(work)
    try:
        upstream = start_upstream(processes, work)
        server = HTTPDNSD(processes, work, binary, "httpdnsd-warm", {"bench": upstream}, cache_limit=2 * ENTRIES)
        if os.path.exists(STORE) and time.time() - os.path.getmtime(STORE) > TTL / 2:
            log(f"{STORE} is older than half the answers' TTL (they would load expired): filling it again")
            os.remove(STORE)
        if not os.path.exists(STORE):
            log(f"no {STORE}: filling a new one")
            log(f"SIGTERM after the fill: {fill(server):.2f} s to exit")
            os.makedirs(os.path.dirname(STORE), exist_ok=True)
            copy_database(server.db, STORE)
        starts, stops, loads, cpus = [], [], [], []
        for round_ in range(RESTARTS):
            copy_database(STORE, server.db)
            starts.append(start_on_cpus(server))
            load, cpu = server.warm_load()
            loads.append(load[1] if load else float("nan"))
            cpus.append(cpu["seconds"])
            entries = server.entries("bench")
            if entries != ENTRIES:
                raise RuntimeError(f"restart {round_ + 1}: {entries} entries loaded, expected {ENTRIES}")
            stops.append(server.stop())
            log(f"restart {round_ + 1}: {starts[-1]:.3f} s to ready (the load {loads[-1]} ms; {cpu_text(cpu)}), "
                f"{entries} entries; SIGTERM {stops[-1]:.3f} s to exit")
        print(f"warm restart of {ENTRIES} entries, {RESTARTS} restarts ({binary})")
        print(f"  start to /readyz 200: median {statistics.median(starts):.3f} s "
              f"({', '.join(f'{s:.3f}' for s in starts)})")
        print(f"  the load (its log):   median {statistics.median(loads):.0f} ms ({', '.join(f'{m}' for m in loads)}); "
              f"CPU by ready: median {statistics.median(cpus):.2f} s")
        print(f"  SIGTERM to exit:      median {statistics.median(stops):.3f} s "
              f"({', '.join(f'{s:.3f}' for s in stops)})")
    finally:
        processes.stop_all()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
