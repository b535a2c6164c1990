"""Instructions per cache miss of GET /v1/default/resolve under valgrind's callgrind.

    python3 bench/callgrind_miss.py PATH/TO/release/httpdnsd [N] [doh|json] [CONCURRENCY]

Starts unbound on loopback with a `redirect` zone (every name under miss.test answers two A
records) and dnss (RFC 8484) in front of it, then the binary under callgrind, its one account
asking dnss (`doh`, the default) or a DoH JSON responder of this script (`json`; one fixed
answer per name, for the JSON parser's share). It warms the path with 200 misses, zeroes the
counters, sends N (default 2000) requests for names never asked before, on CONCURRENCY
(default 1) keep-alive connections, dumps, and prints the instructions of the whole process
divided by N, and each thread's share (user space: libmicrohttpd, the engine, the upstream
client, the store's writer, malloc; not the kernel, and not the upstream's own cost).

CALLGRIND_REDIS=1 starts a redis-server on loopback and sets `redis` to it: every miss then
also asks the shared answer tier (docs/redis.md), whose thread (`redis-answers`, counted as
`other`) and extra work in the others are in the figure. CALLGRIND_REDIS=server also runs
redis-server under callgrind and prints its own instructions per miss apart (not in the total).

Each thread is counted apart (`--separate-threads=yes`) and named by what it runs: `upstream`
the upstream loop (`httpdnsd-curl`: libcurl or the HTTP/1.1 client), else by the library its
hottest calls are in (`http` libmicrohttpd, `store` SQLite, `other`); for a function
profile run `callgrind_annotate --inclusive=yes` on the largest dump it names.
Deterministic to about 1 % with CONCURRENCY 1 (more connections batch hand-offs, so the figure
depends on timing); it compares two builds on one machine, not machines.
"""
import glob
import http.client
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(0 if len(sys.argv) > 1 else 2)
binary = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
UPSTREAM = sys.argv[3] if len(sys.argv) > 3 else "doh"
CONCURRENCY = int(sys.argv[4]) if len(sys.argv) > 4 else 1
assert UPSTREAM in ("doh", "json"), UPSTREAM
ZONE = "miss.test"
WARM = 200


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class JSONUpstream(http.server.BaseHTTPRequestHandler):
    """A DoH JSON upstream: two A records for whatever name is asked."""
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        name = self.path.split("name=", 1)[1].split("&", 1)[0]
        answer = [{"name": name + ".", "type": 1, "TTL": 300, "data": f"192.0.2.{i}"} for i in (10, 11)]
        body = json.dumps({"Status": 0, "Answer": answer}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


def wait_until(check, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start")


def http_status(port, path, timeout=5):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("GET", path)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status


def start_upstream(work, processes):
    """The account's upstream URL: dnss in front of unbound, or this script's JSON responder."""
    if UPSTREAM == "json":
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), JSONUpstream)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return f"json:http://127.0.0.1:{server.server_address[1]}/resolve"
    unbound_port, dnss_port = free_port(), free_port()
    config = os.path.join(work, "unbound.conf")
    with open(config, "w") as f:
        f.write(f"""server:
  interface: 127.0.0.1
  port: {unbound_port}
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "{work}"
  pidfile: "{work}/unbound.pid"
  use-syslog: no
  logfile: ""
  access-control: 127.0.0.0/8 allow
  module-config: "iterator"
  local-zone: "{ZONE}." redirect
  local-data: "{ZONE}. 300 IN A 192.0.2.10"
  local-data: "{ZONE}. 300 IN A 192.0.2.11"
remote-control:
  control-enable: no
""")
    log = open(os.path.join(work, "upstreams.log"), "w")
    processes.append(subprocess.Popen(["unbound", "-d", "-c", config], stdout=log, stderr=subprocess.STDOUT))
    processes.append(subprocess.Popen(
        ["dnss", "-enable_https_to_dns", "-dns_upstream", f"127.0.0.1:{unbound_port}",
         "-https_server_addr", f"127.0.0.1:{dnss_port}", "-insecure_http_server"], stdout=log, stderr=subprocess.STDOUT))
    # ready.miss.test A, ID 0, base64url without padding.
    probe = "/dns-query?dns=AAABAAABAAAAAAAABXJlYWR5BG1pc3MEdGVzdAAAAQAB"
    wait_until(lambda: http_status(dnss_port, probe) == 200, 15, "dnss")
    return f"doh:http://127.0.0.1:{dnss_port}/dns-query"


def start_redis(work, processes):
    """A redis-server on loopback for CALLGRIND_REDIS (under callgrind for `server`); returns its
    URL and its process."""
    port = free_port()
    wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={os.path.join(work, 'redis.callgrind')}"] \
        if os.environ.get("CALLGRIND_REDIS") == "server" else []
    processes.append(subprocess.Popen(
        wrapper + [shutil.which("redis-server") or "/usr/bin/redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
         "--appendonly", "no", "--dir", work, "--protected-mode", "no"],
        stdout=open(os.path.join(work, "redis.log"), "w"), stderr=subprocess.STDOUT))

    def answers():
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    wait_until(answers, 60, "redis-server")
    return f"redis://127.0.0.1:{port}", processes[-1]


