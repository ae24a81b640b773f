#!/usr/bin/env python3
"""Tests of the simulation build (make sim): asyncsolve under SimGrid's smpirun.

Simulated runs at 4 to 16 ranks on the platforms of sim/: every method
converges and reports simulated time; two runs with the same arguments give
identical per-rank iteration counts and residual histories (deterministic
replay), for sync, async and racy Jacobi; what the simulation cannot run is
refused with one line and exit code 2.

Usage: test_sim.py --binary build-sim/asyncsolve [--platforms sim]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

BINARY = ""
PLATFORMS = ""


def hostfile(folder, hosts=64):
    path = os.path.join(folder, "hosts")
    with open(path, "w") as f:
        f.write("".join(f"node-{i}\n" for i in range(hosts)))
    return path


def smpirun(args, ranks, platform="torus", timeout=300):
    """Runs the simulation build on `ranks` simulated hosts of sim/PLATFORM.xml;
    returns (exit code, stdout, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["smpirun", "-np", str(ranks), "-platform",
               os.path.join(PLATFORMS, f"{platform}.xml"), "-hostfile", hostfile(tmp),
               "-no-privatize", BINARY] + args
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def solve(args, ranks, platform="torus"):
    """A simulated solve; returns its result document."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.json")
        code, out, err = smpirun(["solve", *args, "--json", path], ranks, platform)
        if code != 0:
            raise AssertionError(f"exit {code}\n{out}\n{err}")
        with open(path) as f:
            return json.load(f)


def replayed(doc):
    """What must be identical between two simulated runs with the same arguments."""
    r = doc["result"]
    return {"per_rank": r["iterations"]["per_rank"], "time_s": r["time_s"],
            "residual": r["residual_estimate"], "true": r["true_residual"],
            "history": doc.get("history")}


class Replay(unittest.TestCase):
    """Deterministic replay: no real machine can repeat an async or racy run."""

    def check(self, variant, ranks):
        args = ["--variant", variant, "--local", "10,10,10", "--tol", "1e-3",
                "--slow-rank", "1", "--slow-factor", "2"]
        first, second = solve(args, ranks), solve(args, ranks)
        self.assertTrue(first["result"]["converged"], first["result"])
        self.assertEqual(replayed(first), replayed(second))
        self.assertTrue(first["history"], "no residual history recorded")
        return first

    def test_sync(self):
        self.check("sync", 8)

    def test_async(self):
        doc = self.check("async", 8)
        per_rank = doc["result"]["iterations"]["per_rank"]
        # the slow rank iterates less than the others: asynchrony is simulated
        self.assertLess(per_rank[1], max(per_rank))

    def test_racy(self):
        self.check("racy", 8)


class SimulatedTime(unittest.TestCase):
    def test_time_is_simulated_and_platforms_differ(self):
        args = ["--method", "cg", "--local", "12,12,12", "--tol", "1e-6"]
        ib = solve(args, 16, "ib-fattree")
        gige = solve(args, 16, "gige")
        self.assertTrue(ib["result"]["converged"])
        self.assertEqual(ib["result"]["iterations"]["max"], gige["result"]["iterations"]["max"])
        # the same iterations take longer on Gigabit Ethernet than on InfiniBand
        self.assertGreater(gige["result"]["time_s"], 2 * ib["result"]["time_s"])
        self.assertIn("SMPI", ib["environment"]["mpi_library"])

    def test_krylov_methods_converge(self):
        for method in ["pcg1", "pcg2", "pcg-overlap"]:
            doc = solve(["--method", method, "--problem", "laplace27", "--local", "8,8,8",
                         "--allreduce", "rd"], 4, "ib-fattree")
            self.assertTrue(doc["result"]["converged"], (method, doc["result"]))


class AssembledMatrix(unittest.TestCase):
    """The distributed-matrix path (--assemble, as --matrix): its setup, its
    halo and the methods that need a matrix, simulated."""

    def test_schwarz_and_gmres(self):
        base = ["--assemble", "--local", "8,8,8", "--tol", "1e-3"]
        for extra in (["--method", "schwarz", "--local-solver", "ic0", "--variant", "sync"],
                      ["--method", "schwarz", "--local-solver", "ic0", "--variant", "async",
                       "--slow-rank", "1", "--slow-factor", "2"],
                      ["--method", "gmres", "--pc", "jacobi"]):
            doc = solve([*base, *extra], 4)
            result = doc["result"]
            self.assertTrue(result["converged"], (extra, result))
            self.assertLess(result["true_residual"], 1e-3, (extra, result))


class Refused(unittest.TestCase):
    """What the simulation build lacks: one line from rank 0, exit 2."""

    def refused(self, args, word):
        code, out, err = smpirun(["solve", *args], 4)
        self.assertEqual(code, 2, out + err)
        lines = [line for line in err.splitlines() if line.startswith("asyncsolve")]
        self.assertEqual(len(lines), 1, err)
        self.assertIn(word, lines[0])

    def test_threads(self):
        self.refused(["--transport", "omp"], "--transport omp")
        self.refused(["--hybrid", "funneled"], "--hybrid funneled")
        self.refused(["--variant", "async", "--progress", "thread"], "--progress thread")

    def test_neighbourhood_collectives(self):
        self.refused(["--halo", "neighbor"], "--halo neighbor")

    def test_shmem(self):
        self.refused(["--transport", "shmem"], "shmem")


def main():
    global BINARY, PLATFORMS
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--platforms",
                        default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "..", "..", "sim"))
    args, rest = parser.parse_known_args()
    BINARY, PLATFORMS = os.path.abspath(args.binary), os.path.abspath(args.platforms)
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
