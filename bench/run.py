#!/usr/bin/env python3
"""httpdnsd benchmark (issue 4): builds, starts everything on loopback, measures, stops
everything, prints a table with ratios and writes bench/RESULTS.md.

Run it with `make bench` (which installs what is missing first). Environment overrides for
quick runs (defaults are the issue's):

  BENCH_DURATION=10      seconds per measurement
  BENCH_REPS=3           repetitions (medians are reported)
  BENCH_CONNECTIONS=64   wrk connections
  BENCH_WRK_THREADS=2    wrk threads
  BENCH_NAMES=10000      warmed names for the hit measurements
  BENCH_SCALE=1000000    cached entries for section 6 (BENCH_SCALE_MID=100000 is the first stop)
  BENCH_SLOW_MS=500      added upstream delay in section 5
  BENCH_SLOW_INFLIGHT=200  misses kept in flight in section 5
  BENCH_SECTIONS=1,2,3,4,5,6,7,8,9,10,11,12,13  which sections to run (1-3 always run, in the loop with 5-13)
  BENCH_REDIS_NAMES=2000 fresh names per miss measurement of section 13 (Redis)
  BENCH_HTTPDNSD_BIN=... use this binary instead of building
  BENCH_SCRATCH=.build-bench  scratch path of the release build
  BENCH_WORK=/tmp/httpdnsd-bench-PID  working directory (configs, logs, databases)
  BENCH_RESULTS=bench/RESULTS.md      where the report goes
  BENCH_KEEP_WORK=1      keep the working directory afterwards
  BENCH_HISTOGRAMS=0     every httpdnsd with metricsHistograms false (request durations not recorded),
                         to compare the hit sections with and without them
  BENCH_PROFILE=FILE     after the hit loop, one more hit run under `perf record -g` into FILE
                         (not counted in the figures; read it with `perf report -i FILE`)

Nothing here talks to anything but 127.0.0.1: unbound refuses every name outside bench.test,
httpdnsd's fallback to the system resolver is off.
"""

import base64
import datetime
import hashlib
import hmac
import http.client
import json
import os
import platform
import random
import re
import secrets
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
LUA_DIR = os.path.join(BENCH_DIR, "lua")
ZONE = "bench.test"
ADDRESSES = ("127.0.0.11", "127.0.0.12")  # data only: nothing is ever sent to them
TTL = 86400


def env_int(name, default):
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


DURATION = env_int("BENCH_DURATION", 10)
REPS = env_int("BENCH_REPS", 3)
CONNECTIONS = env_int("BENCH_CONNECTIONS", 64)
WRK_THREADS = env_int("BENCH_WRK_THREADS", 2)
NAMES = env_int("BENCH_NAMES", 10000)
SCALE = env_int("BENCH_SCALE", 1_000_000)
SCALE_MID = env_int("BENCH_SCALE_MID", 100_000)
SLOW_MS = env_int("BENCH_SLOW_MS", 500)
SLOW_INFLIGHT = env_int("BENCH_SLOW_INFLIGHT", 200)
PROFILE = os.environ.get("BENCH_PROFILE", "")
HISTOGRAMS = os.environ.get("BENCH_HISTOGRAMS", "1").strip() not in ("0", "false", "off", "no")
SIGNED = 9  # the number of the signed-request section
RFC8484 = 10  # the number of the RFC 8484 hit section
EMAS = 11  # the EMAS HTTPDNS hit section
DOHJSON = 12  # the DoH JSON hit section
REDIS = 13  # the Redis section (issue 15): hits with Redis configured, shared-tier misses, 3 replicas
REDIS_NAMES = env_int("BENCH_REDIS_NAMES", 2000)
SECTIONS = {int(s) for s in os.environ.get("BENCH_SECTIONS", "1,2,3,4,5,6,7,8,9,10,11,12,13").split(",") if s.strip()}
if SECTIONS & {1, 2, 3, 5, 6, 7, 8, SIGNED, RFC8484, EMAS, DOHJSON, REDIS}:
    SECTIONS |= {1}  # every ratio is to (1)
if 1 in SECTIONS:
    SECTIONS |= {2, 3}
PRELOAD_BATCH = 10000
# Every httpdnsd here and the C baseline get the same per-connection buffer (httpdnsd's default
# `connectionMemoryLimit`): libmicrohttpd zeroes all of it after every keep-alive request, so a
# larger one in the baseline (it had 64 KiB until 2026-12-03) costs it about 3 us a request and
# flatters every ratio against it.
CONNECTION_MEMORY = 16384
PRELOAD_PARALLEL = 4
PRELOAD_CONCURRENCY = 128
# (8): account `limited` has a client rate limit no benchmark reaches, so every hit pays the
# bucket check (one bucket: wrk's connections all come from 127.0.0.1) and none is refused. Not
# persisted: its preload's write-behind would otherwise still be flushing during (1).
LIMITED_KEYS = {"rateLimit": 1_000_000, "rateBurst": 10_000_000, "persistentCacheIPEnabled": False}
# (9): account `signed` has client keys and `requireSignedRequests`; its resolve URLs are signed
# once, before the loop, with an expiry a day ahead, so `maxSignatureAge` is raised to its maximum.
SIGNED_MAX_AGE = 86400


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------
# Processes: every child is recorded and stopped (by pid) in stop_all(), whatever happens.

class Processes:
    def __init__(self, work):
        self.work = work
        self.children = []  # (name, Popen)

    def start(self, name, argv, env=None, log_name=None):
        log_path = os.path.join(self.work, (log_name or name) + ".log")
        log_file = open(log_path, "ab")
        process = subprocess.Popen(argv, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, cwd=self.work)
        log_file.close()
        self.children.append((name, process))
        log(f"started {name} (pid {process.pid})")
        return process

    def stop(self, process, timeout=30):
        """SIGTERM, wait, SIGKILL. Returns (exit code, seconds until it exited)."""
        started = time.monotonic()
        if process.poll() is None:
            try:
                process.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.children = [(n, p) for (n, p) in self.children if p is not process]
        return process.returncode, time.monotonic() - started

    def stop_all(self):
        for name, process in reversed(list(self.children)):
            code, _ = self.stop(process, timeout=15)
            log(f"stopped {name} (pid {process.pid}, exit {code})")


# ---------------------------------------------------------------------------------------------
# Small HTTP and DNS helpers

def http_get(port, path, timeout=10):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        connection.close()


def http_post_json(port, path, payload, timeout=600, signer=None):
    """`signer(method, path, body)`, when given, returns the signature arguments to append."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        body = json.dumps(payload).encode()
        if signer:
            path += ("&" if "?" in path else "?") + signer("POST", path, body)
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def wait_until(predicate, timeout, what, process=None, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what}: process exited with {process.returncode}")
        try:
            if predicate():
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(interval)
    raise RuntimeError(f"{what}: not ready within {timeout} s")


def dns_wire(name, qid=0):
    labels = b"".join(bytes([len(label)]) + label.encode("ascii") for label in name.split("."))
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack("!HH", 1, 1)


def dns_ask(port, name, timeout=1.0):
    """Returns (rcode, answer count) of an A query."""
    qid = random.randrange(65536)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        s.sendto(dns_wire(name, qid), ("127.0.0.1", port))
        data = s.recv(4096)
    _, flags, _, ancount, _, _ = struct.unpack("!HHHHHH", data[:12])
    return flags & 0xF, ancount


def sign_v1(method, path, args, body, kid, secret, expiry):
    """Signature v1 as docs/security.md specifies it, written from the document and not from the
    server's code: the request's own arguments, canonically encoded and sorted, then `kid`, `t`
    and `sign`, as the query string to send."""
    def encode(text):
        return urllib.parse.quote(text, safe="")

    pairs = sorted(((encode(k), encode(v)) for k, v in args.items()), key=lambda pair: pair[0].encode())
    query = "&".join(f"{k}={v}" for k, v in pairs)
    canonical = "\n".join(["HTTPDNS-HMAC-SHA256", method, urllib.parse.quote(path, safe="/"), query, str(expiry),
                           hashlib.sha256(body).hexdigest()])
    signature = hmac.new(secret.encode(), canonical.encode(), hashlib.sha256).hexdigest()
    return (query + "&" if query else "") + f"kid={kid}&t={expiry}&sign={signature}"


def family_sum(values, name):
    """A /metrics family's total: its series without an `account` label (the operations listener
    repeats them per account)."""
    return sum(v for k, v in values.items() if (k == name or k.startswith(name + "{")) and 'account="' not in k)


def b64url_query(name):
    return base64.urlsafe_b64encode(dns_wire(name)).rstrip(b"=").decode()


def metrics(port):
    status, body, _ = http_get(port, "/metrics")
    values = {}
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            try:
                values[key] = float(value)
            except ValueError:
                pass
    return values


def stat_ticks(path):
    """The name and the user + system CPU ticks of a /proc .../stat file."""
    with open(path) as f:
        stat = f.read()
    fields = stat.rsplit(")", 1)[1].split()
    return stat[stat.index("(") + 1:stat.rindex(")")], int(fields[11]) + int(fields[12])


def worker_ticks(pid):
    """CPU ticks used so far by each libmicrohttpd worker thread of `pid`, by thread id."""
    ticks = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name, used = stat_ticks(f"/proc/{pid}/task/{tid}/stat")
        except FileNotFoundError:
            continue
        if name.startswith("MHD-"):
            ticks[tid] = used
    return ticks


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
    """Which glibc malloc arena each libmicrohttpd worker thread (`MHD-worker`) of `pid` allocates
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
        threads = re.findall(r'^\*?\s+(\d+)\s+Thread \S+ \(LWP \d+\) "MHD-worker"', listing, re.M)
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
    if arenas is None:
        return "not checked (no gdb, or it failed)"
    return f"{', '.join(arenas)}: {'**one arena shared**' if len(set(arenas)) < len(arenas) else 'one each'}"


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


# ---------------------------------------------------------------------------------------------
# wrk

def wrk(port, script, env_extra, connections=CONNECTIONS, duration=DURATION, timeout_s=None, label="", scheme="http"):
    argv = ["wrk", "-t", str(WRK_THREADS), "-c", str(connections), "-d", f"{duration}s", "--latency",
            "-s", os.path.join(LUA_DIR, script)]
    if timeout_s:
        argv += ["--timeout", f"{timeout_s}s"]
    argv.append(f"{scheme}://127.0.0.1:{port}")
    with tempfile.TemporaryDirectory(prefix="wrk-barrier-") as barrier:
        env = dict(os.environ, BENCH_LUA_DIR=LUA_DIR, BENCH_WRK_THREADS=str(WRK_THREADS), BENCH_BARRIER=barrier,
                   **env_extra)
        result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=duration + 300)
    return parse_wrk(result, label)


