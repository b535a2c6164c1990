"""Section (6): a second instance filled with BENCH_SCALE entries: RSS per entry, hits over all
of them against (6q), (1)'s workload on the same instance, and the warm restart."""

import os
import shutil
import subprocess
import time

from .clients import http_get
from .load import summarize, wrk, write_list
from .procstat import rss_kib, wait_idle
from .servers import HTTPDNSD, cpu_text
from .settings import NAMES, REPO, SCALE, SCALE_MID, ZONE, log


def cache_memory(entries):
    """Bytes per entry of the answer cache alone, in process (`bench/cachesim --memory`, release):
    {layout: (bytes per entry full, bytes per entry once evicting)} for `lru` (`BoundedCache`
    shards with `LRUPolicy`), `s3fifo` (the same with `S3FIFOPolicy`) and `answercache` (the
    service's `AnswerCache`). {} when cachesim does not build or run: these rows stand beside (6)'s
    figures, which do not depend on them (SwiftPM refuses the bench package, for one, in a checkout
    whose directory is itself named `bench`: both packages then have the identity `bench`)."""
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    # cachesim is the bench package's (bench/Package.swift), a root of its own: its own scratch path.
    scratch = (os.environ.get("BENCH_SCRATCH") or os.path.join(REPO, ".build-bench")) + "-cachesim"
    build = [swift, "build", "-c", "release", "--package-path", os.path.join(REPO, "bench"), "--scratch-path", scratch]
    try:
        subprocess.run(build + ["--product", "cachesim"], cwd=REPO, check=True)
        bin_path = subprocess.run(build + ["--show-bin-path"], cwd=REPO, check=True, capture_output=True,
                                  text=True).stdout.strip()
        output = subprocess.run([os.path.join(bin_path, "cachesim"), "--memory", str(entries)],
                                check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        log(f"  warning: cachesim did not build or run ({error}); the in-process rows are left out")
        return {}
    figures = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].isdigit():
            figures[cells[0]] = (int(cells[3]), int(cells[4]))
    log(f"  in process, bytes per entry at {entries} (full, evicting): {figures}")
    return figures


class ScaleSection:
    """(6): a second instance filled with SCALE entries (RSS read at SCALE_MID and SCALE); hits over
    all of them, and (6q) (1)'s workload on the same instance; then the warm restart."""

    def __init__(self, work, processes, binary, upstream):
        """Starts and fills the instance, reading RSS at each stop, then waits until it is idle."""
        out = self.out = {}
        server = self.server = HTTPDNSD(processes, work, binary, "httpdnsd-scale", {"bench": upstream},
                                        cache_limit=2 * SCALE)
        server.start()
        time.sleep(1)
        pid = server.process.pid
        rss0 = rss_kib(pid)
        out["rss0_kib"] = rss0
        names = self.names = [f"s{i:07d}.{ZONE}" for i in range(SCALE)]
        stops = [n for n in (SCALE_MID, SCALE) if n <= SCALE]
        done = 0
        fill_seconds = 0.0
        for stop in stops:
            fill_seconds += server.preload("bench", names[done:stop])
            done = stop
            time.sleep(2)
            entries = server.entries("bench")
            rss = rss_kib(pid)
            out[f"rss_{stop}"] = {"entries": entries, "rss_kib": rss,
                                  "bytes_per_entry": (rss - rss0) * 1024 / max(1, entries)}
            log(f"  {entries} entries: RSS {rss / 1024:.1f} MiB, "
                f"{(rss - rss0) * 1024 / max(1, entries):.0f} bytes per entry ({done / fill_seconds:.0f} names/s filled)")
        out["fill_rate"] = SCALE / fill_seconds
        out["entries"] = server.entries("bench")
        out["in_process"] = cache_memory(SCALE)
        self.names_file = write_list(os.path.join(work, "scale-names.txt"), names)
        self.hot_file = write_list(os.path.join(work, "scale-hot-names.txt"), names[:NAMES])
        self.runs, self.quiet = [], []
        # The hit runs of the other sections come next, next to this instance: wait until it is idle
        # (its write-behind queue has reached SQLite).
        wait_idle(pid, "httpdnsd-scale")

    def measure(self):
        """One run of (6q) and one of (6), back to back."""
        log(f"section 6: hits over {SCALE} names, and (6q)")
        prefix = "/v1/bench/resolve?host="
        # (1)'s workload (NAMES names) on this instance just before: a same-time reference.
        self.quiet.append(wrk(self.server.port, "cycle.lua", {"BENCH_LIST": self.hot_file, "BENCH_PREFIX": prefix},
                              label=f"(6q) hits over {NAMES} of the cached names"))
        self.runs.append(wrk(self.server.port, "cycle.lua", {"BENCH_LIST": self.names_file, "BENCH_PREFIX": prefix},
                             label=f"(6) hits over {SCALE} cached names"))

    def finish(self):
        """The figures of (6) and the warm restart (SIGTERM, then start to /readyz 200)."""
        out, server, names = self.out, self.server, self.names
        out["hits"] = summarize(self.runs)
        out["hits_quiet"] = summarize(self.quiet)
        # Warm restart: SIGTERM flushes the write-behind queue; then start to /readyz 200.
        out["stop_seconds"] = server.stop()
        out["restart_seconds"] = server.start()
        load, out["restart_cpu"] = server.warm_load()
        out["restart_load_ms"] = load[1] if load else None
        out["entries_after_restart"] = server.entries("bench")
        status, body, _ = http_get(server.port, f"/v1/bench/cache?host={names[-1]}")
        out["hit_after_restart"] = status == 200
        out["rss_after_restart_kib"] = rss_kib(server.process.pid)
        log(f"  warm restart: {out['restart_seconds']:.2f} s to ready, {out['entries_after_restart']} entries loaded "
            f"(the load {out['restart_load_ms']} ms; by then {cpu_text(out['restart_cpu'])})")
        server.stop()
        return out
