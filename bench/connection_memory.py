#!/usr/bin/env python3
"""The longest request the API accepts against libmicrohttpd's per-connection buffer
(issue 16, item 5): which `connectionMemoryLimit` serves it, and with what margin.

    python3 bench/connection_memory.py PATH/TO/httpdnsd [LIMIT ...]    (default: 16384 32768 65536)

For each limit it starts httpdnsd on loopback (an account with a client key; its upstream a
loopback port nothing listens on, fallback off) and sends, on one keep-alive connection:

- the longest request the API accepts: `GET /v1/{acct}/resolve` with 20 hosts of 253
  characters (the longest DNS name), comma-separated and percent-encoded, signed (signature v1
  in the query), with the headers a chain of proxies adds (`longest_request` below);
- then the same with a header of padding, searched for the largest head still served (to 16
  bytes), to show the margin, and what a head past it gets (status, or "closed").

It prints, per limit: the longest request's head size and status, the largest head served,
and the answer past it. Nothing leaves 127.0.0.1.
"""
import hashlib, hmac, json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.parse

KID, SECRET, ACCOUNT = "k1", "a-client-secret-of-32-bytes-long", "acct"
PROXY_HEADERS = [
    ("User-Agent", "Mozilla/5.0 (Linux; Android 14; Pixel 8 Pro Build/AP2A.240805.005) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/127.0.6533.103 Mobile Safari/537.36"),
    ("Accept", "application/json"),
    ("Accept-Encoding", "gzip, deflate, br, zstd"),
    ("Accept-Language", "en-US,en;q=0.9,zh-CN;q=0.8,zh;q=0.7"),
    ("X-Forwarded-For", ", ".join(f"2001:db8:{i:x}::{i + 1:x}" for i in range(8))),
    ("X-Forwarded-Proto", "https"),
    ("X-Forwarded-Host", "httpdns.example.com"),
    ("X-Forwarded-Port", "443"),
    ("X-Real-IP", "2001:db8:0:0:0:0:0:1"),
    ("Forwarded", ", ".join(f'for="[2001:db8:{i:x}::{i + 1:x}]:4711";proto=https;by=10.0.{i}.1' for i in range(8))),
    ("Via", ", ".join(f"1.1 proxy-{i}.example.net (envoy/1.31)" for i in range(4))),
    ("X-Request-Id", "f3b2c1d0-9e8f-4a7b-8c6d-5e4f3a2b1c0d"),
    ("X-Amzn-Trace-Id", "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"),
    ("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
    ("tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7,vendor=" + "x" * 200),
    ("X-Envoy-Expected-Rq-Timeout-Ms", "15000"),
    ("X-Envoy-Attempt-Count", "1"),
    ("X-B3-TraceId", "80f198ee56343ba864fe8b2a57d3eff7"),
    ("X-B3-SpanId", "e457b5a2e4d86bd1"),
    ("X-B3-Sampled", "1"),
    ("CDN-Loop", "cloudflare; loops=1, akamai; loops=1"),
    ("CF-Connecting-IP", "2001:db8::1"),
    ("CF-IPCountry", "CN"),
    ("CF-Ray", "8b1f5e6a7c9d2e3f-HKG"),
    ("True-Client-IP", "2001:db8::1"),
]


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def host(index):
    """A 253-character name: labels of 63, 63, 63, 56 and 4 characters."""
    labels = [f"{index:02d}" + "a" * 61, "b" * 63, "c" * 63, "d" * 56 + ".test"]
    name = ".".join(labels)
    assert len(name) == 253, len(name)
    return name


def signed_target(hosts):
    path = f"/v1/{ACCOUNT}/resolve"
    args = {"host": ",".join(hosts)}
    encode = lambda text: urllib.parse.quote(text, safe="")
    query = "&".join(f"{encode(k)}={encode(v)}" for k, v in sorted(args.items()))
    expiry = int(time.time()) + 300
    canonical = "\n".join(["HTTPDNS-HMAC-SHA256", "GET", path, query, str(expiry), hashlib.sha256(b"").hexdigest()])
    sign = hmac.new(SECRET.encode(), canonical.encode(), hashlib.sha256).hexdigest()
    return f"{path}?{query}&kid={KID}&t={expiry}&sign={sign}"


def head(target, port, padding=0):
    lines = [f"GET {target} HTTP/1.1", f"Host: 127.0.0.1:{port}"] + [f"{k}: {v}" for k, v in PROXY_HEADERS]
    if padding:
        lines.append("X-Padding: " + "p" * padding)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def exchange(sock, request):
    """Sends one request; returns (status, body) or ("closed", b"")."""
    try:
        return exchange_or_raise(sock, request)
    except (ConnectionResetError, BrokenPipeError):
        return "closed", b""


def exchange_or_raise(sock, request):
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk: return "closed", b""
        data += chunk
    header, _, body = data.partition(b"\r\n\r\n")
    status = int(header.split(b" ")[1])
    length = 0
    for line in header.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length": length = int(value)
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk: return "closed", body
        body += chunk
    return status, body


def measure(binary, limit):
    work = tempfile.mkdtemp(prefix="conn-memory-")
    port, dead = free_port(), free_port()
    config = {"listen": f"127.0.0.1:{port}", "db": os.path.join(work, "db.sqlite"), "connectionMemoryLimit": limit,
              "accounts": {ACCOUNT: {"upstreams": [f"json:http://127.0.0.1:{dead}/resolve"], "localDNSFallback": False,
                                     "clientKeys": [{"id": KID, "secret": SECRET, "role": "resolve"}]}}}
    open(os.path.join(work, "config.json"), "w").write(json.dumps(config))
    proc = subprocess.Popen([binary, "--config", os.path.join(work, "config.json")],
                            stdout=open(os.path.join(work, "log"), "w"), stderr=subprocess.STDOUT)
    try:
        for _ in range(600):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                status, _ = exchange(s, f"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n".encode()); s.close()
                if status == 200: break
            except OSError: pass
            time.sleep(0.1)
        target = signed_target([host(i) for i in range(20)])
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        request = head(target, port)
        status, body = exchange(sock, request)
        again, _ = exchange(sock, request) if status != "closed" else ("closed", b"")
        result = {"limit": limit, "target": len(target), "head": len(request), "status": status, "again": again,
                  "body": body[:120].decode(errors="replace")}
        # The largest padding served: doubling until refused, then halving the gap.
        def try_padding(padding):
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            answer = exchange(s, head(target, port, padding))
            s.close()
            return answer
        served = len(request) if status not in ("closed", 413, 414, 431) else 0
        low, high = 0, 256
        while high < 4 * limit:
            answer = try_padding(high)
            if answer[0] in ("closed", 413, 414, 431):
                result["refused_head"], result["refused"] = len(head(target, port, high)), answer[0]
                result["refused_body"] = answer[1][:100].decode(errors="replace")
                break
            low, high = high, high * 2
        while served and high - low > 16:
            middle = (low + high) // 2
            if try_padding(middle)[0] in ("closed", 413, 414, 431): high = middle
            else: low = middle
        if served:
            served = len(head(target, port, low)) if low else len(request)
            result["smallest_refused"] = len(head(target, port, high))
        result["largest_served"] = served
        return result
    finally:
        proc.terminate(); proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    binary = sys.argv[1]
    limits = [int(x) for x in sys.argv[2:]] or [16384, 32768, 65536]
    for limit in limits:
        r = measure(binary, limit)
        print(f"connectionMemoryLimit {limit}: longest request (target {r['target']} B, head {r['head']} B) -> {r['status']}"
              f" (again on the same connection: {r['again']}); largest head served {r['largest_served']} B;"
              f" refused from about {r.get('smallest_refused', '-')} B: {r.get('refused', '-')} {r.get('refused_body', '')!r}")
        print(f"  body: {r['body']}")


if __name__ == "__main__":
    main()
