#!/usr/bin/env python3
"""End-to-end tests of the `asyncsolve` command under mpiexec.

Checks what a user sees: exit codes, the one-line error from rank 0, the
summary, and the result document (schema asyncsolve.result/1).

Usage: test_cli.py --binary PATH --mpiexec "mpiexec --oversubscribe"
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import ClassVar

BINARY = ""
MPIEXEC = []
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
# The option reference, whose table make docs-options generates.
REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                         "options.md")


# Open MPI's event library (in the launcher and its daemons) sometimes warns
# about a descriptor closed under it while a job ends after an error: "[warn]
# Epoll MOD(1) on fd 25 failed. Old events were 6; read change was 0 (none);
# ...: Bad file descriptor". It is the launcher's line, not asyncsolve's, and
# would break the one-line checks of bad input on a loaded machine.
LIBEVENT_WARNING = re.compile(r"^\[warn\] Epoll \w+\(\d+\) on fd \d+ failed\..*$\n?",
                              re.MULTILINE)


def cpuinfo_model():
    """The processor's model name in /proc/cpuinfo (None where there is none)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("model name") and ":" in line:
            return line.split(":", 1)[1].strip() or None
    return None


def run(args, ranks=1, timeout=120, env=None):
    """Runs the binary on `ranks` ranks; returns (exit code, stdout, stderr)."""
    cmd = MPIEXEC + ["-n", str(ranks), BINARY] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, LIBEVENT_WARNING.sub("", p.stderr)


class Help(unittest.TestCase):
    def test_help_lists_every_option_with_default(self):
        code, out, err = run(["solve", "--help"])
        self.assertEqual(code, 0, err)
        for option in ["--problem", "--offset", "--global", "--local", "--dims", "--method",
                       "--variant", "--transport", "--halo", "--allreduce", "--progress",
                       "--tol", "--max-iters", "--check-every", "--halo-every", "--copy",
                       "--monitor", "--monitor-every", "--json", "--test-every", "--pc",
                       "--shift", "--threads", "--hybrid", "--idle", "--kernel", "--max-time",
                       "--repeat-solve"]:
            self.assertIn(option, out)
        self.assertIn("1e-4 for jacobi, 1e-6 for schwarz and the Krylov methods", out)
        for method in ["cg", "pcg1", "pcg2", "pcg-overlap", "pipecg", "laplace27"]:
            self.assertIn(method, out)
        self.assertEqual(out.count("Usage:"), 1, "printed by rank 0 only")

    def test_every_option_of_help_is_in_the_option_reference(self):
        code, out, err = run(["solve", "--help"])
        self.assertEqual(code, 0, err)
        options = re.findall(r"^\s+(?:-\w,)?(--[\w-]+)", out, re.MULTILINE)
        options = [o for o in options if o != "--help"]  # CLI11's own
        self.assertGreaterEqual(len(options), 40, out)
        with open(REFERENCE, encoding="utf-8") as f:
            page = f.read()
        for option in options:
            # As the generated table writes it: `--tol X`, `--copy`.
            self.assertRegex(page, r"\| solve \| `" + re.escape(option) + r"[ `]",
                             f"{option} is missing from docs/options.md: make docs-options")

    def test_help_printed_once_on_many_ranks(self):
        code, out, _ = run(["--help"], ranks=3)
        self.assertEqual(code, 0)
        self.assertEqual(out.count("Usage:"), 1)

    def test_version(self):
        code, out, _ = run(["--version"])
        self.assertEqual(code, 0)
        self.assertRegex(out, r"asyncsolve \d+\.\d+\.\d+")

    def test_info(self):
        code, out, err = run(["info"], ranks=2)
        self.assertEqual(code, 0, err)
        for key in ["mpi library", "thread level", "openshmem", "openmp", "cores"]:
            self.assertIn(key, out)
        self.assertIn("ranks            2", out)


