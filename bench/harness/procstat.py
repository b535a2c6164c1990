"""What /proc and gdb say about a running server: CPU used (the whole process, each thread by
name, or each libmicrohttpd worker thread), RSS, and the malloc arena of each worker. A run's requests/s can
be capped by how wrk's connections split between the workers; these figures show when."""

import os
import re
import shutil
import subprocess
import time

from .settings import log


def parse_stat(stat):
    """The name and the user + system CPU ticks (`utime` + `stime`, fields 14 and 15) of the text
    of a /proc .../stat file. The name (field 2, the thread's `comm`) is in parentheses and may
    itself hold spaces and parentheses, so the fields are counted after its last `)`."""
    fields = stat.rsplit(")", 1)[1].split()
    return stat[stat.index("(") + 1:stat.rindex(")")], int(fields[11]) + int(fields[12])


def parse_user_system(stat):
    """The user and the system CPU ticks (`utime`, `stime`: fields 14 and 15) of the text of a
    /proc .../stat file, apart: time spent in the process's own code and libraries against time
    the kernel spent for it (system calls, the network stack, scheduling)."""
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def user_system_seconds(pid):
    """(user, system) CPU seconds a process has used so far, every thread, exited ones included."""
    with open(f"/proc/{pid}/stat") as f:
        user, system = parse_user_system(f.read())
    ticks = os.sysconf("SC_CLK_TCK")
    return user / ticks, system / ticks


def stat_ticks(path):
    """The name and the user + system CPU ticks of a /proc .../stat file."""
    with open(path) as f:
        return parse_stat(f.read())


def cpu_seconds(pid):
    """User + system CPU seconds a process has used so far (/proc/PID/stat)."""
    return stat_ticks(f"/proc/{pid}/stat")[1] / os.sysconf("SC_CLK_TCK")


def is_http_thread(name):
    """Whether a thread runs a libmicrohttpd daemon: httpdnsd's HTTP threads (`httpdnsd-http`),
    libmicrohttpd's own pool threads (`MHD-...`, the C baseline's)."""
    return name == "httpdnsd-http" or name.startswith("MHD-")


def parse_switches(status):
    """The voluntary and involuntary context switches of a /proc .../status text: a voluntary one
    is the thread going to sleep to wait (each is then a wake-up), an involuntary one the kernel
    taking the core away."""
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return int(fields["voluntary_ctxt_switches"]), int(fields["nonvoluntary_ctxt_switches"])


def thread_switches(pid):
    """Every thread of `pid` now, {tid: (voluntary, involuntary) context switches so far}."""
    switches = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                switches[tid] = parse_switches(f.read())
        except (FileNotFoundError, ProcessLookupError):
            continue  # it exited between the listing and the read
    return switches


def switches_between(before, after):
    """The voluntary and involuntary switches of the threads alive at `after` since `before` (a
    thread started in between counts from zero; one that exited in between is not counted)."""
    voluntary = sum(v - before.get(tid, (0, 0))[0] for tid, (v, _) in after.items())
    involuntary = sum(i - before.get(tid, (0, 0))[1] for tid, (_, i) in after.items())
    return voluntary, involuntary


def worker_ticks(pid):
    """CPU ticks used so far by each HTTP thread of `pid` (`is_http_thread`), by thread id."""
    ticks = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name, used = stat_ticks(f"/proc/{pid}/task/{tid}/stat")
        except FileNotFoundError:
            continue
        if is_http_thread(name):
            ticks[tid] = used
    return ticks


