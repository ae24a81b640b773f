#!/usr/bin/env python3
"""End-to-end tests of `asyncsolve bench stencil2d` under mpiexec (and over
OpenSHMEM when the build has it): bad input exits 2 with one line from rank
0; every variant validates on 1 to 4 ranks and the document has its shape;
a corrupted halo corner (the hidden --test-corrupt-corner hook) makes every
variant fail validation with exit 4, naming it. Never asserts on time.

Usage: test_bench_stencil2d.py --binary PATH --mpiexec "mpiexec --oversubscribe"
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
MPIEXEC = []
TWO_SIDED = ["trivial", "sendrecv", "halo"]
ONE_SIDED = ["put", "get", "get0", "get1"]


def run(args, ranks=1, timeout=120, env=None, launcher=True):
    cmd = (MPIEXEC + ["-n", str(ranks)] if launcher else []) + [BINARY, "bench", "stencil2d"] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def shmem_built():
    p = subprocess.run(MPIEXEC + ["-n", "1", BINARY, "info"], capture_output=True, text=True,
                       timeout=60)
    return "shmem transport built" in p.stdout


def without_ucx_osc():
    env = dict(os.environ)
    env.pop("OMPI_MCA_osc", None)
    return env


class BadInput(unittest.TestCase):
    """Every rank exits with 2; rank 0 prints one line naming the value."""

    def check(self, args, must_contain, ranks=3, env=None, launcher=True):
        code, out, err = run(args, ranks=ranks, env=env or without_ucx_osc(),
                             launcher=launcher)
        self.assertEqual(code, 2, f"{args}: stdout={out!r} stderr={err!r}")
        lines = [s for s in err.splitlines() if s.strip()]
        self.assertEqual(len(lines), 1, f"{args}: expected one line, got {lines!r}")
        self.assertTrue(lines[0].startswith("asyncsolve: error: "), lines[0])
        self.assertIn(must_contain, lines[0])
        self.assertIn("expected", lines[0])
        self.assertEqual(out, "", "nothing on stdout for bad input")

    def test_sizes_and_radius(self):
        self.check(["--local", "4", "--radius", "4"], "--radius 4 with --local 4")
        self.check(["--local", "64,8", "--radius", "8"], "--radius 8 with --local 8")
        self.check(["--local", "0"], "--local '0'")
        self.check(["--local", "-5"], "'-5'")
        self.check(["--local", "64,,8"], "empty item")
        self.check(["--local", "abc"], "'abc'")
        self.check(["--radius", "0"], "--radius 0")
        self.check(["--radius", "-1"], "--radius -1")
        self.check(["-i", "0"], "-i 0")
        self.check(["-x", "-1"], "-x -1")
        self.check(["--repeats", "0"], "--repeats 0")

    def test_variants_and_transports(self):
        self.check(["--variant", "bogus"], "--variant 'bogus'")
        self.check(["--variant", "put,put"], "listed twice")
        self.check(["--transport", "tcp"], "--transport 'tcp'")
        self.check(["--variant", "put", "--transport", "mpi"], "put is one-sided")
        self.check(["--variant", "halo", "--transport", "rma"], "halo is two-sided")
        self.check(["--bogus"], "--bogus")

    def test_shmem_unavailable(self):
        if not shmem_built():
            self.check(["--transport", "shmem"], "no OpenSHMEM")
            return
        # Not under a launcher (oshrun is Open MPI's mpirun).
        self.check(["--transport", "shmem"], "oshrun", launcher=False)
        # Under a launcher but without OMPI_MCA_osc=ucx.
        self.check(["--transport", "shmem"], "OMPI_MCA_osc=ucx", ranks=2)

    def test_unwritable_json(self):
        self.check(["--json", "/nonexistent-dir/x.json", "--local", "8", "-i", "1"],
                   "/nonexistent-dir")


class Runs(unittest.TestCase):
    SMALL: ClassVar[list[str]] = ["--local", "8,12", "--radius", "3", "-i", "3", "-x", "1",
                                  "--repeats", "2"]

    def bench(self, args, ranks, env=None):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s2d.json")
            code, out, err = run(args + ["--json", path], ranks=ranks, env=env)
            self.assertEqual(code, 0, f"stdout={out} stderr={err}")
            self.assertEqual(os.listdir(d), ["s2d.json"], "no temporary left behind")
            with open(path) as f:
                return json.load(f), out

    def check_document(self, doc, ranks, runs, sizes, repeats):
        self.assertEqual(doc["schema"], "asyncsolve.bench.stencil2d/1")
        for key in ["version", "git", "started", "command", "environment", "parameters", "grid",
                    "results"]:
            self.assertIn(key, doc)
        self.assertEqual(doc["environment"]["ranks"], ranks)
        px, py = doc["grid"]["dims"]
        self.assertEqual(px * py, ranks)
        self.assertEqual(doc["parameters"]["runs"], runs)
        self.assertEqual(doc["parameters"]["local_sizes"], sizes)
        self.assertEqual([(r["local"], r["name"]) for r in doc["results"]],
                         [(n, name) for n in sizes for name in runs])
        for r in doc["results"]:
            self.assertTrue(r["validated"])
            self.assertEqual(r["global"], [px * r["local"], py * r["local"]])
            rr = r["radius"]
            self.assertEqual(r["halo_bytes_per_rank"], 8 * (4 * r["local"] * rr + 4 * rr * rr))
            for key in ["iteration_us", "exchange_us", "filter_us", "bandwidth_mbs"]:
                s = r[key]
                self.assertEqual(len(s["repeats"]), repeats, key)
                self.assertLessEqual(s["min"], s["median"])
                self.assertLessEqual(s["median"], s["max"])
                self.assertGreaterEqual(s["min"], 0.0)

    def test_every_variant_validates_on_1_to_4_ranks(self):
        runs = [f"mpi/{v}" for v in TWO_SIDED] + [f"rma/{v}" for v in ONE_SIDED]
        for ranks in (1, 2, 3, 4):
            doc, out = self.bench(self.SMALL, ranks, env=without_ucx_osc())
            self.check_document(doc, ranks, runs, [8, 12], 2)
            self.assertIn("every repeat validated", out)
            for name in runs:
                self.assertIn(name, out)

    def test_variant_subset_and_radius_1(self):
        doc, _ = self.bench(["--local", "6", "--radius", "1", "-i", "2", "-x", "0",
                             "--repeats", "1", "--variant", "halo,get1"], 2)
        self.check_document(doc, 2, ["mpi/halo", "rma/get1"], [6], 1)

    def test_shmem_variants(self):
        if not shmem_built():
            self.skipTest("this build has no OpenSHMEM")
        env = dict(os.environ, OMPI_MCA_osc="ucx")
        for ranks in (2, 3):
            doc, _ = self.bench(["--transport", "shmem", "--local", "8", "--radius", "2",
                                 "-i", "3", "-x", "1", "--repeats", "1"], ranks, env=env)
            self.check_document(doc, ranks, [f"shmem/{v}" for v in ONE_SIDED], [8], 1)
            self.assertTrue(doc["environment"]["shmem"] in (True, False))


class ValidationCatchesAWrongCorner(unittest.TestCase):
    def check_fails(self, transport, variant, ranks, env=None):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s2d.json")
            code, out, err = run(["--transport", transport, "--variant", variant, "--local", "8",
                                  "--radius", "2", "-i", "2", "-x", "0", "--repeats", "1",
                                  "--test-corrupt-corner", "--json", path], ranks=ranks, env=env)
            self.assertEqual(code, 4, f"{transport}/{variant}: stdout={out!r} stderr={err!r}")
            lines = [s for s in err.splitlines() if s.strip()]
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(f"{transport}/{variant} failed validation", lines[0])
            self.assertIn("first wrong point", lines[0])
            self.assertEqual(os.listdir(d), [], "no document for a failed validation")

    def test_every_variant(self):
        for v in TWO_SIDED:
            self.check_fails("mpi", v, 3)
        for v in ONE_SIDED:
            self.check_fails("rma", v, 3)
        if shmem_built():
            env = dict(os.environ, OMPI_MCA_osc="ucx")
            for v in ONE_SIDED:
                self.check_fails("shmem", v, 2, env=env)

    def test_hook_is_hidden_from_help(self):
        code, out, _ = run(["--help"])
        self.assertEqual(code, 0)
        for option in ["--local", "--radius", "--iterations", "--warmup", "--repeats",
                       "--transport", "--variant", "--json"]:
            self.assertIn(option, out)
        self.assertNotIn("--test-corrupt-corner", out)


def main():
    global BINARY, MPIEXEC
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--mpiexec", required=True)
    args, rest = parser.parse_known_args()
    BINARY = args.binary
    MPIEXEC = shlex.split(args.mpiexec.replace(";", " "))
    version = subprocess.run(MPIEXEC[:1] + ["--version"], capture_output=True, text=True)
    if any(s in version.stdout + version.stderr for s in ("Open MPI", "OpenRTE")):
        MPIEXEC.append("-q")
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
