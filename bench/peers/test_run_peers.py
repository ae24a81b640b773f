#!/usr/bin/env python3
"""Tests of run_peers.py: parsing asyncsolve's result document (a hand-written
sample) and the peers' JSON line, the comparison, and, where the peer drivers
are built and mpiexec is present, an end-to-end --smoke run with a fake
asyncsolve (testdata/fake_asyncsolve.py). Standard library only:

    python3 bench/peers/test_run_peers.py
"""
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_peers  # noqa: E402

SAMPLE = os.path.join(HERE, "testdata", "asyncsolve_result_sample.json")
FAKE = os.path.join(HERE, "testdata", "fake_asyncsolve.py")


def load_sample():
    with open(SAMPLE) as f:
        return json.load(f)


class AsyncsolveDocument(unittest.TestCase):
    def test_sample(self):
        n = run_peers.asyncsolve_numbers(load_sample())
        self.assertEqual(n["iterations"], 35)
        self.assertAlmostEqual(n["time_s"], 7.0e-4)
        self.assertAlmostEqual(n["time_per_iteration_s"], 2.0e-5)
        self.assertIs(n["converged"], True)
        self.assertAlmostEqual(n["residual"], 6.134e-7)
        self.assertEqual(n["version"], "0.1.0")

    def test_time_per_iteration_derived_when_absent(self):
        doc = load_sample()
        del doc["result"]["time_per_iteration_s"]
        n = run_peers.asyncsolve_numbers(doc)
        self.assertAlmostEqual(n["time_per_iteration_s"], 7.0e-4 / 35)

    def test_missing_or_wrong_fields(self):
        for mutate, error in (
                (lambda d: d["result"].pop("iterations"), KeyError),
                (lambda d: d["result"]["iterations"].pop("max"), KeyError),
                (lambda d: d["result"].pop("time_s"), KeyError),
                (lambda d: d["result"].pop("converged"), KeyError),
                (lambda d: d["result"]["iterations"].update(max=35.5), ValueError),
                (lambda d: d["result"].update(converged="yes"), ValueError),
                (lambda d: d.pop("result"), KeyError)):
            doc = load_sample()
            mutate(doc)
            with self.assertRaises(error):
                run_peers.asyncsolve_numbers(doc)


class PeerLine(unittest.TestCase):
    LINE = ('{"peer":"petsc","version":"3.18.5","ksp":"cg","pc":"none","norm":"UNPRECONDITIONED",'
            '"problem":"ones","global":[16,16,16],"dims":[2,1,1],"ranks":2,"iterations":35,'
            '"time_s":0.0007,"time_per_iteration_s":2e-05,"setup_s":0.001,'
            '"residual":6.1e-07,"error_inf":5e-07,"reason":"CONVERGED_RTOL","converged":true}')

    def test_last_json_line_after_noise(self):
        n = run_peers.peer_numbers("some banner\n{not json\n" + self.LINE + "\n")
        self.assertEqual(n["iterations"], 35)
        self.assertTrue(n["converged"])
        self.assertEqual(n["norm"], "UNPRECONDITIONED")

    def test_no_json(self):
        with self.assertRaises(ValueError):
            run_peers.peer_numbers("nothing here\n")


def record(config, side, repeat, tpi, iterations, error=None):
    return {"configuration": config, "side": side, "repeat": repeat, "error": error,
            "time_per_iteration_s": tpi, "time_s": tpi * iterations,
            "iterations": iterations, "residual": 1e-7}


