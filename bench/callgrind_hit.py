"""Instructions per cache hit of GET /v1/default/resolve under valgrind's callgrind.

    python3 bench/callgrind_hit.py PATH/TO/release/httpdnsd [N] [MODE]

Starts the binary under callgrind (one HTTP thread) with a loopback DoH JSON upstream (this
script, one fixed A record), warms one name, zeroes the counters, sends N (default 2000) hits on
one keep-alive connection, dumps, and prints the instructions of the whole process divided by N
(user space of every thread: libmicrohttpd, the fast path, malloc; not the kernel). For the
fast path alone: `callgrind_annotate --inclusive=yes` on the HTTP thread's dump (the largest
`callgrind.out.1-NN` of the directory it names), line `fastResponse`.
Deterministic to about 0.1 %; compares two builds of the same machine, not machines.
CALLGRIND_HISTOGRAMS=0 runs it with `metricsHistograms: false` (request durations not recorded).

Modes: `open` (default) as above; `open-general`: the same hits on `/v1/default/resolve/`
(trailing `/`: the router serves it, the fast path leaves it to the general path); `emas`,
`json`, `rfc8484`: the same name's hits as `GET /default/d?host=`, `GET /resolve?name=` (DoH
JSON) and `GET /dns-query?dns=` (RFC 8484, a query made here), each with `-general` for the
same request with a trailing `/` (every format's fast path against its general path, one build); `signed`: the account has client keys and
`requireSignedRequests`, and every hit is signed (signature v1, query form, signed once by
`harness.clients.sign_v1`); `signed-general`: the same signed hits on `/v1/default/resolve/` (trailing
`/`), which the router serves but the fast path leaves to the general path, to compare the two
paths in one build. `emas-signed` and `json-signed`: the account as for `signed`, every hit signed
in its format's own way: `GET /default/sign_d?host=&t=&s=` (the EMAS signature) and `GET
/resolve?name=&uid=&ak=&ts=&key=` (the DoH JSON signature), each with `-general` (trailing `/`).
CALLGRIND_AES=1 gives the account an `aesSecretKey` (requests stay plain: the encryption step lets
them through unchanged), in any mode: run a mode with and without it for what the key costs a hit.
CALLGRIND_ISP=1 turns on `ispEnable` for the account (a cache per client network: every hit is
looked up under the network of the peer, 127.0.0.0/24), in any mode: run a mode with and without it
to compare the hits of such an account with everyone's.
CALLGRIND_DOMAINS=N gives the account a domain list (`domains`, mode `listed`) of N allowed patterns
(exact names and, every tenth, a `*.` wildcard; the name hit is listed exactly) and N/100 denied names,
in any mode: run a mode with and without it for what the list's check costs a hit.
CALLGRIND_RULES=N gives the account N `rules` (those of `make bench`'s section (16): each names an
exact host and a `*.` wildcard below example.test, the hit name's own zone, none of them the hit name,
with varied `when` conditions), in any mode and with CALLGRIND_DOMAINS or without: run a mode with and
without it for what the rules' lookup costs a hit of a name no rule names.
CALLGRIND_QUERYLOG=1 turns on the account's query log (`queryLog`, every lookup logged), in any
mode: run a mode with and without it for what logging costs a hit (the writer's thread, which
drains the queue into SQLite once a second, is counted apart).
CALLGRIND_LIMITED=1 gives the account the `rateLimit` and `rateBurst` of `make bench`'s section (8)
(every hit takes a token, none is refused): run a mode with and without it for what the limiter costs a hit.
CALLGRIND_CONNECTION_MEMORY_LIMIT=N sets `connectionMemoryLimit` (the binary's default otherwise).
CALLGRIND_REDIS=1 starts a `redis-server` on a free loopback port (no persistence) and sets `redis`
to it (issue 15: the shared answer tier, account replication and their connection threads exist;
the one name's first request goes through Redis), everything else as without: run the same mode
with and without it to compare one build's hits with Redis configured and without. It also
prints the commands Redis processed while the hits ran (`INFO commandstats`, before and after:
none of the answer tier's may appear).
Every thread is counted apart (`--separate-threads=yes`); the totals of the threads that ran
during the hits are printed too (an idle thread that wakes on a timer shows there).
"""
import hashlib, http.server, json, os, socket, subprocess, sys, tempfile, threading, time, http.client, glob

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(0 if len(sys.argv) > 1 else 2)
from harness.clients import sign_v1  # noqa: E402
from harness.policy import rules  # noqa: E402

