"""Unit tests of the reading of dnsperf's summary (`plain_dns.parse_dnsperf`), which sections (14)
and (15) share: the figures, the reconnections of a TCP or DoT run, and a summary without them;
and of their check line (`check_text`): each server's CPU per query answered."""

import unittest

from .plain_dns import check_text, parse_dnsperf

# dnsperf 2.10's summary of a DoT run, as it prints it: the second "Average Latency" is that of
# the connections (their handshakes), not of the queries.
DOT_RUN = """Statistics:

  Queries sent:         475215
  Queries completed:    475215 (100.00%)
  Queries lost:         0 (0.00%)

  Response codes:       NOERROR 475215 (100.00%)
  Average packet size:  request 35, response 67
  Run time (s):         10.002566
  Queries per second:   47509.308880

  Average Latency (s):  0.004770 (min 0.000152, max 0.046322)
  Latency StdDev (s):   0.002081

Connection Statistics:

  Reconnections:        3

  Average Latency (s):  0.022902 (min 0.014858, max 0.030947)
  Latency StdDev (s):   0.011377

"""


class DnsperfSummaryTests(unittest.TestCase):
    def test_the_figures_of_a_dot_run_with_the_queries_latency(self):
        figures = parse_dnsperf(DOT_RUN, "", "test")
        self.assertEqual(figures, {"qps": 47509.30888, "completed": 475215, "lost": 0, "latency_s": 0.00477,
                                   "noerror": 475215, "reconnections": 3})

    def test_a_udp_run_has_no_reconnections(self):
        udp = DOT_RUN.split("Connection Statistics:")[0]
        self.assertEqual(parse_dnsperf(udp, "", "test")["reconnections"], 0)

    def test_a_run_without_a_summary_raises(self):
        with self.assertRaisesRegex(RuntimeError, "printed no qps"):
            parse_dnsperf("Error: socket error\n", "", "test")


    def test_the_check_line_has_each_servers_cpu_per_query(self):
        ours = {"completed": 400000, "noerror": 400000}
        theirs = {"completed": 200000, "noerror": 200000}
        text = check_text(15, ours, theirs, {"hits": 400000, "misses": 0, "cpu_s": 6.0},
                          {"cachemiss": 0, "cpu_s": 5.0})
        self.assertIn("hit counter +400000, miss counter +0", text)
        self.assertIn("server CPU per query answered: httpdnsd 15.0 µs, unbound 25.0 µs", text)
        self.assertIn("unbound 25.0", check_text(15, ours, theirs, {}, {"cpu_s": 5.0}))
        self.assertIn("httpdnsd — µs", check_text(15, ours, theirs, {}, {"cpu_s": 5.0}))


if __name__ == "__main__":
    unittest.main()
