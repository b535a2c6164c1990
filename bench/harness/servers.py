"""The servers every section measures or leans on: the DNS stack behind httpdnsd (two unbounds,
dnss, the slow RFC 8484 upstream), httpdnsd instances configured for the benchmark, and the
builds (httpdnsd in release, the C baseline and the slow upstream)."""

import json
import os
import re
import shutil
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from .clients import b64url_query, dns_ask, http_get, http_post_json, metrics
from .processes import free_port, wait_until
from .procstat import cpu_by_group, thread_ticks, user_system_seconds
from .settings import (ADDRESSES, BENCH_DIR, CONNECTION_MEMORY, HISTOGRAMS, PRELOAD_BATCH, PRELOAD_CONCURRENCY,
                       PRELOAD_PARALLEL, REPO, TTL, ZONE, log)


def unbound_config(work, name, port, extra, control_port=None):
    """Writes an unbound configuration on 127.0.0.1:`port` that refuses every name but what `extra`
    adds (remote control on `control_port` when given); returns its path."""
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

    def __init__(self, processes, work, dot_certificate=None):
        """`dot_certificate` (certificate, key): the caching unbound also serves DoT with it, on
        `dot_port` (section (15))."""
        self.processes = processes
        self.work = work
        self.dot_certificate = dot_certificate
        self.dot_port = free_port() if dot_certificate else None
        self.auth_port = free_port()
        self.cache_port = free_port()
        self.cache_control_port = free_port()
        self.dnss_port = free_port()
        self.slow_port = free_port()

    def start(self):
        """Starts the four and waits until each answers; the caching unbound must refuse a name
        outside the zone (nothing may leave loopback)."""
        # A "redirect" local zone answers every name below bench.test with the apex's records:
        # any number of distinct names without a zone file of that size.
        auth = unbound_config(self.work, "unbound-auth", self.auth_port,
                              f'  local-zone: "{ZONE}." redirect\n'
                              + "".join(f'  local-data: "{ZONE}. {TTL} IN A {a}"\n' for a in ADDRESSES))
        self.cache_config = unbound_config(
            self.work, "unbound-cache", self.cache_port,
            f'  local-zone: "{ZONE}." transparent\n'
            "  msg-cache-size: 256m\n  rrset-cache-size: 512m\n" + self.dot_settings()
            + f'forward-zone:\n  name: "{ZONE}."\n  forward-addr: 127.0.0.1@{self.auth_port}\n',
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

    def dot_settings(self):
        """The caching unbound's DoT listener (none without a certificate): `tls-port` on its own
        interface line, and room for as many TCP clients as the load opens (unbound's default,
        10 a thread, would queue most of them)."""
        if not self.dot_certificate:
            return ""
        cert, key = self.dot_certificate
        return (f"  interface: 127.0.0.1@{self.dot_port}\n  tls-port: {self.dot_port}\n"
                f'  tls-service-pem: "{cert}"\n  tls-service-key: "{key}"\n'
                "  incoming-num-tcp: 1024\n")

    def set_slow_delay(self, ms):
        """Sets the delay the slow upstream adds before it asks the caching unbound."""
        status, _, _ = http_get(self.slow_port, f"/_delay?ms={ms}")
        if status != 200:
            raise RuntimeError("slow-doh did not take the delay")

    def cache_stats(self):
        """The caching unbound's counters (`unbound-control stats_noreset`), by name."""
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



def start_redis(processes, work):
    """A redis-server on loopback (no persistence, its directory under `work`), once it answers
    PING; returns (process, port)."""
    port = free_port()
    directory = os.path.join(work, "redis")
    os.makedirs(directory, exist_ok=True)
    process = processes.start("redis-server", [
        shutil.which("redis-server") or "/usr/bin/redis-server", "--bind", "127.0.0.1", "--port", str(port),
        "--save", "", "--appendonly", "no", "--dir", directory, "--protected-mode", "no"])

    def answers():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    wait_until(answers, 15, "redis-server", process)
    return process, port

def cpu_text(cpu):
    """A `warm_load` CPU record as one phrase: total, user and kernel, the busiest threads."""
    threads = sorted(cpu["threads"].items(), key=lambda item: -item[1])
    busy = ", ".join(f"{name} {seconds:.2f}" for name, seconds in threads if seconds >= 0.01)
    return f"{cpu['seconds']:.2f} s of CPU (user {cpu['user']:.2f}, kernel {cpu['system']:.2f}; threads: {busy})"


def last_warm_load(log_text):
    """(entries, milliseconds) of the last "loaded N cached answers in M ms" line of a log, or None."""
    found = re.findall(r"loaded (\d+) cached answers in (\d+) ms", log_text)
    return (int(found[-1][0]), int(found[-1][1])) if found else None


class HTTPDNSD:
    """One httpdnsd instance: its configuration (one account per entry of `accounts`, each with
    its upstream), start to /readyz, stop, preload, and its per-account /metrics."""

    def __init__(self, processes, work, binary, name, accounts, cache_limit, extra=None, account_keys=None):
        self.processes = processes
        self.binary = binary
        self.name = name
        self.port = free_port()
        # /metrics shows the `account` label on the operations listener only.
        self.ops_port = free_port()
        self.db = os.path.join(work, f"{name}.sqlite")
        self.log_path = os.path.join(work, f"{name}.log")
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

    def warm_load(self):
        """The last warm load its log reports, as (entries, milliseconds), and the CPU the process
        has used so far: {"seconds", "user", "system", "threads": {thread name: seconds}}. Read at
        /readyz: CPU near the load's own time means its reading and storing did not overlap."""
        with open(self.log_path, errors="replace") as f:
            load = last_warm_load(f.read())
        pid = self.process.pid
        user, system = user_system_seconds(pid)
        threads = cpu_by_group(({}, 0), thread_ticks(pid), [])
        return load, {"seconds": user + system, "user": user, "system": system,
                      "threads": {name: micros / 1e6 for name, micros in threads.items()}}

    def stop(self):
        """SIGTERM; raises unless it exits 0. Returns seconds until it exited."""
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
        """The entries cached for `account` (-1 when /metrics has none)."""
        return int(self.account_value("httpdns_cache_entries", account, -1))

    def counter(self, name, account):
        """Counter `name` of `account` (0 before it first moves)."""
        return self.account_value(name, account, 0.0)


def build(work):
    """The binaries: httpdnsd (release, in BENCH_SCRATCH; or BENCH_HTTPDNSD_BIN as it is), the C
    baseline, the C forwarder (section (4f), `FORWARDER` in `work`) and the slow upstream (into
    `work`). Returns (httpdnsd, baseline, swift)."""
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
    for program in ("baseline", "forwarder"):
        subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-o", os.path.join(work, program),
                        os.path.join(BENCH_DIR, "baseline", f"{program}.c")] + cflags + ["-lpthread"], check=True)
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-o", os.path.join(work, "slow_doh"),
                    os.path.join(BENCH_DIR, "slowdoh", "slow_doh.c")], check=True)
    return binary, baseline, swift