binary = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
MODE = sys.argv[3] if len(sys.argv) > 3 else "open"
FORMATS = ("open", "emas", "json", "rfc8484")
SIGNED = ("signed", "emas-signed", "json-signed")
assert MODE in SIGNED + FORMATS + tuple(f + "-general" for f in SIGNED + FORMATS), MODE
SECRET = "callgrind-resolve-secret-0123456789"

upstream_calls = [0]

class JSONUpstream(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        upstream_calls[0] += 1
        body = json.dumps({"Status": 0, "Answer": [{"name": "www.example.test.", "type": 1, "TTL": 86400, "data": "192.0.2.10"}]}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def redis_cli(port, *arguments):
    return subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), *arguments], check=True,
                          capture_output=True, text=True).stdout

def command_stats(port):
    """`INFO commandstats` as {command: calls}."""
    stats = {}
    for line in redis_cli(port, "INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_"):
            name, fields = line[len("cmdstat_"):].split(":", 1)
            stats[name] = int(dict(f.split("=") for f in fields.split(","))["calls"])
    return stats

up = http.server.ThreadingHTTPServer(("127.0.0.1", 0), JSONUpstream)
threading.Thread(target=up.serve_forever, daemon=True).start()
work = tempfile.mkdtemp(prefix="wire-measure-")
port = free_port()
config = {"listen": f"127.0.0.1:{port}", "db": os.path.join(work, "db.sqlite"), "threads": 1,
          "accounts": {"default": {"upstreams": [f"json:http://127.0.0.1:{up.server_address[1]}/resolve"], "localDNSFallback": False}}}
if os.environ.get("CALLGRIND_HISTOGRAMS", "1") == "0":
    config["metricsHistograms"] = "false"
if MODE.removesuffix("-general") in SIGNED:
    config["accounts"]["default"].update({"clientKeys": [{"id": "r1", "secret": SECRET, "role": "resolve"}],
                                          "requireSignedRequests": True, "maxSignatureAge": 86400})
if os.environ.get("CALLGRIND_AES", "0") not in ("0", ""):
    config["accounts"]["default"]["aesSecretKey"] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
if os.environ.get("CALLGRIND_ISP", "0") not in ("0", ""):
    config["accounts"]["default"]["ispEnable"] = True
