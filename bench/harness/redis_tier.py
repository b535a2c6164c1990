"""Section (13): a real redis-server on loopback and httpdnsd replicas with `redis` set. A hit
must cost Redis nothing ((13) / (13c)); a miss that finds the answer in Redis is cheaper than
one that goes upstream ((13s), (13u), (13n)); three replicas asked the same names at once ask
the upstream about once per name ((13r))."""

import http.client
import json
import os
import random
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .clients import family_sum, http_get, metrics
from .load import summarize, wrk
from .misses import WHOLE, with_cpu
from .procstat import is_http_thread, measure_with_split, stat_ticks
from .processes import wait_until
from .servers import HTTPDNSD, start_redis
from .settings import REDIS, REDIS_NAMES, REPS, ZONE, log

# httpdnsd's threads as the miss runs report them: the HTTP threads, the Redis connections' loops
# (`redis-answers` and the other purposes' threads); any other under its own name.
REDIS_GROUPS = [("HTTP", is_http_thread), ("Redis loop", lambda name: name.startswith("redis-"))]


class RedisSection:
    """(13): a real redis-server on loopback and httpdnsd replicas with `redis` set.
    (13) the hits of (1) on a replica with Redis configured, in each repetition of (1): a hit must
    cost Redis nothing. (13c) the same hits on a control instance configured, started and warmed
    exactly as replica a but without `redis`, just before or after each (13) (the order alternates
    by repetition): (13) / (13c) is the figure that counts. (1)'s instance differs in more than Redis
    (more accounts, another cache limit, measured earlier in the repetition). (13u)/(13s) misses
    on replica B: names never seen anywhere (Redis is asked, misses, this replica takes the lock
    and asks the upstream; wrk at saturation) against names replica A resolved first (a shared
    hit, Python clients), and (13n) the same kind of miss as (13u) on the control without Redis.
    (13r) upstream queries per unique name with 3 replicas each asked every name at once, with
    the shared tier and without it."""

    def __init__(self, work, processes, binary, upstream, names):
        """Starts redis-server, the three replicas and the control; warms replica a and the
        control with the names and waits until b and c have the replicated preload."""
        self.work, self.processes, self.binary, self.upstream = work, processes, binary, upstream
        self.redis, self.port = start_redis(processes, work)
        self.replicas = [self.replica(f"httpdnsd-redis-{letter}", redis=True) for letter in "abc"]
        self.control = self.replica("httpdnsd-redis-control", redis=False)
        seconds = self.replicas[0].preload("bench", names)
        log(f"({REDIS}) warmed {len(names)} names into replica a (Redis configured) in {seconds:.1f} s")
        seconds = self.control.preload("bench", names)
        log(f"({REDIS}c) warmed {len(names)} names into the control (no Redis) in {seconds:.1f} s")
        # Replica a's preload is published: b and c preload the names too (through the shared
        # tier). Wait for them, so that no preload runs in the background of a measurement.
        for replica in self.replicas[1:]:
            try:
                wait_until(lambda: replica.entries("bench") >= len(names), 120, f"({REDIS}) {replica.name}'s replicated preload",
                           replica.process, interval=0.2)
            except RuntimeError as error:
                log(f"warning: {error} (measuring anyway)")
        for instance, what in ((self.replicas[0], "replica a"), (self.control, "the control")):
            status, body, _ = http_get(instance.port, f"/v1/bench/resolve?host={names[0]}")
            if status != 200 or json.loads(body).get("source") != "cache":
                raise RuntimeError(f"({REDIS}) a warmed name on {what} is not a cache hit: {status} {body[:200]!r}")
        self.hits, self.control_hits = [], []
        self.splits = {"a": [], "c": []}
        self.before = self.hit_counters()

    def replica(self, name, redis):
        """A started instance with account `bench`, with `redis` set to this redis-server or not."""
        extra = {"redis": f"redis://127.0.0.1:{self.port}"} if redis else {}
        instance = HTTPDNSD(self.processes, self.work, self.binary, name, {"bench": self.upstream}, cache_limit=1_000_000,
                            extra=extra)
        instance.start()
        return instance

    def hit_counters(self):
        """Replica a's and the control's hit and miss counters of account `bench`, and the commands
        replica a sent on its `answers` connection (the shared tier's; replies and errors)."""
        a, control = self.replicas[0], self.control
        values = metrics(a.ops_port)
        replies = 'httpdns_redis_command_duration_seconds_count{purpose="answers"}'
        if replies not in values:
            raise RuntimeError(f"({REDIS}) replica a's /metrics has no {replies} (its preload made no shared-tier lookup?)")
        answers = values[replies] + sum(
            v for k, v in values.items() if k.startswith('httpdns_redis_command_errors_total{purpose="answers"'))
        return {"a": (a.counter("httpdns_cache_hits_total", "bench"), a.counter("httpdns_cache_misses_total", "bench")),
                "c": (control.counter("httpdns_cache_hits_total", "bench"), control.counter("httpdns_cache_misses_total", "bench")),
                "answers": answers}

    def measure_hits(self, hit_env, rep):
        """(13) and (13c) back to back, (13) first in even repetitions, (13c) first in odd ones."""
        runs = [(self.hits, "a", self.replicas[0], f"({REDIS}) hits, Redis configured"),
                (self.control_hits, "c", self.control, f"({REDIS}c) hits, the control without Redis")]
        for hits, key, instance, label in (runs if rep % 2 == 0 else runs[::-1]):
            pid = instance.process.pid
            ticks = stat_ticks(f"/proc/{pid}/stat")[1]
            run = measure_with_split(pid, self.splits[key], lambda: wrk(instance.port, "cycle.lua", hit_env, label=label))
            # The server's CPU (every thread, user + system) per request: unlike requests/s, not
            # capped by a lopsided split of the connections between the workers.
            run["cpu_us"] = (stat_ticks(f"/proc/{pid}/stat")[1] - ticks) / os.sysconf("SC_CLK_TCK") * 1e6 / run["requests"]
            hits.append(run)

    def hits_check(self):
        """After the hit loop (before the misses): every request of (13) and (13c) a hit, and no
        command on replica a's `answers` connection."""
        after = self.hit_counters()
        requests = {"a": sum(r["requests"] for r in self.hits), "c": sum(r["requests"] for r in self.control_hits)}
        self.check = {key: (after[key][0] - self.before[key][0], after[key][1] - self.before[key][1], requests[key])
                      for key in ("a", "c")}
        self.check["answers"] = after["answers"] - self.before["answers"]

    @staticmethod
    def fresh_names(tag, count):
        """`count` names nobody has asked yet (`tag` makes them new)."""
        return [f"{tag}-{i}.{ZONE}" for i in range(count)]

    @staticmethod
    def get_all(port, names, workers=16):
        """Each name once, `workers` keep-alive connections at a time; returns the summary and the sources."""
        latencies, sources = [], {}
        lock = threading.Lock()

        def one_worker(chunk):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            mine, seen = [], {}
            for name in chunk:
                started = time.perf_counter()
                conn.request("GET", f"/v1/bench/resolve?host={name}")
                response = conn.getresponse()
                body = response.read()
                mine.append(time.perf_counter() - started)
                source = json.loads(body).get("source", f"status {response.status}") if response.status == 200 else f"status {response.status}"
                seen[source] = seen.get(source, 0) + 1
            conn.close()
            with lock:
                latencies.extend(mine)
                for key, value in seen.items():
                    sources[key] = sources.get(key, 0) + value

        chunks = [names[i::workers] for i in range(workers)]
        started = time.monotonic()
        with ThreadPoolExecutor(workers) as pool:
            for _ in pool.map(one_worker, chunks):
                pass
        elapsed = time.monotonic() - started
        latencies.sort()
        return {"rps": len(names) / elapsed, "p50_ms": latencies[len(latencies) // 2] * 1000,
                "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
                "reps": [round(len(names) / elapsed)], "sources": sources}

    def measure_misses(self, main):
        """(13u) and (13n) at saturation, back to back in alternating order: wrk with `distinct.lua`
        (every request a name never asked) on replica b and on the control, replica a's
        configuration without `redis` (like with like; (1)'s instance has more accounts and
        another cache limit). Python clients, GIL-bound, would cap both alike and hide the
        server's cost. Before them, a few fresh names through the Python clients check that both
        answer such names from the upstream. (13s) asks names replica a resolved just before
        (each must come from Redis, source `shared`), from the Python clients (a list of names, which `distinct.lua` does not take), and is
        compared with (13up), as many never-asked names on b from the same clients."""
        a, b = self.replicas[0], self.replicas[1]
        self.misses = {"u": [], "s": [], "n": [], "up": []}
        for rep in range(REPS):
            tag = f"r{rep}x{random.randrange(10**6)}"
            log(f"({REDIS}) misses, repetition {rep + 1}/{REPS}")
            runs = [("u", b, f"({REDIS}u) misses on replica b, Redis configured"),
                    ("n", self.control, f"({REDIS}n) misses on the control, without Redis")]
            for key, instance, label in (runs if rep % 2 == 0 else runs[::-1]):
                # On b, as many names as (13s) asks: the Python figure (13s) is compared with.
                count = REDIS_NAMES if key == "u" else 64
                checked = self.get_all(instance.port, self.fresh_names(f"{tag}c{key}", count))
                if checked["sources"] != {"upstream": count}:
                    raise RuntimeError(f"{label}: fresh names answered from {checked['sources']}, not the upstream")
                if key == "u":
                    self.misses["up"].append(checked)
                self.misses[key].append(self.wrk_misses(instance, f"{tag}{key}", label))
                self.misses[key][-1]["sources"] = checked["sources"]
            # Resolved on a, not preloaded: a preload is replicated into every replica's cache,
            # and b would answer from its own. A resolve leaves the answer in Redis only (a's
            # lock on each name is held until the answer is there, so b never misses it).
            shared = self.fresh_names(tag + "s", REDIS_NAMES)
            resolved = self.get_all(a.port, shared)
            if resolved["sources"] != {"upstream": len(shared)}:
                raise RuntimeError(f"({REDIS}s) replica a answered fresh names from {resolved['sources']}, not the upstream")
            hits = self.get_all(b.port, shared)
            if hits["sources"] != {"shared": len(shared)}:
                raise RuntimeError(f"({REDIS}s) replica b answered replica a's names from {hits['sources']}, not Redis")
            self.misses["s"].append(hits)

    def wrk_misses(self, instance, tag, label):
        """One wrk run of never-asked names on `instance`, with its CPU by thread group, its
        context switches and redis-server's CPU per request (`/proc`), and the miss counter, which
        must grow by the requests."""
        env = {"BENCH_MODE": "resolve", "BENCH_TAG": tag, "BENCH_PREFIX": "/v1/bench/resolve?host=", "BENCH_ZONE": ZONE}
        misses = instance.counter("httpdns_cache_misses_total", "bench")
        run = with_cpu([("server", instance.process.pid, REDIS_GROUPS), ("redis", self.redis.pid, WHOLE)],
                       lambda: wrk(instance.port, "distinct.lua", env, label=label))
        server_cpu, redis_cpu = sum(run["cpu"]["server"].values()), run["cpu"]["redis"]["all threads"]
        run["misses"] = instance.counter("httpdns_cache_misses_total", "bench") - misses
        if run["non2xx"] or run["errors"] or run["misses"] < run["requests"]:
            raise RuntimeError(f"{label}: {run['non2xx']} non-2xx, {run['errors']} socket errors, "
                               f"miss counter +{run['misses']:.0f} for {run['requests']} requests")
        log(f"  {label}: server CPU {server_cpu:.1f} µs per miss ("
            + ", ".join(f"{group} {us:.1f}" for group, us in sorted(run["cpu"]["server"].items()))
            + "; context switches {:.2f} voluntary, {:.2f} involuntary), ".format(*run["switches"]["server"])
            + f"redis-server {redis_cpu:.1f} µs")
        return {"rps": run["rps"], "p50_ms": run["p50_us"] / 1000, "p99_ms": run["p99_us"] / 1000,
                "reps": [round(run["rps"])], "cpu_us": server_cpu, "redis_cpu_us": redis_cpu}

    def upstream_requests(self, instance):
        """The upstream requests `instance` has sent so far, every account."""
        return family_sum(metrics(instance.ops_port), "httpdns_upstream_requests_total")

    def per_name(self, instances, count):
        """Upstream requests per name when every instance is asked each of `count` fresh names at
        once."""
        names = self.fresh_names(f"q{random.randrange(10**6)}", count)
        before = sum(self.upstream_requests(i) for i in instances)
        with ThreadPoolExecutor(len(instances) * 8) as pool:
            jobs = [pool.submit(http_get, instance.port, f"/v1/bench/resolve?host={name}") for name in names for instance in instances]
            failed = [j.result()[0] for j in jobs if j.result()[0] != 200]
        if failed:
            raise RuntimeError(f"({REDIS}r) {len(failed)} requests failed: {failed[:5]}")
        return (sum(self.upstream_requests(i) for i in instances) - before) / count

    def measure_replicas(self, main):
        """(13r): the three replicas, then three instances without Redis ((1)'s and two more)."""
        count = min(REDIS_NAMES, 500)
        self.per_name_on = self.per_name(self.replicas, count)
        plain = [main] + [self.replica(f"httpdnsd-plain-{letter}", redis=False) for letter in "de"]
        self.per_name_off = self.per_name(plain, count)
        self.replica_names = count
        for instance in plain[1:]:
            instance.stop()

    def finish(self, results):
        """Stores every figure and check of (13) and replica b's shared-tier counters."""
        results[f"s{REDIS}"] = summarize(self.hits)
        results[f"s{REDIS}c"] = summarize(self.control_hits)
        results[f"s{REDIS}_splits"] = self.splits
        results[f"s{REDIS}_cpu"] = {"a": [r["cpu_us"] for r in self.hits], "c": [r["cpu_us"] for r in self.control_hits]}
        results[f"s{REDIS}_check"] = self.check
        for key in ("u", "s", "n", "up"):
            runs = self.misses[key]
            results[f"s{REDIS}{key}"] = {
                "rps": statistics.median(r["rps"] for r in runs), "p50_ms": statistics.median(r["p50_ms"] for r in runs),
                "p99_ms": statistics.median(r["p99_ms"] for r in runs), "reps": [r["reps"][0] for r in runs],
                "sources": runs[-1]["sources"]}
        results[f"s{REDIS}_misscpu"] = {key: {"server": [r["cpu_us"] for r in self.misses[key]],
                                              "redis": [r["redis_cpu_us"] for r in self.misses[key]]} for key in ("u", "n")}
        results[f"s{REDIS}r"] = {"on": self.per_name_on, "off": self.per_name_off, "names": self.replica_names}
        answers = metrics(self.replicas[1].ops_port)
        results[f"s{REDIS}_tier"] = {k: v for k, v in answers.items() if k.startswith("httpdns_redis_shared_answers_total")}