class BadInput(unittest.TestCase):
    """Every rank exits with 2; rank 0 prints exactly one line naming the value."""

    def check(self, args, must_contain, ranks=3, env=None):
        code, out, err = run(args, ranks=ranks, env=env)
        self.assertEqual(code, 2, f"{args}: stdout={out!r} stderr={err!r}")
        lines = [s for s in err.splitlines() if s.strip()]
        self.assertEqual(len(lines), 1, f"{args}: expected one line, got {lines!r}")
        self.assertTrue(lines[0].startswith("asyncsolve: error: "), lines[0])
        self.assertIn(must_contain, lines[0])
        self.assertIn("expected", lines[0])
        self.assertEqual(out, "", "nothing on stdout for bad input")

    def test_unknown_option(self):
        code, _, err = run(["solve", "--bogus", "1"], ranks=3)
        self.assertEqual(code, 2)
        lines = [s for s in err.splitlines() if s.strip()]
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("--bogus", lines[0])

    def test_help_and_version_take_nothing_else(self):
        # Each printed its text with exit 0, hiding the stray value.
        self.check(["solve", "--help=x"], "--help=x: --help is a flag and takes no value")
        self.check(["--version", "extra"], "unexpected argument 'extra' with --version")
        self.check(["solve", "--version"], "unexpected argument 'solve' with --version")

    def test_unknown_command(self):
        self.check(["solv"], "solv")

    def test_malformed_zero_negative_sizes(self):
        self.check(["solve", "--local", "0,5,5"], "0,5,5")
        self.check(["solve", "--local", "5,5"], "5,5")
        self.check(["solve", "--global", "-8,8,8"], "-8,8,8")
        self.check(["solve", "--dims", "1,one,1"], "1,one,1")

    def test_dims_not_matching_ranks(self):
        self.check(["solve", "--dims", "2,2,1", "--local", "4,4,4"], "--dims 2,2,1")

    def test_more_ranks_than_points(self):
        self.check(["solve", "--global", "2,2,2"], "--global 2,2,2", ranks=3)
        self.check(["solve", "--global", "8,8,2", "--dims", "1,1,3"], "along z")

    def test_grid_too_large_for_memory(self):
        self.check(["solve", "--local", "20000,20000,20000"], "--local 20000,20000,20000", ranks=2)
        self.check(["solve", "--global", "100000,100000,1000"], "GiB", ranks=2)

    def test_bad_tolerance_and_counts(self):
        self.check(["solve", "--tol", "0"], "--tol 0")
        self.check(["solve", "--tol", "-1"], "--tol -1")
        self.check(["solve", "--check-every", "0"], "--check-every 0")
        self.check(["solve", "--halo-every", "0"], "--halo-every 0")

    def test_shmem_without_ucx_osc(self):
        _, info, _ = run(["info"])
        if "shmem transport built" not in info:
            self.skipTest("this build has no OpenSHMEM")
        env = {k: v for k, v in os.environ.items() if k != "OMPI_MCA_osc"}
        self.check(["solve", "--transport", "shmem", "--local", "4,4,4"], "OMPI_MCA_osc=ucx",
                   ranks=2, env=env)

    def test_slow_rank_beyond_the_run(self):
        self.check(["solve", "--variant", "async", "--slow-rank", "5", "--local", "4,4,4"],
                   "--slow-rank 5", ranks=2)

    def test_asynchronous_options(self):
        self.check(["solve", "--variant", "async", "--max-in-flight", "0"], "--max-in-flight 0")
        self.check(["solve", "--variant", "racy", "--allreduce", "mpi"], "non-blocking")

    def test_max_time_and_idle(self):
        for value in ("0", "-2", "abc", "inf", "1s"):
            # The option table's number message: the text as typed, then the range.
            self.check(["solve", "--max-time", value],
                       f"--max-time {value}: expected a positive number of seconds")
        self.check(["solve", "--variant", "async", "--idle", "maybe"], "--idle 'maybe'")
        self.check(["solve", "--idle", "on"], "--idle on with --variant sync")
        self.check(["solve", "--transport", "omp", "--idle", "off"],
                   "--idle off with --variant sync")
        self.check(["solve", "--method", "cg", "--idle", "off"], "--idle off with --method cg")
        self.check(["solve", "--assemble", "--idle", "on"], "--idle on with --variant sync")

    def test_unknown_choices(self):
        self.check(["solve", "--problem", "heat"], "heat")
        self.check(["solve", "--method", "minres"], "minres")
        self.check(["solve", "--transport", "carrier-pigeon"], "carrier-pigeon")

    def test_krylov_options(self):
        # the methods the option applies to, as --help lists them (not "jacobi only")
        self.check(["solve", "--method", "cg", "--variant", "async"],
                   "--variant applies to --method jacobi|schwarz only, expected sync")
        self.check(["solve", "--method", "pcg1", "--transport", "rma"],
                   "--transport applies to --method jacobi|lanczos|schwarz only, expected mpi")
        self.check(["solve", "--method", "cg", "--pc", "jacobi"], "--pc 'jacobi'")
        self.check(["solve", "--method", "pcg2", "--pc", "none"], "--pc 'none'")
        # the nonsymmetric methods: no Chebyshev (it needs real eigenvalue
        # bounds), a restart of at least 1, no --restart where it does nothing
        self.check(["solve", "--method", "gmres", "--pc", "chebyshev"], "Chebyshev")
        self.check(["solve", "--method", "bicgstab", "--pc", "chebyshev:5"], "Chebyshev")
        self.check(["solve", "--method", "pgmres", "--restart", "0"], "--restart 0")
        self.check(["solve", "--method", "pcg1", "--restart", "5"], "--restart 5 with")
        self.check(["solve", "--method", "gmres", "--cgs-refinement", "twice"], "twice")
        self.check(["solve", "--method", "cg", "--pc", "ilu0"], "--pc 'ilu0'")
        self.check(["solve", "--method", "pipecg", "--pc", "ilu"], "--pc 'ilu'")
        self.check(["solve", "--method", "cg", "--test-every", "-1"], "--test-every -1")
        self.check(["solve", "--method", "cg", "--allreduce", "knomial:1"],
                   "--allreduce 'knomial:1'")
        self.check(["solve", "--method", "cg", "--allreduce", "twolevel:tree"], "twolevel:ALG")
        self.check(["solve", "--method", "cg", "--halo", "smoke-signals"], "smoke-signals")
        self.check(["solve", "--problem", "laplace27"], "--problem laplace27 with --method jacobi")
        self.check(["solve", "--shift", "1"], "--shift 1")
        self.check(["solve", "--method", "pcg2", "--shift", "-7", "--local", "4,4,4"], "--shift -7")

    def test_repeat_solve(self):
        self.check(["solve", "--method", "jacobi", "--repeat-solve", "2"],
                   "--repeat-solve 2 with --method jacobi")
        self.check(["solve", "--method", "pcg1", "--repeat-solve", "0"], "--repeat-solve 0")
        self.check(["solve", "--method", "pcg1", "--repeat-solve", "1000001"],
                   "--repeat-solve 1000001")
        self.check(["solve", "--method", "pcg1", "--repeat-solve", "-3"], "--repeat-solve -3")
        self.check(["solve", "--method", "cg", "--repeat-solve", "2.5"], "--repeat-solve 2.5")
        self.check(["solve", "--method", "lanczos", "--problem", "tfim", "--repeat-solve", "4"],
                   "--repeat-solve 4")

    def test_unwritable_json_leaves_no_file(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "no", "such", "dir", "r.json")
            self.check(["solve", "--local", "4,4,4", "--json", missing], missing)
            self.check(["solve", "--local", "4,4,4", "--json", d], d)
            self.assertEqual(os.listdir(d), [])

    def test_bench_allreduce(self):
        self.check(["bench"], "allreduce")
        self.check(["bench", "allreduce", "-m", "0:8"], "-m '0:8'")
        self.check(["bench", "allreduce", "-m", "64:8"], "-m '64:8'")
        self.check(["bench", "allreduce", "-m", "8:abc"], "-m '8:abc'")
        # Unknown names are found by the reduction factory, collectively.
        self.check(["bench", "allreduce", "--algorithms", "nope"], "--algorithms 'nope'")
        self.check(["bench", "allreduce", "--algorithms", "mpi,nope"], "'nope'")
        self.check(["bench", "allreduce", "-i", "0"], "-i 0")
        self.check(["bench", "allreduce", "--modes", "bogus"], "'bogus'")
        self.check(["bench", "allreduce", "--progress", "poll:0"], "poll:0")
        self.check(["bench", "allreduce", "--modes", "noise", "--noise-global", "2,2,2"],
                   "--noise-global 2,2,2")

    def test_model_hybrid(self):
        frac = ["model", "hybrid", "--threads", "8"]
        self.check(["model"], "expected hybrid")
        self.check(["model", "hybrids"], "unknown model 'hybrids'")
        self.check(frac + ["--f-comm", "1.5", "--f-comp-non", "0.2"], "--f-comm 1.5")
        self.check(frac + ["--f-comm", "0.2", "--f-comp-non", "-0.1"], "--f-comp-non -0.1")
        self.check(frac + ["--f-comm", "0.6", "--f-comp-non", "0.5"],
                   "--f-comm 0.6 + --f-comp-non 0.5 = 1.1")
        self.check(frac + ["--f-comm", "0.4", "--f-comp-non", "0.2", "--f-comp-overlap", "0.3"],
                   "sum to 1")
        self.check(frac + ["--f-comm", "0.4"], "--f-comp-non: missing")
        self.check(["model", "hybrid", "--threads", "1", "--f-comm", "0.4", "--f-comp-non", "0.2"],
                   "--threads 1")
        self.check(frac + ["--reserved", "8", "--f-comm", "0.4", "--f-comp-non", "0.2"],
                   "--reserved 8 with --threads 8")
        self.check(frac + ["--reserved", "0", "--f-comm", "0.4", "--f-comp-non", "0.2"],
                   "--reserved 0")
        self.check(["model", "hybrid", "--f-comm", "0.4", "--f-comp-non", "0.2"],
                   "--threads: missing")
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "none.json")
            self.check(["model", "hybrid", "--fit", missing], f"--fit {missing}: no such file")
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{not json")
            self.check(["model", "hybrid", "--fit", bad], "not JSON")
            with open(os.path.join(DATA, "hybrid_mvm_exact.json")) as f:
                doc = json.load(f)
            del doc["records"][2]["funneled_s"]
            with open(bad, "w") as f:
                json.dump(doc, f)
            self.check(["model", "hybrid", "--fit", bad], "records[2].funneled_s: missing")
            doc["schema"] = "asyncsolve.bench.other/1"
            with open(bad, "w") as f:
                json.dump(doc, f)
            self.check(["model", "hybrid", "--fit", bad], "asyncsolve.bench.other/1")
            self.check(["model", "hybrid", "--fit", os.path.join(DATA, "hybrid_mvm_exact.json"),
                        "--reserved", "8"], "reserved = 8 with threads = 8")
            self.check(["model", "hybrid", "--fit", os.path.join(DATA, "hybrid_mvm_exact.json"),
                        "--f-comm", "0.1"], "--f-comm with --fit")
            self.check(["model", "hybrid", "--fit", os.path.join(DATA, "hybrid_mvm_exact.json"),
                        "--json", os.path.join(d, "no", "r.json")], os.path.join(d, "no"))
            self.assertEqual(sorted(os.listdir(d)), ["bad.json"])

    @unittest.skipIf(os.geteuid() == 0, "root can write anywhere")
    def test_read_only_directory(self):
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o500)
            self.check(["solve", "--local", "4,4,4", "--json", os.path.join(d, "r.json")], d)


