"""The policy part of RESULTS.md (section (16)): hits of an account with 1000 rules and a domain
list against the same hits of an account without, on one instance, as requests/s and as the
server's CPU per hit, with the target rows (at most 10 % more cost per hit)."""

import statistics

from .settings import CONNECTIONS, DURATION, NAMES, POLICY, REPS, WRK_THREADS

# The limit: a hit of an account with policy costs at most 10 % more than one without.
COST_LIMIT = 1.10


def cpu_ratio(results):
    """(16) / (16c) server CPU per hit: the median of the per-repetition ratios (the two runs of a
    repetition are back to back); None unless both were measured."""
    s, c = results.get(f"s{POLICY}"), results.get(f"s{POLICY}c")
    if not s or not c or not s.get("cpu_us") or len(s["cpu_us"]) != len(c["cpu_us"]):
        return None
    return statistics.median(a / b for a, b in zip(s["cpu_us"], c["cpu_us"]) if b)


def rate_ratio(results):
    """(16) / (16c), requests/s (medians); None unless both were measured."""
    s, c = results.get(f"s{POLICY}"), results.get(f"s{POLICY}c")
    return s["rps"] / c["rps"] if s and c and c["rps"] else None


def paired_rate_ratio(results):
    """(16) / (16c) requests/s of each repetition (its two runs are back to back), and their
    median; None unless both were measured as often."""
    s, c = results.get(f"s{POLICY}"), results.get(f"s{POLICY}c")
    if not s or not c or len(s["reps"]) != len(c["reps"]):
        return None
    ratios = [a / b for a, b in zip(s["reps"], c["reps"]) if b]
    return (statistics.median(ratios), ratios) if ratios else None


def policy_section(add, results):
    """The section: both sides' figures, the two ratios, what was checked and how."""
    s, c = results.get(f"s{POLICY}"), results.get(f"s{POLICY}c")
    if not s or not c:
        return
    m = results["machine"]
    add("## Cache hits with policy: 1000 rules and a domain list")
    add("")
    add(f"Measured {m['date']}, httpdnsd commit {m['commit']} (release build), {REPS} repetitions of {DURATION} s, "
        f"wrk -t{WRK_THREADS} -c{CONNECTIONS} on the same {m['cores']} cores.")
    add("")
    add("| # | measurement | requests/s (median) | p50 ms | p99 ms | per repetition (req/s) | "
        "server CPU µs per hit, per repetition |")
    add("|---|---|---|---|---|---|---|")
    for num, what, side in (
            (f"{POLICY}", f"`GET /v1/policy/resolve`, {NAMES} warmed names: account with 1000 rules and a listed "
                          f"domain list", s),
            (f"{POLICY}c", "the same hits on account `bench` of the same instance, no rules, no domain list", c)):
        add(f"| {num} | {what} | {side['rps']:,.0f} | {side['p50_ms']:.2f} | {side['p99_ms']:.2f} | "
            f"{', '.join(str(r) for r in side['reps'])} | {', '.join(f'{v:.2f}' for v in side['cpu_us'])} |")
    add("")
    cpu, rate = cpu_ratio(results), rate_ratio(results)
    if cpu is not None:
        add(f"Server CPU per hit, ({POLICY}) / ({POLICY}c), median of the repetitions' ratios = **{cpu:.3f}** "
            f"(limit ≤ {COST_LIMIT:.2f}: {'PASS' if cpu <= COST_LIMIT else '**FAIL**'}); per repetition "
            + ", ".join(f"{a / b:.2f}" for a, b in zip(s["cpu_us"], c["cpu_us"]) if b) + ".")
    add(f"Requests/s, ({POLICY}) / ({POLICY}c) = **{rate:.3f}** (limit ≥ {1 / COST_LIMIT:.3f}, i.e. at most "
        f"{COST_LIMIT - 1:.0%} more time per hit: {'PASS' if rate >= 1 / COST_LIMIT else '**FAIL**'}).")
    paired = paired_rate_ratio(results)
    if paired:
        add(f"Requests/s per repetition, (16) / (16c): {', '.join(f'{r:.2f}' for r in paired[1])}; their median "
            f"{paired[0]:.3f}.")
    add("")
    add(f"Checked: ({POLICY}) {s['requests']:.0f} requests, non-2xx {s['non2xx']}, socket errors {s['errors']}; "
        f"hit counter +{s['moved'].get('hits', 0):.0f}, miss counter +{s['moved'].get('misses', 0):.0f}, rule "
        f"answers +{s['moved'].get('rules', 0):.0f}. ({POLICY}c) {c['requests']:.0f} requests, non-2xx "
        f"{c['non2xx']}, socket errors {c['errors']}; hit counter +{c['moved'].get('hits', 0):.0f}, miss counter "
        f"+{c['moved'].get('misses', 0):.0f}. Before the runs: the first name a cache hit on both accounts, an "
        f"unlisted name 403, the rule without conditions answering its host (`\"source\":\"rule\"`).")
    add("")
    add(f"How: one httpdnsd instance with two accounts, the same upstream (dnss → the caching unbound), both "
        f"preloaded with the {NAMES} names of (1). Account `policy` has 1000 `rules`, each naming two hosts under "
        f"`rules.test` (an exact name and a `*.` wildcard) with one of five `when` (networks; an `sdns-appver` "
        f"glob; countries and regions; ASNs; networks and an `sdns-os` glob; the last rule none) and IPv4 or "
        f"IPv4 + IPv6 answers, some weighted; and a `listed` domain list allowing the {NAMES} hit names exactly "
        f"and 1000 wildcards (`*.rules.test` among them), with 100 denied names. A hit name is allowed by the "
        f"list and named by no rule: it pays the list's check and the rules' lookup, and is answered from the "
        f"cache. wrk cycles through the names on each account for {DURATION} s, the two alternating within each "
        f"repetition; the server's CPU (user + system of all threads, /proc/PID/stat) is read around each run "
        f"and divided by its requests (the split of wrk's connections between the HTTP workers caps a run's "
        f"requests/s at random, not its CPU per hit).")
    add("")


def policy_targets(target, results):
    """The target rows of (16) / (16c): CPU per hit and requests/s."""
    cpu, rate = cpu_ratio(results), rate_ratio(results)
    if cpu is not None:
        target(f"server CPU per hit, 1000 rules + domain list / no policy, ({POLICY}) / ({POLICY}c)",
               f"≤ {COST_LIMIT:.2f}", cpu, cpu <= COST_LIMIT)
    if rate is not None:
        target(f"hit throughput, 1000 rules + domain list / no policy, ({POLICY}) / ({POLICY}c)",
               f"≥ {1 / COST_LIMIT:.3f}", rate, rate >= 1 / COST_LIMIT)
