#!/usr/bin/env python3
"""RSS per idle account (issue 16, item 4): what an account costs before it holds anything.

    python3 bench/idle_accounts.py [PATH/TO/release/httpdnsd]

Without a path it builds the release binary (`swift build -c release`, scratch path
bench/out/build, or IDLE_SCRATCH). Then, on loopback only:

1. starts httpdnsd with one account (`default`) and a fresh database; RSS once ready (base);
2. creates IDLE_ACCOUNTS (default 5000) accounts with admin PUTs on one keep-alive connection;
   RSS right after (what creating them leaves behind, grace periods included);
3. stops it, starts it again on the same database (the accounts load from SQLite); RSS once
   ready, and again after IDLE_SETTLE seconds (default 5);
4. prints (RSS after restart - base) / accounts beside the 8 KB goal.

Every account's upstream is a loopback port nothing listens on and its fallback is off: no
account is ever asked anything, and nothing leaves 127.0.0.1.
"""
import http.client, json, os, shutil, socket, subprocess, sys, tempfile, time

ACCOUNTS = int(os.environ.get("IDLE_ACCOUNTS", "5000"))
SETTLE = float(os.environ.get("IDLE_SETTLE", "5"))
GOAL = 8 * 1024
TOKEN = "idle-accounts-admin-token"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build():
    scratch = os.environ.get("IDLE_SCRATCH", os.path.join(ROOT, "bench", "out", "build"))
    env = dict(os.environ, PATH="/opt/swift/usr/bin:" + os.environ.get("PATH", ""))
    subprocess.run(["swift", "build", "-c", "release", "--scratch-path", scratch, "--product", "httpdnsd"], cwd=ROOT, env=env, check=True)
    path = subprocess.run(["swift", "build", "-c", "release", "--scratch-path", scratch, "--show-bin-path"],
                          cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout.strip()
    return os.path.join(path, "httpdnsd")


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def account(port_nothing_listens):
    return {"upstreams": [f"json:http://127.0.0.1:{port_nothing_listens}/resolve"], "localDNSFallback": False}


class Service:
    def __init__(self, binary, work, port):
        self.port = port
        self.proc = subprocess.Popen([binary, "--config", os.path.join(work, "config.json")],
                                     stdout=open(os.path.join(work, "log"), "a"), stderr=subprocess.STDOUT)
        for _ in range(600):
            if self.proc.poll() is not None:
                sys.exit(f"httpdnsd exited ({self.proc.returncode}); see {work}/log")
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=30); c.request("GET", "/readyz")
                r = c.getresponse(); r.read()
                if r.status == 200: return
            except OSError:
                pass
            time.sleep(0.1)
        sys.exit("httpdnsd did not become ready")

    def rss(self):
        return rss_kib(self.proc.pid)

    def stop(self):
        self.proc.terminate(); self.proc.wait(60)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else build()
    work = tempfile.mkdtemp(prefix="idle-accounts-")
    port, dead = free_port(), free_port()
    config = {"listen": f"127.0.0.1:{port}", "db": os.path.join(work, "db.sqlite"), "adminToken": TOKEN,
              "accounts": {"default": account(dead)}}
    open(os.path.join(work, "config.json"), "w").write(json.dumps(config))
    try:
        service = Service(binary, work, port)
        time.sleep(1)
        base = service.rss()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        body = json.dumps(account(dead))
        started = time.time()
        for index in range(ACCOUNTS):
            c.request("PUT", f"/v1/accounts/idle-{index:05d}", body=body,
                      headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
            r = c.getresponse(); answer = r.read()
            if r.status != 201:
                sys.exit(f"PUT idle-{index:05d}: {r.status} {answer[:200]!r}")
        created_seconds = time.time() - started
        created = service.rss()
        service.stop()
        service = Service(binary, work, port)
        restarted = service.rss()
        time.sleep(SETTLE)
        settled = service.rss()
        service.stop()
    finally:
        if os.environ.get("IDLE_KEEP_WORK") != "1":
            shutil.rmtree(work, ignore_errors=True)
    per_created = (created - base) * 1024 / ACCOUNTS
    per_idle = (settled - base) * 1024 / ACCOUNTS
    print(f"binary: {binary}")
    print(f"accounts created: {ACCOUNTS} in {created_seconds:.1f} s (admin PUTs, one keep-alive connection)")
    print(f"RSS base (1 account): {base / 1024:.1f} MiB")
    print(f"RSS after the PUTs:   {created / 1024:.1f} MiB  ({per_created / 1024:.1f} KiB per account)")
    print(f"RSS after a restart:  {restarted / 1024:.1f} MiB, {settled / 1024:.1f} MiB after {SETTLE:g} s")
    verdict = "meets" if per_idle <= GOAL else "misses"
    print(f"RSS per idle account: {per_idle / 1024:.2f} KiB  (goal: at most {GOAL / 1024:.0f} KiB; {verdict} it)")


if __name__ == "__main__":
    main()