def parse_wrk(result, label):
    for line in result.stdout.splitlines():
        if line.startswith("BENCHJSON "):
            data = json.loads(line[len("BENCHJSON "):])
            data["rps"] = data["requests"] / (data["duration_us"] / 1e6)
            non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", result.stdout)
            data["non2xx"] = int(non2xx.group(1)) if non2xx else 0
            data["errors"] = sum(data[k] for k in ("err_connect", "err_read", "err_write", "err_timeout"))
            log(f"  wrk {label}: {data['rps']:.0f} req/s, p50 {data['p50_us'] / 1000:.2f} ms, "
                f"p99 {data['p99_us'] / 1000:.2f} ms, non-2xx {data['non2xx']}, socket errors {data['errors']}")
            return data
    raise RuntimeError(f"wrk {label} gave no summary (exit {result.returncode}):\n{result.stdout}\n{result.stderr}")


def start_wrk_background(port, script, env_extra, connections, duration, timeout_s, out_path):
    argv = ["wrk", "-t", str(WRK_THREADS), "-c", str(connections), "-d", f"{duration}s", "--latency",
            "--timeout", f"{timeout_s}s", "-s", os.path.join(LUA_DIR, script), f"http://127.0.0.1:{port}"]
    # The barrier directory (see bench/lua/common.lua) lives as long as the run's work directory.
    barrier = tempfile.mkdtemp(prefix="wrk-barrier-", dir=os.path.dirname(out_path))
    env = dict(os.environ, BENCH_LUA_DIR=LUA_DIR, BENCH_WRK_THREADS=str(WRK_THREADS), BENCH_BARRIER=barrier,
               **env_extra)
    out = open(out_path, "w")
    process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    out.close()
    return process


def median(runs, key):
    return statistics.median(run[key] for run in runs)


def summarize(runs):
    if not runs:
        return None
    return {
        "rps": median(runs, "rps"), "p50_ms": median(runs, "p50_us") / 1000, "p99_ms": median(runs, "p99_us") / 1000,
        "reps": [round(run["rps"]) for run in runs], "non2xx": sum(run["non2xx"] for run in runs),
        "errors": sum(run["errors"] for run in runs),
    }


# ---------------------------------------------------------------------------------------------
# The servers

def unbound_config(work, name, port, extra, control_port=None):
    directory = os.path.join(work, name)
    os.makedirs(directory, exist_ok=True)
    control = (f"remote-control:\n  control-enable: yes\n  control-interface: 127.0.0.1\n"
               f"  control-port: {control_port}\n  control-use-cert: no\n") if control_port else \
        "remote-control:\n  control-enable: no\n"
    text = f"""server:
  interface: 127.0.0.1
  port: {port}
  so-reuseport: no
  do-ip6: no
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "{directory}"
  pidfile: "{directory}/unbound.pid"
  use-syslog: no
  logfile: ""
  verbosity: 0
  num-threads: 1
  access-control: 127.0.0.0/8 allow
  do-not-query-localhost: no
  module-config: "iterator"
  local-zone: "." refuse
{extra}{control}"""
    path = os.path.join(directory, "unbound.conf")
    with open(path, "w") as f:
        f.write(text)
    return path


class Stack:
    """unbound (authoritative for every name under bench.test), a caching unbound forwarding to
    it, dnss (RFC 8484) in front of the caching one, and the slow RFC 8484 proxy."""

    def __init__(self, processes, work):
        self.processes = processes
        self.work = work
        self.auth_port = free_port()
        self.cache_port = free_port()
        self.cache_control_port = free_port()
        self.dnss_port = free_port()
        self.slow_port = free_port()

    def start(self):
        # A "redirect" local zone answers every name below bench.test with the apex's records:
        # any number of distinct names without a zone file of that size.
        auth = unbound_config(self.work, "unbound-auth", self.auth_port,
                              f'  local-zone: "{ZONE}." redirect\n'
                              + "".join(f'  local-data: "{ZONE}. {TTL} IN A {a}"\n' for a in ADDRESSES))
        self.cache_config = unbound_config(
            self.work, "unbound-cache", self.cache_port,
            f'  local-zone: "{ZONE}." transparent\n'
            "  msg-cache-size: 256m\n  rrset-cache-size: 512m\n"
            f'forward-zone:\n  name: "{ZONE}."\n  forward-addr: 127.0.0.1@{self.auth_port}\n',
            control_port=self.cache_control_port)
        self.auth = self.processes.start("unbound-auth", ["unbound", "-d", "-c", auth])
        self.cache = self.processes.start("unbound-cache", ["unbound", "-d", "-c", self.cache_config])
        wait_until(lambda: dns_ask(self.auth_port, f"ready.{ZONE}") == (0, 2), 15, "unbound-auth", self.auth)
        wait_until(lambda: dns_ask(self.cache_port, f"ready.{ZONE}") == (0, 2), 15, "unbound-cache", self.cache)
        rcode, _ = dns_ask(self.cache_port, "example.com")
        if rcode != 5:
            raise RuntimeError(f"unbound-cache must refuse names outside {ZONE}, got rcode {rcode}")
        self.dnss = self.processes.start("dnss", [
            "dnss", "-enable_https_to_dns", "-dns_upstream", f"127.0.0.1:{self.cache_port}",
            "-https_server_addr", f"127.0.0.1:{self.dnss_port}", "-insecure_http_server"])
        probe = "/dns-query?dns=" + b64url_query(f"ready.{ZONE}")
        wait_until(lambda: http_get(self.dnss_port, probe)[0] == 200, 15, "dnss", self.dnss)
        self.slow = self.processes.start("slow-doh", [
            os.path.join(self.work, "slow_doh"), "--port", str(self.slow_port),
            "--dns", f"127.0.0.1:{self.cache_port}"])
        wait_until(lambda: http_get(self.slow_port, "/_health")[0] == 200, 15, "slow-doh", self.slow)

    def set_slow_delay(self, ms):
        status, _, _ = http_get(self.slow_port, f"/_delay?ms={ms}")
        if status != 200:
            raise RuntimeError("slow-doh did not take the delay")

    def cache_stats(self):
        out = subprocess.run(["unbound-control", "-c", self.cache_config, "stats_noreset"],
                             capture_output=True, text=True, timeout=30)
        stats = {}
        for line in out.stdout.splitlines():
            key, _, value = line.partition("=")
            try:
                stats[key] = float(value)
            except ValueError:
                pass
        return stats


class HTTPDNSD:
    def __init__(self, processes, work, binary, name, accounts, cache_limit, extra=None, account_keys=None):
        self.processes = processes
        self.binary = binary
        self.name = name
        self.port = free_port()
        # /metrics shows the `account` label on the operations listener only.
        self.ops_port = free_port()
        self.db = os.path.join(work, f"{name}.sqlite")
        self.config_path = os.path.join(work, f"{name}.json")
        config = {
            "listen": f"127.0.0.1:{self.port}", "db": self.db, "maxPreloadHosts": PRELOAD_BATCH,
            "preloadConcurrency": PRELOAD_CONCURRENCY,
            # Every load generator connects from 127.0.0.1: no per-address connection limit.
            "perIPConnectionLimit": 0,
            "connectionMemoryLimit": CONNECTION_MEMORY,
            "opsListen": f"127.0.0.1:{self.ops_port}",
            "metricsHistograms": "true" if HISTOGRAMS else "false",
            "accounts": {
                account: {"upstreams": [upstream], "localDNSFallback": False, "cacheCountLimit": cache_limit,
                          "maxCacheTTL": TTL, "timeout": 5, **(account_keys or {}).get(account, {})}
                for account, upstream in accounts.items()
            },
        }
        config.update(extra or {})
        if "tlsCert" in config:
            # `extra` put HTTPS on `listen`: `port` (readiness, preload, metrics) is the plain listener.
            config["listenPlain"] = f"127.0.0.1:{self.port}"
        with open(self.config_path, "w") as f:
            json.dump(config, f, indent=2)
        self.process = None

    def start(self):
        """Starts it; returns seconds from the start to /readyz 200."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("HTTPDNS_")}
        started = time.monotonic()
        self.process = self.processes.start(self.name, [self.binary, "--config", self.config_path], env=env)
        wait_until(lambda: http_get(self.port, "/readyz", timeout=2)[0] == 200, 600, self.name, self.process,
                   interval=0.005)
        return time.monotonic() - started

    def stop(self):
        code, seconds = self.processes.stop(self.process, timeout=120)
        if code != 0:
            raise RuntimeError(f"{self.name} exited {code} on SIGTERM")
        return seconds

    def preload(self, account, names, signer=None):
        """Preloads names in batches (several batches at once); returns seconds taken. `signer` signs
        each batch's request (see http_post_json) for an account that requires signatures."""
        started = time.monotonic()
        batches = [names[i:i + PRELOAD_BATCH] for i in range(0, len(names), PRELOAD_BATCH)]

        def one(batch):
            status, body = http_post_json(self.port, f"/v1/{account}/preload", {"hosts": batch}, signer=signer)
            if status != 200:
                raise RuntimeError(f"preload answered {status}: {body[:300]!r}")
            answer = json.loads(body)
            if answer.get("failed", 1) != 0:
                failed = [r for r in answer["results"] if not r.get("ok")][:3]
                raise RuntimeError(f"preload: {answer.get('failed')} hosts failed, e.g. {failed}")

        with ThreadPoolExecutor(PRELOAD_PARALLEL) as pool:
            for _ in pool.map(one, batches):
                pass
        return time.monotonic() - started

    def account_value(self, name, account, default):
        """`name{account="..."}`, read on the operations listener: the public one shows no account
        label (account ids would list the tenants)."""
        return metrics(self.ops_port).get(f'{name}{{account="{account}"}}', default)

    def entries(self, account):
        return int(self.account_value("httpdns_cache_entries", account, -1))

    def counter(self, name, account):
        return self.account_value(name, account, 0.0)


def write_list(path, items):
    with open(path, "w") as f:
        for item in items:
            f.write(item)
            f.write("\n")
    return path


