#!/usr/bin/env python3
"""Smoke test of bench/jacobi_sweep: it validates, and its JSON has the
documented shape. Never asserts on speed.

Usage: test_bench.py --binary PATH
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

BINARY = ""


class JacobiSweepBench(unittest.TestCase):
    def test_small_run_validates_and_writes_json(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "sweep.json")
            p = subprocess.run([BINARY, "--grid", "12,10,9", "--triad-n", "50000",
                                "--repeats", "3", "--iterations", "2", "--json", path],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("Solution validates", p.stdout)
            with open(path) as f:
                doc = json.load(f)
            self.assertEqual(os.listdir(d), ["sweep.json"])
        self.assertEqual(doc["schema"], "asyncsolve.bench.jacobi_sweep/1")
        self.assertEqual(doc["grid"], [12, 10, 9])
        self.assertTrue(doc["validation"]["passed"])
        self.assertTrue(doc["validation"]["benchmark_grid_sweep_identical"])
        for kernel, unit_bytes in [("triad", 24), ("sweep", 16), ("residual", 8)]:
            k = doc["kernels"][kernel]
            self.assertEqual(k["bytes_counted_per_unit"], unit_bytes)
            self.assertEqual(len(k["gbs"]), 3)
            self.assertLessEqual(k["gbs_min"], k["gbs_median"])
            self.assertLessEqual(k["gbs_median"], k["gbs_max"])
        self.assertEqual(len(doc["ratios"]["sweep/triad"]["per_repeat"]), 3)

    def test_bad_input_exits_2_with_one_line(self):
        for args in (["--grid", "0,4,4"], ["--repeats", "0"], ["--bogus"]):
            p = subprocess.run([BINARY] + args, capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, args)
            lines = [l for l in p.stderr.splitlines() if l.strip()]
            self.assertEqual(len(lines), 1, lines)


def main():
    global BINARY
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    args, rest = parser.parse_known_args()
    BINARY = args.binary
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
