"""Unit tests of section (16)'s report (no server): CPU per hit and requests/s with policy over
without, each against the 10 % limit, the per-repetition pairs of requests/s, and that a run
without both sides writes nothing."""

import unittest

from .report_policy import cpu_ratio, paired_rate_ratio, policy_section, policy_targets, rate_ratio

MACHINE = {"date": "2026-12-06 01:30 UTC", "commit": "abc1234", "cores": 2}


def side(rps, cpu_us):
    return {"rps": rps, "p50_ms": 0.4, "p99_ms": 4.0, "reps": [rps] * len(cpu_us), "non2xx": 0, "errors": 0,
            "cpu_us": cpu_us, "requests": 1000, "moved": {"hits": 1000, "misses": 0, "rules": 0}}


def rendered(results):
    lines, rows = [], []
    policy_section(lines.append, results)
    policy_targets(lambda figure, goal, value, ok: rows.append((figure, goal, value, ok)), results)
    return "\n".join(lines), rows


class PolicyReportTests(unittest.TestCase):
    def test_cpu_ratio_is_the_median_of_the_repetitions_ratios(self):
        results = {"machine": MACHINE, "s16": side(95000, [11.0, 10.0, 12.6]), "s16c": side(100000, [10.0, 10.0, 12.0])}
        self.assertAlmostEqual(cpu_ratio(results), 1.05)
        self.assertAlmostEqual(rate_ratio(results), 0.95)
        text, rows = rendered(results)
        self.assertIn("= **1.050** (limit ≤ 1.10: PASS); per repetition 1.10, 1.00, 1.05.", text)
        self.assertIn("(16) / (16c) = **0.950** (limit ≥ 0.909", text)
        self.assertEqual([(goal, ok) for _, goal, _, ok in rows], [("≤ 1.10", True), ("≥ 0.909", True)])

    def test_requests_per_second_are_also_paired_by_repetition(self):
        with_policy, without = side(95000, [10.0, 10.0, 10.0]), side(100000, [10.0, 10.0, 10.0])
        with_policy["reps"], without["reps"] = [80000, 95000, 99000], [100000, 90000, 110000]
        results = {"machine": MACHINE, "s16": with_policy, "s16c": without}
        median, ratios = paired_rate_ratio(results)
        self.assertAlmostEqual(median, 0.9)
        self.assertEqual([round(r, 2) for r in ratios], [0.8, 1.06, 0.9])
        self.assertIn("Requests/s per repetition, (16) / (16c): 0.80, 1.06, 0.90; their median 0.900.",
                      rendered(results)[0])
        without["reps"] = [100000]
        self.assertIsNone(paired_rate_ratio(results))

    def test_more_than_ten_percent_fails(self):
        results = {"machine": MACHINE, "s16": side(85000, [11.5]), "s16c": side(100000, [10.0])}
        text, rows = rendered(results)
        self.assertIn("= **1.150** (limit ≤ 1.10: **FAIL**)", text)
        self.assertIn("= **0.850** (limit ≥ 0.909, i.e. at most 10% more time per hit: **FAIL**)", text)
        self.assertEqual([ok for *_, ok in rows], [False, False])

    def test_without_both_sides_nothing_is_written(self):
        self.assertEqual(rendered({"machine": MACHINE}), ("", []))
        self.assertEqual(rendered({"machine": MACHINE, "s16": side(1, [1.0])}), ("", []))


if __name__ == "__main__":
    unittest.main()