class Compare(unittest.TestCase):
    def test_ratio_and_agreement(self):
        runs = [record("c", "asyncsolve", 0, 2.0, 100), record("c", "peer", 0, 1.0, 101),
                record("c", "asyncsolve", 1, 4.0, 100), record("c", "peer", 1, 1.0, 101),
                record("c", "asyncsolve", 2, 3.0, 100), record("c", "peer", 2, 2.0, 101)]
        s = run_peers.compare(runs, "c", 3)
        self.assertEqual(s["asyncsolve"]["time_per_iteration_s"]["median"], 3.0)
        self.assertEqual(s["peer"]["time_per_iteration_s"]["median"], 1.0)
        self.assertEqual(s["ratio_of_medians"], 3.0)
        self.assertEqual(s["ratio_per_repeat"]["values"], [2.0, 4.0, 1.5])
        self.assertEqual(s["ratio_per_repeat"]["median"], 2.0)
        self.assertTrue(s["iterations_agree"])
        self.assertEqual(s["iterations_difference"], 1)

    def test_failed_runs_left_out_and_disagreement(self):
        runs = [record("c", "asyncsolve", 0, 2.0, 100), record("c", "peer", 0, 1.0, 103),
                record("c", "asyncsolve", 1, 9.0, 100, error="exit code 4")]
        s = run_peers.compare(runs, "c", 2)
        self.assertEqual(s["asyncsolve"]["failed"], 1)
        self.assertEqual(s["ratio_of_medians"], 2.0)
        self.assertEqual(s["ratio_per_repeat"]["values"], [2.0, None])
        self.assertFalse(s["iterations_agree"])

    def test_peers_only(self):
        s = run_peers.compare([record("c", "peer", 0, 1.0, 10)], "c", 1)
        self.assertIsNone(s["ratio_of_medians"])
        self.assertIsNone(s["iterations_agree"])


class RunPcRecords(unittest.TestCase):
    """run_pc.py's one / ten / ten_computed / later from a run's numbers."""

    def test_ten_measured_from_ten_solves(self):
        import run_pc
        rec = {"setup_s": 2.0, "solve_s": 1.0, "solves_s": [1.0] + [0.5] * 9}
        run_pc.finish_record(rec)
        self.assertEqual(rec["one_s"], 3.0)
        self.assertTrue(rec["ten_measured"])
        self.assertEqual(rec["ten_s"], 2.0 + 1.0 + 4.5)
        self.assertEqual(rec["ten_computed_s"], 12.0)
        self.assertEqual(rec["later_s"], 0.5)

    def test_ten_computed_without_repeats(self):
        import run_pc
        for solves in ([], [1.0]):
            rec = {"setup_s": 2.0, "solve_s": 1.0, "solves_s": solves}
            run_pc.finish_record(rec)
            self.assertFalse(rec["ten_measured"])
            self.assertEqual(rec["ten_s"], 12.0)
            self.assertIsNone(rec["later_s"])

    def test_first_ten_of_more(self):
        import run_pc
        rec = {"setup_s": 0.0, "solve_s": 1.0, "solves_s": [1.0] * 10 + [100.0]}
        run_pc.finish_record(rec)
        self.assertEqual(rec["ten_s"], 10.0)

    def test_matrix_setup_counted_reading_not(self):
        # --matrix: the partition, distribution and operator build count as
        # setup (PETSc's MatLoad does), reading the text file does not.
        import run_pc
        doc = {"result": {"iterations": {"max": 7}, "time_s": 1.0, "converged": True},
               "pc_setup": {"setup_s": 0.5},
               "problem": {"setup_s": {"read": 9.0, "partition": 0.125, "distribute": 0.25,
                                       "operator": 1.0}}}
        rec = run_pc.asyncsolve_record(doc)
        self.assertEqual(rec["setup_s"], 0.5 + 0.125 + 0.25 + 1.0)
        self.assertEqual(rec["matrix_setup_s"], 1.375)
        del doc["problem"]
        self.assertEqual(run_pc.asyncsolve_record(doc)["setup_s"], 0.5)

    def test_bad_solves_exit_2(self):
        import run_pc
        with redirect_stderr(io.StringIO()):
            self.assertEqual(run_pc.main(["--solves", "0"]), 2)


