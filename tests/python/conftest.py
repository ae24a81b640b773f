"""Fixtures of the asyncsolve-lab tests: the real binary (ASYNCSOLVE_BINARY,
set by ctest, or build/asyncsolve) and suites run with it once per session."""

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))  # the package from source, installed or not

from asyncsolve_lab.capabilities import Capabilities  # noqa: E402
from asyncsolve_lab.runner import run_suite  # noqa: E402
from asyncsolve_lab.suite import parse_suite  # noqa: E402

# The tiny suite of the end-to-end tests: Jacobi over both regimes, 1 and 2
# ranks, 2 repeats, and a run that fails (a bad --local value) so that the
# suite has to go on after it.
TINY_SUITE = """
[suite]
name = "tiny"
description = "tests/python: the smallest suite worth running"
repeats = 2
regimes = ["shm", "tcp"]
timeout_s = 60

[[experiment]]
name = "jacobi"
title = "Jacobi sync and async"
program = "solve"
ranks = [1, 2]
plots = ["histogram", "convergence", { kind = "rate", x = "ranks" },
         { kind = "line", x = "variant", y = "iterations" },
         { kind = "bars", x = "variant", y = "time" }]
[experiment.options]
local = "8,8,8"
tol = 1e-3
check-every = 10
[experiment.matrix]
variant = ["sync", "async"]

[[experiment]]
name = "krylov"
program = "solve"
ranks = [1, 2]
regimes = ["shm"]
repeats = 1
plots = ["phases", "time", { kind = "line", x = "ranks", y = "speedup" }]
[experiment.options]
problem = "ones"
global = "12,12,12"
[experiment.matrix]
method = ["cg", "pcg-overlap"]

[[experiment]]
name = "broken"
program = "solve"
ranks = [1]
regimes = ["shm"]
repeats = 1
[experiment.options]
local = "100000,100000,100000"
"""

# Every benchmark document kind, tiny: bench allreduce (latency, overlap,
# noise), bench/hybrid_mvm, model hybrid --fit over it ({doc:...}), bench/beff.
BENCH_SUITE = """
[suite]
name = "benches"
repeats = 1
regimes = ["shm"]
timeout_s = 60

[[experiment]]
name = "allreduce"
program = "bench allreduce"
ranks = [2]
plots = ["allreduce", "noise"]
[experiment.options]
message-size = "8:64"
iterations = 20
warmup = 2
repeats = 2
modes = "latency,overlap,noise"
noise-global = "12,12,12"
noise = "50:200"

[[experiment]]
name = "mvm"
program = "bench/hybrid_mvm"
ranks = [2]
env = { OMP_WAIT_POLICY = "passive" }
plots = ["mvm"]
[experiment.options]
nij = 16
nk = "2,4,8"
threads = 2
repeats = 2
mvms = 5

[[experiment]]
name = "model"
program = "model hybrid"
plots = ["model"]
[experiment.options]
fit = "{doc:mvm}"

[[experiment]]
name = "epsilon"
program = "model hybrid"
plots = ["model"]
[experiment.options]
threads = 8
f-comp-non = 0.2
[experiment.matrix]
f-comm = [0.0, 0.2, 0.43]

[[experiment]]
name = "beff"
program = "bench/beff"
ranks = [2]
plots = ["beff"]
[experiment.options]
message-size = "8:64"
iterations = 5
repeats = 2
node-size = 2
"""


def _binary() -> Path | None:
    for c in (os.environ.get("ASYNCSOLVE_BINARY"), ROOT / "build" / "asyncsolve"):
        if c and Path(c).is_file():
            return Path(c).resolve()
    return None


@pytest.fixture(scope="session")
def binary() -> Path:
    b = _binary()
    if b is None:
        pytest.skip("no asyncsolve binary (build it, or set ASYNCSOLVE_BINARY)")
    if shutil.which("mpirun") is None:
        pytest.skip("no mpirun")
    return b


@pytest.fixture(scope="session")
def caps(binary) -> Capabilities:
    return Capabilities(binary)


def run_text(text: str, results: Path, caps: Capabilities, **kw):
    from rich.console import Console
    suite = parse_suite(text, results.parent / "suite.toml")
    console = Console(file=io.StringIO(), width=200)
    return suite, run_suite(suite, results, caps, console=console, **kw)


@pytest.fixture(scope="session")
def tiny_results(tmp_path_factory, caps) -> Path:
    """The tiny suite, run once by the real binary."""
    results = tmp_path_factory.mktemp("tiny") / "results"
    run_text(TINY_SUITE, results, caps)
    return results


