"""Section (9): the hits of (1) with signed requests (signature v1, query form) on account
`signed` of (1)'s instance, which requires signatures: (9) / (1) is what signing costs a hit."""

import json
import os
import secrets
import time

from .clients import family_sum, http_get, metrics, sign_v1
from .load import summarize, wrk, write_list
from .procstat import wait_idle
from .settings import SIGNED, SIGNED_MAX_AGE, log


class SignedSection:
    """(9): the hits of (1) with signed requests (signature v1, query form) on account `signed` of
    the same instance, whose client keys make `requireSignedRequests` hold: their hits are answered
    by the fast path that serves (1), after the general path's signature and role checks run on a
    copy of the request. Measured in each repetition of (1), after (1) and (8)."""

    ACCOUNT = "signed"

    @staticmethod
    def keys():
        """The account's settings: one `resolve` key for the hits, one `manage` key for the preload.
        Fresh secrets each run (they protect nothing but this benchmark)."""
        return {"clientKeys": [{"id": "bench-resolve", "secret": secrets.token_hex(24), "role": "resolve"},
                               {"id": "bench-manage", "secret": secrets.token_hex(24), "role": "manage"}],
                "requireSignedRequests": True, "maxSignatureAge": SIGNED_MAX_AGE}

    def __init__(self, main, names, work, settings):
        """Preloads the names with signed requests (`settings` from `keys()`), checks that the
        account refuses what it should, and writes the signed URLs `cycle.lua` sends."""
        self.main = main
        resolve_key, manage_key = settings["clientKeys"]
        # An expiry as far ahead as the account allows, less a minute of margin for clocks: the URLs
        # stay valid for a day, longer than any run.
        self.expiry = int(time.time()) + SIGNED_MAX_AGE - 60
        path = f"/v1/{self.ACCOUNT}/resolve"

        def signed_url(host, key=resolve_key):
            return path + "?" + sign_v1("GET", path, {"host": host}, b"", key["id"], key["secret"], self.expiry)

        def sign_preload(method, preload_path, body):
            # A POST signature is accepted once: each batch has another body, so another signature.
            return sign_v1(method, preload_path, {}, body, manage_key["id"], manage_key["secret"], self.expiry)

        seconds = main.preload(self.ACCOUNT, names, signer=sign_preload)
        log(f"({SIGNED}) warmed {len(names)} names into account {self.ACCOUNT} (signed preload) in {seconds:.1f} s")
        # The preload's write-behind reaches SQLite before anything is measured on this instance.
        wait_idle(main.process.pid, "httpdnsd-main")
        self.precheck(path, names[0], signed_url)
        self.list_file = write_list(os.path.join(work, "signed-urls.txt"), (signed_url(n) for n in names))
        self.env = {"BENCH_LIST": self.list_file, "BENCH_PREFIX": ""}
        self.runs = []
        self.http_ok = self.http_other = self.hits = self.misses = 0

    def precheck(self, path, host, signed_url):
        """The account must refuse what it should, so that (9) cannot silently measure an open
        account: unsigned 401, a wrong signature 401, the right one a cache hit."""
        good = signed_url(host)
        status, body, _ = http_get(self.main.port, f"{path}?host={host}")
        if status != 401:
            raise RuntimeError(f"({SIGNED}) an unsigned request got {status}, not 401: {body[:200]!r}")
        last = good[-1]
        wrong = good[:-1] + ("0" if last != "0" else "1")
        status, body, _ = http_get(self.main.port, wrong)
        if status != 401 or b"bad signature" not in body:
            raise RuntimeError(f"({SIGNED}) a wrong signature got {status}, not 401 bad signature: {body[:200]!r}")
        status, body, _ = http_get(self.main.port, good)
        if status != 200 or json.loads(body).get("source") != "cache":
            raise RuntimeError(f"({SIGNED}) a signed request for a warmed name is not a cache hit: {status} {body[:200]!r}")
        self.precheck_note = "unsigned request 401, wrong signature 401 `bad signature`, signed request 200 from the cache"
        log(f"({SIGNED}) pre-check: {self.precheck_note}")

    def measure(self):
        """One run of (9), with the HTTP statuses and cache counters it moved."""
        # Nothing else talks to this instance meanwhile: the deltas of its counters, summed over
        # accounts, are this run's. /metrics is served on the operations listener.
        before = metrics(self.main.ops_port)
        run = wrk(self.main.port, "cycle.lua", self.env, label=f"({SIGNED}) httpdnsd hits, signed requests")
        after = metrics(self.main.ops_port)
        self.runs.append(run)

        def delta(key):
            return after.get(key, 0.0) - before.get(key, 0.0)

        codes = {k for k in after if k.startswith("httpdns_http_requests_total{")}
        self.http_ok += sum(delta(k) for k in codes if 'code="200"' in k)
        self.http_other += sum(delta(k) for k in codes if 'code="200"' not in k)
        self.hits += family_sum(after, "httpdns_cache_hits_total") - family_sum(before, "httpdns_cache_hits_total")
        self.misses += family_sum(after, "httpdns_cache_misses_total") - family_sum(before, "httpdns_cache_misses_total")

    def finish(self, results):
        """Stores the figures of (9) and its check: every request a 200 from the cache."""
        s = results[f"s{SIGNED}"] = summarize(self.runs)
        requests = sum(r["requests"] for r in self.runs)
        # Every answer a hit: nothing but 200s, and at least as many hits as wrk counted requests (the
        # server counts a few more than wrk reports, as in (1); each /metrics read adds one 200).
        ok = self.http_other == 0 and self.misses == 0 and self.hits >= requests and s["non2xx"] == 0
        s["check"] = (f"{self.precheck_note} (before the loop); during the runs: {requests} requests, HTTP 200 "
                      f"+{self.http_ok:.0f}, any other status +{self.http_other:.0f}, hit counter +{self.hits:.0f}, "
                      f"miss counter +{self.misses:.0f}: "
                      + ("every request answered 200 from the cache" if ok else "**NOT every request was a 200 hit**"))
