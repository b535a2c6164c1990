#!/usr/bin/env python3
"""A deliberately slow RFC 8484 upstream for the benchmark's "slow upstream" measurement.

Serves ``GET /dns-query?dns=BASE64URL`` over plain HTTP/1.1 (keep-alive): waits the current
delay, then forwards the query over UDP to a loopback DNS server (the benchmark's caching
unbound) and returns its answer as ``application/dns-message``.

``GET /_delay?ms=N`` sets the delay (0 at start, so that the benchmark can warm names through
it quickly); ``GET /_health`` answers 200. Standard library only::

    slow_doh.py --port 8055 --dns 127.0.0.1:5353
"""

import argparse
import asyncio
import base64
import sys
from urllib.parse import parse_qs, urlsplit

DELAY = {"seconds": 0.0}


class _Exchange(asyncio.DatagramProtocol):
    def __init__(self, query, future):
        self.query = query
        self.future = future

    def connection_made(self, transport):
        transport.sendto(self.query)

    def datagram_received(self, data, addr):
        if not self.future.done():
            self.future.set_result(data)

    def error_received(self, exc):
        if not self.future.done():
            self.future.set_exception(exc)


async def ask_dns(query, host, port, timeout=5.0):
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    transport, _ = await loop.create_datagram_endpoint(
        lambda: _Exchange(query, future), remote_addr=(host, port))
    try:
        return await asyncio.wait_for(future, timeout)
    finally:
        transport.close()


def response(status, body, content_type):
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 502: "Bad Gateway"}.get(status, "Error")
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n")
    return head.encode("ascii") + body


async def handle_request(target, dns_host, dns_port):
    parts = urlsplit(target)
    query = parse_qs(parts.query)
    if parts.path == "/_health":
        return response(200, b'{"ok":true}', "application/json")
    if parts.path == "/_delay":
        DELAY["seconds"] = int(query.get("ms", ["0"])[0]) / 1000.0
        return response(200, b'{"ok":true}', "application/json")
    if parts.path != "/dns-query" or "dns" not in query:
        return response(404, b"not found", "text/plain")
    encoded = query["dns"][0]
    try:
        wire = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except ValueError:
        return response(400, b"bad dns parameter", "text/plain")
    if DELAY["seconds"] > 0:
        await asyncio.sleep(DELAY["seconds"])
    try:
        answer = await ask_dns(wire, dns_host, dns_port)
    except (OSError, asyncio.TimeoutError):
        return response(502, b"upstream failed", "text/plain")
    return response(200, answer, "application/dns-message")


async def serve_connection(reader, writer, dns_host, dns_port):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            length = 0
            close = False
            for line in lines[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                if name == "content-length":
                    length = int(value.strip())
                elif name == "connection" and value.strip().lower() == "close":
                    close = True
            if length:
                await reader.readexactly(length)
            if method != "GET":
                writer.write(response(404, b"GET only", "text/plain"))
            else:
                writer.write(await handle_request(target, dns_host, dns_port))
            await writer.drain()
            if close:
                break
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dns", required=True, help="host:port of the DNS server to forward to (loopback)")
    args = parser.parse_args()
    dns_host, _, dns_port = args.dns.rpartition(":")
    if not dns_host.startswith("127."):
        sys.exit("slow_doh: --dns must be on loopback")
    server = await asyncio.start_server(
        lambda r, w: serve_connection(r, w, dns_host, int(dns_port)), "127.0.0.1", args.port, backlog=1024)
    print(f"slow_doh listening on 127.0.0.1:{args.port}, forwarding to {args.dns}", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
