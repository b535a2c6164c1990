"""Unit tests of section (4)'s targets (no server): the rows against the upstream alone (4u),
and the row that sets httpdnsd against the C forwarder (4f), the floor of the HTTP layer."""

import unittest

from .report_capture import captured
from .report_misses import floor_row, miss_targets


def run(rps, p99_ms, reps=None):
    return {"rps": rps, "p50_ms": 4.0, "p99_ms": p99_ms, "reps": reps or [rps] * 3}


def results():
    return {
        "s4": run(14000, 10.5), "s4_floor": run(16000, 8.7), "s4_dnss": run(18000, 8.6),
        "s4_cpu": {"httpdnsd": [{"HTTP": 27.0, "other": 2.0}] * 3, "dnss": [45.0] * 3, "floor": [20.0] * 3},
        "s4_preload": {"rate": 15300, "reps": [15300] * 3, "names": 40000},
    }


class MissTargetsTests(unittest.TestCase):
    def test_the_targets_are_read_against_the_upstream_alone(self):
        _, rows = captured(miss_targets, results())
        by_goal = {goal: (round(value, 3), ok) for _, goal, value, ok in rows}
        self.assertEqual(by_goal["≤ 0.4"], (round(29.0 / 45.0, 3), False))
        self.assertEqual(by_goal["≥ 0.85"], (round(14000 / 18000, 3), False))
        self.assertEqual(by_goal["≤ 1.0 ms"], (1.9, False))
        self.assertEqual(by_goal["≥ 0.8"], (0.85, True))

    def test_httpdnsd_is_set_against_the_floor_in_the_same_run(self):
        text, _ = captured(miss_targets, results())
        self.assertIn(
            "| httpdnsd against the floor, (4) against (4f) (no target): misses/s, CPU per miss, p99 | — | "
            "misses/s 0.875, CPU per miss 1.45 ×, p99 +1.80 ms (10.50 against 8.70) | — |", text)

    def test_no_floor_row_without_the_forwarder(self):
        figures = results()
        del figures["s4_floor"]
        text, _ = captured(miss_targets, figures)
        self.assertNotIn("against the floor", text)
        self.assertIsNone(floor_row(figures["s4"], None, None))

    def test_the_cpu_part_is_left_out_without_the_cpu_figures(self):
        self.assertEqual(floor_row(run(14000, 10.5), run(16000, 8.7), None),
                         "misses/s 0.875, p99 +1.80 ms (10.50 against 8.70)")


if __name__ == "__main__":
    unittest.main()
