#!/usr/bin/env python3
"""Floods an httpdnsd account with signed requests, each with its own signature (signature v1,
docs/security.md), from many loopback source addresses, one keep-alive connection each.

usage: signed_flood.py PORT ACCOUNT KID SECRET MODE ADDRESSES PER_ADDRESS OUT.json

MODE dns: POST /v1/ACCOUNT/dns-query, a DNS query for www.example.test A whose message id
differs per request (so does the body, so does the signature), signed in the Authorization
header. MODE delete: DELETE /v1/ACCOUNT/cache?host=hN.example.test. Sources are 127.0.1.1,
127.0.1.2, ... (the kernel lets a socket bind any 127.x address). Writes {"statuses":{...}}.
"""

import hashlib
import hmac
import http.client
import json
import struct
import sys
import threading
import time


def dns_query(message_id):
    header = struct.pack(">HHHHHH", message_id, 0x0100, 1, 0, 0, 0)
    name = b"".join(bytes([len(label)]) + label.encode() for label in "www.example.test".split(".")) + b"\0"
    return header + name + struct.pack(">HH", 1, 1)


def sign(secret, method, path, query, t, body):
    canonical = "\n".join(["HTTPDNS-HMAC-SHA256", method, path, query, t, hashlib.sha256(body).hexdigest()])
    return hmac.new(secret.encode(), canonical.encode(), hashlib.sha256).hexdigest()


def main():
    port, account, kid, secret, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
    addresses, per_address, out = int(sys.argv[6]), int(sys.argv[7]), sys.argv[8]
    t = str(int(time.time()) + 300)
    statuses = {}
    lock = threading.Lock()

    def flood(index):
        source = "127.0.1.%d" % (index + 1)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
        seen = {}
        for number in range(per_address):
            serial = index * per_address + number
            if mode == "dns":
                path, query, body = "/v1/%s/dns-query" % account, "", dns_query(serial % 65536)
                method, headers = "POST", {"Content-Type": "application/dns-message"}
            else:
                path, query, body = "/v1/%s/cache" % account, "host=h%d.example.test" % serial, b""
                method, headers = "DELETE", {}
            signature = sign(secret, method, path, query, t, body)
            headers["Authorization"] = "HTTPDNS-HMAC-SHA256 kid=%s,t=%s,sign=%s" % (kid, t, signature)
            try:
                connection.request(method, path + ("?" + query if query else ""), body=body or None, headers=headers)
                response = connection.getresponse()
                response.read()
                key = str(response.status)
            except (OSError, http.client.HTTPException) as error:
                key = type(error).__name__
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
            seen[key] = seen.get(key, 0) + 1
        connection.close()
        with lock:
            for key, count in seen.items():
                statuses[key] = statuses.get(key, 0) + count

    threads = [threading.Thread(target=flood, args=(index,)) for index in range(addresses)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with open(out, "w") as handle:
        json.dump({"statuses": statuses}, handle)


if __name__ == "__main__":
    main()
