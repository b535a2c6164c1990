"""Section (5): cache hits while a second wrk keeps misses of the same account waiting on an
upstream that answers late (`bench/slowdoh/slow_doh.c`): a slow upstream must not slow the hits."""

import os
import random
import statistics
import subprocess
import time

from .load import parse_wrk, start_wrk_background, summarize, wrk
from .procstat import cpu_seconds
from .settings import DURATION, SLOW_INFLIGHT, SLOW_MS, ZONE, log


class SlowSection:
    """(5): hits on account `slow` while a second wrk keeps SLOW_INFLIGHT never-asked names of the
    same account waiting on the delaying upstream; (5q), the same hits just before, without misses."""

    def __init__(self, main, stack, names, work):
        """Preloads the names into account `slow` with no delay, then turns the delay on."""
        self.main, self.stack, self.work = main, stack, work
        stack.set_slow_delay(0)
        seconds = main.preload("slow", names)
        log(f"warmed {len(names)} names into account slow in {seconds:.1f} s")
        stack.set_slow_delay(SLOW_MS)
        self.runs, self.quiet, self.background, self.upstream_cpu = [], [], [], []

    def measure(self, rep, hit_env):
        """(5q), then (5) inside a background run of slow misses that starts before it and ends
        after it; also the CPU the slow upstream used meanwhile."""
        main, stack = self.main, self.stack
        slow_hit_env = dict(hit_env, BENCH_PREFIX="/v1/slow/resolve?host=")
        self.quiet.append(wrk(main.port, "cycle.lua", slow_hit_env, label="(5q) the same hits, no misses"))
        cpu_before = cpu_seconds(stack.slow.pid)
        out_path = os.path.join(self.work, f"slow-misses-{rep}.out")
        lead = 3  # seconds of misses before the hit measurement starts, and after it ends
        bg = start_wrk_background(main.port, "distinct.lua", {
            "BENCH_MODE": "resolve", "BENCH_TAG": f"s{rep}r{random.randrange(10**6)}",
            "BENCH_PREFIX": "/v1/slow/resolve?host=", "BENCH_ZONE": ZONE},
            SLOW_INFLIGHT, DURATION + 2 * lead, 10, out_path)
        try:
            time.sleep(lead)
            started = time.monotonic()
            self.runs.append(wrk(main.port, "cycle.lua", slow_hit_env, label="(5) hits with slow misses"))
            self.upstream_cpu.append((cpu_seconds(stack.slow.pid) - cpu_before) / (time.monotonic() - started + lead))
        finally:
            try:
                bg.wait(DURATION + 120)
            except subprocess.TimeoutExpired:
                bg.kill()
                bg.wait()
        with open(out_path) as f:
            self.background.append(parse_wrk(subprocess.CompletedProcess(bg.args, bg.returncode, f.read(), ""),
                                             "(5) slow misses"))

    def finish(self, results):
        """Stores the figures of (5), (5q) and the misses, and takes the delay off again."""
        self.stack.set_slow_delay(0)
        results["s5"] = summarize(self.runs)
        results["s5_quiet"] = summarize(self.quiet)
        results["s5_misses"] = summarize(self.background)
        results["s5_upstream_cpu"] = statistics.median(self.upstream_cpu)