class RunPcSchwarz(unittest.TestCase):
    """run_pc.py's Schwarz group: the arguments each side gets, the block-size
    comment, the iteration checks."""

    def parsed(self, extra, matrix_text=None):
        import run_pc
        with tempfile.TemporaryDirectory() as tmp:
            argv = ["--variants", "schwarz"] + extra
            if matrix_text is not None:
                path = os.path.join(tmp, "m.mtx")
                with open(path, "w") as f:
                    f.write(matrix_text)
                argv += ["--problems", "", "--matrix", path]
            return run_pc, run_pc.parse_args(argv)

    def test_group_overlap_and_block_size(self):
        text = ("%%MatrixMarket matrix coordinate real symmetric\n% block-size: 3\n"
                "3 3 1\n1 1 1\n")
        run_pc, args = self.parsed(["--overlap", "2"], text)
        self.assertEqual(args.variant_list, run_pc.GROUPS["schwarz"])
        self.assertEqual(args.block, 3)
        petsc_asm = run_pc.variant_arguments(args, "petsc-asm", "matrix")
        self.assertEqual(petsc_asm[-2:], ["--overlap", "2"])
        self.assertNotIn("--block-size", petsc_asm)  # PETSc's rows would split by node
        self.assertEqual(run_pc.variant_arguments(args, "petsc-hypre", "matrix")[-2:],
                         ["--block-size", "3"])
        # asyncsolve reads the file's comment itself
        self.assertNotIn("--block-size", run_pc.variant_arguments(args, "as-pcg1-amg", "matrix"))
        self.assertIsNone(run_pc.variant_arguments(args, "petsc-asm", "ones"))
        self.assertEqual(run_pc.variant_arguments(args, "as-pcg1-asm", "ones")[-2:],
                         ["--overlap", "2"])

    def test_explicit_block_size_and_bad_overlap(self):
        text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 1 1\n"
        run_pc, args = self.parsed(["--block-size", "3"], text)
        self.assertEqual(run_pc.variant_arguments(args, "as-pcg1-amg", "matrix")[-2:],
                         ["--block-size", "3"])
        # the coarse space takes it; one-level Schwarz refuses it
        self.assertEqual(run_pc.variant_arguments(args, "as-pcg1-asm-coarse", "matrix")[-2:],
                         ["--block-size", "3"])
        self.assertNotIn("--block-size", run_pc.variant_arguments(args, "as-pcg1-asm", "matrix"))
        run_pc, args = self.parsed([], text)
        self.assertEqual(args.block, 1)
        self.assertNotIn("--block-size", run_pc.variant_arguments(args, "petsc-hypre", "matrix"))
        with redirect_stderr(io.StringIO()):
            self.assertEqual(run_pc.main(["--overlap", "9"]), 2)

    def test_iteration_checks(self):
        import run_pc
        rows = {"as-pcg1-asm": {"iterations": [32]}, "petsc-asm": {"iterations": [30]},
                "as-pcg1-amg": {"iterations": [14]}, "petsc-hypre": {"iterations": [10]}}
        checks = {c["asyncsolve"]: c for c in run_pc.iteration_checks(rows)}
        self.assertTrue(checks["as-pcg1-asm"]["met"])
        self.assertFalse(checks["as-pcg1-amg"]["met"])  # 14 > 1.3 x 10
        rows["petsc-asm"]["iterations"] = [29]
        self.assertFalse(run_pc.iteration_checks(rows)[0]["met"])
        self.assertEqual(run_pc.iteration_checks({"as-pcg1-asm": {"iterations": [3]}}), [])


class Arguments(unittest.TestCase):
    def test_triples(self):
        self.assertEqual(run_peers.parse_triple("128", "--size"), [128, 128, 128])
        self.assertEqual(run_peers.parse_triple("60,50,40", "--local"), [60, 50, 40])
        for bad in ("0", "1,2", "a,b,c", "-1,2,3"):
            with self.assertRaises(run_peers.BadArguments):
                run_peers.parse_triple(bad, "--size")

    def test_bad_arguments_exit_2(self):
        with redirect_stderr(io.StringIO()):
            self.assertEqual(run_peers.main(["--peers-only", "--configs", "nope"]), 2)
            self.assertEqual(run_peers.main(["--asyncsolve", "/nonexistent/asyncsolve"]), 2)


