"""The C forwarder of section (4f) (`bench/baseline/forwarder.c`) against a small RFC 8484 upstream
of this file on loopback: it sends the query for the request's `host` over one keep-alive
connection and answers with the upstream's DNS message; no host is a 400 and an upstream failure
a 502. Compiled with gcc and libmicrohttpd, as `servers.build` does."""

import base64
import http.server
import os
import shutil
import subprocess
import tempfile
import threading
import unittest

from .clients import dns_wire, http_get
from .processes import free_port, wait_until
from .settings import BENCH_DIR


class Upstream(http.server.ThreadingHTTPServer):
    """Answers `GET /dns-query?dns=` with the query, QR set (or 500 for a name starting `fail`);
    records each query and each connection it accepted."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), UpstreamHandler)
        self.queries, self.connections = [], 0


class UpstreamHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.server.connections += 1

    def do_GET(self):
        encoded = self.path.split("?dns=", 1)[1]
        query = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        self.server.queries.append(query)
        if b"\x04fail" in query:
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        reply = query[:2] + bytes([query[2] | 0x80]) + query[3:]
        self.send_response(200)
        self.send_header("Content-Type", "application/dns-message")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


@unittest.skipUnless(shutil.which("gcc") and shutil.which("pkg-config"), "needs gcc and pkg-config")
class ForwarderTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="forwarder-test-")
        binary = os.path.join(cls.work, "forwarder")
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmicrohttpd"], check=True,
                               capture_output=True, text=True).stdout.split()
        subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", binary,
                        os.path.join(BENCH_DIR, "baseline", "forwarder.c")] + flags + ["-lpthread"], check=True)
        cls.upstream = Upstream()
        threading.Thread(target=cls.upstream.serve_forever, daemon=True).start()
        cls.port = free_port()
        cls.process = subprocess.Popen([binary, str(cls.port), "1", "16384", str(cls.upstream.server_address[1])],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: http_get(cls.port, "/")[0] == 400, 15, "forwarder", cls.process)

    @classmethod
    def tearDownClass(cls):
        cls.process.terminate()
        cls.process.wait(timeout=10)
        cls.upstream.shutdown()
        cls.upstream.server_close()
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_answers_with_the_upstreams_message_for_the_hosts_query(self):
        status, body, headers = http_get(self.port, "/v1/any/resolve?host=a.example.test")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "application/dns-message")
        query = dns_wire("a.example.test")
        self.assertEqual(self.upstream.queries[-1], query)
        self.assertEqual(body, query[:2] + bytes([query[2] | 0x80]) + query[3:])

    def test_requests_share_one_keep_alive_upstream_connection(self):
        http_get(self.port, "/?host=first.test")
        connections = self.upstream.connections
        for name in ("second.test", "third.test"):
            self.assertEqual(http_get(self.port, f"/?host={name}")[0], 200)
        self.assertEqual(self.upstream.connections, connections)
        self.assertEqual(self.upstream.queries[-1], dns_wire("third.test"))

    def test_no_host_is_a_400_and_an_upstream_failure_a_502(self):
        self.assertEqual(http_get(self.port, "/resolve")[0], 400)
        self.assertEqual(http_get(self.port, "/?host=fail.test")[0], 502)
        self.assertEqual(http_get(self.port, "/?host=a..b")[0], 502)
        self.assertEqual(http_get(self.port, "/?host=after.test")[0], 200)
