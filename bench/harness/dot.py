"""Section (15): DNS over TLS cache hits. dnsperf (`-m dot`) asks the warmed names of (1) of
httpdnsd's `dotListen` (account `default`, an instance of its own), and (15u) of the caching
unbound's own DoT listener (`tls-port`), whose cache holds the same names: the same queries,
certificate, load generator and cores, one serving thread each (httpdnsd's DoT listener has one
thread, the unbound is `num-threads: 1`). The two alternate in each repetition, (15) first in
even ones. Each of dnsperf's clients opens one connection and keeps it for the whole run, so the
TLS handshakes (CONNECTIONS a run, counted) are not what is measured."""

from .clients import dot_ask, metrics
from .plain_dns import alternate, check_text, hit_counters, query_file, summary, unbound_counters
from .processes import free_port
from .servers import HTTPDNSD
from .settings import DOT, log


def measure_dot(work, processes, binary, stack, names, results):
    """(15) and (15u), REPS times each, alternating; stores their figures and what was checked
    (as (14), plus the TLS handshakes httpdnsd completed and the queries unbound read over TLS)."""
    cert, key = stack.dot_certificate
    dot_port = free_port()
    upstream = f"doh:http://127.0.0.1:{stack.dnss_port}/dns-query"
    # Without `dotAccountDomain` every DoT connection is account `default`'s.
    server = HTTPDNSD(processes, work, binary, "httpdnsd-dot", {"default": upstream}, cache_limit=4 * len(names),
                      extra={"listen": f"127.0.0.1:{free_port()}", "tlsCert": cert, "tlsKey": key,
                             "dotListen": f"127.0.0.1:{dot_port}"})
    server.start()
    seconds = server.preload("default", names)
    log(f"section {DOT}: warmed {len(names)} names into httpdnsd and the caching unbound in {seconds:.1f} s")
    for port, who in ((dot_port, "httpdnsd"), (stack.dot_port, "unbound")):
        if dot_ask(port, names[0], cert) != (0, 2):
            raise RuntimeError(f"{who} does not answer {names[0]} with two records over DoT")

    def counters():
        return {**hit_counters(server, "default"),
                "handshakes": metrics(server.ops_port).get("httpdns_dot_handshakes_total", 0)}

    (runs, runs_unbound), (ours, theirs) = alternate(DOT, query_file(work, names), "dot", (
        (dot_port, f"({DOT}) httpdnsd dotListen hits", counters),
        (stack.dot_port, f"({DOT}u) unbound DoT cache hits", lambda: unbound_counters(stack))))
    processes.stop(server.process)
    results[f"s{DOT}"] = summary(runs)
    results[f"s{DOT}u"] = summary(runs_unbound)
    results[f"s{DOT}"]["check"] = (
        check_text(DOT, summary(runs), summary(runs_unbound), ours, theirs)
        + f", queries +{theirs.get('queries', 0):.0f} (its DoT port serves TLS only); TLS handshakes httpdnsd "
        f"completed during the runs +{ours.get('handshakes', 0):.0f}, dnsperf reconnections {summary(runs)['reconnections']:.0f} / "
        f"{summary(runs_unbound)['reconnections']:.0f}")