REAL = os.environ.get("ASYNCSOLVE_BINARY", "")


def can_run_end_to_end():
    missing = run_peers.missing_packages()
    return shutil.which("mpiexec") is not None and missing == []


@unittest.skipUnless(can_run_end_to_end(), "needs mpiexec, petsc-dev and libhypre-dev")
class EndToEnd(unittest.TestCase):
    def run_main(self, extra, env=None):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "peers.json")
            saved = dict(os.environ)
            os.environ.update(env or {})
            try:
                with redirect_stdout(io.StringIO()) as text:
                    code = run_peers.main(["--smoke", "--asyncsolve", FAKE, "--json", out]
                                          + extra)
            finally:
                os.environ.clear()
                os.environ.update(saved)
            with open(out) as f:
                return code, json.load(f), text.getvalue()

    def test_smoke_with_fake_asyncsolve(self):
        code, doc, text = self.run_main(["--configs", "ones-cg,laplace27-pcg1"])
        self.assertEqual(code, 0, text)
        self.assertEqual(doc["schema"], "asyncsolve.bench.peers/1")
        self.assertTrue(doc["ok"])
        self.assertEqual(len(doc["runs"]), 4)
        self.assertEqual([r["side"] for r in doc["runs"]],
                         ["asyncsolve", "peer", "asyncsolve", "peer"])
        by_name = {c["name"]: c for c in doc["configurations"]}
        ones = by_name["ones-cg"]["comparison"]
        # The sample's 35 iterations are what CG takes on 16^3 ones.
        self.assertEqual(ones["peer"]["iterations"], [35])
        self.assertTrue(ones["iterations_agree"])
        self.assertAlmostEqual(ones["asyncsolve"]["time_per_iteration_s"]["median"], 2e-5)
        self.assertGreater(ones["ratio_of_medians"], 0)
        self.assertIn("--method cg", by_name["ones-cg"]["asyncsolve"]["command"])
        self.assertIn("petsc_cg", by_name["ones-cg"]["peer"]["command"])
        self.assertIn("hypre_pcg", by_name["laplace27-pcg1"]["peer"]["command"])
        for key in ("hostname", "git", "started", "versions", "parameters"):
            self.assertIn(key, doc)

    def test_failed_asyncsolve_run_exit_1(self):
        code, doc, _ = self.run_main(["--configs", "ones-cg"], {"FAKE_ASYNCSOLVE_EXIT": "4"})
        self.assertEqual(code, 1)
        self.assertFalse(doc["ok"])
        failed = [r for r in doc["runs"] if r["error"]]
        self.assertEqual([r["side"] for r in failed], ["asyncsolve"])
        self.assertIn("exit code 4", failed[0]["error"])

    def test_run_pc_smoke_with_fake_asyncsolve(self):
        import run_pc
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "pc.json")
            with redirect_stdout(io.StringIO()) as text:
                code = run_pc.main(["--smoke", "--ranks", "1", "--problems", "laplace27",
                                    "--variants", "as-pcg1-amg,petsc-gamg,petsc-hypre,hypre-amg",
                                    "--asyncsolve", FAKE, "--json", out])
            self.assertEqual(code, 0, text.getvalue())
            with open(out) as f:
                doc = json.load(f)
        self.assertEqual(doc["schema"], "asyncsolve.bench.pc/1")
        self.assertEqual([r["variant"] for r in doc["runs"]],
                         ["as-pcg1-amg", "petsc-gamg", "petsc-hypre", "hypre-amg"])
        for r in doc["runs"]:
            self.assertIsNone(r["error"], r)
            self.assertAlmostEqual(r["one_s"], r["setup_s"] + r["solve_s"])
            self.assertAlmostEqual(r["ten_computed_s"], r["setup_s"] + 10 * r["solve_s"])
            # ten solves measured after one setup, on every side
            self.assertTrue(r["ten_measured"], r)
            self.assertEqual(len(r["solves_s"]), 10)
            self.assertEqual(r["solves_s"][0], r["solve_s"])
            self.assertEqual(r["solves_iterations"], [r["iterations"]] * 10)
            self.assertAlmostEqual(r["ten_s"], r["setup_s"] + sum(r["solves_s"]))
            self.assertIn("--repeat-solve 10", r["command"])
        best = doc["summaries"][0]["best"]
        self.assertIn(best["petsc_one_s"][1], ("petsc-gamg", "petsc-hypre"))
        self.assertIsNotNone(best["ratio_peers_ten_s"])


