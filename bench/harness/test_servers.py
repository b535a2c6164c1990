"""Unit tests of what the harness reads from an httpdnsd log (no server is started)."""

import unittest

from .servers import cpu_text, last_warm_load

LOG = """2026-12-07T17:55:21.608Z info httpdnsd listening on 127.0.0.1:43399
2026-12-07T17:55:22.325Z info account bench: loaded 1000000 cached answers in 716 ms
2026-12-07T17:55:27.335Z info stopped cleanly (cache flushed to /tmp/x.sqlite)
2026-12-07T17:55:28.320Z info account bench: loaded 999999 cached answers in 858 ms
"""


class WarmLoadLogTests(unittest.TestCase):
    def test_the_last_load_of_a_log_appended_across_restarts_is_read(self):
        self.assertEqual(last_warm_load(LOG), (999999, 858))

    def test_a_log_without_a_load_reads_as_none(self):
        self.assertIsNone(last_warm_load(LOG.splitlines()[0]))


class CPUTextTests(unittest.TestCase):
    def test_the_busiest_threads_come_first_and_idle_ones_are_left_out(self):
        cpu = {"seconds": 1.5, "user": 1.2, "system": 0.3,
               "threads": {"httpdnsd": 0.9, "httpdnsd-http": 0.001, "worker": 0.6}}
        self.assertEqual(cpu_text(cpu), "1.50 s of CPU (user 1.20, kernel 0.30; threads: httpdnsd 0.90, worker 0.60)")


if __name__ == "__main__":
    unittest.main()
