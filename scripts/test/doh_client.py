#!/usr/bin/env python3
"""An RFC 8484 client for the integration tests, independent of httpdnsd's code: dnspython's
DoH client (`dns.query.https`, over httpx), GET or POST.

Prints one JSON object: id (the reply's, which dnspython has already matched to the query's),
rcode, answer and authority (one object per record: name, type, ttl, data).
"""
import argparse
import json
import random

import dns.edns
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
    parser.add_argument("--url", required=True, help="the DoH endpoint, e.g. https://localhost:8443/dns-query")
    parser.add_argument("--name", required=True)
    parser.add_argument("--type", default="A")
    parser.add_argument("--method", choices=["get", "post"], default="post")
    parser.add_argument("--cacert", help="CA bundle to verify an https:// endpoint with")
    parser.add_argument("--ecs", help="an EDNS Client Subnet to send, ADDRESS/PREFIX")
    args = parser.parse_args()

    options = []
    if args.ecs:
        address, prefix = args.ecs.split("/")
        options.append(dns.edns.ECSOption(address, int(prefix)))
    query = dns.message.make_query(args.name, args.type, use_edns=0 if options else None, options=options)
    query.id = random.randint(1, 65535)
    reply = dns.query.https(
        query, args.url, timeout=10, post=args.method == "post", verify=args.cacert if args.cacert else True)
    print(json.dumps({
        "query_id": query.id,
        "id": reply.id,
        "rcode": dns.rcode.to_text(reply.rcode()),
        "answer": records(reply.answer),
        "authority": records(reply.authority),
    }))


if __name__ == "__main__":
    main()
