"""The hit sections measured in each repetition of the hit loop: (1) httpdnsd's cache hits, (2)
the C baseline (libmicrohttpd with a fixed body of the same bytes: the limit), (3) the peer,
dnss in front of unbound's cache; and the hits of (1) on account `limited` (8), as RFC 8484
queries (10), through the EMAS (11) and DoH JSON (12) APIs. Every ratio of the report is to (1)."""

import json
import os
import signal
import struct
import subprocess

from .clients import dns_ask, http_get
from .load import summarize, wrk
from .procstat import measure_with_split, worker_arenas
from .processes import free_port, wait_until
from .settings import (ADDRESSES, CONNECTION_MEMORY, DOHJSON, EMAS, FORMAT_NAMES, PROFILE, RFC8484, SECTIONS,
                       log)


class HitSections:
    """(1), (2), (3), (8), (10), (11) and (12) on (1)'s instance `main`, warmed with `names`: the
    baseline's start, the checks before the loop, one repetition, and the figures."""

    def __init__(self, processes, work, main, stack, names, names_file, queries_file, baseline_bin, results):
        """Takes the exact response of a hit as the baseline's fixed body and starts the baseline."""
        self.main, self.stack = main, stack
        self.names_file, self.queries_file = names_file, queries_file
        threads = os.cpu_count() or 1
        # The response a hit really gets: its exact body is the baseline's fixed body.
        status, body, headers = http_get(main.port, f"/v1/bench/resolve?host={names[0]}")
        hit = json.loads(body)
        if status != 200 or hit.get("source") != "cache":
            raise RuntimeError(f"warmed name is not a cache hit: {status} {body!r}")
        results["hit_body"] = body.decode()
        results["hit_headers"] = headers
        self.body_file = os.path.join(work, "body.json")
        with open(self.body_file, "wb") as f:
            f.write(body)

        self.baseline_port = baseline_port = free_port()
        self.baseline = baseline = processes.start("baseline", [baseline_bin, str(baseline_port), str(threads),
                                                                str(CONNECTION_MEMORY), self.body_file])
        wait_until(lambda: http_get(baseline_port, "/v1/bench/resolve?host=x")[0] == 200, 15, "baseline", baseline)
        status, base_body, _ = http_get(baseline_port, f"/v1/bench/resolve?host={names[0]}")
        assert base_body == body

        self.hit_env = {"BENCH_LIST": names_file, "BENCH_PREFIX": "/v1/bench/resolve?host="}
        self.peer_env = {"BENCH_LIST": queries_file, "BENCH_PREFIX": "/dns-query?dns=",
                         "BENCH_ACCEPT": "application/dns-message"}
        self.limited_env = {"BENCH_LIST": names_file, "BENCH_PREFIX": "/v1/limited/resolve?host="}
        self.rfc8484_env = {"BENCH_LIST": queries_file, "BENCH_PREFIX": "/v1/bench/dns-query?dns=",
                            "BENCH_ACCEPT": "application/dns-message"}
        # The JSON wire APIs, same names, same account: each name a cache hit written by that API's writer.
        self.json_formats = [(number, env) for number, env in (
            (EMAS, {"BENCH_LIST": names_file, "BENCH_PREFIX": "/bench/d?host="}),
            (DOHJSON, {"BENCH_LIST": names_file, "BENCH_PREFIX": "/resolve?uid=bench&name="}),
        ) if number in SECTIONS]

    def prepare(self, names):
        """The checks before the loop (each format's first name one cache hit), the counters the
        loop's check starts from, and unbound's cache warmed for (3)."""
        main = self.main
        if RFC8484 in SECTIONS:
            rfc8484_precheck(main, self.queries_file)
        for number, env in self.json_formats:
            json_hit_precheck(main, number, env["BENCH_PREFIX"] + names[0])
        self.runs = {1: [], 2: [], 3: [], 8: [], RFC8484: [], EMAS: [], DOHJSON: []}
        self.splits = {1: [], 2: []}  # how each run's CPU fell on the HTTP worker threads
        self.hits_before = main.counter("httpdns_cache_hits_total", "bench")
        self.misses_before = main.counter("httpdns_cache_misses_total", "bench")
        self.peer_queries = self.peer_cachemiss = 0
        # dnss -> unbound: warm unbound's cache with the same names (the preload above went through it too).
        for name in names[:50]:
            dns_ask(self.stack.cache_port, name)

    def measure_httpdnsd(self):
        """One run each of (1), (8), (10), (11) and (12), those of BENCH_SECTIONS."""
        main, runs = self.main, self.runs
        runs[1].append(measure_with_split(main.process.pid, self.splits[1],
                                          lambda: wrk(main.port, "cycle.lua", self.hit_env, label="(1) httpdnsd hits")))
        if 8 in SECTIONS:
            runs[8].append(wrk(main.port, "cycle.lua", self.limited_env, label="(8) httpdnsd hits, limiter on"))
        if RFC8484 in SECTIONS:
            runs[RFC8484].append(wrk(main.port, "cycle.lua", self.rfc8484_env,
                                     label=f"({RFC8484}) httpdnsd RFC 8484 hits"))
        for number, env in self.json_formats:
            runs[number].append(wrk(main.port, "cycle.lua", env, label=f"({number}) httpdnsd {FORMAT_NAMES[number]} hits"))

    def measure_references(self):
        """One run of (2) and one of (3), with unbound's counters around (3)."""
        runs, stack = self.runs, self.stack
        runs[2].append(measure_with_split(self.baseline.pid, self.splits[2],
                                          lambda: wrk(self.baseline_port, "cycle.lua", self.hit_env,
                                                      label="(2) baseline")))
        # unbound's counters around (3) alone: (5)'s misses go through the same unbound.
        unbound_before = stack.cache_stats()
        runs[3].append(wrk(stack.dnss_port, "cycle.lua", self.peer_env, label="(3) dnss+unbound"))
        unbound_after = stack.cache_stats()
        self.peer_queries += unbound_after.get("total.num.queries", 0) - unbound_before.get("total.num.queries", 0)
        self.peer_cachemiss += unbound_after.get("total.num.cachemiss", 0) - unbound_before.get("total.num.cachemiss", 0)

    def finish(self, results, other_arenas):
        """Stores the figures and checks of the loop, and the malloc arenas of the HTTP workers of
        (1)'s instance and of `other_arenas` ((label, pid) pairs), every instance idle now."""
        main, runs = self.main, self.runs
        hits_delta = main.counter("httpdns_cache_hits_total", "bench") - self.hits_before
        misses_delta = main.counter("httpdns_cache_misses_total", "bench") - self.misses_before
        results["s1"] = summarize(runs[1])
        results["s1"]["check"] = (f"hit counter +{hits_delta:.0f} for {sum(r['requests'] for r in runs[1])} requests, "
                                  f"miss counter +{misses_delta:.0f}")
        results["s2"] = summarize(runs[2])
        results["worker_splits"] = self.splits
        # After the hit loop, every measured instance idle: the arenas of their HTTP workers.
        results["arenas"] = {"(1)": worker_arenas(main.process.pid)}
        for label, pid in other_arenas:
            results["arenas"][label] = worker_arenas(pid)
        results["s3"] = summarize(runs[3])
        if runs[8]:
            results["s8"] = summarize(runs[8])
        for number in (RFC8484, EMAS, DOHJSON):
            if runs[number]:
                results[f"s{number}"] = summarize(runs[number])
        results["s3"]["check"] = f"unbound: {self.peer_queries:.0f} queries, {self.peer_cachemiss:.0f} cache misses"

    def profile(self):
        """BENCH_PROFILE: one more run of (1) under `perf record -g`, not counted in the figures."""
        log(f"profiling one more hit run into {PROFILE}")
        perf = subprocess.Popen(["perf", "record", "-F", "1999", "-g", "-o", PROFILE, "-p", str(self.main.process.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wrk(self.main.port, "cycle.lua", self.hit_env, label="(1) under perf")
        finally:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=60)


def get_as_one_hit(main, label, path):
    """`GET path` of account `bench`, which must count as one cache hit and no miss; returns
    (status, body, headers)."""
    hits_before = main.counter("httpdns_cache_hits_total", "bench")
    misses_before = main.counter("httpdns_cache_misses_total", "bench")
    answer = http_get(main.port, path)
    hits = main.counter("httpdns_cache_hits_total", "bench") - hits_before
    misses = main.counter("httpdns_cache_misses_total", "bench") - misses_before
    if hits != 1 or misses != 0:
        raise RuntimeError(f"{label} {path} was not one cache hit: hit counter +{hits}, miss counter +{misses}")
    return answer


def json_hit_precheck(main, number, path):
    """(11) and (12): the first name through that API must be one cache hit, a JSON answer that
    carries the two addresses."""
    status, body, _ = get_as_one_hit(main, f"({number})", path)
    text = body.decode("utf-8", "replace")
    if status != 200 or not all(address in text for address in ADDRESSES):
        raise RuntimeError(f"({number}) {path} not answered with the addresses: {status} {text[:200]}")
    json.loads(text)
    log(f"({number}) {FORMAT_NAMES[number]} precheck: a cache hit, {len(body)}-byte answer")


def rfc8484_precheck(main, queries_file):
    """(10) asks `GET /v1/bench/dns-query?dns=` with the queries of (3): the first one must be
    answered from the cache (the hit counter moves, the miss counter does not) as an
    `application/dns-message` with the two addresses."""
    with open(queries_file) as f:
        first = f.readline().strip()
    status, body, headers = get_as_one_hit(main, "RFC 8484 query", f"/v1/bench/dns-query?dns={first}")
    content_type = {k.lower(): v for k, v in headers.items()}.get("content-type")
    if status != 200 or content_type != "application/dns-message" or len(body) < 12:
        raise RuntimeError(f"RFC 8484 query not answered: {status} {content_type} {body!r}")
    _, flags, _, ancount, _, _ = struct.unpack("!HHHHHH", body[:12])
    if flags & 0xF != 0 or ancount != len(ADDRESSES):
        raise RuntimeError(f"RFC 8484 answer has rcode {flags & 0xF} and {ancount} records, expected 0 and {len(ADDRESSES)}")
    log(f"RFC 8484 precheck: a cache hit, {len(body)}-byte answer with {ancount} records")
