"""Section (7): the hits of (1) over HTTPS against (7b), the C baseline over HTTPS with the same
certificate and TLS settings: what TLS costs httpdnsd beside what it costs libmicrohttpd."""

import http.client
import os
import ssl
import subprocess

from .load import summarize, wrk
from .processes import free_port, wait_until
from .servers import HTTPDNSD
from .settings import CONNECTION_MEMORY, log


def make_certificate(work):
    """The run's certificate (self-signed, ECDSA P-256, for localhost and 127.0.0.1), made by
    openssl into WORK/tls once; returns (certificate, key) paths. (7) and (15) serve it."""
    directory = os.path.join(work, "tls")
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    if not os.path.exists(cert):
        os.makedirs(directory, exist_ok=True)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       check=True, capture_output=True)
    return cert, key


class TLSSection:
    """(7): the hits of (1) over HTTPS (TLS 1.2/1.3, keep-alive: one handshake per connection), on
    an httpdnsd of its own with the same names, against (7b), the baseline over HTTPS with the same
    certificate (ECDSA P-256, made here by openssl) and TLS settings."""

    def __init__(self, work, processes, binary, baseline_bin, upstream, names, body_file):
        """Makes the certificate, starts and warms the TLS instance and starts the TLS baseline."""
        self.processes = processes
        self.cert, self.key = make_certificate(work)
        self.tls_port = free_port()
        self.httpdnsd = HTTPDNSD(processes, work, binary, "httpdnsd-tls", {"bench": upstream},
                                 cache_limit=max(2 * len(names), 100_000),
                                 extra={"listen": f"127.0.0.1:{self.tls_port}", "tlsCert": self.cert,
                                        "tlsKey": self.key})
        self.httpdnsd.start()
        seconds = self.httpdnsd.preload("bench", names)
        log(f"(7) warmed {len(names)} names into the TLS instance in {seconds:.1f} s")
        self.baseline_port = free_port()
        threads = os.cpu_count() or 1
        self.baseline = processes.start("baseline-tls", [baseline_bin, str(self.baseline_port), str(threads), str(CONNECTION_MEMORY), body_file,
                                                         self.cert, self.key])
        wait_until(lambda: self.handshake_ok(self.baseline_port), 15, "baseline-tls", self.baseline)
        if not self.handshake_ok(self.tls_port):
            raise RuntimeError("(7) httpdnsd does not answer over HTTPS")
        self.runs, self.base_runs = [], []

    def handshake_ok(self, port):
        """Whether `GET /healthz` over HTTPS, verified against the certificate, answers 200."""
        context = ssl.create_default_context(cafile=self.cert)
        try:
            connection = http.client.HTTPSConnection("localhost", port, timeout=5, context=context)
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200
        except OSError:
            return False

    def measure(self, hit_env):
        """One run of (7) and one of (7b), back to back."""
        self.runs.append(wrk(self.tls_port, "cycle.lua", hit_env, label="(7) httpdnsd hits over TLS", scheme="https"))
        self.base_runs.append(wrk(self.baseline_port, "cycle.lua", hit_env, label="(7b) baseline over TLS",
                                  scheme="https"))

    def finish(self, results):
        """Stores the figures of (7) and (7b) and stops both servers."""
        results["s7"] = summarize(self.runs)
        results["s7b"] = summarize(self.base_runs)
        self.processes.stop(self.baseline)
        self.httpdnsd.stop()
