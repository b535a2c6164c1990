"""The order of a run: build, start the DNS stack and (1)'s instance, set up every section of
BENCH_SECTIONS, run the hit loop, then the sections that run once after it, and write the report.

Every hit measurement runs repetition by repetition in one loop: (1), (8), (10)-(12), (9),
(13), (2), (3), then (5q)/(5), (6q)/(6) and (7). Drift of the machine's speed then hits each
figure alike, and the ratios (5)/(1) and (6)/(1) compare runs a minute apart rather than
several minutes."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

from .clients import b64url_query
from .hits import HitSections
from .load import write_list
from .misses import measure_misses
from .dot import measure_dot
from .plain_dns import measure_plain_dns
from .policy import measure_policy
from .processes import Processes
from .redis_tier import RedisSection
from .report import kept_section, machine, report
from .scale import ScaleSection
from .servers import HTTPDNSD, Stack, build
from .settings import (ALL_SECTIONS, BENCH_DIR, CONNECTIONS, DOT, DURATION, LIMITED_KEYS, NAMES, PLAINDNS, POLICY,
                       PROFILE, REDIS, REPS, SCALE, SECTIONS, SIGNED, ZONE, log)
from .signed import SignedSection
from .slow import SlowSection
from .tls import TLSSection, make_certificate


def start_main(processes, work, binary, dnss_upstream, slow_upstream, names):
    """(1)'s instance, with the accounts of the sections that share it, started and warmed;
    returns it and section (9) (None when not run), which preloads its account itself."""
    main_accounts = {"bench": dnss_upstream, "slow": slow_upstream}
    if 8 in SECTIONS:
        main_accounts["limited"] = dnss_upstream
    signed_keys = SignedSection.keys() if SIGNED in SECTIONS else None
    if signed_keys:
        main_accounts["signed"] = dnss_upstream
    main = HTTPDNSD(processes, work, binary, "httpdnsd-main", main_accounts, cache_limit=max(4 * SCALE, 4_000_000),
                    account_keys={"limited": LIMITED_KEYS, **({"signed": signed_keys} if signed_keys else {})})
    main.start()
    if 1 not in SECTIONS:
        return main, None  # (4) alone: no hits, nothing to warm
    seconds = main.preload("bench", names)
    log(f"warmed {NAMES} names into account bench in {seconds:.1f} s")
    if 8 in SECTIONS:
        seconds = main.preload("limited", names)
        log(f"warmed {NAMES} names into account limited (client rate limit on) in {seconds:.1f} s")
    signed = SignedSection(main, names, work, signed_keys) if signed_keys else None
    return main, signed


def hit_loop(hits, signed, redis, slow, big, tls):
    """The hit measurements, repetition by repetition (the sections not run are None)."""
    for rep in range(REPS):
        log(f"hit sections, repetition {rep + 1}/{REPS}")
        hits.measure_httpdnsd()
        if signed:
            signed.measure()
        if redis:
            redis.measure_hits(hits.hit_env, rep)
        hits.measure_references()
        if slow:
            slow.measure(rep, hits.hit_env)
        if big:
            big.measure()
        if tls:
            tls.measure(hits.hit_env)


def run(work, processes, results):
    """Every section of BENCH_SECTIONS, its figures into `results`."""
    binary, baseline_bin, swift = build(work)
    results["swift"] = subprocess.run([swift, "--version"], capture_output=True, text=True).stdout.splitlines()[0]

    stack = Stack(processes, work, dot_certificate=make_certificate(work) if DOT in SECTIONS else None)
    stack.start()
    dnss_upstream = f"doh:http://127.0.0.1:{stack.dnss_port}/dns-query"
    slow_upstream = f"doh:http://127.0.0.1:{stack.slow_port}/dns-query"
    names = [f"h{i:07d}.{ZONE}" for i in range(NAMES)]
    main, signed = start_main(processes, work, binary, dnss_upstream, slow_upstream, names)
    redis = big = None
    if 1 in SECTIONS:
        redis, big = run_hit_sections(work, processes, binary, baseline_bin, stack, main, signed, names, results)
    if 4 in SECTIONS:
        measure_misses(work, processes, main, stack, results)
    if PLAINDNS in SECTIONS:
        measure_plain_dns(work, processes, binary, stack, names, results)
    if DOT in SECTIONS:
        measure_dot(work, processes, binary, stack, names, results)
    if POLICY in SECTIONS:
        measure_policy(work, processes, binary, stack, names, results)
    if redis:
        redis.hits_check()
        redis.measure_misses(main)
        redis.measure_replicas(main)
        redis.finish(results)
    if big:
        processes.stop(main.process)
        results["s6"] = big.finish()


def run_hit_sections(work, processes, binary, baseline_bin, stack, main, signed, names, results):
    """(1)-(3) and the sections of the hit loop, their figures into `results`; returns sections
    (13) and (6) (None when not run), which go on after (4)."""
    dnss_upstream = f"doh:http://127.0.0.1:{stack.dnss_port}/dns-query"
    names_file = write_list(os.path.join(work, "names.txt"), names)
    queries_file = write_list(os.path.join(work, "queries.txt"), (b64url_query(n) for n in names))
    hits = HitSections(processes, work, main, stack, names, names_file, queries_file, baseline_bin, results)
    slow = SlowSection(main, stack, names, work) if 5 in SECTIONS else None
    redis = RedisSection(work, processes, binary, dnss_upstream, names) if REDIS in SECTIONS else None
    big = ScaleSection(work, processes, binary, dnss_upstream) if 6 in SECTIONS else None
    tls = TLSSection(work, processes, binary, baseline_bin, dnss_upstream, names, hits.body_file) if 7 in SECTIONS else None

    hits.prepare(names)
    hit_loop(hits, signed, redis, slow, big, tls)
    other_arenas = [(f"({REDIS})", redis.replicas[0].process.pid),
                    (f"({REDIS}c)", redis.control.process.pid)] if redis else []
    hits.finish(results, other_arenas)
    if slow:
        slow.finish(results)
    if tls:
        tls.finish(results)
    if signed:
        signed.finish(results)
    processes.stop(hits.baseline)
    if PROFILE:
        hits.profile()
    return redis, big


def write_results(results, results_path, failed):
    """bench/out/results.json (every figure, for a later look) and the report into `results_path`,
    keeping the section a run does not measure; prints the report."""
    os.makedirs(os.path.join(BENCH_DIR, "out"), exist_ok=True)
    try:
        with open(os.path.join(BENCH_DIR, "out", "results.json"), "w") as f:
            json.dump(results, f, indent=1, default=str)
    except OSError:
        pass
    text = report(results)
    if failed:
        text += f"\n**The run failed before it finished:** `{failed!r}`\n"
    kept = kept_section(results_path)
    if kept:
        text = text.rstrip("\n") + "\n\n" + kept
    with open(results_path, "w") as f:
        f.write(text)
    print(text)
    log(f"wrote {results_path}")


def main():
    """The whole run: every child stopped at the end, also on failure or Ctrl-C; the report
    written whenever (1), (4) or one of (14)-(16) was measured, with the failure at its end; exit 1 on failure (130
    on Ctrl-C). A run of some sections only writes its report to bench/out/RESULTS.md unless
    BENCH_RESULTS says otherwise: bench/RESULTS.md records whole runs."""
    work = os.environ.get("BENCH_WORK") or tempfile.mkdtemp(prefix="httpdnsd-bench-")
    os.makedirs(work, exist_ok=True)
    default_path = os.path.join(BENCH_DIR, *(("RESULTS.md",) if SECTIONS == ALL_SECTIONS else ("out", "RESULTS.md")))
    results_path = os.environ.get("BENCH_RESULTS") or default_path
    log(f"working directory {work}; {DURATION} s x {REPS} reps, {CONNECTIONS} connections")
    processes = Processes(work)
    results = {"machine": machine()}
    failed = None
    try:
        run(work, processes, results)
    except BaseException as error:  # noqa: BLE001 - report, then stop everything
        failed = error
        log(f"FAILED: {error!r} (logs in {work})")
    finally:
        processes.stop_all()
    if any(f"s{number}" in results for number in (1, 4, PLAINDNS, DOT, POLICY)):
        write_results(results, results_path, failed)
    if failed:
        if isinstance(failed, KeyboardInterrupt):
            sys.exit(130)
        sys.exit(1)
    if not os.environ.get("BENCH_KEEP_WORK"):
        shutil.rmtree(work, ignore_errors=True)
