#!/usr/bin/env python3
"""An encrypted-request client for the integration tests, independent of httpdnsd's code:
AES-256-GCM from Python's `cryptography` package, HTTP from urllib, the format of
docs/encryption.md (its client example, plus switches to tamper with what is sent).

Prints one JSON object: status, content_type, sealed (the answer was application/octet-stream),
opened (a sealed answer decrypted under the expected associated data), body (the answer's JSON,
decrypted when sealed).
"""
import argparse
import base64
import json
import os
import urllib.error
import urllib.request

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def seal(key: bytes, plaintext: bytes, aad: str) -> bytes:
    nonce = os.urandom(12)
    return nonce + AESGCM(key).encrypt(nonce, plaintext, aad.encode())


def unseal(key: bytes, sealed: bytes, aad: str) -> bytes:
    return AESGCM(key).decrypt(sealed[:12], sealed[12:], aad.encode())


def flip(data: bytes, index: int) -> bytes:
    changed = bytearray(data)
    changed[index] ^= 0x01
    return bytes(changed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--key", required=True, help="64 hex digits")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--path", required=True)
    parser.add_argument("--query", default="", help="the query string to encrypt")
    parser.add_argument("--body", default="", help="a request body to encrypt (text)")
    parser.add_argument("--tamper", choices=["enc", "body"], help="flip one bit of the sealed query or body")
    parser.add_argument("--prepare", action="store_true",
                        help="only seal: print enc, the sealed body (hex) and N, for a caller that signs and sends")
    parser.add_argument("--open-answer", metavar="HEX", help="only open this sealed answer (with --n): print its JSON")
    parser.add_argument("--n", help="base64url of the request's nonce, for --open-answer")
    args = parser.parse_args()

    key = bytes.fromhex(args.key)
    method, path = args.method, args.path
    if args.open_answer is not None:
        try:
            data = unseal(key, bytes.fromhex(args.open_answer), f"httpdns-enc-v1 answer {method} {path} {args.n}")
            print(json.dumps({"opened": True, "body": json.loads(data)}))
        except InvalidTag:
            print(json.dumps({"opened": False, "body": None}))
        return
    sealed_query = seal(key, args.query.encode(), f"httpdns-enc-v1 query {method} {path}")
    n = b64url(sealed_query[:12])
    body = b""
    if args.body:
        body = seal(key, args.body.encode(), f"httpdns-enc-v1 body {method} {path} {n}")
    if args.tamper == "enc":
        sealed_query = flip(sealed_query, 14)  # a ciphertext byte
    if args.tamper == "body":
        body = flip(body, len(body) - 1)  # a tag byte
    if args.prepare:
        print(json.dumps({"enc": b64url(sealed_query), "body_hex": body.hex(), "n": n}))
        return
    request = urllib.request.Request(f"{args.base}{path}?enc={b64url(sealed_query)}", data=body or None, method=method)
    try:
        response = urllib.request.urlopen(request, timeout=15)
    except urllib.error.HTTPError as error:
        response = error
    status, content_type, data = response.status, response.headers.get("Content-Type", ""), response.read()
    sealed = content_type == "application/octet-stream"
    opened = False
    if sealed:
        try:
            data = unseal(key, data, f"httpdns-enc-v1 answer {method} {path} {n}")
            opened = True
        except InvalidTag:
            data = b"null"
    try:
        parsed = json.loads(data)
    except ValueError:
        parsed = data.decode("utf-8", "replace")
    print(json.dumps({"status": status, "content_type": content_type, "sealed": sealed, "opened": opened, "body": parsed}))


if __name__ == "__main__":
    main()
