"""The plain-DNS part of RESULTS.md (section (14), issue 26): httpdnsd's `dnsListen` cache hits
against the caching unbound's own, with dnsperf, and the target row."""

from .settings import CONNECTIONS, DURATION, NAMES, PLAINDNS, REPS, WRK_THREADS

# Issue 26's goal: plain-DNS cache hits at least as fast as unbound's own cache.
PLAIN_DNS_RATIO = 1.0


def ratio(results):
    """(14) / (14u), queries/s; None unless both were measured."""
    s, u = results.get(f"s{PLAINDNS}"), results.get(f"s{PLAINDNS}u")
    return s["qps"] / u["qps"] if s and u and u["qps"] else None


def plain_dns_section(add, results):
    """The section: both sides' figures, the ratio, what was checked and how it is measured."""
    s, u = results.get(f"s{PLAINDNS}"), results.get(f"s{PLAINDNS}u")
    if not s or not u:
        return
    m = results["machine"]
    add("## Plain DNS cache hits (issue 26)")
    add("")
    add(f"Measured {m['date']}, httpdnsd commit {m['commit']} (release build), {REPS} repetitions of {DURATION} s, "
        f"dnsperf -c{CONNECTIONS} -T{WRK_THREADS} -q{4 * CONNECTIONS} over UDP on the same {m['cores']} cores.")
    add("")
    add("| # | measurement | queries/s (median) | average latency ms | per repetition (q/s) | lost |")
    add("|---|---|---|---|---|---|")
    for num, what, side in ((f"{PLAINDNS}", f"httpdnsd `dnsListen` cache hits, account `bench`, {NAMES} warmed names", s),
                            (f"{PLAINDNS}u", "unbound's own cache hits (the caching unbound), the same names", u)):
        add(f"| {num} | {what} | {side['qps']:,.0f} | {side['latency_ms']:.2f} | "
            f"{', '.join(str(r) for r in side['reps'])} | {side['lost']:.0f} |")
    add("")
    value = ratio(results)
    add(f"httpdnsd / unbound, ({PLAINDNS}) / ({PLAINDNS}u) = **{value:.3f}** (target ≥ {PLAIN_DNS_RATIO}: "
        f"{'PASS' if value >= PLAIN_DNS_RATIO else '**FAIL**'}).")
    if len(s["reps"]) == len(u["reps"]):
        add("Per repetition: " + ", ".join(f"{a / b:.2f}" for a, b in zip(s["reps"], u["reps"]) if b) + ".")
    add("")
    add(f"Checked: {s['check']}.")
    add("")
    add(f"How: a httpdnsd instance of its own with `dnsListen` and `dnsAccount: bench` (upstream dnss → the "
        f"caching unbound) has the {NAMES} names of (1) preloaded, which fills the caching unbound's cache with "
        f"the same names. dnsperf then cycles through them (`NAME A`, one question, no EDNS) against each "
        f"for {DURATION} s, the two alternating within each repetition. Each server answers with one thread: "
        f"httpdnsd's DNS listener is one epoll thread, the unbound has `num-threads: 1`.")
    add("")


def plain_dns_targets(target, results):
    """The target row of (14) / (14u)."""
    if results.get(f"s{PLAINDNS}"):
        value = ratio(results)
        target(f"plain-DNS cache hits / unbound's own, ({PLAINDNS}) / ({PLAINDNS}u) (issue 26)", f"≥ {PLAIN_DNS_RATIO}",
               value, value is not None and value >= PLAIN_DNS_RATIO)
