#!/usr/bin/env python3
"""A plain DNS client for the integration tests, independent of httpdnsd's code: dnspython's
UDP and TCP clients (`dns.query.udp`, `dns.query.tcp`).

Each --query NAME/TYPE is asked in order, over UDP (--tcp: all of them over one TCP
connection, RFC 7766). With --raw-first HEX, those bytes are sent first over the same
transport (a malformed packet: no answer is expected over UDP). With --ecs ADDRESS/PREFIX,
each query carries an EDNS Client Subnet; --payload N sets the EDNS UDP size (no EDNS when
neither is given). With --pipeline (TCP), every query is sent before any reply is read, and
the replies, which may come in any order, are matched to the queries by ID.

Prints one JSON object per line and query: id, query_id, rcode, tc (the TC flag), answer
(one object per record: name, type, ttl, data).
"""
import argparse
import json
import random
import socket

import dns.edns
import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype


def records(section):
    return [
        {"name": rrset.name.to_text(), "type": dns.rdatatype.to_text(rrset.rdtype), "ttl": rrset.ttl, "data": rdata.to_text()}
        for rrset in section
        for rdata in rrset
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--query", action="append", required=True, help="NAME/TYPE")
    parser.add_argument("--tcp", action="store_true")
    parser.add_argument("--ecs")
    parser.add_argument("--payload", type=int)
    parser.add_argument("--raw-first")
    parser.add_argument("--pipeline", action="store_true")
    args = parser.parse_args()

    server = "127.0.0.1"
    sock = None
    if args.tcp:
        sock = socket.create_connection((server, args.port), timeout=10)
    if args.raw_first:
        raw = bytes.fromhex(args.raw_first)
        if args.tcp:
            sock.sendall(len(raw).to_bytes(2, "big") + raw)
        else:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                udp.sendto(raw, (server, args.port))
    queries = [make_query(item, args) for item in args.query]
    if args.pipeline:
        # Unique IDs, so that each reply finds its query.
        for index, query in enumerate(queries):
            query.id = index + 1
        for query in queries:
            dns.query.send_tcp(sock, query)
        replies = {}
        for _ in queries:
            reply, _ = dns.query.receive_tcp(sock)
            replies[reply.id] = reply
        for query in queries:
            reply = replies[query.id]
            if not query.is_response(reply):
                raise SystemExit(f"reply {reply.id} does not answer its query")
            report(query, reply)
        sock.close()
        return
    for query in queries:
        if args.tcp:
            reply = dns.query.tcp(query, server, port=args.port, timeout=10, sock=sock)
        else:
            reply = dns.query.udp(query, server, port=args.port, timeout=10, ignore_trailing=False, raise_on_truncation=False)
        report(query, reply)
    if sock:
        sock.close()


def make_query(item, args):
    name, rdtype = item.split("/")
    options = []
    if args.ecs:
        address, prefix = args.ecs.split("/")
        options.append(dns.edns.ECSOption(address, int(prefix)))
    if options or args.payload:
        query = dns.message.make_query(name, rdtype, use_edns=0, options=options, payload=args.payload or 1232)
    else:
        query = dns.message.make_query(name, rdtype)
    query.id = random.randint(1, 65535)
    return query


def report(query, reply):
    print(json.dumps({
        "query_id": query.id,
        "id": reply.id,
        "rcode": dns.rcode.to_text(reply.rcode()),
        "tc": bool(reply.flags & dns.flags.TC),
        "answer": records(reply.answer),
    }), flush=True)


if __name__ == "__main__":
    main()
