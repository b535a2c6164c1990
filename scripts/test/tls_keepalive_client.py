#!/usr/bin/env python3
"""One HTTPS keep-alive connection across a certificate rotation (driven by TLSListenerTests).

usage: tls_keepalive_client.py PORT CA_FILE STATE_DIR

Connects to 127.0.0.1:PORT verifying the name "localhost" against CA_FILE, sends GET /healthz,
writes STATE_DIR/first.json ({"status", "serial"}), waits (at most 60 s) for STATE_DIR/go to exist,
sends a second GET /healthz on the same connection and writes STATE_DIR/second.json. Any
failure is written as {"error": "..."} in the file of the step that failed.
"""
import json
import os
import socket
import ssl
import sys
import time


def get(conn):
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            raise RuntimeError("connection closed before a response head")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(4096)
        if not chunk:
            raise RuntimeError("connection closed in the body")
        body += chunk
    return status


def serial(conn):
    return conn.getpeercert()["serialNumber"].lower().lstrip("0") or "0"


def write(path, value):
    with open(path + ".tmp", "w") as f:
        json.dump(value, f)
    os.rename(path + ".tmp", path)


def main():
    port, ca, state = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    step = os.path.join(state, "first.json")
    try:
        context = ssl.create_default_context(cafile=ca)
        raw = socket.create_connection(("127.0.0.1", port), timeout=20)
        conn = context.wrap_socket(raw, server_hostname="localhost")
        write(step, {"status": get(conn), "serial": serial(conn)})
        deadline = time.monotonic() + 60
        while not os.path.exists(os.path.join(state, "go")):
            if time.monotonic() > deadline:
                raise RuntimeError("no go file within 60 s")
            time.sleep(0.05)
        step = os.path.join(state, "second.json")
        write(step, {"status": get(conn), "serial": serial(conn)})
    except Exception as error:  # reported to the test, which fails on it
        write(step, {"error": repr(error)})


main()
