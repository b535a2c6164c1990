"""The small clients the run checks and feeds its servers with: HTTP/1.1 to 127.0.0.1, a DNS
query over UDP, a /metrics reader, and signature v1 as docs/security.md specifies it (written
from the document, so that the benchmark also checks the server against its specification)."""

import base64
import hashlib
import hmac
import http.client
import json
import random
import socket
import ssl
import struct
import urllib.parse


def http_get(port, path, timeout=10):
    """`GET path` on 127.0.0.1:`port`; returns (status, body, headers)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        connection.close()


def http_post_json(port, path, payload, timeout=600, signer=None):
    """`POST path` with `payload` as JSON; returns (status, body). `signer(method, path, body)`,
    when given, returns the signature arguments to append."""
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


def dns_wire(name, qid=0):
    """An A query for `name` in DNS wire format (RD set, one question)."""
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


def dot_ask(port, name, cafile, timeout=5.0):
    """Returns (rcode, answer count) of an A query over DNS over TLS (RFC 7858: the two-byte
    length, then the message), the server's certificate verified against `cafile` as localhost."""
    qid = random.randrange(65536)
    query = dns_wire(name, qid)
    context = ssl.create_default_context(cafile=cafile)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as s:
            s.sendall(struct.pack("!H", len(query)) + query)
            data = b""
            while len(data) < 2 or len(data) < 2 + struct.unpack("!H", data[:2])[0]:
                chunk = s.recv(4096)
                if not chunk:
                    raise OSError("DoT connection closed before the answer")
                data += chunk
    _, flags, _, ancount, _, _ = struct.unpack("!HHHHHH", data[2:14])
    return flags & 0xF, ancount


def b64url_query(name):
    """`name`'s A query as RFC 8484's `dns=` argument (base64url, no padding)."""
    return base64.urlsafe_b64encode(dns_wire(name)).rstrip(b"=").decode()


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


def metrics(port):
    """The /metrics of 127.0.0.1:`port` as {series with its labels: value}."""
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


def family_sum(values, name):
    """A /metrics family's total: its series without an `account` label (the operations listener
    repeats them per account)."""
    return sum(v for k, v in values.items() if (k == name or k.startswith(name + "{")) and 'account="' not in k)
