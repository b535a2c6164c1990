#!/usr/bin/env python3
"""A DNS over TLS client for the integration tests, independent of httpdnsd's code: dnspython's
`dns.query.tls` over Python's ssl module, verifying the server's certificate against --ca for
--server-name (which is also the TLS server name sent, SNI).

Modes:
- default: each --query NAME/TYPE asked in order with `dns.query.tls`, all over one TLS
  connection (--source ADDRESS binds the client's address).
- --pipeline: every query written on one connection before any reply is read; the replies
  are reported in the order they arrive (field "arrival"), matched to their queries by ID.
- --idle: one query, then no more; reports how many seconds pass until the server closes the
  connection ("closed_after"), giving up after --wait seconds.
- --max-version 1.1: only a handshake limited to that TLS version (and older) is tried;
  reports {"handshake": "ok"|"failed", "error": ...}.

Prints one JSON object per line: for each query id, query_id, rcode, answer (type, data) and
arrival; or the mode's own object.
"""
import argparse
import json
import random
import socket
import ssl
import time
import warnings

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype


def records(section):
    return [{"type": dns.rdatatype.to_text(rrset.rdtype), "data": rdata.to_text()} for rrset in section for rdata in rrset]


def report(query, reply, arrival):
    print(json.dumps({
        "query_id": query.id,
        "id": reply.id,
        "rcode": dns.rcode.to_text(reply.rcode()),
        "answer": records(reply.answer),
        "arrival": arrival,
    }), flush=True)


def context(args):
    ctx = ssl.create_default_context(cafile=args.ca)
    if args.max_version == "1.1":
        warnings.simplefilter("ignore", DeprecationWarning)
        # The client's own floor must come down for it to offer TLS 1.1 at all.
        ctx.set_ciphers("DEFAULT@SECLEVEL=0")
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    return ctx


def connect(args):
    raw = socket.create_connection(("127.0.0.1", args.port), timeout=args.wait,
                                   source_address=(args.source, 0) if args.source else None)
    return context(args).wrap_socket(raw, server_hostname=args.server_name)


def make_query(item):
    name, rdtype = item.split("/")
    query = dns.message.make_query(name, rdtype)
    query.id = random.randint(1, 65535)
    return query


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--server-name", required=True)
    parser.add_argument("--query", action="append", default=[])
    parser.add_argument("--source")
    parser.add_argument("--pipeline", action="store_true")
    parser.add_argument("--idle", action="store_true")
    parser.add_argument("--max-version")
    parser.add_argument("--wait", type=float, default=10)
    args = parser.parse_args()

    if args.max_version:
        try:
            with connect(args) as sock:
                print(json.dumps({"handshake": "ok", "version": sock.version()}), flush=True)
        except (ssl.SSLError, OSError) as error:
            print(json.dumps({"handshake": "failed", "error": str(error)}), flush=True)
        return

    queries = [make_query(item) for item in args.query]
    with connect(args) as sock:
        if args.pipeline:
            for index, query in enumerate(queries):
                query.id = index + 1
            for query in queries:
                dns.query.send_tcp(sock, query)
            replies = {}
            for arrival in range(len(queries)):
                reply, _ = dns.query.receive_tcp(sock, expiration=time.time() + args.wait)
                replies[reply.id] = (reply, arrival)
            for query in queries:
                reply, arrival = replies[query.id]
                if not query.is_response(reply):
                    raise SystemExit(f"reply {reply.id} does not answer its query")
                report(query, reply, arrival)
            return
        for arrival, query in enumerate(queries):
            reply = dns.query.tls(query, "127.0.0.1", port=args.port, timeout=args.wait, sock=sock)
            report(query, reply, arrival)
        if args.idle:
            started = time.monotonic()
            sock.settimeout(args.wait)
            try:
                while sock.recv(1):
                    pass
                closed = time.monotonic() - started
            except (socket.timeout, TimeoutError):
                closed = None
            except (ssl.SSLError, OSError):
                closed = time.monotonic() - started
            print(json.dumps({"closed_after": closed}), flush=True)


if __name__ == "__main__":
    main()