# ---------------------------------------------------------------------------------------------
# Build

def build(work):
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    binary = os.environ.get("BENCH_HTTPDNSD_BIN")
    if binary:
        log(f"using {binary} (BENCH_HTTPDNSD_BIN)")
    else:
        scratch = os.environ.get("BENCH_SCRATCH") or os.path.join(REPO, ".build-bench")
        log(f"building httpdnsd (release, scratch path {scratch})")
        subprocess.run([swift, "build", "-c", "release", "--scratch-path", scratch, "--product", "httpdnsd"],
                       cwd=REPO, check=True)
        bin_path = subprocess.run([swift, "build", "-c", "release", "--scratch-path", scratch, "--show-bin-path"],
                                  cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()
        binary = os.path.join(bin_path, "httpdnsd")
    baseline = os.path.join(work, "baseline")
    cflags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmicrohttpd"], check=True,
                            capture_output=True, text=True).stdout.split()
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-o", baseline, os.path.join(BENCH_DIR, "baseline", "baseline.c")]
                   + cflags + ["-lpthread"], check=True)
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-o", os.path.join(work, "slow_doh"),
                    os.path.join(BENCH_DIR, "slowdoh", "slow_doh.c")], check=True)
    return binary, baseline, swift


# ---------------------------------------------------------------------------------------------
# The measurements

