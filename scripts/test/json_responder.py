#!/usr/bin/env python3
"""DoH JSON API test upstream (WIRE-FORMATS.md section 1) backed by real DNS.

Answers ``GET /resolve?name=N&type=1|28|A|AAAA[&edns_client_subnet=..]`` by sending a
real DNS query over UDP to a loopback DNS server (unbound in the tests), following the
CNAME chain, and returning the JSON body the public JSON APIs return::

    {"Status":0,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,
     "Question":[{"name":"www.example.test.","type":1}],
     "Answer":[{"name":"www.example.test.","type":1,"TTL":300,"data":"127.0.0.11"}],
     "Authority":[{"name":"example.test.","type":6,"TTL":3600,"data":"ns. host. 1 3600 1200 604800 60"}]}

It also answers the Alibaba EMAS HTTPDNS API (WIRE-FORMATS section 3)::

    GET /{account}/d?host=H[&query=4|6|4,6][&ip=..]
    GET /{account}/sign_d?host=H&query=..&t=EXPIRY&s=md5(H-SECRET-EXPIRY)   (with --httpdns-secret)
    -> {"host":"H","ips":[..],"ipsv6":[..],"ttl":T,"origin_ttl":T,"client_ip":"127.0.0.1"}

With --json-secret, /resolve requires the Alibaba signature
``uid, ak, ts, key = hex(sha256(uid + secret + ts + name + ak))`` and answers 403 otherwise.

Test hooks (not part of the JSON API):
  GET    /_requests        -> JSON list of the recorded requests (path, query, headers, time)
  DELETE /_requests        -> clears the log
  GET    /_set?delay_ms=N&http_status=S -> answer /resolve after N ms / with HTTP status S (0 = normal)
  GET    /_set?reply=empty|garbage|normal -> answer /resolve 200 with an empty / non-JSON body
  GET    /_health          -> {"ok":true}

Standard library only. Usage::

    json_responder.py --listen-port 8054 --dns 127.0.0.1:5353
"""

import argparse
import hashlib
import json
import re
import random
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TYPE_A = 1
TYPE_NS = 2
TYPE_CNAME = 5
TYPE_SOA = 6
TYPE_AAAA = 28
MNEMONICS = {"A": TYPE_A, "NS": TYPE_NS, "CNAME": TYPE_CNAME, "SOA": TYPE_SOA, "AAAA": TYPE_AAAA}
MAX_CHAIN = 8


class DNSError(Exception):
    """The DNS server gave no usable answer."""


def encode_name(name):
    out = bytearray()
    for label in name.rstrip(".").split("."):
        if not label:
            continue
        raw = label.encode("ascii")
        if len(raw) > 63:
            raise ValueError("label too long")
        out.append(len(raw))
        out += raw
    out.append(0)
    return bytes(out)


def build_query(qid, name, qtype):
    header = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)  # RD=1
    return header + encode_name(name) + struct.pack("!HH", qtype, 1)


def read_name(msg, offset):
    """Returns (dotted name with trailing dot, offset after the name in the original position)."""
    labels = []
    jumped = False
    end = offset
    hops = 0
    while True:
        if offset >= len(msg):
            raise DNSError("truncated name")
        length = msg[offset]
        if length & 0xC0 == 0xC0:
            pointer = ((length & 0x3F) << 8) | msg[offset + 1]
            if not jumped:
                end = offset + 2
            jumped = True
            offset = pointer
            hops += 1
            if hops > 64:
                raise DNSError("compression loop")
            continue
        if length == 0:
            if not jumped:
                end = offset + 1
            break
        labels.append(msg[offset + 1:offset + 1 + length].decode("ascii", "replace"))
        offset += 1 + length
    return (".".join(labels) + ".") if labels else ".", end


def parse_rdata(msg, rtype, start, length):
    rdata = msg[start:start + length]
    if rtype == TYPE_A and length == 4:
        return socket.inet_ntop(socket.AF_INET, rdata)
    if rtype == TYPE_AAAA and length == 16:
        return socket.inet_ntop(socket.AF_INET6, rdata)
    if rtype in (TYPE_CNAME, TYPE_NS):
        return read_name(msg, start)[0]
    if rtype == TYPE_SOA:
        mname, off = read_name(msg, start)
        rname, off = read_name(msg, off)
        serial, refresh, retry, expire, minimum = struct.unpack("!IIIII", msg[off:off + 20])
        return f"{mname} {rname} {serial} {refresh} {retry} {expire} {minimum}"
    return rdata.hex()


