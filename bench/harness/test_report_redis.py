"""Unit tests of section (13)'s miss rows (no server): misses/s with Redis against without, as
the target's ratio of medians and as the pairs of each repetition, which run back to back."""

import unittest

from .report import redis_ratios
from .report_capture import captured


def run(reps):
    return {"rps": sorted(reps)[len(reps) // 2], "p50_ms": 4.0, "p99_ms": 10.0, "reps": reps}


class RedisMissRowsTests(unittest.TestCase):
    def test_each_repetition_is_paired_with_its_control(self):
        text, rows = captured(redis_ratios, {"s13u": run([12020, 13385, 12979]), "s13n": run([15309, 14268, 14981])})
        self.assertEqual([(goal, ok) for _, goal, _, ok in rows], [("≥ 0.9", False)])
        self.assertAlmostEqual(rows[0][2], 12979 / 14981)
        self.assertIn("| (13u) / (13n) per repetition, their median | — | 0.866 (0.79, 0.94, 0.87) | — |", text)

    def test_no_pairs_when_the_repetitions_differ_in_number(self):
        text, rows = captured(redis_ratios, {"s13u": run([12020, 13385]), "s13n": run([15309, 14268, 14981])})
        self.assertEqual(len(rows), 1)
        self.assertNotIn("per repetition", text)


if __name__ == "__main__":
    unittest.main()
