"""Section (16): the cost of policy to a cache hit. One instance of its own holds two accounts
with the same upstream and the same warmed names: `policy`, with 1000 `rules` (docs/rules.md) on
other hosts (exact names and `*.` wildcards, varied `when` conditions) and a `listed` domain
list of the hit names and 1000 wildcards (plus 100 denied names), and `bench`, without either.
(16) wrk cycles through the names on `policy`, (16c) the same on `bench`, alternating in each
repetition ((16) first in even ones). A hit name is allowed by the list and named by no rule:
it pays the list's check and the rules' lookup (one hash per label), and is answered from the
cache on the fast path. The server's CPU (all threads, /proc) per request is read around each
run beside requests/s, since the split of wrk's connections between the HTTP workers caps a
run's rate at random, not its CPU per request."""

import json
import os

from .clients import http_get
from .load import summarize, wrk, write_list
from .procstat import stat_ticks
from .servers import HTTPDNSD
from .settings import POLICY, REPS, log

RULES = 1000
WILDCARDS = 1000  # listed beside the hit names
DENIED = 100
# The `when` of rule i is CONDITIONS[i % len(CONDITIONS)]; the last rule has none (every client).
CONDITIONS = (
    {"networks": ["10.0.0.0/8", "2001:db8::/32"]},
    {"params": {"appver": "2.*"}},
    {"countries": ["CN"], "regions": ["CN-ZJ"]},
    {"asns": [4134, 4837]},
    {"networks": ["192.168.0.0/16"], "params": {"os": ["android", "ios*"]}},
)


def rules(count=RULES, zone="rules.test"):
    """`count` rules, each naming two hosts under `zone` no hit asks (an exact name and a
    wildcard), with varied conditions and answers (also `bench/callgrind_hit.py`'s CALLGRIND_RULES)."""
    made = []
    for i in range(count):
        answer = {"ipv4": ["192.0.2.10", "192.0.2.11"], "weights": [3, 1], "ttl": 60} if i % 2 else \
            {"ipv4": ["198.51.100.1"], "ipv6": ["2001:db8::1"], "ttl": 300}
        rule = {"name": f"rule-{i}", "hosts": [f"r{i}.{zone}", f"*.w{i}.{zone}"], "answer": answer}
        if i < count - 1:
            rule["when"] = CONDITIONS[i % len(CONDITIONS)]
        made.append(rule)
    return made


def domains(names):
    """The `listed` domain list: every hit name exactly, WILDCARDS wildcards of other zones and
    the rules' zone, DENIED denied names."""
    allow = list(names) + [f"*.z{i}.other.test" for i in range(WILDCARDS - 1)] + ["*.rules.test"]
    return {"mode": "listed", "allow": allow, "deny": [f"ads{i}.other.test" for i in range(DENIED)]}


def precheck(server, names):
    """Before the loop: the first name is a cache hit on both accounts, an unlisted name is
    refused and the unconditional rule answers its host on `policy` (the policy is in force)."""
    for account in ("policy", "bench"):
        status, body, _ = http_get(server.port, f"/v1/{account}/resolve?host={names[0]}")
        if status != 200 or json.loads(body).get("source") != "cache":
            raise RuntimeError(f"({POLICY}) {names[0]} is not a cache hit on {account}: {status} {body!r}")
    status, body, _ = http_get(server.port, "/v1/policy/resolve?host=unlisted.example.test")
    if status != 403:
        raise RuntimeError(f"({POLICY}) an unlisted name answered {status}, not 403: {body!r}")
    status, body, _ = http_get(server.port, f"/v1/policy/resolve?host=r{RULES - 1}.rules.test")
    if status != 200 or json.loads(body).get("source") != "rule":
        raise RuntimeError(f"({POLICY}) the unconditional rule did not answer: {status} {body!r}")


def counters(server, account):
    """The hit, miss and rule-answer counters of `account`."""
    return {key: server.counter(name, account) for key, name in (
        ("hits", "httpdns_cache_hits_total"), ("misses", "httpdns_cache_misses_total"),
        ("rules", "httpdns_rule_answers_total"))}


def measure_policy(work, processes, binary, stack, names, results):
    """(16) and (16c), REPS times each, alternating; stores their figures, the CPU per request of
    each run and what was checked (every request a hit, no miss, no rule answer)."""
    upstream = f"doh:http://127.0.0.1:{stack.dnss_port}/dns-query"
    server = HTTPDNSD(processes, work, binary, "httpdnsd-policy", {"policy": upstream, "bench": upstream},
                      cache_limit=4 * len(names),
                      account_keys={"policy": {"rules": rules(), "domains": domains(names)}})
    server.start()
    for account in ("policy", "bench"):
        seconds = server.preload(account, names)
        log(f"section {POLICY}: warmed {len(names)} names into account {account} in {seconds:.1f} s")
    precheck(server, names)
    names_file = write_list(os.path.join(work, "policy-names.txt"), names)
    sides = {"policy": [], "bench": []}
    moved = {"policy": {}, "bench": {}}
    ticks_per_second = os.sysconf("SC_CLK_TCK")
    for rep in range(REPS):
        log(f"section {POLICY}, repetition {rep + 1}/{REPS}")
        for account in (("policy", "bench") if rep % 2 == 0 else ("bench", "policy")):
            before, ticks = counters(server, account), stat_ticks(f"/proc/{server.process.pid}/stat")[1]
            env = {"BENCH_LIST": names_file, "BENCH_PREFIX": f"/v1/{account}/resolve?host="}
            run = wrk(server.port, "cycle.lua", env,
                      label=f"({POLICY}{'' if account == 'policy' else 'c'}) hits on account {account}")
            run["cpu_us"] = ((stat_ticks(f"/proc/{server.process.pid}/stat")[1] - ticks) / ticks_per_second * 1e6
                             / run["requests"])
            for key, value in counters(server, account).items():
                moved[account][key] = moved[account].get(key, 0) + value - before[key]
            sides[account].append(run)
    server.stop()
    for key, account in ((f"s{POLICY}", "policy"), (f"s{POLICY}c", "bench")):
        results[key] = summarize(sides[account])
        results[key]["cpu_us"] = [run["cpu_us"] for run in sides[account]]
        results[key]["requests"] = sum(run["requests"] for run in sides[account])
        results[key]["moved"] = moved[account]