# Debian's PETSc and hypre are built on Open MPI, and one launcher runs both
# sides: a build of asyncsolve on another MPI (make test-mpich) is left out.
SAME_MPI_AS_PEERS = os.environ.get("ASYNCSOLVE_MPI_FLAVOUR", "Open MPI") == "Open MPI"


@unittest.skipUnless(can_run_end_to_end() and REAL and os.path.exists(REAL) and SAME_MPI_AS_PEERS,
                     "needs petsc-dev, libhypre-dev and ASYNCSOLVE_BINARY (a built asyncsolve "
                     "on Open MPI, the peers' MPI)")
class RealAsyncsolve(unittest.TestCase):
    """The real asyncsolve beside the peers: same iteration counts (±1)."""

    def test_smoke_iterations_agree(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "peers.json")
            with redirect_stdout(io.StringIO()) as text:
                code = run_peers.main(["--smoke", "--asyncsolve", REAL, "--json", out])
            self.assertEqual(code, 0, text.getvalue())
            with open(out) as f:
                doc = json.load(f)
        self.assertTrue(doc["ok"])
        for c in doc["configurations"]:
            self.assertTrue(c["comparison"]["iterations_agree"], c["name"])


def asyncsolve_has_boomeramg():
    """Whether ASYNCSOLVE_BINARY was built with hypre (without, --pc boomeramg exits 2)."""
    if not (REAL and os.path.exists(REAL) and shutil.which("mpiexec") and SAME_MPI_AS_PEERS):
        return False
    env = run_peers.mpi_environment()
    p = subprocess.run(["mpiexec", "-n", "1", REAL, "solve", "--problem", "ones", "--global",
                        "4,4,4", "--method", "pcg1", "--pc", "boomeramg"], env=env,
                       capture_output=True, text=True, timeout=120, check=False)
    return p.returncode == 0


@unittest.skipUnless(can_run_end_to_end() and asyncsolve_has_boomeramg(),
                     "needs petsc-dev, libhypre-dev and ASYNCSOLVE_BINARY built with hypre")
class BoomerAmgIterations(unittest.TestCase):
    """asyncsolve's pcg1 --pc boomeramg beside hypre's own PCG + BoomerAMG with the same
    settings (bench/peers/hypre_pcg.c mirrors src/precond/boomeramg.cpp) on the same
    matrices, 1 and 2 ranks: the same iteration count, within +-1."""

    def test_iterations_agree_with_hypre(self):
        for ranks in (1, 2):
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "peers.json")
                with redirect_stdout(io.StringIO()) as text:
                    code = run_peers.main(["--ranks", str(ranks), "--size", "24", "--local",
                                           "16,16,16", "--repeat", "1", "--configs",
                                           "ones-amg,laplace27-amg", "--asyncsolve", REAL,
                                           "--json", out])
                self.assertEqual(code, 0, text.getvalue())
                with open(out) as f:
                    doc = json.load(f)
            for c in doc["configurations"]:
                s = c["comparison"]
                self.assertEqual(c["peer"]["pc"], "boomeramg")
                self.assertIn("--pc boomeramg", c["asyncsolve"]["command"])
                self.assertTrue(s["iterations_agree"],
                                f"{c['name']} on {ranks} ranks: asyncsolve "
                                f"{s['asyncsolve']['iterations']}, hypre {s['peer']['iterations']}")


if __name__ == "__main__":
    unittest.main()
