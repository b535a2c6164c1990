"""The misses' part of RESULTS.md: CPU per miss thread by thread against dnss's per request
(section (4) and (4u), read from /proc), and the miss targets: CPU, misses/s and p99 against the
upstream alone, preload names/s."""

import statistics

# The targets for misses: httpdnsd's CPU per miss against dnss's CPU per request, misses/s and
# preload names/s against the upstream alone (dnss, (4u)), and the p99 a miss may add.
CPU_RATIO = 0.4
MISS_RATIO = 0.85
PRELOAD_RATIO = 0.8
P99_SLACK_MS = 1.0
# The thread groups shown on rows of their own, in this order; every other thread is "others".
NAMED_GROUPS = ("curl loop", "HTTP")


def grouped(per_rep):
    """httpdnsd's CPU µs per miss of each repetition ({thread group or name: µs}) as
    {"curl loop", "HTTP", "others", "total": [µs per repetition]}, and the other threads' names
    with their median µs, largest first."""
    rows = {label: [] for label in NAMED_GROUPS + ("others", "total")}
    names = {}
    for cpu in per_rep:
        for label in NAMED_GROUPS:
            rows[label].append(cpu.get(label, 0.0))
        rows["others"].append(sum(us for label, us in cpu.items() if label not in NAMED_GROUPS))
        rows["total"].append(sum(cpu.values()))
        for label, us in cpu.items():
            if label not in NAMED_GROUPS:
                names.setdefault(label, []).append(us)
    others = sorted(((label, statistics.median(v + [0.0] * (len(per_rep) - len(v)))) for label, v in names.items()),
                    key=lambda item: -item[1])
    return rows, others


def cpu_ratio(results):
    """httpdnsd's CPU per miss (median of the repetitions, every thread) / dnss's CPU per request
    in (4u) (median); None without both."""
    cpu = results.get("s4_cpu")
    if not cpu or not cpu["httpdnsd"] or not cpu["dnss"]:
        return None
    rows, _ = grouped(cpu["httpdnsd"])
    dnss = statistics.median(cpu["dnss"])
    return statistics.median(rows["total"]) / dnss if dnss else None


def floor_figures(results):
    """The C forwarder's CPU per miss (4f) against dnss's per request (4u) and against httpdnsd's
    (4), medians, with httpdnsd's CPU above it in µs; None without all three."""
    cpu = results.get("s4_cpu")
    if not cpu or not cpu.get("floor") or not cpu["httpdnsd"] or not cpu["dnss"]:
        return None
    rows, _ = grouped(cpu["httpdnsd"])
    total, floor, dnss = statistics.median(rows["total"]), statistics.median(cpu["floor"]), statistics.median(cpu["dnss"])
    if not floor or not dnss:
        return None
    return {"ratio": floor / dnss, "over": total / floor, "own": total - floor}


def floor_row(s4, s4f, floor):
    """httpdnsd against the C forwarder in the same run: misses/s (4) / (4f), CPU per miss (4) /
    (4f) (from `floor_figures`, when there), and the p99 (4) − (4f); None without (4f)."""
    if not s4 or not s4f or not s4f["rps"]:
        return None
    parts = [f"misses/s {s4['rps'] / s4f['rps']:.3f}"]
    if floor:
        parts.append(f"CPU per miss {floor['over']:.2f} ×")
    parts.append(f"p99 {s4['p99_ms'] - s4f['p99_ms']:+.2f} ms ({s4['p99_ms']:.2f} against {s4f['p99_ms']:.2f})")
    return ", ".join(parts)


def user_system_figures(results):
    """{process: (user µs, kernel µs) per miss, medians of the repetitions} for httpdnsd in (4),
    the C forwarder in (4f) and dnss alone in (4u); None when the run kept no split."""
    split = (results.get("s4_cpu") or {}).get("user_system")
    if not split:
        return None
    return {name: (statistics.median(u for u, _ in reps), statistics.median(s for _, s in reps))
            for name, reps in split.items() if reps}


def user_system_line(figures):
    """The sentence setting httpdnsd's user and kernel time per miss against the floor's (the
    kernel's part is what a miss's system calls and network stack cost, the user part what each
    process's own code costs); None without both."""
    httpdnsd, floor = figures.get("httpdnsd"), figures.get("floor")
    if not httpdnsd or not floor or not floor[0] or not floor[1]:
        return None
    line = (f"User space + kernel, µs per miss (medians): httpdnsd {httpdnsd[0]:.1f} + {httpdnsd[1]:.1f}, "
            f"the C forwarder (4f) {floor[0]:.1f} + {floor[1]:.1f}")
    if figures.get("dnss"):
        line += f", dnss alone (4u) {figures['dnss'][0]:.1f} + {figures['dnss'][1]:.1f} a request"
    return (f"{line}. httpdnsd's kernel time is {httpdnsd[1] / floor[1]:.2f} × the floor's, its user time "
            f"{httpdnsd[0] / floor[0]:.2f} × ({httpdnsd[0] - floor[0]:+.1f} µs).")