class Solve(unittest.TestCase):
    def solve(self, args, ranks, expect_code=0, env=None):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "result.json")
            code, out, err = run(["solve"] + args + ["--json", path], ranks=ranks, env=env)
            self.assertEqual(code, expect_code, f"stdout={out} stderr={err}")
            self.assertEqual(os.listdir(d), ["result.json"], "no temporary left behind")
            with open(path) as f:
                return json.load(f), out

    def test_krylov_stops_where_its_estimate_leaves_the_true_residual(self):
        # A --tol below what double precision reaches: pcg1's recursively updated residual
        # went on falling (to 1e-162) while the true one stayed at 4e-15, through all
        # 100000 iterations; others stopped only when p^T A p underflowed to 0. Below
        # epsilon^2 the estimate says nothing of the true residual: every method stops there.
        for method in ["cg", "pcg1", "pcg2", "pcg-overlap", "bicgstab"]:
            with self.subTest(method=method):
                doc, out = self.solve(["--method", method, "--global", "20,20,20", "--problem",
                                       "ones", "--tol", "1e-300"], 2, expect_code=3)
                r = doc["result"]
                self.assertEqual(r["reason"], "breakdown", out)
                self.assertIn("the rounding level of double precision, which --tol is below",
                              r["detail"])
                self.assertLess(r["iterations"]["max"], 1000)
                self.assertLess(r["true_residual"], 1e-13)

    def test_result_document_on_1_2_3_ranks(self):
        for ranks in (1, 2, 3):
            doc, out = self.solve(["--problem", "plume", "--local", "8,7,6"], ranks)
            self.assertEqual(doc["schema"], "asyncsolve.result/1")
            for key in ["version", "git", "started", "command", "environment", "problem",
                        "method", "result", "phases", "stats", "history"]:
                self.assertIn(key, doc)
            self.assertEqual(doc["environment"]["ranks"], ranks)
            self.assertEqual(doc["environment"]["cpu_model"], cpuinfo_model())
            self.assertEqual(doc["command"][1], "solve")
            r = doc["result"]
            self.assertTrue(r["converged"])
            self.assertEqual(r["reason"], "tolerance")
            self.assertEqual(len(r["iterations"]["per_rank"]), ranks)
            self.assertEqual(r["iterations"]["min"], r["iterations"]["max"])
            self.assertLess(r["true_residual"], 1e-4)
            self.assertLess(r["residual_estimate"], 1e-4)
            self.assertIsNone(r["error_inf"])
            dims = doc["problem"]["dims"]
            self.assertEqual(dims[0] * dims[1] * dims[2], ranks)
            self.assertEqual(doc["problem"]["global"][0], 8 * dims[0])
            for phase in ["halo", "sweep", "residual", "reduce"]:
                p = doc["phases"][phase]
                self.assertLessEqual(p["min"], p["mean"])
                self.assertLessEqual(p["mean"], p["max"])
            m = doc["method"]
            for key in ["name", "variant", "transport", "halo", "allreduce", "progress", "tol",
                        "max_iters", "check_every", "halo_every", "copy"]:
                self.assertIn(key, m)
            self.assertEqual(doc["history"][0]["iteration"], 0)
            self.assertEqual(doc["history"][-1]["iteration"], r["iterations"]["max"])
            self.assertIn("converged (tolerance)", out)
            self.assertEqual(out.count("asyncsolve 0."), 1, "summary printed by rank 0 only")

    def test_ones_reports_error(self):
        doc, out = self.solve(["--problem", "ones", "--global", "9,8,7", "--tol", "1e-8"], 2)
        self.assertLess(doc["result"]["error_inf"], 1e-6)
        self.assertIn("max |u - exact|", out)

    def test_not_converged_exits_3_and_still_reports(self):
        doc, out = self.solve(["--local", "6,6,6", "--max-iters", "10"], 2, expect_code=3)
        self.assertFalse(doc["result"]["converged"])
        self.assertEqual(doc["result"]["reason"], "max_iters")
        self.assertEqual(doc["result"]["iterations"]["max"], 10)
        self.assertIn("NOT converged", out)

    def test_max_iters_between_checks_reports_the_last_iterate(self):
        # Stopping at --max-iters between two checks reported the residual of the
        # last check (1.0, that of x0, with --check-every past --max-iters) beside
        # the final iterate's true residual; the last iterate is checked now.
        for extra, ranks in ((["--variant", "sync"], 2), (["--assemble"], 3),
                             (["--transport", "omp", "--threads", "2"], 1),
                             (["--hybrid", "funneled", "--threads", "2"], 2)):
            with self.subTest(extra=extra):
                args = ["--check-every", "1000000000", "--max-iters", "40", "--local", "6,6,6"]
                doc, _ = self.solve(args + extra, ranks, expect_code=3)
                r = doc["result"]
                self.assertEqual(r["reason"], "max_iters")
                self.assertEqual(r["iterations"]["max"], 40)
                self.assertLess(r["residual_estimate"], 0.5)
                self.assertAlmostEqual(r["residual_estimate"] / r["true_residual"], 1.0, places=9)
                self.assertEqual(doc["history"][-1]["iteration"], 40)

    def test_rank_0_alone_exits_with_the_outcome(self):
        # Every other rank exits 0 after a collective outcome, so that the
        # launcher cannot end the job at another rank's non-zero exit before
        # rank 0's summary is forwarded; the launcher passes rank 0's code on.
        with tempfile.TemporaryDirectory() as d:
            wrapper = ['sh', '-c', '"$@"; echo $? > "$RC_DIR/$$"', 'sh']
            for args, code in ((["--local", "6,6,6", "--max-iters", "10"], 3),
                               (["--local", "6,6,0"], 2), (["--local", "6,6,6"], 0)):
                for f in os.listdir(d):
                    os.remove(os.path.join(d, f))
                cmd = MPIEXEC + ["-n", "3"] + wrapper + [BINARY, "solve"] + args
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                                   env={**os.environ, "RC_DIR": d})
                self.assertEqual(p.returncode, 0, p.stderr)  # the wrappers' exits
                codes = sorted(int(Path(d, f).read_text()) for f in os.listdir(d))
                self.assertEqual(codes, sorted([code, 0, 0]), (args, p.stdout + p.stderr))
        code, out, err = run(["solve", "--local", "6,6,6", "--max-iters", "10"], 3)
        self.assertEqual(code, 3, err)  # the launcher's: rank 0's
        self.assertIn("NOT converged", out)

    def test_options_recorded(self):
        doc, _ = self.solve(["--global", "10,10,10", "--check-every", "5", "--halo-every", "2",
                             "--copy", "--offset", "1"], 2)
        m = doc["method"]
        self.assertEqual(m["check_every"], 5)
        self.assertEqual(m["halo_every"], 2)
        self.assertTrue(m["copy"])
        self.assertEqual(doc["problem"]["offset"], 1.0)
        self.assertTrue(doc["result"]["converged"])

    def test_async_and_racy_documents(self):
        for variant in ("async", "racy"):
            for ranks in (1, 3):
                doc, out = self.solve(["--variant", variant, "--local", "6,6,6", "--check-every",
                                       "5", "--max-in-flight", "3"], ranks)
                r = doc["result"]
                self.assertTrue(r["converged"], variant)
                self.assertLess(r["true_residual"], 10 * 1e-4)
                self.assertEqual(len(r["iterations"]["per_rank"]), ranks)
                self.assertEqual(doc["method"]["variant"], variant)
                self.assertEqual(doc["method"]["allreduce"], "tree")
                self.assertEqual(doc["method"]["max_in_flight"], 3)
                self.assertEqual({h["rank"] for h in doc["history"]}, set(range(ranks)))
                for h in doc["history"]:
                    self.assertIn("local_residual", h)
                self.assertIsInstance(doc["stats"]["skipped_sends"], int)
                if ranks > 1:
                    self.assertGreater(sum(doc["stats"]["batch_sizes"].values()), 0)
                    self.assertGreater(doc["stats"]["sends_per_iteration"], 0)
                for phase in ["recv", "sweep", "send", "residual", "reduce"]:
                    self.assertIn(phase, doc["phases"])
                self.assertIn("sends per iteration", out)

    def test_rma_transport_all_variants(self):
        for variant in ("sync", "async", "racy"):
            for ranks in (1, 3):
                doc, _ = self.solve(["--transport", "rma", "--variant", variant, "--local",
                                     "6,6,6", "--check-every", "5"], ranks)
                self.assertTrue(doc["result"]["converged"], variant)
                self.assertLess(doc["result"]["true_residual"], 10 * 1e-4)
                self.assertEqual(doc["method"]["transport"], "rma")
                if variant == "sync":
                    self.assertEqual(doc["method"]["halo"], "channel")

    def test_rma_on_a_crowded_node_warns_under_mpich_only(self):
        # More ranks than cores: MPICH's flushes wait for descheduled targets.
        cores = os.cpu_count() or 1
        if cores > 7:
            self.skipTest(f"{cores + 1} ranks would be needed to crowd this node")
        _, info, _ = run(["info"])
        mpich = re.search(r"mpi library\s+MPICH", info) is not None
        args = ["solve", "--transport", "rma", "--variant", "sync", "--local", "6,6,6"]
        for ranks, crowded in ((cores, False), (cores + 1, True)):
            code, _, err = run(args, ranks=ranks)
            self.assertEqual(code, 0, err)
            warned = "asyncsolve: warning: --transport rma with MPICH" in err
            self.assertEqual(warned, crowded and mpich, (ranks, err))
            self.assertLessEqual(err.count("warning: --transport rma"), 1, "rank 0 only")
        # Bad input found after the options are read (here the document's folder) is still
        # one line: the warning comes with the summary of a run, not before the checks.
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "missing", "r.json")
            code, out, err = run(args + ["--json", missing], ranks=cores + 1)
        self.assertEqual(code, 2, err)
        self.assertEqual(out, "", "no summary for bad input")
        lines = [s for s in err.splitlines() if s.strip()]
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(missing, lines[0])

    @unittest.skipUnless(os.environ.get("ASYNCSOLVE_MPI_FLAVOUR", "Open MPI") == "Open MPI",
                         "the one-sided component is Open MPI's choice")
    def test_rma_transport_avoids_osc_rdma_unless_the_user_chose(self):
        base = ["--variant", "async", "--local", "6,6,6", "--check-every", "5"]
        unset = {k: v for k, v in os.environ.items() if k != "OMPI_MCA_osc"}
        for transport, env, expected in (("rma", unset, "^rdma"),
                                         ("mpi", unset, "default"),
                                         ("rma", dict(unset, OMPI_MCA_osc="ucx"), "ucx")):
            doc, _ = self.solve(["--transport", transport] + base, 2, env=env)
            self.assertTrue(doc["result"]["converged"], transport)
            self.assertEqual(doc["environment"]["mpi_osc"], expected, (transport, env.get(
                "OMPI_MCA_osc")))

    def test_shmem_transport_all_variants(self):
        # OSHMEM programs run under mpiexec too; Debian's Open MPI needs
        # OMPI_MCA_osc=ucx or shmem_finalize crashes.
        _, info, _ = run(["info"])
        if "shmem transport built" not in info:
            self.skipTest("this build has no OpenSHMEM")
        env = dict(os.environ, OMPI_MCA_osc="ucx")
        for variant in ("sync", "async", "racy"):
            for ranks in (1, 3):
                doc, _ = self.solve(["--transport", "shmem", "--variant", variant, "--local",
                                     "6,6,6", "--check-every", "5"], ranks, env=env)
                self.assertTrue(doc["result"]["converged"], variant)
                self.assertLess(doc["result"]["true_residual"], 10 * 1e-4)
                self.assertEqual(doc["method"]["transport"], "shmem")
                self.assertTrue(doc["environment"]["shmem"])
                if variant == "sync":
                    self.assertEqual(doc["method"]["halo"], "channel")

    def test_final_sync_and_straggler(self):
        doc, _ = self.solve(["--variant", "async", "--local", "6,6,6", "--tol", "1e-6",
                             "--final-sync", "2000", "--slow-rank", "1", "--slow-factor", "3",
                             "--allreduce", "impi", "--progress", "poll:2"], 2)
        self.assertEqual(doc["method"]["progress"], "poll:2")
        r = doc["result"]
        self.assertTrue(r["converged"])
        self.assertLess(r["true_residual"], 1e-6)
        self.assertGreater(r["injected_s"]["max"], 0)
        self.assertEqual(r["injected_s"]["min"], 0)
        self.assertEqual(doc["method"]["slow_rank"], 1)

    def test_kernel_forced_and_chosen(self):
        code, out, err = run(["solve", "--kernel", "fastest"], ranks=2)
        self.assertEqual(code, 2)
        self.assertEqual(out, "")
        self.assertEqual([s for s in err.splitlines() if s.strip()],
                         [("asyncsolve: error: --kernel 'fastest': expected one of auto, "
                           "portable, stream, avx512")])
        # Every variant writes the reference's iterates and sums the residual
        # to the same value (to rounding): the same history, the same answer.
        docs = {}
        for kernel in ("auto", "portable", "stream", "avx512"):
            code, _, err = run(["solve", "--kernel", kernel, "--local", "4,4,4"], ranks=1)
            if code == 2:
                self.assertIn("the variants this build has", err)  # stream, avx512
                continue
            doc, _ = self.solve(["--kernel", kernel, "--local", "9,8,7", "--tol", "1e-6"], 2)
            self.assertEqual(doc["method"]["kernel"], kernel)
            if kernel != "auto":
                self.assertEqual(doc["method"]["kernels_used"], [kernel])
            docs[kernel] = doc
        # auto: what each rank measured fastest, one of the variants built.
        self.assertTrue(docs["auto"]["method"]["kernels_used"])
        self.assertLessEqual(set(docs["auto"]["method"]["kernels_used"]), set(docs))
        iterations = {k: d["result"]["iterations"]["max"] for k, d in docs.items()}
        self.assertEqual(len(set(iterations.values())), 1, iterations)
        for doc in docs.values():
            self.assertAlmostEqual(doc["result"]["true_residual"],
                                   docs["portable"]["result"]["true_residual"], delta=1e-12)

    def test_async_not_converged_exits_3(self):
        # --idle off: a rank that made its 20 sweeps stops sweeping and waits
        # for the others (max_iters counts the slowest rank's sweeps).
        doc, _ = self.solve(["--variant", "racy", "--local", "6,6,6", "--max-iters", "20",
                             "--tol", "1e-12", "--check-every", "4", "--idle", "off",
                             "--final-sync", "0"], 2,
                            expect_code=3)
        self.assertFalse(doc["result"]["converged"])
        self.assertEqual(doc["result"]["reason"], "max_iters")
        self.assertLessEqual(doc["result"]["iterations"]["max"], 20)
        self.assertEqual(doc["result"]["iterations"]["min"], 20)
        self.assertEqual(doc["method"]["idle"], "off")

    def test_max_iters_counts_the_slowest_rank(self):
        # Idle on (the default): a fast rank goes on past 20 sweeps while its
        # residual is not small; the solve ends when every rank made 20.
        doc, _ = self.solve(["--variant", "async", "--local", "6,6,6", "--max-iters", "20",
                             "--tol", "1e-12", "--slow-rank", "1", "--slow-factor", "4",
                             "--final-sync", "0"], 2,
                            expect_code=3)
        self.assertEqual(doc["result"]["reason"], "max_iters")
        self.assertGreaterEqual(doc["result"]["iterations"]["min"], 20)
        self.assertEqual(doc["method"]["idle"], "on")
        self.assertIn("idle_waits", doc["stats"])
        self.assertIn("idle", doc["phases"])

    def test_a_csr_system_idles_as_the_stencil_does(self):
        # --idle on is the default for the asynchronous Jacobi of a CSR system
        # too (its bound: the matrix's local and ghost blocks' norms); off is
        # recorded as asked.
        for idle in (None, "off"):
            args = ["--assemble", "--variant", "async", "--local", "8,8,8", "--tol", "1e-8"]
            doc, _ = self.solve(args + (["--idle", idle] if idle else []), 2)
            self.assertTrue(doc["result"]["converged"])
            self.assertLess(doc["result"]["true_residual"], 1e-8)
            self.assertEqual(doc["method"]["idle"], idle or "on")

    def test_max_time_ends_every_method_with_exit_3(self):
        unreachable = ["--tol", "1e-300", "--max-iters", "1000000000", "--max-time", "0.5"]
        # The Krylov methods on a grid they cannot solve to rounding level in
        # 0.5 s (a rank slowed 100x): at that level pipecg's p^T A p loses its
        # sign and the solve would end in a breakdown before the time is up.
        krylov = ["--local", "48,48,48", "--slow-rank", "0", "--slow-factor", "100"]
        # Jacobi likewise, on a grid it cannot sweep to the rounding level in
        # 0.5 s: there sync stops with reason breakdown, and async and racy
        # (ranks or threads) once every one made 1000 sweeps without a new
        # smallest estimate.
        for extra in (["--variant", "sync"], ["--variant", "async"], ["--variant", "racy"],
                      ["--transport", "omp", "--variant", "async", "--threads", "2"],
                      ["--method", "cg"] + krylov, ["--method", "pipecg"] + krylov):
            ranks = 1 if "omp" in extra else 2
            local = [] if "--local" in extra else ["--local", "48,48,48"]
            doc, out = self.solve(local + unreachable + extra, ranks, expect_code=3)
            r = doc["result"]
            self.assertFalse(r["converged"], extra)
            self.assertEqual(r["reason"], "max_time", extra)
            self.assertGreaterEqual(r["time_s"], 0.5, extra)
            self.assertEqual(doc["method"]["max_time"], 0.5)
            self.assertIn("NOT converged (max_time)", out)
        doc, _ = self.solve(["--local", "6,6,6"], 1)
        self.assertIsNone(doc["method"]["max_time"])  # no guard unless asked
        self.assertIsNone(doc["method"]["idle"])      # sync does not idle

    def test_krylov_methods_documents(self):
        iterations = {}
        for method in ["cg", "pcg1", "pcg2", "pcg-overlap", "pipecg"]:
            doc, out = self.solve(["--problem", "ones", "--global", "12,11,10", "--method", method],
                                  3)
            r = doc["result"]
            self.assertTrue(r["converged"], method)
            self.assertLess(r["residual_estimate"], 1e-6)  # the Krylov default tolerance
            self.assertLess(r["true_residual"], 1e-5)
            self.assertEqual(doc["method"]["tol"], 1e-6)
            self.assertGreater(r["time_per_iteration_s"], 0)
            # auto: the shared-memory reduction (impi among node leaders) where
            # a method overlaps its inner products, blocking MPI_Allreduce elsewhere
            self.assertEqual(doc["method"]["allreduce"],
                             "twolevel:shm+impi" if method in ("pcg-overlap", "pipecg") else "mpi")
            for phase in ["matvec_interior", "halo_wait", "matvec_boundary", "axpy"]:
                self.assertIn(phase, doc["phases"])
            self.assertEqual(len(doc["history"]), r["iterations"]["max"] + 1)
            self.assertGreater(doc["stats"]["halo_tests"]["max"], 0)
            iterations[method] = r["iterations"]["max"]
            self.assertIn(f"{method} (pc ", out)
        for method in ["pcg1", "pcg2", "pcg-overlap"]:
            self.assertLessEqual(abs(iterations[method] - iterations["cg"]), 1)

    def test_repeat_solve_documents(self):
        # every Krylov method, structured and assembled: N solves after one setup,
        # each the first one's iterations and solution; the other fields stay the
        # first solve's
        for ranks in (1, 2, 3):
            for method, extra in (("cg", []), ("pcg1", ["--pc", "chebyshev"]),
                                  ("pipecg", ["--assemble"])):
                doc, out = self.solve(["--problem", "ones", "--global", "10,9,8", "--method",
                                       method, "--repeat-solve", "3"] + extra, ranks)
                r = doc["result"]
                rs = r["repeat_solves"]
                self.assertEqual(doc["method"]["repeat_solves"], 3)
                self.assertEqual((rs["requested"], rs["count"]), (3, 3))
                self.assertEqual(rs["iterations"], [r["iterations"]["max"]] * 3)
                self.assertEqual(rs["converged"], [True] * 3)
                self.assertEqual(rs["change_inf"], [0.0] * 3)
                self.assertEqual(rs["true_residual"], [r["true_residual"]] * 3)
                self.assertEqual(rs["time_s"][0], r["time_s"])
                self.assertAlmostEqual(rs["total_time_s"], sum(rs["time_s"]))
                self.assertEqual(len(doc["history"]), r["iterations"]["max"] + 1)
                self.assertIn("3 of 3 solves after one setup", out)
        # without it: one solve, listed
        doc, out = self.solve(["--problem", "ones", "--global", "8,8,8", "--method", "pcg1"], 2)
        rs = doc["result"]["repeat_solves"]
        self.assertEqual((rs["requested"], rs["count"]), (1, 1))
        self.assertEqual(rs["time_s"], [doc["result"]["time_s"]])
        self.assertNotIn("repeats", out)
        # Jacobi has none
        doc, _ = self.solve(["--local", "6,6,6"], 1)
        self.assertNotIn("repeat_solves", doc["result"])
        self.assertEqual(doc["method"]["repeat_solves"], 1)

    def test_repeat_solve_stops_at_a_failed_solve(self):
        doc, out = self.solve(["--problem", "ones", "--global", "10,10,10", "--method", "pcg1",
                               "--max-iters", "3", "--repeat-solve", "4"], 2, expect_code=3)
        rs = doc["result"]["repeat_solves"]
        self.assertEqual((rs["requested"], rs["count"]), (4, 1))
        self.assertEqual(rs["converged"], [False])
        self.assertIn("1 of 4 solves", out)

    def test_laplace27_per_rank_size(self):
        doc, _ = self.solve(["--problem", "laplace27", "--local", "6,5,4", "--method",
                             "pcg-overlap", "--halo", "waitall", "--test-every", "1"], 2)
        self.assertTrue(doc["result"]["converged"])
        self.assertEqual(doc["problem"]["stencil"], 27)
        self.assertEqual(doc["method"]["pc"], "jacobi")
        self.assertEqual(doc["method"]["test_every"], 1)

    def test_progress_thread_for_async_jacobi_and_krylov(self):
        # The sparse paths (--assemble, --matrix) took the option and ran no thread.
        for args in (["--variant", "racy", "--transport", "mpi"],
                     ["--variant", "async", "--transport", "rma"],
                     ["--method", "pcg-overlap", "--allreduce", "tree"],
                     ["--assemble", "--variant", "async", "--transport", "rma"],
                     ["--assemble", "--method", "schwarz", "--variant", "racy"]):
            doc, _ = self.solve(["--local", "8,8,8", "--progress", "thread:10"] + args, 2)
            self.assertTrue(doc["result"]["converged"], args)
            self.assertEqual(doc["method"]["progress"], "thread:10")
            self.assertEqual(doc["environment"]["thread_level"], "multiple")
            self.assertGreater(doc["stats"]["progress_passes"]["min"], 0)

    def test_no_error_against_the_unshifted_solution_with_a_shift(self):
        # ones' exact solution (u = 1) is A's: error_inf compared (A + S I)'s with it.
        for extra in ([], ["--assemble"]):
            doc, out = self.solve(["--problem", "ones", "--global", "8,8,8", "--method", "cg",
                                   "--shift", "1"] + extra, 2)
            self.assertTrue(doc["result"]["converged"], extra)
            self.assertIsNone(doc["result"]["error_inf"], extra)
            self.assertNotIn("max |u - exact|", out)
        doc, _ = self.solve(["--problem", "ones", "--global", "8,8,8", "--method", "cg"], 2)
        self.assertLess(doc["result"]["error_inf"], 1e-3)

    def test_sync_jacobi_with_every_reduction_algorithm(self):
        iterations = set()
        for algorithm in ["mpi", "rd", "knomial:3", "twolevel:rd", "impi", "tree"]:
            doc, _ = self.solve(["--problem", "ones", "--global", "10,9,8", "--check-every", "10",
                                 "--allreduce", algorithm], 3)
            self.assertTrue(doc["result"]["converged"], algorithm)
            self.assertEqual(doc["method"]["allreduce"], algorithm)
            iterations.add(doc["result"]["iterations"]["max"])
        self.assertEqual(len(iterations), 1, iterations)

    def test_krylov_breakdown_exits_3(self):
        doc, out = self.solve(["--problem", "ones", "--global", "10,10,10", "--method", "cg",
                               "--shift", "-5.9"], 2, expect_code=3)
        r = doc["result"]
        self.assertFalse(r["converged"])
        self.assertEqual(r["reason"], "breakdown")
        self.assertIn("iteration", r["detail"])
        self.assertIn("breakdown", out)

    def test_monitor_prints_progress(self):
        code, out, err = run(["solve", "--local", "6,6,6", "--monitor", "--monitor-every", "0",
                              "--check-every", "10"], ranks=2)
        self.assertEqual(code, 0, err)
        lines = [s for s in out.splitlines() if s.strip().startswith("iteration")]
        self.assertGreater(len(lines), 2)
        self.assertIn("residual", lines[0])


