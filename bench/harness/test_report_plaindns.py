"""Unit tests of section (14)'s report (no server): the ratio against unbound, its PASS or FAIL,
and that a run without both sides writes no section and no target row."""

import unittest

from .report_plaindns import plain_dns_section, plain_dns_targets, ratio

MACHINE = {"date": "2026-12-05 18:56 UTC", "commit": "abc1234", "cores": 2}


def side(qps, reps):
    return {"qps": qps, "reps": reps, "latency_ms": 2.0, "lost": 0, "completed": 1000, "noerror": 1000,
            "check": "(14) 1000 queries answered"}


def rendered(results):
    lines, rows = [], []
    plain_dns_section(lines.append, results)
    plain_dns_targets(lambda figure, goal, value, ok: rows.append((figure, value, ok)), results)
    return "\n".join(lines), rows


class PlainDNSReportTests(unittest.TestCase):
    def test_the_ratio_is_httpdnsd_over_unbound_and_passes_from_one(self):
        results = {"machine": MACHINE, "s14": side(75000, [80000, 75000]), "s14u": side(60000, [64000, 60000])}
        self.assertAlmostEqual(ratio(results), 1.25)
        text, rows = rendered(results)
        self.assertIn("= **1.250** (target ≥ 1.0: PASS)", text)
        self.assertIn("Per repetition: 1.25, 1.25.", text)
        self.assertEqual(rows[0][1:], (1.25, True))

    def test_below_unbound_fails(self):
        results = {"machine": MACHINE, "s14": side(50000, [50000]), "s14u": side(60000, [60000])}
        text, rows = rendered(results)
        self.assertIn("(target ≥ 1.0: **FAIL**)", text)
        self.assertFalse(rows[0][2])

    def test_without_both_sides_nothing_is_written(self):
        self.assertEqual(rendered({"machine": MACHINE}), ("", []))
        self.assertEqual(rendered({"machine": MACHINE, "s14": side(1, [1])})[0], "")


if __name__ == "__main__":
    unittest.main()