def miss_section(add, results):
    """The table of CPU per miss by thread group, dnss beside, and the preload (4p)."""
    cpu = results.get("s4_cpu")
    if not cpu or not cpu["httpdnsd"]:
        return
    rows, others = grouped(cpu["httpdnsd"])
    total = statistics.median(rows["total"])
    add("## Misses: CPU per miss, thread by thread (issue 24)")
    add("")
    add("| process, threads | CPU µs per miss (median) | share of httpdnsd | per repetition (µs) |")
    add("|---|---|---|---|")
    for label, what in (("curl loop", "httpdnsd, the curl loop thread (`httpdnsd-curl`)"),
                        ("HTTP", "httpdnsd, the HTTP threads (`httpdnsd-http`, with their upstream client)"),
                        ("others", "httpdnsd, every other thread"), ("total", "**httpdnsd, all threads (4)**")):
        value = statistics.median(rows[label])
        add(f"| {what} | {value:.1f} | {100 * value / total if total else 0:.0f} % | "
            f"{', '.join(f'{v:.1f}' for v in rows[label])} |")
    for key, what in (("floor", "the C forwarder (4f), all threads, per miss: the floor of this HTTP layer"),
                      ("dnss_in_4", "dnss during (4), per miss of httpdnsd (its upstream)"),
                      ("dnss", "**dnss alone (4u), per request**")):
        if cpu.get(key):
            add(f"| {what} | {statistics.median(cpu[key]):.1f} | — | {', '.join(f'{v:.1f}' for v in cpu[key])} |")
    add("")
    if others:
        add("The other threads, median µs per miss (those under 0.05 left out): "
            + (", ".join(f"`{name}` {us:.1f}" for name, us in others if us >= 0.05) or "none") + ".")
        add("")
    switches = cpu.get("switches")
    if switches:
        voluntary = [v for v, _ in switches]
        involuntary = [i for _, i in switches]
        add(f"httpdnsd's context switches per miss during (4), every thread: {statistics.median(voluntary):.2f} voluntary "
            f"(a thread going to sleep, then woken; per repetition {', '.join(f'{v:.2f}' for v in voluntary)}) and "
            f"{statistics.median(involuntary):.2f} involuntary (the core taken away; "
            f"{', '.join(f'{i:.2f}' for i in involuntary)}).")
        add("")
    ratio = cpu_ratio(results)
    if ratio is not None:
        add(f"httpdnsd CPU per miss / dnss CPU per request = **{ratio:.2f}** (target ≤ {CPU_RATIO}: "
            f"{'PASS' if ratio <= CPU_RATIO else '**FAIL**'}; {ratio / CPU_RATIO:.2f} × the target).")
        add("")
    floor = floor_figures(results)
    if floor:
        add(f"The floor (4f) / dnss CPU per request = {floor['ratio']:.2f}; httpdnsd / the floor = "
            f"{floor['over']:.2f}: httpdnsd's own work costs {floor['own']:.1f} µs a miss on top of what "
            "libmicrohttpd, the kernel and the upstream exchange cost a forwarder that does nothing else.")
        add("")
    split = user_system_figures(results)
    line = user_system_line(split) if split else None
    if line:
        add(line)
        add("")
    preload = results.get("s4_preload")
    if preload:
        add(f"(4p) preload of {preload['names']:,} never-asked names per repetition (`POST /v1/bench/preload`, "
            f"the batches of (6)): {preload['rate']:,.0f} names/s (median; "
            f"{', '.join(str(r) for r in preload['reps'])}).")
        add("")


def miss_targets(add, target, results):
    """The rows of the targets' table for misses, against (4u), the upstream alone."""
    s4, s4u = results.get("s4"), results.get("s4_dnss")
    if not s4:
        return
    target("httpdnsd CPU per miss / dnss CPU per request, (4) / (4u), all threads (issue 24)", f"≤ {CPU_RATIO}",
           cpu_ratio(results), (cpu_ratio(results) or 0) <= CPU_RATIO)
    ratio = s4u and s4["rps"] / s4u["rps"]
    target("misses/s / the upstream alone, (4) / (4u) (issue 24)", f"≥ {MISS_RATIO}", ratio, ratio and ratio >= MISS_RATIO)
    if s4u and len(s4["reps"]) == len(s4u["reps"]):
        pairs = [a / b for a, b in zip(s4["reps"], s4u["reps"])]
        add(f"| (4) / (4u) per repetition, their median | — | {statistics.median(pairs):.3f} "
            f"({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
    target(f"miss p99 against the upstream alone's p99 + {P99_SLACK_MS:.0f} ms, (4) − (4u) (issue 24)",
           f"≤ {P99_SLACK_MS:.1f} ms", s4u and s4["p99_ms"] - s4u["p99_ms"],
           s4u and s4["p99_ms"] <= s4u["p99_ms"] + P99_SLACK_MS,
           s4u and f"{s4['p99_ms'] - s4u['p99_ms']:+.2f} ms ({s4['p99_ms']:.2f} against {s4u['p99_ms']:.2f})")
    preload = results.get("s4_preload")
    ratio = preload and s4u and preload["rate"] / s4u["rps"]
    target("preload names/s / the upstream alone, (4p) / (4u) (issue 24)", f"≥ {PRELOAD_RATIO}", ratio,
           ratio and ratio >= PRELOAD_RATIO)
    floor = floor_figures(results)
    if floor:
        add(f"| the floor's CPU per miss / dnss CPU per request, (4f) / (4u) (no target: what the first row's target "
            f"leaves httpdnsd's own work) | — | {floor['ratio']:.3f} | — |")
    s4f = results.get("s4_floor")
    if s4f and s4u:
        add(f"| the floor's misses/s / the upstream alone, (4f) / (4u) (no target) | — | {s4f['rps'] / s4u['rps']:.3f} | — |")
    against = floor_row(s4, s4f, floor)
    if against:
        add(f"| httpdnsd against the floor, (4) against (4f) (no target): misses/s, CPU per miss, p99 | — | {against} | — |")
    if s4u and results.get("s4_dnsperf"):
        add(f"| (4) / (4d), against unbound alone over UDP (no target) | — | "
            f"{s4['rps'] / results['s4_dnsperf']['qps']:.3f} | — |")
