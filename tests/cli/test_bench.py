#!/usr/bin/env python3
"""Smoke tests of the benchmarks: bench/jacobi_sweep validates and its JSON
has the documented shape; bench/krylov_overlap.py runs end to end on a tiny
problem, its runs converge with the same iterations, and its JSON has its
fields; bench/beff validates its messages on 2 and 4 ranks and its JSON has
every pattern, mode, size and ratio; bench/hybrid_mvm validates on 1 and 2
ranks x 2 threads and its JSON has the shape `asyncsolve model hybrid --fit`
reads. Never asserts on speed.

Usage: test_bench.py [--binary JACOBI_SWEEP] [--asyncsolve ASYNCSOLVE]
                     [--beff BEFF] [--hybrid-mvm HYBRID_MVM]
                     [--mpiexec "mpiexec --oversubscribe"]
(each benchmark's tests are skipped when its executable is not given)
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import unittest
from typing import ClassVar

BINARY = ""
ASYNCSOLVE = ""
BEFF = ""
HYBRID_MVM = ""
MPIEXEC = "mpiexec --oversubscribe"
KRYLOV_OVERLAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                              "bench", "krylov_overlap.py")


class JacobiSweepBench(unittest.TestCase):
    def setUp(self):
        if not BINARY:
            self.skipTest("no --binary (bench/jacobi_sweep)")

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
        self.assertTrue(doc["validation"]["benchmark_grid_fused_identical"])
        for kernel, unit_bytes in [("triad", 24), ("sweep", 16), ("residual", 8), ("fused", 16)]:
            k = doc["kernels"][kernel]
            self.assertEqual(k["bytes_counted_per_unit"], unit_bytes)
            self.assertEqual(len(k["gbs"]), 3)
            self.assertLessEqual(k["gbs_min"], k["gbs_median"])
            self.assertLessEqual(k["gbs_median"], k["gbs_max"])
        self.assertEqual(len(doc["ratios"]["sweep/triad"]["per_repeat"]), 3)
        self.assertEqual(len(doc["ratios"]["fused/triad"]["per_repeat"]), 3)
        self.assertEqual(doc["fused_target"]["ratio"], "fused/triad")
        # Every variant built is validated; auto times the one measured fastest.
        self.assertIn("portable", doc["validation"]["check_kernels"])
        self.assertEqual(doc["kernel"]["requested"], "auto")
        self.assertIn(doc["kernel"]["used"], doc["validation"]["check_kernels"])

    def test_bad_input_exits_2_with_one_line(self):
        for args in (["--grid", "0,4,4"], ["--repeats", "0"], ["--bogus"],
                     ["--kernel", "fastest"]):
            p = subprocess.run([BINARY] + args, capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, args)
            lines = [s for s in p.stderr.splitlines() if s.strip()]
            self.assertEqual(len(lines), 1, lines)


class KrylovOverlapBench(unittest.TestCase):
    def setUp(self):
        if not ASYNCSOLVE:
            self.skipTest("no --asyncsolve")

    def krylov_overlap(self, args, timeout=300):
        cmd = [sys.executable, KRYLOV_OVERLAP, "--asyncsolve", ASYNCSOLVE, "--mpiexec",
               MPIEXEC] + args
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def test_smoke_converges_agrees_and_writes_json(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "out", "krylov.json")
            runs_dir = os.path.join(d, "runs")
            p = self.krylov_overlap(["--smoke", "--json", path, "--runs-dir", runs_dir])
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("smoke: every run converged", p.stdout)
            with open(path) as f:
                doc = json.load(f)
            # Written through a temporary name, then renamed: nothing else is left.
            self.assertEqual(os.listdir(os.path.dirname(path)), ["krylov.json"])
            self.assertEqual(len(os.listdir(runs_dir)), len(doc["runs"]))
        self.assertEqual(doc["schema"], "asyncsolve.bench.krylov_overlap/1")
        for key in ("hostname", "date", "git_commit", "parameters", "commands", "baselines"):
            self.assertIn(key, doc)
        params = doc["parameters"]
        self.assertTrue(params["smoke"])
        self.assertEqual(params["repeats"], 1)
        self.assertEqual(len(params["halos"]), 2)
        self.assertEqual(len(params["test_every"]), 2)
        self.assertEqual(params["baseline"], "waitall/0/mpi")
        # Every combination, each run once, each converged with no error.
        combos = (len(params["methods"]) * len(params["halos"]) * len(params["test_every"])
                  * len(params["allreduce"]))
        self.assertEqual(len(doc["configurations"]), combos)
        self.assertEqual(len(doc["runs"]), combos)
        self.assertEqual(set(doc["commands"]), {c["name"] for c in doc["configurations"]})
        for r in doc["runs"]:
            self.assertIsNone(r["error"], r["configuration"])
            self.assertEqual(r["exit_code"], 0)
            self.assertTrue(r["converged"])
            self.assertGreater(r["iterations"], 0)
            self.assertGreater(r["time_per_iteration_s"], 0)
            self.assertEqual(r["ran"]["halo"], r["halo"])
            self.assertEqual(r["ran"]["test_every"], r["test_every"])
            self.assertEqual(r["ran"]["allreduce"], r["allreduce"])
        self.assertTrue(doc["passed"])
        self.assertEqual(doc["failures"], [])
        self.assertTrue(doc["iterations"]["iterations_agree"])
        for c in doc["configurations"]:
            t = c["time_per_iteration_s"]
            self.assertLessEqual(t["min"], t["median"])
            self.assertLessEqual(t["median"], t["max"])
            for phase in ("halo_wait", "matvec_interior", "matvec_boundary", "halo_start",
                          "sdotp_wait", "gamma_wait", "iprod_wait", "dots_wait"):
                self.assertIn(phase, c["phases_max_s_median"])
            self.assertIn("halo_tests_mean_median", c)
            if c["test_every"] == 0:
                self.assertEqual(c["halo_tests_mean_median"], 0)
            ratio = doc["ratios"][c["name"]]
            self.assertEqual(ratio["denominator"], c["baseline"])
            self.assertEqual(len(ratio["per_repeat"]), 1)
            self.assertIsNotNone(ratio["median"])
        for method in params["methods"]:
            base = doc["baselines"][method]
            self.assertEqual(doc["ratios"][base]["median"], 1.0)
            self.assertTrue(doc["fastest"][method]["configuration"].startswith(method + "/"))

    def test_bad_arguments_exit_2_with_one_line(self):
        for args in (["--halos", "waitall,bogus"], ["--test-every", "-1"], ["--repeats", "0"],
                     ["--global", "8,8"], ["--baseline", "waitall"], ["--bogus"],
                     ["--methods", "jacobi"], ["--global", "8,8,8", "--local", "8,8,8"]):
            p = self.krylov_overlap(args, timeout=60)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            lines = [s for s in p.stderr.splitlines() if s.strip()]
            self.assertEqual(len(lines), 1, (args, lines))
            self.assertTrue(lines[0].startswith("krylov_overlap.py: error: "), lines)
            self.assertEqual(p.stdout, "", args)


class BeffBench(unittest.TestCase):
    SIZES: ClassVar[list[int]] = [8, 16, 32, 64]
    PATTERNS: ClassVar[list[str]] = ["ring", "random", "3d-cyclic"]

    def setUp(self):
        if not BEFF:
            self.skipTest("no --beff (bench/beff)")

    def beff(self, ranks, args, timeout=180):
        launcher = shlex.split(MPIEXEC.replace(";", " "))
        # Open MPI's mpiexec adds a banner when a rank exits non-zero; -q keeps
        # stderr to what beff itself printed.
        version = subprocess.run(launcher[:1] + ["--version"], capture_output=True, text=True)
        if any(s in version.stdout + version.stderr for s in ("Open MPI", "OpenRTE")):
            launcher.append("-q")
        cmd = launcher + ["-n", str(ranks), BEFF] + args
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def run_and_load(self, ranks, node_size):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "beff.json")
            p = self.beff(ranks, ["-m", "8:64", "-i", "3", "--repeats", "2",
                                  "--node-size", str(node_size), "--json", path])
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("Solution validates", p.stdout)
            self.assertIn("T_hybrid/T_pure", p.stdout)
            with open(path) as f:
                doc = json.load(f)
            self.assertEqual(os.listdir(d), ["beff.json"])
        return doc

    def check_document(self, doc, ranks, node_size):
        self.assertEqual(doc["schema"], "asyncsolve.bench.beff/1")
        for key in ("version", "git", "started", "command", "definitions"):
            self.assertIn(key, doc)
        env = doc["environment"]
        self.assertEqual(env["ranks"], ranks)
        self.assertEqual(env["node_size"], node_size)
        self.assertEqual(env["node_size_source"], "--node-size")
        self.assertEqual(env["nodes"], ranks // node_size)
        for key in ("hostname", "mpi_library", "mpi_version", "shared_memory_nodes",
                    "nodes_emulated"):
            self.assertIn(key, env)
        params = doc["parameters"]
        self.assertEqual(params["sizes_bytes"], self.SIZES)
        self.assertEqual(params["repeats"], 2)
        self.assertEqual(params["iterations"], 3)
        self.assertEqual(params["patterns"], self.PATTERNS)
        self.assertTrue(doc["validation"]["passed"])
        self.assertGreater(doc["validation"]["messages_checked"], 0)

        leaders = ranks // node_size
        seen = set()
        for m in doc["measurements"]:
            key = (m["pattern"], m["mode"], m["bytes"])
            self.assertNotIn(key, seen)
            seen.add(key)
            hybrid = m["mode"] == "hybrid"
            self.assertEqual(m["message_bytes"], m["bytes"] * (node_size if hybrid else 1))
            self.assertEqual(m["communicating_ranks"], leaders if hybrid else ranks)
            self.assertEqual(m["messages_per_iteration"], 6 if m["pattern"] == "3d-cyclic" else 2)
            self.assertEqual(m["iterations"], 3)
            if m["pattern"] != "3d-cyclic":
                ring = m["communicating_ranks"]
                self.assertEqual(m["self_messages_per_iteration"], 2 if ring == 1 else 0)
            else:
                dims = doc["parameters"]["cyclic3d_dims"][m["mode"]]
                self.assertEqual(m["self_messages_per_iteration"], 2 * dims.count(1))
            for series in ("time_per_iteration_s", "bandwidth_per_rank_mbs",
                           "bandwidth_accumulated_mbs"):
                s = m[series]
                self.assertEqual(len(s["repeats"]), 2)
                self.assertLessEqual(s["min"], s["median"])
                self.assertLessEqual(s["median"], s["max"])
                self.assertGreater(s["min"], 0)
            # Accumulated = per rank times the communicating ranks, repeat by repeat.
            for per_rank, total in zip(m["bandwidth_per_rank_mbs"]["repeats"],
                                       m["bandwidth_accumulated_mbs"]["repeats"], strict=True):
                self.assertAlmostEqual(total, per_rank * m["communicating_ranks"],
                                       delta=1e-9 * total)
        self.assertEqual(seen, {(p, mode, b) for p in self.PATTERNS
                                for mode in ("pure", "hybrid") for b in self.SIZES})

        self.assertEqual({(r["pattern"], r["bytes"]) for r in doc["ratios"]},
                         {(p, b) for p in self.PATTERNS for b in self.SIZES})
        for r in doc["ratios"]:
            ratio = r["t_hybrid_over_t_pure"]
            self.assertEqual(len(ratio["repeats"]), 2)
            self.assertGreater(ratio["min"], 0)
            self.assertLessEqual(ratio["min"], ratio["median"])
            self.assertLessEqual(ratio["median"], ratio["max"])
            self.assertEqual(r["hybrid_message_bytes"], r["bytes"] * node_size)

        summary = doc["summary"]
        self.assertEqual(summary["lmax_bytes"], 64)
        self.assertEqual(summary["s_pure_over_s_hybrid"], 1)
        for mode in ("pure", "hybrid"):
            s = summary[mode]
            self.assertEqual(set(s["average_mbs"]), set(self.PATTERNS))
            self.assertGreater(s["b_eff_mbs"], 0)
            self.assertGreater(s["cyclic3d_average_mbs"], 0)
            # b_eff is the geometric mean of the ring and random averages.
            ring, rand = s["average_mbs"]["ring"], s["average_mbs"]["random"]
            self.assertAlmostEqual(s["b_eff_mbs"], (ring * rand) ** 0.5,
                                   delta=1e-9 * s["b_eff_mbs"])
        ratios = summary["b_pure_over_b_hybrid"]
        self.assertAlmostEqual(ratios["b_eff"],
                               summary["pure"]["b_eff_mbs"] / summary["hybrid"]["b_eff_mbs"])
        for key in ("b_eff_at_lmax", "cyclic3d", "cyclic3d_at_lmax"):
            self.assertGreater(ratios[key], 0)

    def test_two_ranks_one_node_of_two(self):
        self.check_document(self.run_and_load(2, 2), 2, 2)

    def test_four_ranks_nodes_of_two(self):
        doc = self.run_and_load(4, 2)
        self.check_document(doc, 4, 2)
        self.assertEqual(doc["parameters"]["cyclic3d_dims"]["hybrid"], [2, 1, 1])

    def test_bad_input_exits_2_with_one_line(self):
        for ranks, args in ((4, ["--node-size", "3"]), (2, ["--node-size", "0"]),
                            (2, ["-m", "4:64"]), (2, ["-m", "8:16777216"]), (2, ["-m", "16:8"]),
                            (2, ["-m", "12"]), (2, ["-m", "8:x"]), (2, ["--repeats", "0"]),
                            (2, ["--patterns", "ring,bogus"]), (2, ["--bogus"])):
            p = self.beff(ranks, args, timeout=60)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            lines = [s for s in p.stderr.splitlines() if s.strip()]
            self.assertEqual(len(lines), 1, (args, lines))
            self.assertTrue(lines[0].startswith("beff: error: "), lines)
            self.assertEqual(p.stdout, "", args)

    def test_wrong_message_content_exits_4(self):
        p = self.beff(2, ["-m", "8:16", "-i", "2", "--repeats", "1", "--patterns", "ring",
                          "--corrupt-for-testing"], timeout=60)
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertIn("validation failed", p.stderr)
        self.assertNotIn("Solution validates", p.stdout)


class HybridMvmBench(unittest.TestCase):
    """bench/hybrid_mvm (paper 002 §7.2.2) on tiny sizes: oversubscribed, so
    idle OpenMP threads must sleep (OMP_WAIT_POLICY=passive)."""

    ENV: ClassVar[dict[str, str]] = dict(os.environ, OMP_WAIT_POLICY="passive")

    def setUp(self):
        if not HYBRID_MVM:
            self.skipTest("no --hybrid-mvm (bench/hybrid_mvm)")

    def hybrid_mvm(self, args, ranks, timeout=120):
        launcher = shlex.split(MPIEXEC.replace(";", " "))
        cmd = launcher + ["-q", "-n", str(ranks), HYBRID_MVM] + args
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=self.ENV)

    def test_small_runs_validate_and_write_the_documented_json(self):
        for ranks in (1, 2):
            with self.subTest(ranks=ranks), tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "hybrid.json")
                p = self.hybrid_mvm(["--nij", "8", "--nk", "1:4", "--threads", "2", "--repeats",
                                     "3", "--mvms", "4", "--json", path], ranks)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn("Solution validates", p.stdout)
                with open(path) as f:
                    doc = json.load(f)
                self.assertEqual(os.listdir(d), ["hybrid.json"])
            self.assertEqual(doc["schema"], "asyncsolve.bench.hybrid_mvm/1")
            for key, value in [("threads", 2), ("reserved", 1), ("ni", 8), ("nj", 8),
                               ("ranks", ranks)]:
                self.assertEqual(doc[key], value, key)
            self.assertEqual([r["nk_local"] for r in doc["records"]], [1, 2, 4])
            for r in doc["records"]:
                for key in ("masteronly_s", "funneled_s", "masteronly_comm_s",
                            "masteronly_compute_s"):
                    self.assertIsInstance(r[key], float, key)
                    self.assertGreaterEqual(r[key], 0.0, key)
                self.assertIn("multiple_s", r)
                if doc["multiple_available"]:
                    self.assertGreater(r["multiple_s"], 0.0)
                else:
                    self.assertIsNone(r["multiple_s"])
                self.assertLessEqual(r["masteronly_min_s"], r["masteronly_s"])
                self.assertLessEqual(r["masteronly_s"], r["masteronly_max_s"])
                self.assertEqual(r["masteronly_mvms_per_sample"], 4)
            for v in doc["validation"]:
                self.assertLessEqual(v["masteronly_vs_reference_max_abs"], 1e-12)
                self.assertEqual(v["funneled_mismatches"], 0)
            for key in ("git", "hostname", "command", "thread_level", "oversubscribed"):
                self.assertIn(key, doc)

    def test_bad_input_exits_2_with_one_line(self):
        for args in (["--nij", "2"], ["--nk", "0:4"], ["--nk", "4,,8"], ["--repeats", "0"],
                     ["--threads", "9", "--nij", "3", "--nk", "2"], ["--bogus"]):
            p = self.hybrid_mvm(args, 2, timeout=60)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            lines = [s for s in p.stderr.splitlines() if s.strip()]
            self.assertEqual(len(lines), 1, (args, lines))
            self.assertTrue(lines[0].startswith("hybrid_mvm: error: "), lines)


def main():
    global BINARY, ASYNCSOLVE, BEFF, HYBRID_MVM, MPIEXEC
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="", help="bench/jacobi_sweep")
    parser.add_argument("--hybrid-mvm", default="", help="bench/hybrid_mvm")
    parser.add_argument("--asyncsolve", default="", help="the asyncsolve executable")
    parser.add_argument("--beff", default="", help="bench/beff")
    parser.add_argument("--mpiexec", default=MPIEXEC, help="launcher line (';' read as spaces)")
    args, rest = parser.parse_known_args()
    BINARY, ASYNCSOLVE, BEFF, MPIEXEC = args.binary, args.asyncsolve, args.beff, args.mpiexec
    HYBRID_MVM = args.hybrid_mvm
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