def parse_response(msg, qid):
    if len(msg) < 12:
        raise DNSError("short response")
    rid, flags, qd, an, ns, ar = struct.unpack("!HHHHHH", msg[:12])
    if rid != qid:
        raise DNSError("id mismatch")
    offset = 12
    for _ in range(qd):
        _, offset = read_name(msg, offset)
        offset += 4
    sections = []
    for count in (an, ns):
        records = []
        for _ in range(count):
            name, offset = read_name(msg, offset)
            rtype, rclass, ttl, rdlen = struct.unpack("!HHIH", msg[offset:offset + 10])
            offset += 10
            records.append({"name": name, "type": rtype, "TTL": ttl,
                            "data": parse_rdata(msg, rtype, offset, rdlen)})
            offset += rdlen
        sections.append(records)
    return {
        "rcode": flags & 0x000F,
        "tc": bool(flags & 0x0200),
        "ra": bool(flags & 0x0080),
        "ad": bool(flags & 0x0020),
        "answer": sections[0],
        "authority": sections[1],
    }


def dns_query(server, name, qtype, timeout=2.0, tries=2):
    host, port = server
    last = None
    for _ in range(tries):
        qid = random.randint(0, 0xFFFF)
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.settimeout(timeout)
            sock.sendto(build_query(qid, name, qtype), (host, port))
            while True:
                data, _ = sock.recvfrom(65535)
                try:
                    return parse_response(data, qid)
                except DNSError as err:
                    last = err
                    if str(err) != "id mismatch":
                        break
        except OSError as err:
            last = err
        finally:
            sock.close()
    raise DNSError(f"no answer from {host}:{port}: {last}")


def resolve(server, name, qtype):
    """Resolves name/qtype following CNAMEs; returns the JSON API body as a dict."""
    qname = name if name.endswith(".") else name + "."
    answer = []
    authority = []
    status = 0
    flags = {"tc": False, "ra": True, "ad": False}
    current = qname
    seen = set()
    for _ in range(MAX_CHAIN):
        seen.add(current.lower())
        reply = dns_query(server, current, qtype)
        flags = reply
        status = reply["rcode"]
        authority = reply["authority"]
        answer.extend(reply["answer"])
        if status != 0:
            break
        # Walk the chain inside this reply.
        target = current
        for _ in range(MAX_CHAIN):
            cname = next((r for r in reply["answer"]
                          if r["type"] == TYPE_CNAME and r["name"].lower() == target.lower()), None)
            if cname is None:
                break
            target = cname["data"]
        has_final = any(r["type"] == qtype and r["name"].lower() == target.lower() for r in reply["answer"])
        if has_final or target.lower() == current.lower() or target.lower() in seen or qtype == TYPE_CNAME:
            break
        current = target  # the server stopped at a CNAME: ask for its target
    return {
        "Status": status,
        "TC": flags["tc"],
        "RD": True,
        "RA": flags["ra"],
        "AD": flags["ad"],
        "CD": False,
        "Question": [{"name": qname, "type": qtype}],
        "Answer": answer,
        "Authority": [r for r in authority if r["type"] == TYPE_SOA] if status != 0 or not any(
            r["type"] == qtype for r in answer) else [],
    }


def resolve_addresses(server, name, qtype):
    """(addresses of qtype, min TTL over the chain, rcode) for the EMAS API."""
    body = resolve(server, name, qtype)
    records = body.get("Answer") or []
    addresses = [r["data"] for r in records if r["type"] == qtype]
    if addresses:
        ttl = min(r["TTL"] for r in records)
    else:
        soa = body.get("Authority") or []
        ttl = soa[0]["TTL"] if soa else 60
    return addresses, ttl, body["Status"]


