"""The DNS parts of RESULTS.md, one writer for both: section (14), issue 26, httpdnsd's
`dnsListen` cache hits against the caching unbound's own over UDP, and section (15), its
`dotListen` cache hits against the same unbound's DoT listener; with dnsperf, and a target row each."""

from .settings import CONNECTIONS, DOT, DURATION, NAMES, PLAINDNS, REPS, WRK_THREADS

# Issue 26's goal: plain-DNS cache hits at least as fast as unbound's own cache.
PLAIN_DNS_RATIO = 1.0
# DoT's goal: cache hits over TLS at least 0.9 x unbound's own over TLS.
DOT_RATIO = 0.9

# What differs between the two sections: heading, goal, transport, the rows' text and the "How".
SECTIONS = {
    PLAINDNS: {
        "title": "Plain DNS cache hits (issue 26)", "goal": PLAIN_DNS_RATIO, "transport": "over UDP",
        "ours": f"httpdnsd `dnsListen` cache hits, account `bench`, {NAMES} warmed names",
        "theirs": "unbound's own cache hits (the caching unbound), the same names",
        "target": "plain-DNS cache hits / unbound's own", "issue": " (issue 26)",
        "how": (f"How: a httpdnsd instance of its own with `dnsListen` and `dnsAccount: bench` (upstream dnss → the "
                f"caching unbound) has the {NAMES} names of (1) preloaded, which fills the caching unbound's cache with "
                f"the same names. dnsperf then cycles through them (`NAME A`, one question, no EDNS) against each "
                f"for {DURATION} s, the two alternating within each repetition. Each server answers with one thread: "
                f"httpdnsd's DNS listener is one epoll thread, the unbound has `num-threads: 1`."),
    },
    DOT: {
        "title": "DNS over TLS cache hits", "goal": DOT_RATIO,
        "transport": f"over DoT (`-m dot`: {CONNECTIONS} TLS connections, each kept for the whole run)",
        "ours": f"httpdnsd `dotListen` cache hits, account `default`, {NAMES} warmed names",
        "theirs": "unbound's own DoT cache hits (the caching unbound's `tls-port`), the same names",
        "target": "DoT cache hits / unbound's own DoT", "issue": "",
        "how": (f"How: a httpdnsd instance of its own with `dotListen` (no `dotAccountDomain`: every connection is "
                f"account `default`'s; upstream dnss → the caching unbound) has the {NAMES} names of (1) preloaded, "
                f"which fills the caching unbound's cache with the same names; that unbound also serves DoT "
                f"(`tls-port`, `tls-service-pem`/`-key`, `incoming-num-tcp: 1024`). Both serve the same certificate "
                f"(ECDSA P-256, made by openssl), checked with a verified DoT query before the runs. dnsperf `-m dot` "
                f"then cycles through the names against each for {DURATION} s, the two alternating within each "
                f"repetition; each of its {CONNECTIONS} clients opens one TLS connection and keeps it for the run "
                f"(no `num-queries-per-conn`), so the {CONNECTIONS} handshakes of a run are a small part of it. "
                f"Each server answers with one thread: httpdnsd's DoT listener is one epoll thread, the unbound has "
                f"`num-threads: 1`."),
    },
}


def ratio(results, number=PLAINDNS):
    """(N) / (Nu), queries/s; None unless both were measured."""
    s, u = results.get(f"s{number}"), results.get(f"s{number}u")
    return s["qps"] / u["qps"] if s and u and u["qps"] else None


def plain_dns_section(add, results):
    """Each measured section: both sides' figures, the ratio, what was checked and how."""
    for number, spec in SECTIONS.items():
        one_section(add, results, number, spec)


def one_section(add, results, number, spec):
    """Section `number` (nothing unless both sides were measured)."""
    s, u = results.get(f"s{number}"), results.get(f"s{number}u")
    if not s or not u:
        return
    m = results["machine"]
    add(f"## {spec['title']}")
    add("")
    add(f"Measured {m['date']}, httpdnsd commit {m['commit']} (release build), {REPS} repetitions of {DURATION} s, "
        f"dnsperf -c{CONNECTIONS} -T{WRK_THREADS} -q{4 * CONNECTIONS} {spec['transport']} on the same "
        f"{m['cores']} cores.")
    add("")
    add("| # | measurement | queries/s (median) | average latency ms | per repetition (q/s) | lost |")
    add("|---|---|---|---|---|---|")
    for num, what, side in ((f"{number}", spec["ours"], s), (f"{number}u", spec["theirs"], u)):
        add(f"| {num} | {what} | {side['qps']:,.0f} | {side['latency_ms']:.2f} | "
            f"{', '.join(str(r) for r in side['reps'])} | {side['lost']:.0f} |")
    add("")
    value = ratio(results, number)
    add(f"httpdnsd / unbound, ({number}) / ({number}u) = **{value:.3f}** (target ≥ {spec['goal']}: "
        f"{'PASS' if value >= spec['goal'] else '**FAIL**'}).")
    if len(s["reps"]) == len(u["reps"]):
        add("Per repetition: " + ", ".join(f"{a / b:.2f}" for a, b in zip(s["reps"], u["reps"]) if b) + ".")
    add("")
    add(f"Checked: {s['check']}.")
    add("")
    add(spec["how"])
    add("")


def plain_dns_targets(target, results):
    """The target row of each measured section, (N) / (Nu)."""
    for number, spec in SECTIONS.items():
        if results.get(f"s{number}"):
            value = ratio(results, number)
            target(f"{spec['target']}, ({number}) / ({number}u){spec['issue']}", f"≥ {spec['goal']}",
                   value, value is not None and value >= spec["goal"])
