#!/usr/bin/env python3
"""Slow clients from one address or several (driven by SlowClientTests and LibraryLogTests).

usage: slow_clients.py PORT SOURCE COUNT INTERVAL DURATION OUT [STATE_DIR]

Opens COUNT connections from SOURCE (e.g. 127.0.0.2, or 127.0.0.2,127.0.0.3 to take the
addresses in turn) to 127.0.0.1:PORT, then, for DURATION
seconds, sends each connection still open one more byte of a request head that never ends,
every INTERVAL seconds, and notices when the server closes one. Writes OUT as JSON:
opened, connect_failed, closed (by the server during the run), open_at_end, max_open (open
at once, as this client saw it).

With STATE_DIR the test, not the clock, sets the pace: the script opens its connections once
STATE_DIR/go exists, then writes STATE_DIR/holding.json ({"opened", "open"}) and holds them
(sending as above) until STATE_DIR/stop exists, looking for each file every 50 ms. DURATION
then only bounds the whole run, so that an abandoned script ends: past it, the script exits
with status 1 and writes no OUT.
"""
import errno
import json
import os
import resource
import select
import socket
import sys
import time

HEAD = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 100000


class SlowClients:
    """The open connections, and what happened to them so far."""

    def __init__(self):
        self.poller = select.poll()
        self.sockets = {}
        self.sent = {}
        self.opened = 0
        self.connect_failed = 0
        self.closed = 0
        self.max_open = 0

    def open(self, port, sources, count):
        for index in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((sources[index % len(sources)], 0))
                s.settimeout(5)
                s.connect(("127.0.0.1", port))
                s.setblocking(False)
            except OSError:
                self.connect_failed += 1
                s.close()
                continue
            self.opened += 1
            self.sockets[s.fileno()] = s
            self.sent[s.fileno()] = 0
            self.poller.register(s.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR)
            self.max_open = max(self.max_open, len(self.sockets))
            if len(self.sockets) % 32 == 0:
                self.drain(0)
        self.drain(0)

    def close(self, fd):
        self.poller.unregister(fd)
        self.sockets.pop(fd).close()
        self.sent.pop(fd, None)
        self.closed += 1

    def drain(self, timeout_ms):
        """Waits up to `timeout_ms` for the server to send or close; forgets what it closed."""
        for fd, _ in self.poller.poll(timeout_ms):
            if fd not in self.sockets:
                continue
            try:
                if self.sockets[fd].recv(4096) == b"":
                    self.close(fd)
            except BlockingIOError:
                pass
            except OSError:
                self.close(fd)

    def send_one_byte_each(self):
        for fd in list(self.sockets):
            try:
                self.sockets[fd].send(HEAD[self.sent[fd]:self.sent[fd] + 1])
                self.sent[fd] += 1
            except BlockingIOError:
                pass
            except OSError as error:
                if error.errno in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN):
                    self.close(fd)

    def result(self):
        return {"opened": self.opened, "connect_failed": self.connect_failed, "closed": self.closed,
                "open_at_end": len(self.sockets), "max_open": self.max_open}


def write(path, value):
    with open(path + ".tmp", "w") as f:
        json.dump(value, f)
    os.rename(path + ".tmp", path)


def signalled(state, name, bound):
    """Whether STATE_DIR/name exists; exits with status 1 once `bound` has passed without it."""
    if os.path.exists(os.path.join(state, name)):
        return True
    if time.monotonic() >= bound:
        sys.exit("slow_clients.py: no %s file in %s within the run's bound" % (name, state))
    return False


def main():
    port, sources, count = int(sys.argv[1]), sys.argv[2].split(","), int(sys.argv[3])
    interval, duration, out = float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
    state = sys.argv[7] if len(sys.argv) > 7 else None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = count + 256
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))

    bound = time.monotonic() + duration
    while state and not signalled(state, "go", bound):
        time.sleep(0.05)
    clients = SlowClients()
    clients.open(port, sources, count)
    if state:
        write(os.path.join(state, "holding.json"), {"opened": clients.opened, "open": len(clients.sockets)})

    end = time.monotonic() + duration
    next_byte = time.monotonic()
    while not (signalled(state, "stop", bound) if state else time.monotonic() >= end):
        if time.monotonic() >= next_byte:
            clients.send_one_byte_each()
            next_byte = time.monotonic() + interval
        clients.max_open = max(clients.max_open, len(clients.sockets))
        clients.drain(50)
    # Counts the closes that came since the last look: open_at_end is what the server left open
    # when the run ended.
    clients.drain(0)

    with open(out, "w") as f:
        json.dump(clients.result(), f)
    for s in clients.sockets.values():
        s.close()


main()