class State:
    def __init__(self, dns_server, json_secret=None, httpdns_secret=None):
        self.dns_server = dns_server
        self.json_secret = json_secret
        self.httpdns_secret = httpdns_secret
        self.lock = threading.Lock()
        self.requests = []
        self.delay_ms = 0
        self.http_status = 0
        self.reply = "normal"

    def record(self, handler, parsed):
        entry = {
            "method": handler.command,
            "path": parsed.path,
            "query": {k: v[0] if len(v) == 1 else v for k, v in parse_qs(parsed.query, keep_blank_values=True).items()},
            "headers": {k: v for k, v in handler.headers.items()},
            "time": time.time(),
        }
        with self.lock:
            self.requests.append(entry)
            if len(self.requests) > 100000:
                del self.requests[:50000]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "json-responder/1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def send_json(self, status, body, content_type="application/dns-json"):
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def drain_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)

    def do_DELETE(self):
        self.drain_body()
        state = self.server.state
        if urlsplit(self.path).path == "/_requests":
            with state.lock:
                state.requests.clear()
            self.send_json(200, {"cleared": True}, "application/json")
        else:
            self.send_json(404, {"error": "not found"}, "application/json")

    def do_POST(self):
        self.drain_body()
        self.send_json(405, {"error": "method not allowed"}, "application/json")

    def do_GET(self):
        state = self.server.state
        parsed = urlsplit(self.path)
        params = parse_qs(parsed.query, keep_blank_values=True)
        if parsed.path == "/_requests":
            with state.lock:
                body = list(state.requests)
            self.send_json(200, body, "application/json")
            return
        if parsed.path == "/_health":
            self.send_json(200, {"ok": True}, "application/json")
            return
        if parsed.path == "/_set":
            with state.lock:
                if "delay_ms" in params:
                    state.delay_ms = int(params["delay_ms"][0])
                if "http_status" in params:
                    state.http_status = int(params["http_status"][0])
                if "reply" in params:
                    state.reply = params["reply"][0] or "normal"
                body = {"delay_ms": state.delay_ms, "http_status": state.http_status, "reply": state.reply}
            self.send_json(200, body, "application/json")
            return
        emas = re.fullmatch(r"/([^/]+)/(d|sign_d)", parsed.path)
        if parsed.path not in ("/resolve", "/dns-query") and not emas:
            self.send_json(404, {"error": "unknown path"}, "application/json")
            return
        state.record(self, parsed)
        with state.lock:
            delay_ms, http_status, reply = state.delay_ms, state.http_status, state.reply
        if delay_ms:
            time.sleep(delay_ms / 1000.0)
        if http_status:
            self.send_json(http_status, {"error": f"forced status {http_status}"}, "application/json")
            return
        if reply in ("empty", "garbage"):
            raw = b"" if reply == "empty" else b"<html>not a DNS JSON answer"
            self.send_response(200)
            self.send_header("Content-Type", "application/dns-json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
            return
        if emas:
            self.answer_emas(state, params, emas.group(2) == "sign_d")
            return
        name = (params.get("name") or [""])[0]
        raw_type = (params.get("type") or ["1"])[0]
        if state.json_secret is not None and not self.json_signature_ok(state.json_secret, params, name):
            self.send_json(403, {"Status": 5, "Comment": "bad or missing signature"})
            return
        if not name:
            self.send_json(400, {"Status": 1, "Comment": "missing name"})
            return
        qtype = int(raw_type) if raw_type.isdigit() else MNEMONICS.get(raw_type.upper())
        if qtype is None:
            self.send_json(400, {"Status": 1, "Comment": f"bad type {raw_type}"})
            return
        try:
            body = resolve(state.dns_server, name, qtype)
        except (DNSError, ValueError) as err:
            body = {"Status": 2, "TC": False, "RD": True, "RA": True, "AD": False, "CD": False,
                    "Question": [{"name": name, "type": qtype}], "Comment": str(err)}
        self.send_json(200, body)


    def json_signature_ok(self, secret, params, name):
        uid, ak, ts, key = (((params.get(k) or [""])[0]) for k in ("uid", "ak", "ts", "key"))
        if not (uid and ak and ts and key) or not ts.isdigit() or abs(time.time() - int(ts)) > 300:
            return False
        return hashlib.sha256((uid + secret + ts + name + ak).encode()).hexdigest() == key.lower()

    def answer_emas(self, state, params, signed):
        host = (params.get("host") or [""])[0]
        if not host:
            self.send_json(400, {"code": "MissingArgument"}, "application/json")
            return
        if signed:
            t = (params.get("t") or [""])[0]
            sig = (params.get("s") or [""])[0]
            if state.httpdns_secret is None or not t.isdigit():
                self.send_json(403, {"code": "InvalidSignature"}, "application/json")
                return
            if int(t) < time.time():
                self.send_json(403, {"code": "SignatureExpired"}, "application/json")
                return
            expected = hashlib.md5(f"{host}-{state.httpdns_secret}-{t}".encode()).hexdigest()
            if sig.lower() != expected:
                self.send_json(403, {"code": "InvalidSignature"}, "application/json")
                return
        elif state.httpdns_secret is not None:
            self.send_json(403, {"code": "InvalidAccount"}, "application/json")
            return
        families = (params.get("query") or ["4"])[0].split(",")
        body = {"host": host, "ips": [], "ipsv6": [], "client_ip": self.client_address[0]}
        ttls = []
        try:
            for family in families:
                qtype = TYPE_AAAA if family.strip() == "6" else TYPE_A
                addresses, ttl, _ = resolve_addresses(state.dns_server, host, qtype)
                body["ipsv6" if qtype == TYPE_AAAA else "ips"] = addresses
                ttls.append(ttl)
        except (DNSError, ValueError) as err:
            self.send_json(500, {"code": "InternalError", "message": str(err)}, "application/json")
            return
        body["ttl"] = body["origin_ttl"] = min(ttls) if ttls else 60
        self.send_json(200, body, "application/json")


def parse_server(text):
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen-host", default="127.0.0.1")
    parser.add_argument("--listen-port", type=int, default=8054)
    parser.add_argument("--dns", default="127.0.0.1:5353", help="DNS server host:port (loopback)")
    parser.add_argument("--json-secret", help="require Alibaba-signed /resolve requests with this accessKeySecret")
    parser.add_argument("--httpdns-secret", help="accept EMAS sign_d requests signed with this secret (and refuse d)")
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.listen_host, args.listen_port), Handler)
    server.daemon_threads = True
    server.state = State(parse_server(args.dns), args.json_secret, args.httpdns_secret)
    host, port = server.server_address[:2]
    print(f"json_responder listening on {host}:{port} dns {args.dns}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