class ModelHybrid(unittest.TestCase):
    """`asyncsolve model hybrid`: paper 002 §7.2's worked example and the fit of eq. 14."""

    def model(self, args, ranks=1):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.json")
            code, out, err = run(["model", "hybrid"] + args + ["--json", path], ranks=ranks)
            self.assertEqual(code, 0, f"stdout={out} stderr={err}")
            self.assertEqual(os.listdir(d), ["model.json"], "no temporary left behind")
            with open(path) as f:
                doc = json.load(f)
        self.assertEqual(doc["schema"], "asyncsolve.model.hybrid/1")
        self.assertEqual(doc["command"][-2], "--json")
        return doc, out

    def test_worked_example(self):
        # "m = 1, n = 8, f_comp,non = 20%: eps_max = 1.60 at f_comm,best = 43%,
        # eps = 1 at f_comm,equiv = 10%, eps_min = 0.90 at f_comm = 0%."
        doc, out = self.model(["--threads", "8", "--reserved", "1", "--f-comm", "0.43",
                               "--f-comp-non", "0.2"], ranks=2)
        q = doc["quantities"]
        self.assertEqual(doc["mode"], "quantities")
        self.assertEqual(round(q["epsilon_max"], 2), 1.60)
        self.assertEqual(round(q["f_comm_best"], 2), 0.43)
        self.assertAlmostEqual(q["f_comm_equiv"], 0.10, places=12)
        self.assertEqual(round(q["epsilon_min"], 2), 0.90)
        self.assertAlmostEqual(q["epsilon_bound"], 2 - 1 / 8, places=12)
        self.assertAlmostEqual(q["epsilon_floor"], 1 - 1 / 8, places=12)
        self.assertAlmostEqual(q["f_comp_overlap"], 0.37, places=12)
        self.assertAlmostEqual(q["epsilon"], 1 / 0.63, places=12)
        self.assertEqual(q["limited_by"], "communication")
        for pattern in [r"epsilon_max +1\.5957", r"f_comm,best +0\.4267",
                        r"f_comm,equiv +0\.1000", r"epsilon_min +0\.8974",
                        r"verdict +funneled is 1\.59x faster"]:
            self.assertRegex(out, pattern)
        self.assertEqual(out.count("model hybrid"), 1, "printed by rank 0 only")
        # At f_comm,equiv both schemes take the same time.
        doc, _ = self.model(["--threads", "8", "--f-comm", "0.1", "--f-comp-non", "0.2",
                             "--f-comp-overlap", "0.7"])
        self.assertAlmostEqual(doc["quantities"]["epsilon"], 1.0, places=12)

    def test_runs_without_mpirun(self):
        p = subprocess.run([BINARY, "model", "hybrid", "--threads", "8", "--f-comm", "0",
                            "--f-comp-non", "0.2"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"epsilon +0\.8974")

    def test_fit_of_the_exact_sample(self):
        path = os.path.join(DATA, "hybrid_mvm_exact.json")
        doc, out = self.model(["--fit", path], ranks=2)
        fit = doc["fit"]
        self.assertEqual(doc["mode"], "fit")
        self.assertEqual((fit["threads"], fit["reserved"], fit["ni"], fit["nj"]), (8, 1, 512, 512))
        self.assertEqual(fit["masteronly_source"], "split")
        self.assertAlmostEqual(fit["parameters"]["comm_over_overlap"], 4.57, places=6)
        self.assertAlmostEqual(fit["parameters"]["non_over_overlap"], 1 / 6, places=6)
        self.assertAlmostEqual(fit["nk_crossover"], 4.57 * 7, places=5)
        self.assertEqual(len(fit["records"]), 9)
        for r in fit["records"]:
            self.assertAlmostEqual(r["epsilon_measured"], r["masteronly_s"] / r["funneled_s"])
            self.assertAlmostEqual(r["epsilon_predicted"], r["epsilon_measured"], places=9)
            self.assertIsNone(r["epsilon_multiple"])
        for pattern in [r"nk_local", r"eps_eq14", r"x_comm / x_MVM,overlap +4\.5700",
                        r"x_MVM,non / x_MVM,overlap +0\.1667"]:
            self.assertRegex(out, pattern)
        self.assertEqual(out.count("§7.2.2"), 1, "printed by rank 0 only")

    def test_fit_of_the_noisy_sample(self):
        doc, _ = self.model(["--fit", os.path.join(DATA, "hybrid_mvm_noisy.json")])
        fit = doc["fit"]
        self.assertLess(abs(fit["parameters"]["comm_over_overlap"] - 4.57), 0.15 * 4.57)
        self.assertLess(fit["rms_epsilon_error"], 0.05)
        self.assertIsNotNone(fit["records"][0]["epsilon_multiple"])
        # The paper's one-parameter fit, x_MVM,non / x_MVM,overlap = 1/6 held.
        doc, out = self.model(["--fit", os.path.join(DATA, "hybrid_mvm_noisy.json"),
                               "--non-ratio", "1/6", "--threads", "8"])
        fit = doc["fit"]
        self.assertTrue(fit["non_ratio_fixed"])
        self.assertEqual(fit["masteronly_source"], "scaled")
        self.assertAlmostEqual(fit["parameters"]["non_over_overlap"], 1 / 6)
        self.assertLess(abs(fit["parameters"]["comm_over_overlap"] - 4.57), 0.10 * 4.57)
        self.assertIn("given (--non-ratio)", out)


class BenchAllreduce(unittest.TestCase):
    """`asyncsolve bench allreduce`: the document's shape, never its timings."""

    SMALL: ClassVar[list[str]] = ["-m", "8:64", "-i", "20", "-x", "2", "--repeats", "2"]

    def bench(self, args, ranks):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bench.json")
            code, out, err = run(["bench", "allreduce"] + args + ["--json", path], ranks=ranks)
            self.assertEqual(code, 0, f"stdout={out} stderr={err}")
            self.assertEqual(os.listdir(d), ["bench.json"], "no temporary left behind")
            with open(path) as f:
                return json.load(f), out

    def check_series(self, s, repeats):
        self.assertEqual(len(s["repeats"]), repeats)
        self.assertLessEqual(s["min"], s["median"])
        self.assertLessEqual(s["median"], s["max"])
        self.assertEqual(s["min"], min(s["repeats"]))
        self.assertEqual(s["max"], max(s["repeats"]))

    def test_all_modes_on_1_2_3_ranks(self):
        for ranks in (1, 2, 3):
            doc, out = self.bench(self.SMALL + ["--modes", "latency,overlap,noise",
                                                "--noise-global", "8,8,8", "--noise", "100:500"],
                                  ranks)
            self.assertEqual(doc["schema"], "asyncsolve.bench.allreduce/1")
            for key in ["version", "git", "started", "command", "environment", "parameters",
                        "latency", "overlap", "noise"]:
                self.assertIn(key, doc)
            env = doc["environment"]
            self.assertEqual(env["ranks"], ranks)
            for key in ["mpi_library", "thread_level", "hostname", "cores"]:
                self.assertIn(key, env)
            p = doc["parameters"]
            self.assertEqual(p["algorithms"], ["mpi", "impi", "tree"])
            self.assertEqual(p["sizes_bytes"], [8, 16, 32, 64])
            self.assertEqual((p["iterations"], p["warmup"], p["repeats"]), (20, 2, 2))
            self.assertEqual(p["progress"], "none")
            pairs = [(r["algorithm"], r["bytes"]) for r in doc["latency"]]
            self.assertEqual(pairs, [(a, b) for a in ("mpi", "impi", "tree")
                                     for b in (8, 16, 32, 64)])
            for r in doc["latency"]:
                self.assertEqual(r["doubles"], r["bytes"] // 8)
                self.check_series(r["latency_us"], 2)
                self.assertGreater(r["latency_us"]["min"], 0)
            self.assertEqual([(r["algorithm"], r["bytes"]) for r in doc["overlap"]], pairs)
            for r in doc["overlap"]:
                for key in ["t_pure_us", "t_cpu_us", "t_ovrl_us", "overlap_pct",
                            "compute_ratio", "gflops_solo", "gflops_overlap", "gflops_effective",
                            "test_us", "compute_in_overlap_us"]:
                    self.check_series(r[key], 2)
                for v in r["overlap_pct"]["repeats"]:
                    self.assertGreaterEqual(v, 0.0)
                    self.assertLessEqual(v, 100.0)
                self.assertGreaterEqual(min(r["calibration"]["units_min"]), 1)
                self.assertEqual(len(r["calibration"]["call_us_max"]), 2)
            control = doc["overlap_control"]
            self.assertEqual(control["algorithm"], "mpi")
            self.assertEqual(control["ok"],
                             control["max_median_overlap_pct"] <= control["limit_pct"])
            self.assertIn("control: blocking mpi", out)
            settings = [(r["method"], r["allreduce"], r["noise_us"], r["noise_hz"])
                        for r in doc["noise"]]
            self.assertEqual(settings, [("pcg2", "mpi", 0, 0), ("pcg-overlap", "impi", 0, 0),
                                        ("pcg2", "mpi", 100, 500),
                                        ("pcg-overlap", "impi", 100, 500)])
            for r in doc["noise"]:
                self.assertTrue(r["converged"])
                self.check_series(r["slowdown"], 2)
                self.check_series(r["time_s"], 2)
                if r["noise_hz"] == 0:
                    self.assertEqual(r["slowdown"]["repeats"], [1.0, 1.0])
            for table in ("latency:", "overlap:", "noise:"):
                self.assertEqual(out.count(table), 1, "tables printed by rank 0 only")

    def test_progress_thread_and_poll(self):
        for progress in ("thread", "poll:4"):
            doc, out = self.bench(["-m", "8:16", "-i", "20", "-x", "2", "--repeats", "2",
                                   "--modes", "overlap",
                                                "--algorithms", "impi,tree",
                                                "--progress", progress], 2)
            self.assertEqual(doc["parameters"]["progress"], progress)
            self.assertEqual(doc["latency"], [])
            self.assertEqual(len(doc["overlap"]), 4)
            for r in doc["overlap"]:
                self.assertEqual(r["progress"], progress)
                if progress == "thread":
                    self.assertEqual(r["test_us"]["max"], 0.0)
                for v in r["overlap_pct"]["repeats"]:
                    self.assertTrue(0.0 <= v <= 100.0, v)
            self.assertEqual(doc["environment"]["thread_level_requested"],
                             "multiple" if progress == "thread" else "single")
            self.assertIn(f"progress {progress}", out)


    def test_shared_memory_reductions(self):
        for ranks in (1, 3):
            doc, out = self.bench(self.SMALL + ["--modes", "latency,overlap", "--algorithms",
                                                "shm,twolevel:shm+rd"], ranks)
            self.assertEqual(doc["parameters"]["algorithms"], ["shm", "twolevel:shm+rd"])
            for mode in ("latency", "overlap"):
                self.assertEqual([(r["algorithm"], r["bytes"]) for r in doc[mode]],
                                 [(a, b) for a in ("shm", "twolevel:shm+rd")
                                  for b in (8, 16, 32, 64)])
            self.assertIn("shm", out)

    @unittest.skipUnless(os.environ.get("ASYNCSOLVE_MPI_FLAVOUR", "Open MPI") == "Open MPI",
                         "the failure is injected through Open MPI's osc component (OMPI_MCA_osc)")
    def test_shared_window_failure_is_a_runtime_failure(self):
        # Open MPI's osc/ucx has no shared-memory windows: the allocation
        # fails, and the command exits with 4 and MPI's error string.
        env = dict(os.environ, OMPI_MCA_osc="ucx")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bench.json")
            code, out, err = run(["bench", "allreduce", "--algorithms", "shm", "-m", "8",
                                  "--modes", "latency", "--json", path], ranks=2, env=env)
            self.assertEqual(code, 4, f"stdout={out} stderr={err}")
            self.assertIn("MPI_Win_allocate_shared: MPI_ERR", err)
            self.assertEqual(os.listdir(d), [], "no partial document")


class OpenMP(unittest.TestCase):
    """--transport omp: Jacobi with OpenMP threads on one rank (paper 000 §3.3)."""

    def solve(self, args, ranks=1, direct=False):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.json")
            if direct:  # no mpiexec: a singleton MPI process
                p = subprocess.run([BINARY] + args + ["--json", path], capture_output=True,
                                   text=True, timeout=120)
                code, out, err = p.returncode, p.stdout, p.stderr
            else:
                code, out, err = run(args + ["--json", path], ranks=ranks)
            doc = None
            if os.path.exists(path):
                with open(path) as f:
                    doc = json.load(f)
        return code, out, err, doc

    def test_a_tolerance_far_below_the_first_residual_is_met(self):
        # The estimate was a running sum of each thread's changes, whose rounding (1e-16 of
        # the first residual^2) kept it near 5e-10 here: every thread waited for news
        # (idle) and the solve never ended (10 runs in 10, --max-iters no help).
        for variant in ["async", "racy"]:
            for threads in [2, 3]:
                with self.subTest(variant=variant, threads=threads):
                    code, out, err, doc = self.solve(
                        ["solve", "--transport", "omp", "--variant", variant, "--threads",
                         str(threads), "--global", "6,6,6", "--problem", "plume", "--tol",
                         "1e-10"], direct=True)
                    self.assertEqual(code, 0, out + err)
                    self.assertTrue(doc["result"]["converged"])
                    self.assertLess(doc["result"]["true_residual"], 1e-10)

    def test_sync_stops_at_the_rounding_level(self):
        # A --tol below what double precision reaches: synchronous Jacobi over MPI stopped
        # there (stagnation), over OpenMP it ran all of --max-iters.
        code, out, err, doc = self.solve(
            ["solve", "--transport", "omp", "--threads", "2", "--global", "12,12,12",
             "--problem", "plume", "--tol", "1e-300"], direct=True)
        self.assertEqual(code, 3, out + err)
        self.assertEqual(doc["result"]["reason"], "breakdown")
        self.assertIn("rounding level", doc["result"]["detail"])
        self.assertLess(doc["result"]["iterations"]["max"], 100000)

    def test_async_stops_at_the_rounding_level(self):
        # The same over OpenMP's asynchronous threads: they ran all of --max-iters. The
        # rule counts every thread's sweeps since the estimate last fell (an idle thread's
        # waits do not count).
        for variant in ["async", "racy"]:
            with self.subTest(variant=variant):
                code, out, err, doc = self.solve(
                    ["solve", "--transport", "omp", "--variant", variant, "--threads", "2",
                     "--global", "12,12,12", "--problem", "plume", "--tol", "1e-300",
                     "--max-iters", "10000000"], direct=True)
                self.assertEqual(code, 3, out + err)
                self.assertEqual(doc["result"]["reason"], "breakdown")
                self.assertIn("every thread made 1000 sweeps or more without the residual "
                              "estimate falling below its smallest", doc["result"]["detail"])
                self.assertLess(doc["result"]["iterations"]["max"], 10000000)
                # What the detail claims: the iterate is at the rounding level. Under
                # load the threads' parts sum to a stale dip far below it; such a
                # verdict is refuted by the true residual and the sweeps go on.
                self.assertLess(doc["result"]["true_residual"], 1e-13)

    def test_variants_converge_with_per_thread_counts(self):
        for variant in ["sync", "async", "racy"]:
            for threads in [1, 3]:
                with self.subTest(variant=variant, threads=threads):
                    code, out, err, doc = self.solve(
                        ["solve", "--transport", "omp", "--variant", variant, "--threads",
                         str(threads), "--local", "8,8,4", "--problem", "ones", "--tol", "1e-5",
                         "--check-every", "10"]
                        # (final synchronous iterations exist for async and racy only)
                        + (["--final-sync", "20000"] if variant != "sync" else []))
                    self.assertEqual(code, 0, err)
                    self.assertIn(f"jacobi {variant} over omp, 1 rank, {threads} thread", out)
                    self.assertEqual(doc["environment"]["threads"], threads)
                    self.assertEqual(doc["environment"]["ranks"], 1)
                    self.assertEqual(doc["method"]["transport"], "omp")
                    self.assertEqual(doc["method"]["threads"], threads)
                    self.assertEqual(doc["problem"]["global"], [8, 8, 4 * threads])
                    self.assertEqual(doc["problem"]["local"], [8, 8, 4])
                    self.assertEqual(doc["problem"]["dims"], [1, 1, threads])
                    it = doc["result"]["iterations"]
                    self.assertEqual(len(it["per_thread"]), threads)
                    self.assertEqual(it["max"], max(it["per_thread"]))
                    self.assertEqual(it["min"], min(it["per_thread"]))
                    self.assertEqual(it["per_rank"], [it["max"]])
                    self.assertLess(doc["result"]["true_residual"], 1e-5)
                    self.assertLess(doc["result"]["residual_estimate"], 1e-5)
                    self.assertEqual({h["thread"] for h in doc["history"]}, set(range(threads)))
                    if variant == "sync":
                        self.assertEqual(it["min"], it["max"])
                        self.assertAlmostEqual(doc["result"]["true_residual"] /
                                               doc["result"]["residual_estimate"], 1.0, places=12)

    def test_global_split_along_z_and_threads_from_environment(self):
        env = dict(os.environ, OMP_NUM_THREADS="2")
        p = subprocess.run([BINARY, "solve", "--transport", "omp", "--global", "6,6,5",
                            "--problem", "ones", "--tol", "1e-5"],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("2 threads", p.stdout)
        self.assertIn("global 6x6x5, 6x6x2 to 6x6x3 per thread", p.stdout)

    def test_runs_without_mpiexec(self):
        code, _, err, doc = self.solve(["solve", "--transport", "omp", "--threads", "2",
                                        "--local", "6,6,3", "--variant", "racy",
                                        "--final-sync", "20000"], direct=True)
        self.assertEqual(code, 0, err)
        self.assertEqual(doc["environment"]["threads"], 2)

    def test_sync_copy_gives_the_same_iterates_through_a_copy_loop(self):
        # One kernel for both runs: auto measures the fastest in each process,
        # and avx512 sums the residual in its own order (the same iterates, a
        # residual that may differ in the last bit).
        runs = {}
        for copy in ([], ["--copy"]):
            code, _, err, doc = self.solve(["solve", "--transport", "omp", "--threads", "3",
                                            "--local", "8,8,4", "--check-every", "7",
                                            "--kernel", "portable"] + copy)
            self.assertEqual(code, 0, err)
            runs[bool(copy)] = doc
        self.assertTrue(runs[True]["method"]["copy"])
        self.assertEqual(runs[True]["result"]["iterations"], runs[False]["result"]["iterations"])
        self.assertEqual(runs[True]["result"]["true_residual"],
                         runs[False]["result"]["true_residual"])
        # The copy loop ran (and took time) only with --copy.
        self.assertGreater(runs[True]["phases"]["copy"]["max"], 0.0)
        self.assertEqual(runs[False]["phases"]["copy"]["max"], 0.0)
        self.bad(["solve", "--transport", "omp", "--variant", "async", "--copy"],
                 "--copy with --variant async")

    def test_max_iters_exit_code(self):
        code, _, err, doc = self.solve(["solve", "--transport", "omp", "--threads", "2",
                                        "--local", "6,6,3", "--max-iters", "5"])
        self.assertEqual(code, 3, err)
        self.assertEqual(doc["result"]["reason"], "max_iters")

    def bad(self, args, must_contain, ranks=1):
        code, out, err = run(args, ranks=ranks)
        self.assertEqual(code, 2, f"{args}: stdout={out!r} stderr={err!r}")
        lines = [s for s in err.splitlines() if s.strip()]
        self.assertEqual(len(lines), 1, f"{args}: expected one line, got {lines!r}")
        self.assertTrue(lines[0].startswith("asyncsolve: error: "), lines[0])
        self.assertIn(must_contain, lines[0])
        self.assertIn("expected", lines[0])
        self.assertEqual(out, "")

    def test_bad_input(self):
        self.bad(["solve", "--transport", "omp", "--threads", "2"], "on 3 ranks", ranks=3)
        self.bad(["solve", "--transport", "omp", "--threads", "2"], "on 2 ranks", ranks=2)
        self.bad(["solve", "--transport", "omp", "--threads", "0"], "--threads 0")
        self.bad(["solve", "--transport", "omp", "--threads", "-3"], "--threads -3")
        self.bad(["solve", "--transport", "omp", "--threads", "5", "--global", "8,8,4"],
                 "more threads than the 4 z-planes")
        self.bad(["solve", "--threads", "2"], "--threads 2 with --transport mpi")
        self.bad(["solve", "--transport", "omp", "--halo-every", "2"], "--halo-every 2")
        self.bad(["solve", "--transport", "omp", "--method", "cg"], "--transport omp")


class Hybrid(unittest.TestCase):
    """--hybrid masteronly|funneled|multiple: OpenMP threads per MPI rank (paper 002)."""

    # Ranks x threads share the cores: idle OpenMP threads must sleep.
    ENV: ClassVar[dict[str, str]] = dict(os.environ, OMP_WAIT_POLICY="passive")

    def solve(self, args, ranks):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.json")
            code, out, err = run(args + ["--json", path], ranks=ranks, env=self.ENV)
            doc = None
            if os.path.exists(path):
                with open(path) as f:
                    doc = json.load(f)
        return code, out, err, doc

    def test_every_scheme_for_jacobi_and_cg(self):
        levels = {"masteronly": "funneled", "funneled": "funneled", "multiple": "multiple"}
        for method, problem in [("jacobi", "plume"), ("cg", "ones")]:
            base = ["solve", "--method", method, "--problem", problem, "--global", "12,10,8"]
            if method == "jacobi":  # (Krylov methods check every iteration)
                base += ["--check-every", "10"]
            code, out, err, pure = self.solve(base, ranks=2)
            self.assertEqual(code, 0, err)
            self.assertEqual(pure["method"]["hybrid"], "none")
            self.assertEqual(pure["environment"]["threads"], 1)
            for mode, level in levels.items():
                with self.subTest(method=method, mode=mode):
                    code, out, err, doc = self.solve(
                        base + ["--hybrid", mode, "--threads", "2"], ranks=2)
                    self.assertEqual(code, 0, err)
                    self.assertIn(f"2 ranks (process grid 2x1x1) x 2 threads ({mode})", out)
                    self.assertEqual(doc["method"]["hybrid"], mode)
                    self.assertEqual(doc["method"]["threads"], 2)
                    self.assertEqual(doc["environment"]["threads"], 2)
                    self.assertEqual(doc["environment"]["thread_level_requested"], level)
                    self.assertEqual(doc["result"]["iterations"]["max"],
                                     pure["result"]["iterations"]["max"])
                    self.assertAlmostEqual(doc["result"]["residual_estimate"] /
                                           pure["result"]["residual_estimate"], 1.0, places=10)

    def test_threads_from_the_environment(self):
        env = dict(self.ENV, OMP_NUM_THREADS="3")
        code, out, err = run(["solve", "--global", "10,10,9", "--hybrid", "funneled"], ranks=1,
                             env=env)
        self.assertEqual(code, 0, err)
        self.assertIn("x 3 threads (funneled)", out)

    def bad(self, args, must_contain, ranks=3):
        code, out, err = run(args, ranks=ranks, env=self.ENV)
        self.assertEqual(code, 2, f"{args}: stdout={out!r} stderr={err!r}")
        lines = [s for s in err.splitlines() if s.strip()]
        self.assertEqual(len(lines), 1, f"{args}: expected one line, got {lines!r}")
        self.assertTrue(lines[0].startswith("asyncsolve: error: "), lines[0])
        self.assertIn(must_contain, lines[0])
        self.assertIn("expected", lines[0])
        self.assertEqual(out, "")

    def test_bad_input(self):
        self.bad(["solve", "--hybrid", "serialized"], "--hybrid 'serialized'")
        self.bad(["solve", "--hybrid", "funneled", "--threads", "0"], "--threads 0")
        self.bad(["solve", "--hybrid", "multiple", "--threads", "-2"], "--threads -2")
        self.bad(["solve", "--hybrid", "masteronly", "--threads", "5", "--global", "8,8,4"],
                 "more threads than the 4 z-planes", ranks=1)
        self.bad(["solve", "--hybrid", "funneled", "--threads", "3", "--global", "8,8,5",
                  "--dims", "1,1,3"], "more threads than the 1 z-planes")
        self.bad(["solve", "--hybrid", "funneled", "--transport", "rma"], "--transport rma")
        self.bad(["solve", "--hybrid", "funneled", "--transport", "omp"], "--transport omp",
                 ranks=1)
        self.bad(["solve", "--hybrid", "masteronly", "--variant", "async"], "--variant async")
        self.bad(["solve", "--hybrid", "multiple", "--halo", "neighbor"], "--halo neighbor")
        self.bad(["solve", "--hybrid", "funneled", "--method", "cg", "--progress", "thread"],
                 "--progress thread")
        self.bad(["solve", "--threads", "2", "--method", "cg"], "--threads 2 with --transport mpi")


def main():
    global BINARY, MPIEXEC
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--mpiexec", required=True)
    args, rest = parser.parse_known_args()
    BINARY = args.binary
    MPIEXEC = shlex.split(args.mpiexec.replace(";", " "))
    # Open MPI's mpiexec adds a banner when a rank exits non-zero; -q keeps
    # stderr to what the program itself printed.
    version = subprocess.run(MPIEXEC[:1] + ["--version"], capture_output=True, text=True)
    if any(s in version.stdout + version.stderr for s in ("Open MPI", "OpenRTE")):
        MPIEXEC.append("-q")
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


class FullDisk(unittest.TestCase):
    """A solution file that a full disk refuses: the solve's summary and result document
    are still written, the failure follows them (exit 4), and no partial file stays."""

    def test_summary_and_document_survive_an_unwritable_solution(self):
        import shutil
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            self.skipTest("needs root and unshare(1) to mount a small tmpfs")
        with tempfile.TemporaryDirectory() as d:
            n = 40000  # x takes about 1 MB as text, the tmpfs 300 kB
            matrix = Path(d) / "tri.mtx"
            lines = ["%%MatrixMarket matrix coordinate real symmetric", f"{n} {n} {2 * n - 1}"]
            lines += [f"{i} {i} 2.5" for i in range(1, n + 1)]
            lines += [f"{i + 1} {i} -1" for i in range(1, n)]
            matrix.write_text("\n".join(lines) + "\n")
            small = Path(d) / "small"
            small.mkdir()
            solve = MPIEXEC + ["-n", "2", BINARY, "solve", "--matrix", str(matrix),
                               "--method", "cg", "--write-solution", f"{small}/x.mtx",
                               "--json", f"{small}/r.json"]
            script = (f"mount -t tmpfs -o size=300k tmpfs {shlex.quote(str(small))} || exit 99; "
                      f"{shlex.join(solve)}; code=$?; echo LISTING; ls {shlex.quote(str(small))}; "
                      f"echo DOCUMENT; cat {shlex.quote(str(small))}/r.json; exit $code")
            p = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                               text=True, timeout=120, stdin=subprocess.DEVNULL)
            if p.returncode == 99:
                self.skipTest("cannot mount a tmpfs here: " + p.stderr.strip())
            said = f"stdout={p.stdout!r} stderr={p.stderr!r}"
            self.assertEqual(p.returncode, 4, said)
            self.assertIn("result     converged (tolerance)", p.stdout, said)
            self.assertIn("cannot write", p.stderr, said)
            self.assertIn("No space left on device", p.stderr, said)
            listing, _, document = p.stdout.partition("LISTING\n")[2].partition("DOCUMENT\n")
            self.assertNotIn("x.mtx", listing)  # the partial solution was removed
            self.assertTrue(json.loads(document)["result"]["converged"])


if __name__ == "__main__":
    main()
