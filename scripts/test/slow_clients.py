#!/usr/bin/env python3
"""Slow clients from one address or several (driven by SlowClientTests).

usage: slow_clients.py PORT SOURCE COUNT INTERVAL DURATION OUT

Opens COUNT connections from SOURCE (e.g. 127.0.0.2, or 127.0.0.2,127.0.0.3 to take the
addresses in turn) to 127.0.0.1:PORT, then, for DURATION
seconds, sends each connection still open one more byte of a request head that never ends,
every INTERVAL seconds, and notices when the server closes one. Writes OUT as JSON:
opened, connect_failed, closed (by the server during the run), open_at_end, max_open (open
at once, as this client saw it).
"""
import errno
import json
import resource
import select
import socket
import sys
import time


def main():
    port, sources, count = int(sys.argv[1]), sys.argv[2].split(","), int(sys.argv[3])
    interval, duration, out = float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = count + 256
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))

    head = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 100000
    poller = select.poll()
    sockets = {}
    sent = {}
    connect_failed = 0
    closed = 0
    max_open = 0

    def close(fd):
        nonlocal closed
        poller.unregister(fd)
        sockets.pop(fd).close()
        sent.pop(fd, None)
        closed += 1

    def drain(timeout_ms):
        for fd, _ in poller.poll(timeout_ms):
            if fd not in sockets:
                continue
            try:
                if sockets[fd].recv(4096) == b"":
                    close(fd)
            except BlockingIOError:
                pass
            except OSError:
                close(fd)

    for index in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((sources[index % len(sources)], 0))
            s.settimeout(5)
            s.connect(("127.0.0.1", port))
            s.setblocking(False)
        except OSError:
            connect_failed += 1
            s.close()
            continue
        sockets[s.fileno()] = s
        sent[s.fileno()] = 0
        poller.register(s.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR)
        max_open = max(max_open, len(sockets))
        if len(sockets) % 32 == 0:
            drain(0)
    opened = count - connect_failed

    end = time.monotonic() + duration
    next_byte = time.monotonic()
    while time.monotonic() < end:
        if time.monotonic() >= next_byte:
            for fd in list(sockets):
                try:
                    sockets[fd].send(head[sent[fd]:sent[fd] + 1])
                    sent[fd] += 1
                except BlockingIOError:
                    pass
                except OSError as error:
                    if error.errno in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN):
                        close(fd)
            next_byte = time.monotonic() + interval
        max_open = max(max_open, len(sockets))
        drain(100)

    result = {"opened": opened, "connect_failed": connect_failed, "closed": closed,
              "open_at_end": len(sockets), "max_open": max_open}
    with open(out, "w") as f:
        json.dump(result, f)
    for s in sockets.values():
        s.close()


main()