def thread_ticks(pid):
    """Every thread of `pid` now, {tid: (name, CPU ticks so far)}, and the whole process's ticks
    (which keep the time of threads that have exited). The name is the thread's `comm`, as
    `/proc/PID/task/TID/comm` shows it, read from the same stat line as its ticks."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            threads[tid] = stat_ticks(f"/proc/{pid}/task/{tid}/stat")
        except (FileNotFoundError, ProcessLookupError):
            continue  # it exited between the listing and the read
    return threads, stat_ticks(f"/proc/{pid}/stat")[1]


def cpu_by_group(before, after, groups):
    """CPU µs used between two `thread_ticks` snapshots, summed by group: `groups` is a list of
    (label, predicate on the thread's name); a thread no predicate takes counts under its own
    name. A thread started in between counts from zero; the time of one that exited in between
    (the process's ticks less its live threads') is "exited threads"."""
    per_tick = 1e6 / os.sysconf("SC_CLK_TCK")
    (threads_before, process_before), (threads_after, process_after) = before, after
    used = {}
    for tid, (name, ticks) in threads_after.items():
        label = next((label for label, takes in groups if takes(name)), name)
        used[label] = used.get(label, 0) + ticks - threads_before.get(tid, (name, 0))[1]
    exited = (process_after - process_before) - sum(used.values())
    if exited > 0:
        used["exited threads"] = exited
    return {label: ticks * per_tick for label, ticks in used.items()}


def worker_split(before, after):
    """How the CPU of one run was shared among the worker threads, busiest first: "62/38"."""
    used = sorted((after[t] - before.get(t, 0) for t in after), reverse=True)
    total = sum(used) or 1
    return "/".join(str(round(100 * u / total)) for u in used)


def measure_with_split(pid, splits, run):
    """Runs `run()` and appends the worker CPU split of `pid` during it to `splits`."""
    before = worker_ticks(pid)
    result = run()
    splits.append(worker_split(before, worker_ticks(pid)))
    return result


def worker_arenas(pid):
    """Which glibc malloc arena each HTTP thread (`MHD-worker`, `httpdnsd-http`) of `pid` allocates
    from, as "main" or the arena's heap address; None without gdb or on any failure. glibc binds a
    thread to an arena at its first allocation and httpdnsd caps them (`limitArenas`), so whether
    two workers share one is decided at start, at random, for the instance's life; on a shared one
    every hit's `calloc` (libmicrohttpd's response) takes the lock the other worker takes too.
    gdb stops the process for the call to `malloc(24)` in each worker (24 bytes left behind): only
    for an idle instance, after its measurements."""
    gdb = shutil.which("gdb")
    if not gdb:
        return None
    try:
        with open(f"/proc/{pid}/maps") as maps:
            heap = next(line.split()[0] for line in maps if line.rstrip().endswith("[heap]"))
        low, high = (int(x, 16) for x in heap.split("-"))
        listing = subprocess.run([gdb, "-p", str(pid), "-batch", "-ex", "info threads"], capture_output=True, text=True,
                                 timeout=60).stdout
        threads = re.findall(r'^\*?\s+(\d+)\s+Thread \S+ \(LWP \d+\) "(?:MHD-worker|httpdnsd-http)"', listing, re.M)
        commands = []
        for number in threads:
            commands += ["-ex", f"thread {number}", "-ex", "p/x (unsigned long)malloc(24)"]
        out = subprocess.run([gdb, "-p", str(pid), "-batch"] + commands, capture_output=True, text=True, timeout=60).stdout
        addresses = [int(a, 16) for a in re.findall(r"^\$\d+ = (0x[0-9a-f]+)", out, re.M)]
    except (OSError, StopIteration, subprocess.SubprocessError):
        return None
    if not threads or len(addresses) != len(threads):
        return None
    # A non-main arena's memory lies in 64 MiB-aligned heaps (glibc's HEAP_MAX_SIZE on 64-bit).
    return ["main" if low <= a < high else hex(a & ~(64 * 1024 * 1024 - 1)) for a in addresses]


def arenas_text(arenas):
    """`worker_arenas`' answer as the report shows it, a shared arena in bold."""
    if arenas is None:
        return "not checked (no gdb, or it failed)"
    return f"{', '.join(arenas)}: {'**one arena shared**' if len(set(arenas)) < len(arenas) else 'one each'}"


def rss_kib(pid):
    """The resident set of `pid` in KiB (`VmRSS`)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def wait_idle(pid, name, limit=120):
    """Waits until the process uses under 2 % of a core over a second (or `limit` seconds pass)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(1)
        if cpu_seconds(pid) - before < 0.02:
            return
    log(f"  {name} still busy after {limit} s; measuring anyway")