if int(os.environ.get("CALLGRIND_DOMAINS", "0") or 0) > 0:
    count = int(os.environ["CALLGRIND_DOMAINS"])
    allow = [f"*.zone{i}.test" if i % 10 == 0 else f"host{i}.tenant{i % 500}.test" for i in range(1, count)]
    config["accounts"]["default"]["domains"] = {"mode": "listed", "allow": allow + ["www.example.test"],
                                               "deny": [f"ads{i}.example.test" for i in range(max(1, count // 100))]}
if int(os.environ.get("CALLGRIND_RULES", "0") or 0) > 0:
    config["accounts"]["default"]["rules"] = rules(int(os.environ["CALLGRIND_RULES"]), zone="example.test")
if os.environ.get("CALLGRIND_QUERYLOG", "0") not in ("0", ""):
    config["accounts"]["default"]["queryLog"] = {"enabled": True}
if os.environ.get("CALLGRIND_LIMITED", "0") not in ("0", ""):
    config["accounts"]["default"].update({"rateLimit": 1_000_000, "rateBurst": 10_000_000})
redis = None
if os.environ.get("CALLGRIND_REDIS", "0") not in ("0", ""):
    redis_port = free_port()
    redis = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "",
                              "--appendonly", "no", "--dir", work, "--protected-mode", "no"],
                             stdout=open(os.path.join(work, "redis.log"), "w"), stderr=subprocess.STDOUT)
    for _ in range(100):
        try:
            if redis_cli(redis_port, "PING").strip() == "PONG": break
        except subprocess.CalledProcessError: pass
        time.sleep(0.1)
    config["redis"] = f"redis://127.0.0.1:{redis_port}"
if os.environ.get("CALLGRIND_CONNECTION_MEMORY_LIMIT"):
    config["connectionMemoryLimit"] = int(os.environ["CALLGRIND_CONNECTION_MEMORY_LIMIT"])
open(os.path.join(work, "config.json"), "w").write(json.dumps(config))
out = os.path.join(work, "callgrind.out")
proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--compress-strings=no", f"--callgrind-out-file={out}", binary, "--config", os.path.join(work, "config.json")],
                        stdout=open(os.path.join(work, "log"), "w"), stderr=subprocess.STDOUT)
try:
    for _ in range(600):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30); c.request("GET", "/readyz"); r = c.getresponse(); r.read()
            if r.status == 200: break
        except OSError: pass
        time.sleep(0.2)
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    import base64, struct
    query = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"".join(
        bytes([len(label)]) + label.encode() for label in "www.example.test".split(".")) + b"\0" + struct.pack(">HH", 1, 1)
    dns = base64.urlsafe_b64encode(query).decode().rstrip("=")
    slash = "/" if MODE.endswith("-general") else ""
    fmt = MODE.removesuffix("-general")
    path = {"open": f"/v1/default/resolve{slash}?host=www.example.test&type=A", "emas": f"/default/d{slash}?host=www.example.test",
            "json": f"/resolve{slash}?name=www.example.test", "rfc8484": f"/dns-query{slash}?dns={dns}"}.get(fmt)
    if MODE in ("signed", "signed-general"):
        route = "/v1/default/resolve" + ("/" if MODE == "signed-general" else "")
        path = route + "?" + sign_v1("GET", route, {"host": "www.example.test", "type": "A"}, b"", "r1", SECRET,
                                     int(time.time()) + 86400 - 60)
    if fmt == "emas-signed":
        t = str(int(time.time()) + 86400 - 60)
        s = hashlib.md5(f"www.example.test-{SECRET}-{t}".encode()).hexdigest()
        path = f"/default/sign_d{slash}?host=www.example.test&t={t}&s={s}"
    if fmt == "json-signed":
        ts = str(int(time.time()))
        key = hashlib.sha256(f"default{SECRET}{ts}www.example.testr1".encode()).hexdigest()
        path = f"/resolve{slash}?name=www.example.test&uid=default&ak=r1&ts={ts}&key={key}"
    c.request("GET", path); r = c.getresponse(); print("miss:", r.status, r.read().decode(errors="replace"))
    for _ in range(200): c.request("GET", path); r = c.getresponse(); r.read()
    if redis:
        redis_before = command_stats(redis_port)
    subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True, stdout=subprocess.DEVNULL)
    calls = upstream_calls[0]
    for _ in range(N):
        c.request("GET", path); r = c.getresponse(); body = r.read()
        assert r.status == 200 and (fmt in ("emas", "json", "rfc8484", "emas-signed", "json-signed") or b'"source":"cache"' in body), body
    assert upstream_calls[0] == calls, "a hit asked the upstream"
    subprocess.run(["callgrind_control", "-d", "hits", str(proc.pid)], check=True, stdout=subprocess.DEVNULL)
    if redis:
        after = command_stats(redis_port)
        after["info"] = after.get("info", 0) - 1  # the first INFO itself
        during = {name: calls - redis_before.get(name, 0) for name, calls in after.items() if calls != redis_before.get(name, 0)}
        print(f"redis commands during the hits: {during or 'none'}")
    print("hit body:", body.decode(errors="replace") if fmt != "rfc8484" else body.hex())
finally:
    proc.terminate(); proc.wait()
    if redis:
        redis.terminate(); redis.wait()
total = 0
threads = []
for f in glob.glob(out + "*"):
    if "hits" not in open(f, errors="replace").read(4000): continue
    for line in open(f, errors="replace"):
        if line.startswith("summary:") or line.startswith("totals:"):
            total += int(line.split()[1]); threads.append(int(line.split()[1])); break
print("instructions per thread during the hits (threads that ran):", sorted((t for t in threads if t), reverse=True))
policy = "".join(f" ({len(config['accounts']['default'][key])} {key})" for key in ("rules",)
                 if key in config["accounts"]["default"])
if "domains" in config["accounts"]["default"]:
    policy += f" ({len(config['accounts']['default']['domains']['allow'])} allowed domains)"
print(f"mode: {MODE}{' (ispEnable)' if config['accounts']['default'].get('ispEnable') else ''}{policy}  hits: {N}  instructions: {total}  per hit: {total / N:.0f}  (dump: {out}.*)")