@pytest.fixture(scope="session")
def bench_results(tmp_path_factory, caps) -> Path:
    if not (caps.bench_dir / "hybrid_mvm").is_file():
        pytest.skip("a build without the benchmarks (ASYNCSOLVE_BUILD_BENCH=OFF)")
    results = tmp_path_factory.mktemp("benches") / "results"
    run_text(BENCH_SUITE, results, caps)
    return results


def start_long_suite(tmp_path: Path, binary: Path, name: str, long_ranks: int):
    """Starts `asyncsolve-lab run` (a new session) on a suite of a quick run
    and a run that never converges (`long_ranks` ranks); returns the process
    the results folder, the command and its environment (to run it again)."""
    suite = tmp_path / "s.toml"
    suite.write_text(f"""
[suite]
name = "{name}"
[[experiment]]
name = "quick"
program = "solve"
ranks = [1]
[experiment.options]
local = "8,8,8"
[[experiment]]
name = "long"
program = "solve"
ranks = [{long_ranks}]
[experiment.options]
local = "100,100,100"
tol = 1e-30
max-iters = 100000000
""")
    results = tmp_path / "r"
    cmd = [sys.executable, "-m", "asyncsolve_lab", "run", str(suite), "--results", str(results),
           "--binary", str(binary)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    return proc, results, cmd, env


# The lab as a user runs it, and the results folders of the tests of what it refuses.

def lab(args, timeout=60, cwd=None):
    """Runs `python -m asyncsolve_lab ARGS`; returns (rc, stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    p = subprocess.run([sys.executable, "-m", "asyncsolve_lab", *args], env=env, cwd=cwd,
                       capture_output=True, text=True, errors="replace", timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def assert_one_line_error(rc, out, err, fragment):
    assert rc == 2, (rc, out, err)
    lines = [s for s in err.splitlines() if s.strip()]
    assert len(lines) == 1, lines
    assert "Traceback" not in err
    assert fragment in lines[0], lines[0]


#: A result document of one rank, cut down to what the report takes: every field
#: it reads, as `asyncsolve solve` writes them (docs/results.md).
RESULT_DOCUMENT = {
    "schema": "asyncsolve.result/1", "git": "abc1234def56", "started": "2026-12-01T10:00:00Z",
    "command": ["asyncsolve", "solve", "--local", "6,6,6", "--variant", "async"],
    "environment": {"mpi_library": "Open MPI v4.1.4", "ranks": 1, "hostname": "testhost",
                    "cores": 2, "cpu_model": None},
    "method": {"name": "jacobi", "variant": "async", "transport": "mpi", "tol": 1e-4},
    "result": {"converged": False, "reason": "max_iters",
               "iterations": {"min": 200, "mean": 200.0, "max": 200, "per_rank": [200]},
               "time_s": 0.002, "residual_estimate": 2e-3, "true_residual": 2e-3},
    "phases": {"recv": {"max": 1e-4, "mean": 1e-4, "min": 1e-4},
               "sweep": {"max": 1e-3, "mean": 1e-3, "min": 1e-3}},
    "history": [{"rank": 0, "iteration": 100, "time_s": 0.001, "residual": 0.01,
                 "local_residual": 0.01},
                {"rank": 0, "iteration": 200, "time_s": 0.002, "residual": 2e-3,
                 "local_residual": 2e-3}],
}
MINIMAL_DOCUMENT = json.dumps(RESULT_DOCUMENT).encode()


def result_document(**sections) -> dict:
    """RESULT_DOCUMENT with `sections` replaced (None: left out)."""
    doc = json.loads(MINIMAL_DOCUMENT) | sections
    return {k: v for k, v in doc.items() if v is not None}


def results_with_document(tmp_path: Path, content: bytes, **side_fields) -> Path:
    """A results folder with one sidecar (with `side_fields` besides the required
    ones) whose document holds `content`."""
    runs = tmp_path / "res" / "runs"
    runs.mkdir(parents=True)
    side = {"schema": "asyncsolve.lab.run/1", "run_id": "x", "experiment": "e",
            "program": "solve", "status": "ok", "document": "x.json", "ranks": 1,
            "regime": "shm", "repeat": 0, "config": {}, "options": {}, "rc": 0,
            **side_fields}
    (runs / "x.lab.json").write_text(json.dumps(side))
    (runs / "x.json").write_bytes(content)
    return tmp_path / "res"

