"""Unit tests of the report of sections (14) and (15) (no server): the ratio against unbound, its
PASS or FAIL against each section's goal, and that a run without both sides writes no section and
no target row."""

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


    def test_dot_has_its_own_section_and_goal(self):
        results = {"machine": MACHINE, "s15": side(46000, [46000, 47000]), "s15u": side(50000, [50000, 50000])}
        self.assertAlmostEqual(ratio(results, 15), 0.92)
        self.assertIsNone(ratio(results))
        text, rows = rendered(results)
        self.assertIn("## DNS over TLS cache hits", text)
        self.assertNotIn("## Plain DNS", text)
        self.assertIn("| 15u | unbound's own DoT cache hits", text)
        self.assertIn("(15) / (15u) = **0.920** (target ≥ 0.9: PASS)", text)
        self.assertEqual(len(rows), 1)
        self.assertIn("(15) / (15u)", rows[0][0])
        self.assertEqual(rows[0][1:], (0.92, True))

    def test_dot_below_nine_tenths_fails(self):
        results = {"machine": MACHINE, "s15": side(44000, [44000]), "s15u": side(50000, [50000])}
        text, rows = rendered(results)
        self.assertIn("= **0.880** (target ≥ 0.9: **FAIL**)", text)
        self.assertFalse(rows[0][2])

    def test_both_sections_write_both_rows(self):
        results = {"machine": MACHINE, "s14": side(60000, [60000]), "s14u": side(60000, [60000]),
                   "s15": side(45000, [45000]), "s15u": side(50000, [50000])}
        text, rows = rendered(results)
        self.assertLess(text.index("## Plain DNS"), text.index("## DNS over TLS"))
        self.assertEqual([ok for _, _, ok in rows], [True, True])


if __name__ == "__main__":
    unittest.main()
