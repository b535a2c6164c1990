"""Unit tests of the harness's parsing and arithmetic that need no server: the /proc stat reader,
CPU by thread group, and the miss report's grouping and floor. Run from the repository with
`python3 -m unittest discover -s bench -t bench -p 'test_*.py'` (part of `make test`)."""

import os
import unittest

from .procstat import (cpu_by_group, is_http_thread, parse_stat, parse_switches, parse_user_system, switches_between,
                       thread_switches, user_system_seconds)
from .report_misses import cpu_ratio, floor_figures, grouped, user_system_figures, user_system_line

# A thread's stat line as Linux writes it (`/proc/PID/task/TID/stat`): utime 1234 and stime 56
# are fields 14 and 15; this name holds a space and a parenthesis, which a split on spaces or on
# the first ')' would misread.
STAT = ("4242 (MHD-worker) x) S 4200 4200 4200 0 -1 4194368 911 0 0 0 1234 56 0 0 20 0 9 0 "
        "1500 1000000 300 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 -1 1 0 0 0 0 0")


class ProcStatTests(unittest.TestCase):
    def test_parse_stat_reads_name_and_ticks_past_a_name_with_parentheses(self):
        self.assertEqual(parse_stat(STAT), ("MHD-worker) x", 1234 + 56))

    def test_parse_user_system_keeps_the_two_apart(self):
        self.assertEqual(parse_user_system(STAT), (1234, 56))

    def test_user_system_seconds_of_this_process_add_up_to_its_ticks(self):
        with open(f"/proc/{os.getpid()}/stat") as f:
            _, ticks = parse_stat(f.read())
        user, system = user_system_seconds(os.getpid())
        self.assertGreaterEqual(user * os.sysconf("SC_CLK_TCK") + system * os.sysconf("SC_CLK_TCK"), ticks - 0.5)

    def test_parse_stat_of_this_process(self):
        with open(f"/proc/{os.getpid()}/stat") as f:
            name, ticks = parse_stat(f.read())
        self.assertTrue(name)
        self.assertGreaterEqual(ticks, 0)

    def test_cpu_by_group_sums_groups_and_keeps_exited_threads(self):
        per_tick = 1e6 / os.sysconf("SC_CLK_TCK")
        groups = [("curl loop", lambda n: n == "httpdnsd-curl"), ("HTTP", lambda n: n.startswith("MHD-"))]
        before = ({"1": ("httpdnsd", 10), "2": ("httpdnsd-curl", 100), "3": ("MHD-worker", 50),
                   "4": ("MHD-worker", 60), "5": ("short", 5)}, 300)
        # Thread 5 exited having used 7 more ticks; thread 6 started and used 4.
        after = ({"1": ("httpdnsd", 12), "2": ("httpdnsd-curl", 130), "3": ("MHD-worker", 70),
                  "4": ("MHD-worker", 65), "6": ("httpdnsd-log", 4)}, 300 + 2 + 30 + 20 + 5 + 4 + 7)
        used = cpu_by_group(before, after, groups)
        self.assertEqual({k: round(v / per_tick) for k, v in used.items()},
                         {"httpdnsd": 2, "curl loop": 30, "HTTP": 25, "httpdnsd-log": 4, "exited threads": 7})

    def test_parse_switches_reads_both_counts_of_a_status_text(self):
        status = "Name:\thttpdnsd-http\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n"
        self.assertEqual(parse_switches(status), (120, 7))

    def test_switches_between_counts_new_threads_from_zero_and_leaves_exited_ones_out(self):
        before = {"1": (100, 5), "2": (50, 1), "3": (9, 9)}
        after = {"1": (130, 6), "2": (50, 3), "4": (4, 0)}
        self.assertEqual(switches_between(before, after), (30 + 0 + 4, 1 + 2 + 0))

    def test_thread_switches_of_this_process(self):
        switches = thread_switches(os.getpid())
        self.assertIn(str(os.getpid()), switches)
        self.assertTrue(all(v >= 0 and i >= 0 for v, i in switches.values()))

    def test_http_threads_are_httpdnsds_and_libmicrohttpds_pool_threads(self):
        self.assertTrue(is_http_thread("httpdnsd-http"))
        self.assertTrue(is_http_thread("MHD-worker"))
        self.assertFalse(is_http_thread("httpdnsd-curl"))


class MissReportTests(unittest.TestCase):
    def test_grouped_splits_named_groups_from_the_others(self):
        rows, others = grouped([{"curl loop": 10.0, "HTTP": 6.0, "httpdnsd": 1.0},
                                {"curl loop": 12.0, "HTTP": 8.0, "httpdnsd": 3.0, "httpdnsd-log": 2.0}])
        self.assertEqual(rows["total"], [17.0, 25.0])
        self.assertEqual(rows["others"], [1.0, 5.0])
        self.assertEqual(others, [("httpdnsd", 2.0), ("httpdnsd-log", 1.0)])

    def test_cpu_ratio_is_median_total_over_dnss_median(self):
        results = {"s4_cpu": {"httpdnsd": [{"curl loop": 8.0}, {"curl loop": 12.0}], "dnss": [40.0, 60.0]}}
        self.assertAlmostEqual(cpu_ratio(results), 10.0 / 50.0)
        self.assertIsNone(cpu_ratio({}))

    def test_floor_figures_set_the_forwarder_against_dnss_and_httpdnsd(self):
        results = {"s4_cpu": {"httpdnsd": [{"HTTP": 40.0}, {"HTTP": 60.0}], "dnss": [80.0, 60.0, 70.0],
                              "floor": [20.0, 30.0, 25.0]}}
        self.assertEqual(floor_figures(results), {"ratio": 25.0 / 70.0, "over": 50.0 / 25.0, "own": 25.0})
        del results["s4_cpu"]["floor"]
        self.assertIsNone(floor_figures(results))

    def test_user_system_figures_take_medians_and_the_line_sets_httpdnsd_against_the_floor(self):
        results = {"s4_cpu": {"user_system": {"httpdnsd": [(27.0, 19.0), (29.0, 21.0), (28.0, 20.0)],
                                              "floor": [(5.0, 16.0), (6.0, 17.0), (7.0, 18.0)],
                                              "dnss": [(40.0, 20.0)]}}}
        figures = user_system_figures(results)
        self.assertEqual(figures, {"httpdnsd": (28.0, 20.0), "floor": (6.0, 17.0), "dnss": (40.0, 20.0)})
        line = user_system_line(figures)
        self.assertIn("httpdnsd 28.0 + 20.0", line)
        self.assertIn("(4f) 6.0 + 17.0", line)
        self.assertIn("kernel time is 1.18 × the floor's, its user time 4.67 × (+22.0 µs)", line)
        self.assertIsNone(user_system_figures({}))
        self.assertIsNone(user_system_line({"httpdnsd": (1.0, 1.0)}))


if __name__ == "__main__":
    unittest.main()