def run(work, processes, results):
    binary, baseline_bin, swift = build(work)
    results["swift"] = subprocess.run([swift, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    threads = os.cpu_count() or 1

    stack = Stack(processes, work)
    stack.start()
    dnss_upstream = f"doh:http://127.0.0.1:{stack.dnss_port}/dns-query"
    slow_upstream = f"doh:http://127.0.0.1:{stack.slow_port}/dns-query"
    names = [f"h{i:07d}.{ZONE}" for i in range(NAMES)]
    names_file = write_list(os.path.join(work, "names.txt"), names)
    queries_file = write_list(os.path.join(work, "queries.txt"), (b64url_query(n) for n in names))

    main_accounts = {"bench": dnss_upstream, "slow": slow_upstream}
    if 8 in SECTIONS:
        main_accounts["limited"] = dnss_upstream
    signed_keys = SignedSection.keys() if SIGNED in SECTIONS else None
    if signed_keys:
        main_accounts["signed"] = dnss_upstream
    main = HTTPDNSD(processes, work, binary, "httpdnsd-main", main_accounts, cache_limit=max(4 * SCALE, 4_000_000),
                    account_keys={"limited": LIMITED_KEYS, **({"signed": signed_keys} if signed_keys else {})})
    main.start()
    seconds = main.preload("bench", names)
    log(f"warmed {NAMES} names into account bench in {seconds:.1f} s")
    if 8 in SECTIONS:
        seconds = main.preload("limited", names)
        log(f"warmed {NAMES} names into account limited (client rate limit on) in {seconds:.1f} s")
    signed = SignedSection(main, names, work, signed_keys) if signed_keys else None

    # The response a hit really gets: its exact body is the baseline's fixed body.
    status, body, headers = http_get(main.port, f"/v1/bench/resolve?host={names[0]}")
    hit = json.loads(body)
    if status != 200 or hit.get("source") != "cache":
        raise RuntimeError(f"warmed name is not a cache hit: {status} {body!r}")
    results["hit_body"] = body.decode()
    results["hit_headers"] = headers
    body_file = os.path.join(work, "body.json")
    with open(body_file, "wb") as f:
        f.write(body)

    baseline_port = free_port()
    baseline = processes.start("baseline", [baseline_bin, str(baseline_port), str(threads), str(CONNECTION_MEMORY), body_file])
    wait_until(lambda: http_get(baseline_port, "/v1/bench/resolve?host=x")[0] == 200, 15, "baseline", baseline)
    status, base_body, _ = http_get(baseline_port, f"/v1/bench/resolve?host={names[0]}")
    assert base_body == body

    slow = SlowSection(main, stack, names, work) if 5 in SECTIONS else None
    redis = RedisSection(work, processes, binary, dnss_upstream, names) if REDIS in SECTIONS else None
    big = ScaleSection(work, processes, binary, dnss_upstream) if 6 in SECTIONS else None
    tls = TLSSection(work, processes, binary, baseline_bin, dnss_upstream, names, body_file) if 7 in SECTIONS else None

    # Every hit measurement runs rep by rep in one loop: (1), (2), (3), then (5q)/(5) and (6q)/(6).
    # Drift of the machine's speed then hits each figure alike, and the issue's ratios (5)/(1) and
    # (6)/(1) compare runs a minute apart rather than several minutes.
    hit_env = {"BENCH_LIST": names_file, "BENCH_PREFIX": "/v1/bench/resolve?host="}
    peer_env = {"BENCH_LIST": queries_file, "BENCH_PREFIX": "/dns-query?dns=", "BENCH_ACCEPT": "application/dns-message"}
    limited_env = {"BENCH_LIST": names_file, "BENCH_PREFIX": "/v1/limited/resolve?host="}
    rfc8484_env = {"BENCH_LIST": queries_file, "BENCH_PREFIX": "/v1/bench/dns-query?dns=", "BENCH_ACCEPT": "application/dns-message"}
    # The JSON wire APIs, same names, same account: each name a cache hit written by that API's writer.
    json_formats = [(number, env) for number, env in (
        (EMAS, {"BENCH_LIST": names_file, "BENCH_PREFIX": "/bench/d?host="}),
        (DOHJSON, {"BENCH_LIST": names_file, "BENCH_PREFIX": "/resolve?uid=bench&name="}),
    ) if number in SECTIONS]
    if RFC8484 in SECTIONS:
        rfc8484_precheck(main, queries_file)
    for number, env in json_formats:
        json_hit_precheck(main, number, env["BENCH_PREFIX"] + names[0])
    runs = {1: [], 2: [], 3: [], 8: [], RFC8484: [], EMAS: [], DOHJSON: []}
    splits = {1: [], 2: []}  # how each run's CPU fell on the HTTP worker threads
    hits_before = main.counter("httpdns_cache_hits_total", "bench")
    misses_before = main.counter("httpdns_cache_misses_total", "bench")
    peer_queries = peer_cachemiss = 0
    # dnss -> unbound: warm unbound's cache with the same names (the preload above went through it too).
    for name in names[:50]:
        dns_ask(stack.cache_port, name)
    for rep in range(REPS):
        log(f"hit sections, repetition {rep + 1}/{REPS}")
        runs[1].append(measure_with_split(main.process.pid, splits[1],
                                          lambda: wrk(main.port, "cycle.lua", hit_env, label="(1) httpdnsd hits")))
        if 8 in SECTIONS:
            runs[8].append(wrk(main.port, "cycle.lua", limited_env, label="(8) httpdnsd hits, limiter on"))
        if RFC8484 in SECTIONS:
            runs[RFC8484].append(wrk(main.port, "cycle.lua", rfc8484_env, label=f"({RFC8484}) httpdnsd RFC 8484 hits"))
        for number, env in json_formats:
            runs[number].append(wrk(main.port, "cycle.lua", env, label=f"({number}) httpdnsd {FORMAT_NAMES[number]} hits"))
        if signed:
            signed.measure()
        if redis:
            redis.measure_hits(hit_env, rep)
        runs[2].append(measure_with_split(baseline.pid, splits[2],
                                          lambda: wrk(baseline_port, "cycle.lua", hit_env, label="(2) baseline")))
        # unbound's counters around (3) alone: (5)'s misses go through the same unbound.
        unbound_before = stack.cache_stats()
        runs[3].append(wrk(stack.dnss_port, "cycle.lua", peer_env, label="(3) dnss+unbound"))
        unbound_after = stack.cache_stats()
        peer_queries += unbound_after.get("total.num.queries", 0) - unbound_before.get("total.num.queries", 0)
        peer_cachemiss += unbound_after.get("total.num.cachemiss", 0) - unbound_before.get("total.num.cachemiss", 0)
        if slow:
            slow.measure(rep, hit_env)
        if big:
            big.measure()
        if tls:
            tls.measure(hit_env)
    hits_delta = main.counter("httpdns_cache_hits_total", "bench") - hits_before
    misses_delta = main.counter("httpdns_cache_misses_total", "bench") - misses_before
    results["s1"] = summarize(runs[1])
    results["s1"]["check"] = (f"hit counter +{hits_delta:.0f} for {sum(r['requests'] for r in runs[1])} requests, "
                              f"miss counter +{misses_delta:.0f}")
    results["s2"] = summarize(runs[2])
    results["worker_splits"] = splits
    # After the hit loop, every measured instance idle: the arenas of their HTTP workers.
    results["arenas"] = {"(1)": worker_arenas(main.process.pid)}
    if redis:
        results["arenas"][f"({REDIS})"] = worker_arenas(redis.replicas[0].process.pid)
        results["arenas"][f"({REDIS}c)"] = worker_arenas(redis.control.process.pid)
    results["s3"] = summarize(runs[3])
    if runs[8]:
        results["s8"] = summarize(runs[8])
    for number in (RFC8484, EMAS, DOHJSON):
        if runs[number]:
            results[f"s{number}"] = summarize(runs[number])
    results["s3"]["check"] = f"unbound: {peer_queries:.0f} queries, {peer_cachemiss:.0f} cache misses"
    if slow:
        slow.finish(results)
    if tls:
        tls.finish(results)
    if signed:
        signed.finish(results)
    processes.stop(baseline)
    if PROFILE:
        log(f"profiling one more hit run into {PROFILE}")
        perf = subprocess.Popen(["perf", "record", "-F", "1999", "-g", "-o", PROFILE, "-p", str(main.process.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wrk(main.port, "cycle.lua", hit_env, label="(1) under perf")
        finally:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=60)

    if 4 in SECTIONS:
        runs4, runs4_dnss, dnsperf_runs = [], [], []
        misses_before = main.counter("httpdns_cache_misses_total", "bench")
        for rep in range(REPS):
            log(f"section 4, repetition {rep + 1}/{REPS}")
            tag = f"m{rep}r{random.randrange(10**6)}"
            runs4.append(wrk(main.port, "distinct.lua", {"BENCH_MODE": "resolve", "BENCH_TAG": tag,
                                                         "BENCH_PREFIX": "/v1/bench/resolve?host=",
                                                         "BENCH_ZONE": ZONE}, label="(4) httpdnsd misses"))
            tag = f"d{rep}r{random.randrange(10**6)}"
            runs4_dnss.append(wrk(stack.dnss_port, "distinct.lua", {"BENCH_MODE": "doh", "BENCH_TAG": tag,
                                                                    "BENCH_ZONE": ZONE},
                                  label="(4) dnss+unbound misses"))
            dnsperf_runs.append(dnsperf(work, stack.cache_port, rep))
        misses_delta = main.counter("httpdns_cache_misses_total", "bench") - misses_before
        results["s4"] = summarize(runs4)
        total = sum(r["requests"] for r in runs4)
        results["s4"]["check"] = (f"{total} requests, each a distinct name never asked before; "
                                  f"miss counter +{misses_delta:.0f}")
        results["s4_dnss"] = summarize(runs4_dnss)
        results["s4_dnsperf"] = {"qps": statistics.median(d["qps"] for d in dnsperf_runs),
                                 "reps": [round(d["qps"]) for d in dnsperf_runs],
                                 "lost": sum(d["lost"] for d in dnsperf_runs)}

    if redis:
        redis.hits_check()
        redis.measure_misses(main)
        redis.measure_replicas(main)
        redis.finish(results)

    if big:
        processes.stop(main.process)
        results["s6"] = big.finish()


FORMAT_NAMES = {RFC8484: "RFC 8484", EMAS: "EMAS HTTPDNS", DOHJSON: "DoH JSON"}


class RedisSection:
    """(13), issue 15: a real redis-server on loopback and httpdnsd replicas with `redis` set.
    (13) the hits of (1) on a replica with Redis configured, in each repetition of (1): a hit must
    cost Redis nothing. (13c) the same hits on a control instance configured, started and warmed
    exactly as replica a but without `redis`, just before or after each (13) (the order alternates
    by repetition): (13) / (13c) is the issue's figure. (1)'s instance differs in more than Redis
    (more accounts, another cache limit, measured earlier in the repetition). (13u)/(13s) misses
    on replica B: names never seen anywhere (Redis is asked, misses, this replica takes the lock
    and asks the upstream) against names replica A resolved first (a shared hit), and (13n) the
    same kind of miss on (1)'s instance without Redis.
    (13r) upstream queries per unique name with 3 replicas each asked every name at once, with
    the shared tier and without it."""

    def __init__(self, work, processes, binary, upstream, names):
        self.work, self.processes, self.binary, self.upstream = work, processes, binary, upstream
        self.port = free_port()
        redis_dir = os.path.join(work, "redis")
        os.makedirs(redis_dir, exist_ok=True)
        self.redis = processes.start("redis-server", [
            shutil.which("redis-server") or "/usr/bin/redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
            "--save", "", "--appendonly", "no", "--dir", redis_dir, "--protected-mode", "no"])
        wait_until(lambda: self.redis_ping(), 15, "redis-server", self.redis)
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

    def redis_ping(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def replica(self, name, redis):
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
        a, b = self.replicas[0], self.replicas[1]
        self.misses = {"u": [], "s": [], "n": []}
        for rep in range(REPS):
            tag = f"r{rep}x{random.randrange(10**6)}"
            log(f"({REDIS}) misses, repetition {rep + 1}/{REPS}")
            self.misses["u"].append(self.get_all(b.port, self.fresh_names(tag + "u", REDIS_NAMES)))
            shared = self.fresh_names(tag + "s", REDIS_NAMES)
            a.preload("bench", shared)
            self.misses["s"].append(self.get_all(b.port, shared))
            self.misses["n"].append(self.get_all(main.port, self.fresh_names(tag + "n", REDIS_NAMES)))

    def upstream_requests(self, instance):
        return family_sum(metrics(instance.ops_port), "httpdns_upstream_requests_total")

    def per_name(self, instances, count):
        names = self.fresh_names(f"q{random.randrange(10**6)}", count)
        before = sum(self.upstream_requests(i) for i in instances)
        with ThreadPoolExecutor(len(instances) * 8) as pool:
            jobs = [pool.submit(http_get, instance.port, f"/v1/bench/resolve?host={name}") for name in names for instance in instances]
            failed = [j.result()[0] for j in jobs if j.result()[0] != 200]
        if failed:
            raise RuntimeError(f"({REDIS}r) {len(failed)} requests failed: {failed[:5]}")
        return (sum(self.upstream_requests(i) for i in instances) - before) / count

    def measure_replicas(self, main):
        count = min(REDIS_NAMES, 500)
        self.per_name_on = self.per_name(self.replicas, count)
        plain = [main] + [self.replica(f"httpdnsd-plain-{letter}", redis=False) for letter in "de"]
        self.per_name_off = self.per_name(plain, count)
        self.replica_names = count
        for instance in plain[1:]:
            instance.stop()

    def finish(self, results):
        results[f"s{REDIS}"] = summarize(self.hits)
        results[f"s{REDIS}c"] = summarize(self.control_hits)
        results[f"s{REDIS}_splits"] = self.splits
        results[f"s{REDIS}_cpu"] = {"a": [r["cpu_us"] for r in self.hits], "c": [r["cpu_us"] for r in self.control_hits]}
        results[f"s{REDIS}_check"] = self.check
        for key in ("u", "s", "n"):
            runs = self.misses[key]
            results[f"s{REDIS}{key}"] = {
                "rps": statistics.median(r["rps"] for r in runs), "p50_ms": statistics.median(r["p50_ms"] for r in runs),
                "p99_ms": statistics.median(r["p99_ms"] for r in runs), "reps": [r["reps"][0] for r in runs],
                "sources": runs[-1]["sources"]}
        results[f"s{REDIS}r"] = {"on": self.per_name_on, "off": self.per_name_off, "names": self.replica_names}
        answers = metrics(self.replicas[1].ops_port)
        results[f"s{REDIS}_tier"] = {k: v for k, v in answers.items() if k.startswith("httpdns_redis_shared_answers_total")}


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


class SignedSection:
    """(9): the hits of (1) with signed requests (signature v1, query form) on account `signed` of
    the same instance, whose client keys make `requireSignedRequests` hold: their hits are answered
    by the fast path that serves (1), after the general path's signature and role checks run on a
    copy of the request. Measured in each repetition of (1), after (1) and (8)."""

    ACCOUNT = "signed"

    @staticmethod
    def keys():
        """The account's settings: one `resolve` key for the hits, one `manage` key for the preload.
        Fresh secrets each run (they protect nothing but this benchmark)."""
        return {"clientKeys": [{"id": "bench-resolve", "secret": secrets.token_hex(24), "role": "resolve"},
                               {"id": "bench-manage", "secret": secrets.token_hex(24), "role": "manage"}],
                "requireSignedRequests": True, "maxSignatureAge": SIGNED_MAX_AGE}

    def __init__(self, main, names, work, settings):
        self.main = main
        resolve_key, manage_key = settings["clientKeys"]
        # An expiry as far ahead as the account allows, less a minute of margin for clocks: the URLs
        # stay valid for a day, longer than any run.
        self.expiry = int(time.time()) + SIGNED_MAX_AGE - 60
        path = f"/v1/{self.ACCOUNT}/resolve"

        def signed_url(host, key=resolve_key):
            return path + "?" + sign_v1("GET", path, {"host": host}, b"", key["id"], key["secret"], self.expiry)

        def sign_preload(method, preload_path, body):
            # A POST signature is accepted once: each batch has another body, so another signature.
            return sign_v1(method, preload_path, {}, body, manage_key["id"], manage_key["secret"], self.expiry)

        seconds = main.preload(self.ACCOUNT, names, signer=sign_preload)
        log(f"({SIGNED}) warmed {len(names)} names into account {self.ACCOUNT} (signed preload) in {seconds:.1f} s")
        # The preload's write-behind reaches SQLite before anything is measured on this instance.
        wait_idle(main.process.pid, "httpdnsd-main")
        self.precheck(path, names[0], signed_url)
        self.list_file = write_list(os.path.join(work, "signed-urls.txt"), (signed_url(n) for n in names))
        self.env = {"BENCH_LIST": self.list_file, "BENCH_PREFIX": ""}
        self.runs = []
        self.http_ok = self.http_other = self.hits = self.misses = 0

    def precheck(self, path, host, signed_url):
        """The account must refuse what it should, so that (9) cannot silently measure an open
        account: unsigned 401, a wrong signature 401, the right one a cache hit."""
        good = signed_url(host)
        status, body, _ = http_get(self.main.port, f"{path}?host={host}")
        if status != 401:
            raise RuntimeError(f"({SIGNED}) an unsigned request got {status}, not 401: {body[:200]!r}")
        last = good[-1]
        wrong = good[:-1] + ("0" if last != "0" else "1")
        status, body, _ = http_get(self.main.port, wrong)
        if status != 401 or b"bad signature" not in body:
            raise RuntimeError(f"({SIGNED}) a wrong signature got {status}, not 401 bad signature: {body[:200]!r}")
        status, body, _ = http_get(self.main.port, good)
        if status != 200 or json.loads(body).get("source") != "cache":
            raise RuntimeError(f"({SIGNED}) a signed request for a warmed name is not a cache hit: {status} {body[:200]!r}")
        self.precheck_note = "unsigned request 401, wrong signature 401 `bad signature`, signed request 200 from the cache"
        log(f"({SIGNED}) pre-check: {self.precheck_note}")

    def measure(self):
        # Nothing else talks to this instance meanwhile: the deltas of its counters, summed over
        # accounts, are this run's. /metrics is served on the operations listener.
        before = metrics(self.main.ops_port)
        run = wrk(self.main.port, "cycle.lua", self.env, label=f"({SIGNED}) httpdnsd hits, signed requests")
        after = metrics(self.main.ops_port)
        self.runs.append(run)

        def delta(key):
            return after.get(key, 0.0) - before.get(key, 0.0)

        codes = {k for k in after if k.startswith("httpdns_http_requests_total{")}
        self.http_ok += sum(delta(k) for k in codes if 'code="200"' in k)
        self.http_other += sum(delta(k) for k in codes if 'code="200"' not in k)
        self.hits += family_sum(after, "httpdns_cache_hits_total") - family_sum(before, "httpdns_cache_hits_total")
        self.misses += family_sum(after, "httpdns_cache_misses_total") - family_sum(before, "httpdns_cache_misses_total")

    def finish(self, results):
        s = results[f"s{SIGNED}"] = summarize(self.runs)
        requests = sum(r["requests"] for r in self.runs)
        # Every answer a hit: nothing but 200s, and at least as many hits as wrk counted requests (the
        # server counts a few more than wrk reports, as in (1); each /metrics read adds one 200).
        ok = self.http_other == 0 and self.misses == 0 and self.hits >= requests and s["non2xx"] == 0
        s["check"] = (f"{self.precheck_note} (before the loop); during the runs: {requests} requests, HTTP 200 "
                      f"+{self.http_ok:.0f}, any other status +{self.http_other:.0f}, hit counter +{self.hits:.0f}, "
                      f"miss counter +{self.misses:.0f}: "
                      + ("every request answered 200 from the cache" if ok else "**NOT every request was a 200 hit**"))


class TLSSection:
    """(7): the hits of (1) over HTTPS (TLS 1.2/1.3, keep-alive: one handshake per connection), on
    an httpdnsd of its own with the same names, against (7b), the baseline over HTTPS with the same
    certificate (ECDSA P-256, made here by openssl) and TLS settings."""

    def __init__(self, work, processes, binary, baseline_bin, upstream, names, body_file):
        self.processes = processes
        directory = os.path.join(work, "tls")
        os.makedirs(directory, exist_ok=True)
        self.cert, self.key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", self.key, "-out", self.cert, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       check=True, capture_output=True)
        self.tls_port = free_port()
        self.httpdnsd = HTTPDNSD(processes, work, binary, "httpdnsd-tls", {"bench": upstream},
                                 cache_limit=max(2 * len(names), 100_000),
                                 extra={"listen": f"127.0.0.1:{self.tls_port}", "tlsCert": self.cert,
                                        "tlsKey": self.key})
        self.httpdnsd.start()
        seconds = self.httpdnsd.preload("bench", names)
        log(f"(7) warmed {len(names)} names into the TLS instance in {seconds:.1f} s")
        self.baseline_port = free_port()
        threads = os.cpu_count() or 1
        self.baseline = processes.start("baseline-tls", [baseline_bin, str(self.baseline_port), str(threads), str(CONNECTION_MEMORY), body_file,
                                                         self.cert, self.key])
        wait_until(lambda: self.handshake_ok(self.baseline_port), 15, "baseline-tls", self.baseline)
        if not self.handshake_ok(self.tls_port):
            raise RuntimeError("(7) httpdnsd does not answer over HTTPS")
        self.runs, self.base_runs = [], []

    def handshake_ok(self, port):
        import ssl
        context = ssl.create_default_context(cafile=self.cert)
        try:
            connection = http.client.HTTPSConnection("localhost", port, timeout=5, context=context)
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200
        except OSError:
            return False

    def measure(self, hit_env):
        self.runs.append(wrk(self.tls_port, "cycle.lua", hit_env, label="(7) httpdnsd hits over TLS", scheme="https"))
        self.base_runs.append(wrk(self.baseline_port, "cycle.lua", hit_env, label="(7b) baseline over TLS",
                                  scheme="https"))

    def finish(self, results):
        results["s7"] = summarize(self.runs)
        results["s7b"] = summarize(self.base_runs)
        self.processes.stop(self.baseline)
        self.httpdnsd.stop()


class SlowSection:
    """(5): hits on account `slow` while a second wrk keeps SLOW_INFLIGHT never-asked names of the
    same account waiting on the delaying upstream; (5q), the same hits just before, without misses."""

    def __init__(self, main, stack, names, work):
        self.main, self.stack, self.work = main, stack, work
        stack.set_slow_delay(0)
        seconds = main.preload("slow", names)
        log(f"warmed {len(names)} names into account slow in {seconds:.1f} s")
        stack.set_slow_delay(SLOW_MS)
        self.runs, self.quiet, self.background, self.upstream_cpu = [], [], [], []

    def measure(self, rep, hit_env):
        main, stack = self.main, self.stack
        slow_hit_env = dict(hit_env, BENCH_PREFIX="/v1/slow/resolve?host=")
        self.quiet.append(wrk(main.port, "cycle.lua", slow_hit_env, label="(5q) the same hits, no misses"))
        cpu_before = cpu_seconds(stack.slow.pid)
        out_path = os.path.join(self.work, f"slow-misses-{rep}.out")
        lead = 3  # seconds of misses before the hit measurement starts, and after it ends
        bg = start_wrk_background(main.port, "distinct.lua", {
            "BENCH_MODE": "resolve", "BENCH_TAG": f"s{rep}r{random.randrange(10**6)}",
            "BENCH_PREFIX": "/v1/slow/resolve?host=", "BENCH_ZONE": ZONE},
            SLOW_INFLIGHT, DURATION + 2 * lead, 10, out_path)
        try:
            time.sleep(lead)
            started = time.monotonic()
            self.runs.append(wrk(main.port, "cycle.lua", slow_hit_env, label="(5) hits with slow misses"))
            self.upstream_cpu.append((cpu_seconds(stack.slow.pid) - cpu_before) / (time.monotonic() - started + lead))
        finally:
            try:
                bg.wait(DURATION + 120)
            except subprocess.TimeoutExpired:
                bg.kill()
                bg.wait()
        with open(out_path) as f:
            self.background.append(parse_wrk(subprocess.CompletedProcess(bg.args, bg.returncode, f.read(), ""),
                                             "(5) slow misses"))

    def finish(self, results):
        self.stack.set_slow_delay(0)
        results["s5"] = summarize(self.runs)
        results["s5_quiet"] = summarize(self.quiet)
        results["s5_misses"] = summarize(self.background)
        results["s5_upstream_cpu"] = statistics.median(self.upstream_cpu)


def cpu_seconds(pid):
    """User + system CPU seconds a process has used so far (/proc/PID/stat)."""
    return stat_ticks(f"/proc/{pid}/stat")[1] / os.sysconf("SC_CLK_TCK")


def dnsperf(work, port, rep):
    """The caching unbound's own miss rate: dnsperf with distinct never-asked names (UDP)."""
    count = 3_000_000 if DURATION >= 5 else 600_000
    tag = f"u{rep}r{random.randrange(10**6)}"
    path = write_list(os.path.join(work, f"dnsperf-{rep}.txt"), (f"{tag}-{i}.{ZONE} A" for i in range(count)))
    out = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", path, "-l", str(DURATION),
                          "-n", "1", "-c", str(CONNECTIONS), "-T", str(WRK_THREADS), "-q", str(CONNECTIONS * 10)],
                         capture_output=True, text=True, timeout=DURATION + 120)
    os.remove(path)
    qps = re.search(r"Queries per second:\s+([\d.]+)", out.stdout)
    lost = re.search(r"Queries lost:\s+(\d+)", out.stdout)
    if not qps:
        raise RuntimeError(f"dnsperf gave no rate:\n{out.stdout}\n{out.stderr}")
    result = {"qps": float(qps.group(1)), "lost": int(lost.group(1)) if lost else 0}
    log(f"  dnsperf unbound misses: {result['qps']:.0f} q/s, lost {result['lost']}")
    return result


def cache_memory(entries):
    """Bytes per entry of the answer cache alone, in process (`bench/cachesim --memory`, release):
    {layout: (bytes per entry full, bytes per entry once evicting)} for `lru` (the cache before
    issue 16: `BoundedCache` shards with `LRUPolicy`), `s3fifo` (the same with `S3FIFOPolicy`)
    and `answercache` (the service's `AnswerCache`)."""
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    # cachesim is the bench package's (bench/Package.swift), a root of its own: its own scratch path.
    scratch = (os.environ.get("BENCH_SCRATCH") or os.path.join(REPO, ".build-bench")) + "-cachesim"
    build = [swift, "build", "-c", "release", "--package-path", os.path.join(REPO, "bench"), "--scratch-path", scratch]
    subprocess.run(build + ["--product", "cachesim"], cwd=REPO, check=True)
    bin_path = subprocess.run(build + ["--show-bin-path"], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()
    output = subprocess.run([os.path.join(bin_path, "cachesim"), "--memory", str(entries)],
                            check=True, capture_output=True, text=True).stdout
    figures = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].isdigit():
            figures[cells[0]] = (int(cells[3]), int(cells[4]))
    log(f"  in process, bytes per entry at {entries} (full, evicting): {figures}")
    return figures


class ScaleSection:
    """(6): a second instance filled with SCALE entries (RSS read at SCALE_MID and SCALE); hits over
    all of them, and (6q) (1)'s workload on the same instance; then the warm restart."""

    def __init__(self, work, processes, binary, upstream):
        out = self.out = {}
        server = self.server = HTTPDNSD(processes, work, binary, "httpdnsd-scale", {"bench": upstream},
                                        cache_limit=2 * SCALE)
        server.start()
        time.sleep(1)
        pid = server.process.pid
        rss0 = rss_kib(pid)
        out["rss0_kib"] = rss0
        names = self.names = [f"s{i:07d}.{ZONE}" for i in range(SCALE)]
        stops = [n for n in (SCALE_MID, SCALE) if n <= SCALE]
        done = 0
        fill_seconds = 0.0
        for stop in stops:
            fill_seconds += server.preload("bench", names[done:stop])
            done = stop
            time.sleep(2)
            entries = server.entries("bench")
            rss = rss_kib(pid)
            out[f"rss_{stop}"] = {"entries": entries, "rss_kib": rss,
                                  "bytes_per_entry": (rss - rss0) * 1024 / max(1, entries)}
            log(f"  {entries} entries: RSS {rss / 1024:.1f} MiB, "
                f"{(rss - rss0) * 1024 / max(1, entries):.0f} bytes per entry ({done / fill_seconds:.0f} names/s filled)")
        out["fill_rate"] = SCALE / fill_seconds
        out["entries"] = server.entries("bench")
        out["in_process"] = cache_memory(SCALE)
        self.names_file = write_list(os.path.join(work, "scale-names.txt"), names)
        self.hot_file = write_list(os.path.join(work, "scale-hot-names.txt"), names[:NAMES])
        self.runs, self.quiet = [], []
        # The hit runs of the other sections come next, next to this instance: wait until it is idle
        # (its write-behind queue has reached SQLite).
        wait_idle(pid, "httpdnsd-scale")

    def measure(self):
        log(f"section 6: hits over {SCALE} names, and (6q)")
        prefix = "/v1/bench/resolve?host="
        # (1)'s workload (NAMES names) on this instance just before: a same-time reference.
        self.quiet.append(wrk(self.server.port, "cycle.lua", {"BENCH_LIST": self.hot_file, "BENCH_PREFIX": prefix},
                              label=f"(6q) hits over {NAMES} of the cached names"))
        self.runs.append(wrk(self.server.port, "cycle.lua", {"BENCH_LIST": self.names_file, "BENCH_PREFIX": prefix},
                             label=f"(6) hits over {SCALE} cached names"))

    def finish(self):
        out, server, names = self.out, self.server, self.names
        out["hits"] = summarize(self.runs)
        out["hits_quiet"] = summarize(self.quiet)
        # Warm restart: SIGTERM flushes the write-behind queue; then start to /readyz 200.
        out["stop_seconds"] = server.stop()
        out["restart_seconds"] = server.start()
        out["entries_after_restart"] = server.entries("bench")
        status, body, _ = http_get(server.port, f"/v1/bench/cache?host={names[-1]}")
        out["hit_after_restart"] = status == 200
        out["rss_after_restart_kib"] = rss_kib(server.process.pid)
        log(f"  warm restart: {out['restart_seconds']:.2f} s to ready, {out['entries_after_restart']} entries loaded")
        server.stop()
        return out


def wait_idle(pid, name, limit=120):
    """Waits until the process uses under 2 % of a core over a second (or `limit` seconds pass)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(1)
        if cpu_seconds(pid) - before < 0.02:
            return
    log(f"  {name} still busy after {limit} s; measuring anyway")


# ---------------------------------------------------------------------------------------------
# Report

def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) // 1024

    def version(argv):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            return (out.stdout or out.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unknown"

    def package(name):
        return version(["dpkg-query", "-W", "-f=${Version}", name])

    commit = version(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--", "Sources", "Package.swift"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "cpu": model, "cores": os.cpu_count(), "memory_mib": memory, "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit + (" (with uncommitted changes in Sources/)" if dirty else ""),
        "libmicrohttpd": package("libmicrohttpd12"), "unbound": package("unbound"), "dnss": package("dnss"),
        "wrk": package("wrk"), "dnsperf": package("dnsperf"),
    }


def fmt_rate(value):
    return f"{value:,.0f}" if value is not None else "—"


def spread(reps):
    """(max - min) / median of the repetitions: how noisy the figure was."""
    if len(reps) < 2 or not statistics.median(reps):
        return "—"
    return f"{(max(reps) - min(reps)) / statistics.median(reps) * 100:.0f} %"


def report(results):
    m = results["machine"]
    lines = []
    add = lines.append
    add("# httpdnsd benchmark results")
    add("")
    add("Written by `make bench` (`bench/run.py`); replaced on every run. Do not edit by hand.")
    add("")
    add("## Machine")
    add("")
    add(f"- CPU: {m['cpu']}, {m['cores']} cores; memory {m['memory_mib']} MiB; kernel {m['kernel']}")
    add(f"- {results.get('swift', 'swift: unknown')}; httpdnsd commit {m['commit']}, release build")
    add(f"- libmicrohttpd {m['libmicrohttpd']}, unbound {m['unbound']}, dnss {m['dnss']}, "
        f"wrk {m['wrk']}, dnsperf {m['dnsperf']}")
    add(f"- date: {m['date']}")
    add(f"- settings: {DURATION} s per measurement, {REPS} repetitions (medians), wrk -t{WRK_THREADS} "
        f"-c{CONNECTIONS} HTTP/1.1 keep-alive, {NAMES} warmed names, scale {SCALE} entries; request-duration "
        f"histograms {'on' if HISTOGRAMS else 'off (BENCH_HISTOGRAMS=0)'}")
    add(f"- **The load generator (wrk) and every server share the same {m['cores']} cores** (and other "
        "people's builds may have been running): absolute figures are low and noisy; the ratios, measured "
        "in the same run on the same workload, are the figures to read. The hit measurements run repetition by "
        f"repetition in one loop, (1) (8) ({SIGNED}) (2) (3) (5q) (5) (6q) (6), so that drift hits them alike; (5q) and (6q), "
        "measured just before each (5) and (6) on the same instance, are the closest same-time references.")
    add("")

    s1, s2, s3 = results.get("s1"), results.get("s2"), results.get("s3")
    s4, s5, s6 = results.get("s4"), results.get("s5"), results.get("s6")
    add("## Measurements")
    add("")
    add("| # | measurement | requests/s (median) | p50 ms | p99 ms | per repetition (req/s) | spread |")
    add("|---|---|---|---|---|---|---|")

    def row(num, what, s):
        if s:
            add(f"| {num} | {what} | {fmt_rate(s['rps'])} | {s['p50_ms']:.2f} | {s['p99_ms']:.2f} | "
                f"{', '.join(str(r) for r in s['reps'])} | {spread(s['reps'])} |")

    row(1, f"httpdnsd cache hits, `GET /v1/bench/resolve`, {NAMES} warmed names", s1)
    row(8, "  the same hits on account `limited`, client rate limit on (never reached), just after each (1)",
        results.get("s8"))
    row(SIGNED, "  the same hits with signed requests (signature v1) on account `signed` (`requireSignedRequests`), "
        "in each repetition of (1)", results.get(f"s{SIGNED}"))
    row(RFC8484, "  the same hits as RFC 8484 queries, `GET /v1/bench/dns-query?dns=` (the queries of (3)), "
        "in each repetition of (1)", results.get(f"s{RFC8484}"))
    row(EMAS, "  the same hits through the EMAS HTTPDNS API, `GET /bench/d?host=`, in each repetition of (1)",
        results.get(f"s{EMAS}"))
    row(DOHJSON, "  the same hits through the DoH JSON API, `GET /resolve?uid=bench&name=`, in each repetition of (1)",
        results.get(f"s{DOHJSON}"))
    row(REDIS, "  the same hits on replica a, an instance with `redis` set (issue 15), in each repetition of (1)",
        results.get(f"s{REDIS}"))
    row(f"{REDIS}c", f"  the same hits on the control: replica a's configuration without `redis`, started and warmed as a, "
        f"just before or after each ({REDIS})", results.get(f"s{REDIS}c"))
    row(2, f"baseline: C on libmicrohttpd, same pool settings and {CONNECTION_MEMORY // 1024} KiB per connection, fixed body of the same size", s2)
    row(3, "peer: dnss `GET /dns-query?dns=` → unbound cache, same names", s3)
    row(4, "httpdnsd misses: a never-asked name every request → dnss → unbound → authoritative unbound", s4)
    row("4u", "upstream alone: dnss with a never-asked name every request (same chain)", results.get("s4_dnss"))
    if results.get("s4_dnsperf"):
        d = results["s4_dnsperf"]
        add(f"| 4d | upstream alone: dnsperf (UDP) against the caching unbound, never-asked names | "
            f"{fmt_rate(d['qps'])} | — | — | {', '.join(str(r) for r in d['reps'])} | {spread(d['reps'])} |")
    row(5, f"httpdnsd cache hits while {SLOW_INFLIGHT} misses wait on a +{SLOW_MS} ms upstream", s5)
    row("5m", f"  the {SLOW_INFLIGHT} concurrent slow misses themselves", results.get("s5_misses"))
    row("5q", "  the same hits on the same account just before each (5), without misses", results.get("s5_quiet"))
    for key, what in (("u", "local miss, then Redis misses too, then the upstream (replica b, names never asked)"),
                      ("s", "local miss, then a shared hit in Redis (replica b, names replica a resolved first)"),
                      ("n", "local miss, then the upstream, without Redis ((1)'s instance, names never asked)")):
        row(f"{REDIS}{key}", f"{what}; {REDIS_NAMES} names, 16 Python keep-alive clients", results.get(f"s{REDIS}{key}"))
    row(7, "httpdnsd cache hits as (1), over HTTPS (TLS 1.3, keep-alive), an instance of its own", results.get("s7"))
    row("7b", "baseline over HTTPS, same certificate and TLS settings", results.get("s7b"))
    if s6:
        row(6, f"httpdnsd cache hits cycling over all {s6['entries']:,} cached names", s6["hits"])
        if s6.get("hits_quiet"):
            row("6q", f"  the same instance just before each (6), hits over {NAMES} of its names (as in (1))",
                s6["hits_quiet"])
    add("")
    add("Checks made during the run:")
    add("")
    for key, label in (("s1", "(1)"), (f"s{SIGNED}", f"({SIGNED})"), ("s3", "(3)"), ("s4", "(4)")):
        if results.get(key) and results[key].get("check"):
            add(f"- {label} {results[key]['check']}")
    for key in ("u", "s", "n"):
        if results.get(f"s{REDIS}{key}"):
            add(f"- ({REDIS}{key}) sources answered in the last repetition: {results[f's{REDIS}{key}']['sources']}")
    check = results.get(f"s{REDIS}_check")
    if check:
        for key, label in (("a", f"({REDIS}) replica a"), ("c", f"({REDIS}c) the control")):
            hits, misses, requests = check[key]
            add(f"- {label}: hit counter +{hits:.0f} for {requests} requests, miss counter +{misses:.0f}")
        add(f"- ({REDIS}) commands replica a sent on its `answers` Redis connection during its hit runs: {check['answers']:.0f}")
    if results.get("arenas"):
        add("- malloc arena of each HTTP worker thread after the hit loop (gdb; whether two share one is decided "
            "at random when an instance starts, and lasts its life): "
            + "; ".join(f"{label} {arenas_text(arenas)}" for label, arenas in results["arenas"].items()))
    redis_splits = results.get(f"s{REDIS}_splits")
    if redis_splits and redis_splits["a"]:
        add(f"- CPU of the HTTP worker threads per repetition, busiest first (in %): ({REDIS}) {', '.join(redis_splits['a'])}; "
            f"({REDIS}c) {', '.join(redis_splits['c'])}")
    if results.get(f"s{REDIS}_tier"):
        add(f"- ({REDIS}) replica b's shared-tier counters at the end: {results[f's{REDIS}_tier']}")
    splits = results.get("worker_splits")
    if splits:
        add(f"- CPU of the {len(splits[1][0].split('/'))} HTTP worker threads per repetition, busiest first "
            f"(in %): (1) {', '.join(splits[1])}; (2) {', '.join(splits[2])}. libmicrohttpd's workers race to "
            f"accept, so wrk's {CONNECTIONS} connections, opened at once, split between them at random, and a "
            "lopsided split caps that run; compare (1) and (2) on repetitions with similar splits")
    for key, label in (("s1", "(1)"), ("s8", "(8)"), (f"s{SIGNED}", f"({SIGNED})"), (f"s{RFC8484}", f"({RFC8484})"),
                       (f"s{EMAS}", f"({EMAS})"), (f"s{DOHJSON}", f"({DOHJSON})"),
                       ("s2", "(2)"), ("s3", "(3)"),
                       ("s4", "(4)"), ("s4_dnss", "(4u)"), ("s5", "(5)"), ("s5_misses", "(5m)")):
        s = results.get(key)
        if s:
            add(f"- {label} non-2xx responses: {s['non2xx']}, socket errors/timeouts: {s['errors']}")
    if s6:
        add(f"- (6) non-2xx responses: {s6['hits']['non2xx']}, socket errors/timeouts: {s6['hits']['errors']}")
    add(f"- hit response measured: {len(results['hit_body'])} bytes, `{results['hit_body']}`; "
        "the baseline sends exactly these bytes with the same Content-Type")
    add("")

    if s6:
        add("## Scale of the cache")
        add("")
        add("| figure | value |")
        add("|---|---|")
        add(f"| RSS before filling | {s6['rss0_kib'] / 1024:.1f} MiB |")
        for key, value in s6.items():
            if key.startswith("rss_") and isinstance(value, dict):
                add(f"| RSS at {value['entries']:,} entries | {value['rss_kib'] / 1024:.1f} MiB → "
                    f"**{value['bytes_per_entry']:.0f} bytes per entry** |")
        stops = [v for k, v in s6.items() if k.startswith("rss_") and isinstance(v, dict)]
        if len(stops) == 2 and stops[1]["entries"] > stops[0]["entries"]:
            marginal = (stops[1]["rss_kib"] - stops[0]["rss_kib"]) * 1024 / (stops[1]["entries"] - stops[0]["entries"])
            add(f"| growth from {stops[0]['entries']:,} to {stops[1]['entries']:,} entries | "
                f"{marginal:.0f} bytes per added entry |")
        add(f"| fill rate (preload, {PRELOAD_PARALLEL} requests of {PRELOAD_BATCH} hosts at once, "
            f"preloadConcurrency {PRELOAD_CONCURRENCY}) | {s6['fill_rate']:,.0f} names/s |")
        add(f"| SIGTERM to exit (flushes the write-behind queue) | {s6['stop_seconds']:.2f} s |")
        add(f"| warm restart: start to `/readyz` 200 | **{s6['restart_seconds']:.2f} s**, "
            f"{s6['entries_after_restart']:,} entries loaded, hit after restart: {s6['hit_after_restart']} |")
        add(f"| RSS after the warm restart | {s6['rss_after_restart_kib'] / 1024:.1f} MiB |")
        memory = s6.get("in_process", {})
        if "answercache" in memory:
            full, evicting = memory["answercache"]
            add(f"| the answer cache alone, in process, at {SCALE:,} entries (`cachesim --memory`) | "
                f"**{full} bytes per entry**, {evicting} once it evicts |")
        if "lru" in memory and "s3fifo" in memory:
            add(f"| the same keys and answers in `BoundedCache` shards: LRU (before issue 16) / S3-FIFO | "
                f"{memory['lru'][0]} / {memory['s3fifo'][0]} bytes per entry, "
                f"{memory['lru'][1]} / {memory['s3fifo'][1]} once they evict |")
        add("")
        add("RSS is `VmRSS` of `/proc/PID/status`; bytes per entry = (RSS after filling − RSS before) / entries "
            "(one entry = one host × family; only A is asked). It includes everything the process grew by: "
            "cache, SQLite page cache, allocator slack. The in-process rows fill the cache alone with the same "
            "names and answers, each layout in a process of its own, and read RSS again after a tenth more "
            "names (the policy's eviction-time structures then exist).")
        add("")

    add("## Targets (issue 4)")
    add("")
    add("| figure | target | measured | |")
    add("|---|---|---|---|")

    def target(figure, goal, value, ok, shown=None):
        if value is None:
            add(f"| {figure} | {goal} | not measured | — |")
        else:
            # Three decimals: a ratio of 0.897 must not read as a failing 0.90.
            add(f"| {figure} | {goal} | {shown or f'{value:.3f}'} | {'PASS' if ok else '**FAIL**'} |")

    target("hit throughput / baseline", "≥ 0.85", s1 and s2 and s1["rps"] / s2["rps"],
           s1 and s2 and s1["rps"] / s2["rps"] >= 0.85)
    if s1 and s2 and len(s1["reps"]) == len(s2["reps"]):
        # (1) and (2) of one repetition run back to back: their ratio drifts less with the machine.
        pairs = [a / b for a, b in zip(s1["reps"], s2["reps"])]
        add(f"| (1) / (2) per repetition, their median (not the issue's figure) | — | "
            f"{statistics.median(pairs):.3f} ({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
    target("hit p99 / baseline p99", "≤ 1.5", s1 and s2 and s1["p99_ms"] / s2["p99_ms"],
           s1 and s2 and s1["p99_ms"] / s2["p99_ms"] <= 1.5)
    target("hit throughput / dnss+unbound peer", "≥ 1.4", s1 and s3 and s1["rps"] / s3["rps"],
           s1 and s3 and s1["rps"] / s3["rps"] >= 1.4)
    s8 = results.get("s8")
    target("hit throughput with the limiter on / (1) (issue 11)", "≥ 0.95", s1 and s8 and s8["rps"] / s1["rps"],
           s1 and s8 and s8["rps"] / s1["rps"] >= 0.95)
    if s1 and s8 and len(s1["reps"]) == len(s8["reps"]):
        pairs = [b / a for a, b in zip(s1["reps"], s8["reps"])]
        add(f"| (8) / (1) per repetition, their median | — | {statistics.median(pairs):.3f} "
            f"({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
    target("hit throughput with slow upstream / (1)", "≥ 0.9", s1 and s5 and s5["rps"] / s1["rps"],
           s1 and s5 and s5["rps"] / s1["rps"] >= 0.9)
    s7, s7b = results.get("s7"), results.get("s7b")
    if s7 and s7b:
        add(f"| hits over TLS / baseline over TLS, (7) / (7b) (issue 11) | — | {s7['rps'] / s7b['rps']:.3f} | — |")
    s_signed = results.get(f"s{SIGNED}")
    if s1 and s2 and s_signed:
        add(f"| hits with signed requests / (1), ({SIGNED}) / (1) (issue 11) | — | {s_signed['rps'] / s1['rps']:.3f} | — |")
        if len(s1["reps"]) == len(s_signed["reps"]):
            pairs = [b / a for a, b in zip(s1["reps"], s_signed["reps"])]
            add(f"| ({SIGNED}) / (1) per repetition, their median | — | {statistics.median(pairs):.3f} "
                f"({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
        add(f"| hits with signed requests / baseline, ({SIGNED}) / (2) (issue 11) | — | "
            f"{s_signed['rps'] / s2['rps']:.3f} | — |")
        add(f"| hits with signed requests, p99 / (1)'s p99 | — | {s_signed['p99_ms'] / s1['p99_ms']:.2f} | — |")
    for number in (RFC8484, EMAS, DOHJSON):
        s_format = results.get(f"s{number}")
        if s1 and s2 and s_format:
            ratio = s_format["rps"] / s2["rps"]
            target(f"{FORMAT_NAMES[number]} hit throughput / baseline, ({number}) / (2) (issue 12)", "≥ 0.85", ratio,
                   ratio >= 0.85)
            add(f"| {FORMAT_NAMES[number]} hits / v1 hits, ({number}) / (1) | — | {s_format['rps'] / s1['rps']:.3f} | — |")
    s_redis, s_control = results.get(f"s{REDIS}"), results.get(f"s{REDIS}c")
    if s_redis and s_control:
        ratio = s_redis["rps"] / s_control["rps"]
        target(f"hit throughput with Redis configured / without, ({REDIS}) / ({REDIS}c) (issue 15)", "≥ 0.97", ratio,
               ratio >= 0.97)
        if len(s_control["reps"]) == len(s_redis["reps"]):
            pairs = [b / a for a, b in zip(s_control["reps"], s_redis["reps"])]
            add(f"| ({REDIS}) / ({REDIS}c) per repetition, their median | — | {statistics.median(pairs):.3f} "
                f"({', '.join(f'{x:.2f}' for x in pairs)}) | — |")
    cpu = results.get(f"s{REDIS}_cpu")
    if cpu and cpu["a"] and cpu["c"]:
        pairs = [a / c for a, c in zip(cpu["a"], cpu["c"])]
        add(f"| server CPU per hit, ({REDIS}) / ({REDIS}c), per repetition, their median | — | {statistics.median(pairs):.3f} "
            f"({', '.join(f'{x:.2f}' for x in pairs)}; µs per hit {statistics.median(cpu['a']):.1f} against "
            f"{statistics.median(cpu['c']):.1f}) | — |")
    if s1 and s_redis:
        add(f"| ({REDIS}) / (1), against (1)'s instance (not like with like: four accounts, another cache limit, "
            f"measured earlier in the repetition) | — | {s_redis['rps'] / s1['rps']:.3f} | — |")
        if s_control:
            add(f"| ({REDIS}c) / (1), the control against (1)'s instance, neither with Redis | — | "
                f"{s_control['rps'] / s1['rps']:.3f} | — |")
    shared, upstream = results.get(f"s{REDIS}s"), results.get(f"s{REDIS}u")
    if shared and upstream:
        add(f"| local miss then shared hit / local miss then upstream, ({REDIS}s) / ({REDIS}u), requests/s (issue 15) | — | "
            f"{shared['rps'] / upstream['rps']:.2f} (p50 {shared['p50_ms']:.2f} ms against {upstream['p50_ms']:.2f} ms) | — |")
    if results.get(f"s{REDIS}n") and upstream:
        plain = results[f"s{REDIS}n"]
        add(f"| a miss with Redis / without, ({REDIS}u) / ({REDIS}n), requests/s | — | {upstream['rps'] / plain['rps']:.2f} "
            f"(p50 {upstream['p50_ms']:.2f} ms against {plain['p50_ms']:.2f} ms) | — |")
    per_name = results.get(f"s{REDIS}r")
    if per_name:
        add(f"| upstream queries per unique name, 3 replicas each asked it at once, shared tier on / off (issue 15) | — | "
            f"{per_name['on']:.2f} / {per_name['off']:.2f} ({per_name['names']} names) | — |")
    s5q = results.get("s5_quiet")
    if s5 and s5q:
        add(f"| (5) / (5q), the same-time reference (not the issue's figure) | — | {s5['rps'] / s5q['rps']:.2f} | — |")
    target("hit throughput at 1M entries / (1)", "≥ 0.9", s1 and s6 and s6["hits"]["rps"] / s1["rps"],
           s1 and s6 and s6["hits"]["rps"] / s1["rps"] >= 0.9)
    if s6 and s6.get("hits_quiet"):
        add(f"| (6) / (6q), the same-time reference (not the issue's figure) | — | "
            f"{s6['hits']['rps'] / s6['hits_quiet']['rps']:.2f} | — |")
    if s6:
        worst = max(v["bytes_per_entry"] for k, v in s6.items() if k.startswith("rss_") and isinstance(v, dict))
        target("RSS per cached entry (worst of the stops)", "≤ 400 bytes", worst, worst <= 400, f"{worst:.0f} bytes")
        target(f"warm restart with {s6['entries_after_restart']:,} entries", "≤ 3 s to ready",
               s6["restart_seconds"], s6["restart_seconds"] <= 3 and s6["entries_after_restart"] >= SCALE,
               f"{s6['restart_seconds']:.2f} s")
    else:
        target("RSS per cached entry", "≤ 400 bytes", None, False)
        target("warm restart with 1M entries", "≤ 3 s to ready", None, False)
    add("")
    if s4:
        ratios = []
        if results.get("s4_dnss"):
            ratios.append(f"{s4['rps'] / results['s4_dnss']['rps']:.2f} × dnss's own miss rate")
        if results.get("s4_dnsperf"):
            ratios.append(f"{s4['rps'] / results['s4_dnsperf']['qps']:.2f} × unbound's (dnsperf)")
        add(f"Misses (no target): {fmt_rate(s4['rps'])} req/s, p99 {s4['p99_ms']:.2f} ms; " + "; ".join(ratios) + ".")
        add("")

    if results.get("s5_upstream_cpu") is not None:
        add(f"Slow upstream: the delaying upstream (`bench/slowdoh/slow_doh.c`) used "
            f"{results['s5_upstream_cpu'] * 100:.0f} % of one core during (5), on the same {results['machine']['cores']} "
            "cores as the server and the load; a `tc netem` delay would cost no CPU, but needs a network "
            "namespace with its own loopback for all the processes.")
        add("")

    add("## How it is measured")
    add("")
    add(f"""- Names: every name below `{ZONE}` exists. An authoritative unbound answers them all from one
  `redirect` local zone (two A records, TTL {TTL}); a second, caching unbound forwards `{ZONE}` to it
  and refuses everything else (`local-zone: "." refuse`); dnss serves RFC 8484 in front of the caching
  unbound. httpdnsd's accounts have `localDNSFallback: false`, `maxCacheTTL: {TTL}`.
- (1) wrk cycles through {NAMES} names preloaded into account `bench` (requests pre-formatted in the
  Lua `init`, each wrk thread starting at another offset); the hit and miss counters of `/metrics`
  are checked afterwards. (2) the same wrk script against `bench/baseline/baseline.c`, given the same
  per-connection buffer as httpdnsd ({CONNECTION_MEMORY} bytes, `connectionMemoryLimit`); (3) the same
  names as pre-encoded base64url queries (written by run.py) against dnss, whose unbound has them
  cached (checked with `unbound-control stats_noreset`). (1), (8), ({SIGNED}), (2), (3), (5q), (5), (6q) and
  (6) run in that order in each repetition, so a repetition of (5) or (6) is measured about a minute after its (1).
  The counters are read on the instance's operations listener (`opsListen`), the only one whose
  `/metrics` has the `account` label.
- (8) the same names preloaded into account `limited`, whose `rateLimit` and `rateBurst` are
  {LIMITED_KEYS["rateLimit"]:,} and {LIMITED_KEYS["rateBurst"]:,}: every hit takes a token from its
  client's bucket (wrk's connections all come from 127.0.0.1, so they share one bucket: the most
  contended case), and none is refused.
- ({SIGNED}) the same names preloaded (signed `POST`s, a `manage` key) into account `signed` of the same
  instance, which has two client keys and `requireSignedRequests: true` (`maxSignatureAge` {SIGNED_MAX_AGE}):
  run.py signs each name's `GET /v1/signed/resolve?host=NAME` once, with Python's `hmac` and `hashlib` as
  `docs/security.md` specifies (`kid`, `t`, `sign` in the query; `t` a day ahead, so the same URLs serve
  the whole run: a GET signature may be reused until it expires), and `cycle.lua` cycles through the
  signed URLs. Before the loop, an unsigned request and one with a wrong signature must get 401 and a
  signed one a cache hit. A signed hit is answered by the fast path (1) takes, which copies the
  request and runs the general path's signature and role checks on it (a refusal is left to the
  general path): the ratio ({SIGNED}) / (1) is what signing costs a hit, the copy and the HMAC.
- ({RFC8484}) the names of (1), as the pre-encoded RFC 8484 queries of (3) (ID 0, RD, one A question),
  `GET /v1/bench/dns-query?dns=` with `Accept: application/dns-message` against the same instance and
  account `bench`: each is answered from the cache on the fast path (its RFC 8484 row) and written as a
  DNS message by libknot, by the general path's writer. Before
  the loop one query must come back `application/dns-message`, RCODE 0, two records.
- ({EMAS}) and ({DOHJSON}) the names of (1) through the EMAS HTTPDNS API (`GET /bench/d?host=NAME`) and
  the DoH JSON API (`GET /resolve?uid=bench&name=NAME`), same instance and account: cache hits
  answered on the fast path (its EMAS and DoH JSON rows) by each API's one answer writer. Before the loop the
  first name must be one cache hit whose JSON answer carries the two addresses.
- ({REDIS}) issue 15: a redis-server on loopback (no persistence) and three replicas a, b, c with `redis`
  set and account `bench` as in (1). ({REDIS}) is (1)'s wrk run against replica a, which had the names
  preloaded (and published the preload: b and c preload them too, awaited before the loop).
  ({REDIS}c) is the same run against a control instance whose configuration is replica a's without
  `redis`, started with the replicas and preloaded the same way; ({REDIS}) and ({REDIS}c) run back to back
  in each repetition, in alternating order. A hit must not touch Redis, so ({REDIS}) / ({REDIS}c) is the cost
  of having Redis configured (the issue's figure); ({REDIS}) / (1) also differs by (1)'s instance (more
  accounts, a larger cache limit) and by when in the repetition it runs. For each of the two runs the
  server's CPU (all threads, `/proc/PID/stat`) per request is read too: the split of wrk's connections
  between libmicrohttpd's workers caps a run's requests/s at random, not its CPU per request.
  ({REDIS}u), ({REDIS}s) and ({REDIS}n) ask {REDIS_NAMES} names once each from 16 Python keep-alive clients (the
  client's own cost is in every figure alike; read the ratios): ({REDIS}u) names nobody asked, on replica b
  (Redis is asked and misses, b takes the name's lock, asks the upstream, stores the answer);
  ({REDIS}s) names replica a preloaded just before, on replica b (a shared hit, cached on b from then
  on); ({REDIS}n) names nobody asked, on (1)'s instance, which has no Redis. ({REDIS}r) sends each of
  a few hundred fresh names to the three replicas at once and counts their upstream requests
  (`httpdns_upstream_requests_total`), then the same against (1)'s instance and two more without Redis.
- (4) every request asks for a name never asked before (`distinct.lua` builds them, so each repetition
  asks {DURATION} s worth of distinct names, at least the issue's 10 000), through dnss → caching unbound →
  authoritative unbound. (4u) the same against dnss directly (wrk, RFC 8484 queries built in Lua);
  (4d) dnsperf against the caching unbound (UDP).
- (5) account `slow` has `bench/slowdoh/slow_doh.c` as its upstream: an RFC 8484 proxy that waits {SLOW_MS} ms before
  asking the caching unbound. The {NAMES} names are preloaded with the delay at 0; then, with the delay
  on, a second wrk keeps {SLOW_INFLIGHT} connections asking never-asked names of that account (so
  {SLOW_INFLIGHT} misses are always waiting), starting 3 s before and ending 3 s after the hit measurement
  on the same account.
- (6) a second httpdnsd, started and filled before the hit loop, fills account `bench` by
  `POST /v1/bench/preload` (batches of {PRELOAD_BATCH}); RSS is read at {SCALE_MID:,} and {SCALE:,} entries
  (the main instance sits idle meanwhile), and the loop starts once it is idle; hits then cycle over all cached names, each repetition
  just after (6q), {NAMES} of those names as in (1), the same-time reference (wrk's threads
  wait for each other's list to be built before the first request: see `bench/lua/common.lua`; without
  that, a million-name list let one thread send uncounted-time requests and inflated (6) by 20-60 %); then SIGTERM
  (the write-behind queue is flushed) and a restart on the same database, timed to `/readyz` 200
  (polled every 5 ms).""")
    add("")
    return "\n".join(lines)


# A section of RESULTS.md that a run does not measure and keeps as it is (the cache simulator's
# table, `bench/cachesim`, issue 16).
KEPT_SECTION = "## Cache simulator"


def kept_section(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return ""
    start = text.find("\n" + KEPT_SECTION)
    if start < 0:
        return ""
    end = text.find("\n## ", start + 1)
    return text[start + 1:] if end < 0 else text[start + 1:end + 1]


def main():
    work = os.environ.get("BENCH_WORK") or tempfile.mkdtemp(prefix="httpdnsd-bench-")
    os.makedirs(work, exist_ok=True)
    results_path = os.environ.get("BENCH_RESULTS") or os.path.join(BENCH_DIR, "RESULTS.md")
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
    if "s1" in results:
        try:
            os.makedirs(os.path.join(BENCH_DIR, "out"), exist_ok=True)
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
    if failed:
        if isinstance(failed, KeyboardInterrupt):
            sys.exit(130)
        sys.exit(1)
    if not os.environ.get("BENCH_KEEP_WORK"):
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