def send_misses(port, names):
    """Each name once, on CONCURRENCY keep-alive connections; every answer must be a miss."""
    def worker(chunk):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for name in chunk:
            connection.request("GET", f"/v1/default/resolve?host={name}&type=A")
            response = connection.getresponse()
            body = response.read()
            assert response.status == 200 and b'"source":"upstream"' in body, body
        connection.close()
    chunks = [names[i::CONCURRENCY] for i in range(CONCURRENCY)]
    threads = [threading.Thread(target=worker, args=(chunk,)) for chunk in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def thread_role(path):
    """What a per-thread dump's thread does: `upstream` for the upstream loop (it runs
    `CurlLoopWorker.run`, whether its transfers go through libcurl or the HTTP/1.1 client),
    else the library whose functions dominate its self cost."""
    counts = {"http": 0, "store": 0}
    current = ""
    for line in open(path, errors="replace"):
        if line.startswith("fn=") and "CurlLoopWorker" in line:
            return "upstream"
        if line.startswith("ob="):
            current = line
        elif line[:1].isdigit() and current:
            cost = line.split()
            if len(cost) > 1 and cost[1].isdigit():
                if "libmicrohttpd" in current:
                    counts["http"] += int(cost[1])
                elif "libsqlite3" in current:
                    counts["store"] += int(cost[1])
    role = max(counts, key=counts.get)
    return role if counts[role] else "other"


def main():
    work = tempfile.mkdtemp(prefix="callgrind-miss-")
    processes = []
    try:
        upstream = start_upstream(work, processes)
        port = free_port()
        config = {"listen": f"127.0.0.1:{port}", "db": os.path.join(work, "db.sqlite"),
                  "accounts": {"default": {"upstreams": [upstream], "localDNSFallback": False}}}
        redis = None
        if os.environ.get("CALLGRIND_REDIS", "0") not in ("0", ""):
            config["redis"], redis = start_redis(work, processes)
        counted = [proc_ for proc_ in (redis,) if proc_ and os.environ.get("CALLGRIND_REDIS") == "server"]
        with open(os.path.join(work, "config.json"), "w") as f:
            json.dump(config, f)
        out = os.path.join(work, "callgrind.out")
        proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--compress-strings=no",
             "--compress-pos=no", f"--callgrind-out-file={out}", binary, "--config", os.path.join(work, "config.json")],
            stdout=open(os.path.join(work, "httpdnsd.log"), "w"), stderr=subprocess.STDOUT)
        processes.append(proc)
        wait_until(lambda: http_status(port, "/readyz", timeout=30) == 200, 120, "httpdnsd")
        send_misses(port, [f"warm{i}.{ZONE}" for i in range(WARM)])
        for target in [proc] + counted:
            subprocess.run(["callgrind_control", "-z", str(target.pid)], check=True, stdout=subprocess.DEVNULL)
        send_misses(port, [f"m{i}.{ZONE}" for i in range(N)])
        for target in [proc] + counted:
            subprocess.run(["callgrind_control", "-d", "misses", str(target.pid)], check=True, stdout=subprocess.DEVNULL)
        report(out, work)
        if counted:
            redis_total = sum(dump_total(path) for path in glob.glob(os.path.join(work, "redis.callgrind*"))
                              if "misses" in open(path, errors="replace").read(4000))
            print(f"redis-server: {redis_total / N:.0f} instructions per miss (not in the total above)")
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait()
        if os.environ.get("CALLGRIND_KEEP", "0") in ("0", ""):
            shutil.rmtree(work, ignore_errors=True)


def dump_total(path):
    """The instructions of one callgrind dump (its `summary:` or `totals:` line)."""
    for line in open(path, errors="replace"):
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    return 0


def report(out, work):
    total = 0
    shares = []
    for path in glob.glob(out + "*"):
        if "misses" not in open(path, errors="replace").read(4000):
            continue
        for line in open(path, errors="replace"):
            if line.startswith("summary:") or line.startswith("totals:"):
                cost = int(line.split()[1])
                if cost:
                    total += cost
                    shares.append((cost, thread_role(path), os.path.basename(path)))
                break
    for cost, role, name in sorted(shares, reverse=True):
        print(f"  {role:8} {cost / N:10.0f} per miss  ({name})")
    kept = f" (dumps kept in {work})" if os.environ.get("CALLGRIND_KEEP", "0") not in ("0", "") else " (CALLGRIND_KEEP=1 keeps the dumps)"
    redis = "  redis: on" if os.environ.get("CALLGRIND_REDIS", "0") not in ("0", "") else ""
    print(f"upstream: {UPSTREAM}{redis}  connections: {CONCURRENCY}  misses: {N}  instructions: {total}  per miss: {total / N:.0f}{kept}")


if __name__ == "__main__":
    main()
