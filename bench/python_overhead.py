#!/usr/bin/env python3
"""NAME
    python_overhead.py - asyncsolve.solve from Python against `asyncsolve solve --matrix`

PURPOSE
    What a solve costs from Python beyond the command's own solve, on the same
    rows: the 7-point Laplacian on an N^3 grid, written once as a Matrix Market
    file for the command and built with scipy for Python (the same matrix in
    the same numbering, so the same partition and the same iterations). Setup
    is excluded on both sides: the command's side is its result.time_s (the
    solve loop), Python's is the wall time of Solver.solve() (the right-hand
    side scattered, the solve, the result document and x handed back), after
    the Solver's setup. Runs alternate (command, Python, command, ...), and
    each run's peak resident memory per rank comes from /usr/bin/time; Python
    also reports its memory before and after asyncsolve's setup.

USAGE
    python_overhead.py [--size 128] [--ranks 1] [--repeat 5] [--method cg] [--tol 1e-6]
                       [--binary build/asyncsolve] [--python .venv/bin/python]
                       [--json results/bench/python_overhead.json]
    (the driver; it runs itself with --worker under mpirun for the Python side)

OUTPUT
    A table (per run and medians) and a JSON document (schema
    asyncsolve.bench.python_overhead/1): both sides' times, iterations, peak
    memory, and the ratio Python / command of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def laplacian_7(n: int):
    """The 7-point Laplacian on an n^3 grid (x fastest), as scipy builds it."""
    import scipy.sparse as sp

    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    eye = sp.identity(n, format="csr")
    return (sp.kron(sp.kron(eye, eye), t) + sp.kron(sp.kron(eye, t), eye)
            + sp.kron(sp.kron(t, eye), eye)).tocsr()


def rss_mib() -> float:
    """This process's peak resident memory so far, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker(args: argparse.Namespace) -> int:
    """Under mpirun: set up a Solver on the matrix, time one solve, write the numbers."""
    from mpi4py import MPI

    import asyncsolve

    comm = MPI.COMM_WORLD
    a = laplacian_7(args.size) if comm.rank == 0 else None
    before = rss_mib()
    solver = asyncsolve.Solver(a, comm=comm, method=args.method, tol=args.tol)
    after_setup = rss_mib()
    comm.Barrier()
    t0 = time.perf_counter()
    r = solver.solve()  # b = A 1
    wall = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    solver.close()
    peak = comm.gather((before, after_setup, rss_mib()))
    if comm.rank == 0:
        Path(args.out).write_text(json.dumps({
            "wall_s": wall, "time_s": r.time_s, "iterations": r.iterations,
            "true_residual": r.true_residual,
            "rss_mib_before_setup": [p[0] for p in peak],
            "rss_mib_after_setup": [p[1] for p in peak],
            "rss_mib_after_solve": [p[2] for p in peak]}))
    return 0


def peak_rss_mib(stderr: str) -> float:
    """The largest 'maxrss_kb K' line /usr/bin/time wrote (one per rank), MiB."""
    values = [int(line.split()[1]) for line in stderr.splitlines()
              if line.startswith("maxrss_kb ")]
    return max(values) / 1024.0 if values else float("nan")


def run(cmd: list[str], timeout_s: float) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0:
        sys.exit(f"python_overhead.py: failed ({done.returncode}): {' '.join(cmd)}\n"
                 f"{done.stderr[-2000:]}")
    return done


def driver(args: argparse.Namespace) -> int:
    import scipy.io

    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    matrix = scratch / f"laplace7_{args.size}.mtx"
    if not matrix.exists():
        print(f"writing {matrix} ...", flush=True)
        scipy.io.mmwrite(matrix, laplacian_7(args.size))
    launch = ["mpiexec", "--oversubscribe", "-n", str(args.ranks), "/usr/bin/time", "-f",
              "maxrss_kb %M"]
    runs = []
    for repeat in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            doc = Path(tmp) / "run.json"
            out = Path(tmp) / "worker.json"
            c = run(launch + [args.binary, "solve", "--matrix", str(matrix), "--method",
                              args.method, "--tol", repr(args.tol), "--json", str(doc)], 3600)
            command = json.loads(doc.read_text())["result"]
            p = run(launch + [args.python, str(Path(__file__).resolve()), "--worker",
                              "--size", str(args.size), "--method", args.method, "--tol",
                              repr(args.tol), "--out", str(out)], 3600)
            python = json.loads(out.read_text())
        runs.append({"repeat": repeat,
                     "command": {"time_s": command["time_s"],
                                 "iterations": command["iterations"]["max"],
                                 "true_residual": command["true_residual"],
                                 "peak_rss_mib": peak_rss_mib(c.stderr)},
                     "python": {**python, "peak_rss_mib": peak_rss_mib(p.stderr)}})
        r = runs[-1]
        print(f"repeat {repeat}: command {r['command']['time_s']:.4f} s "
              f"({r['command']['iterations']} it, {r['command']['peak_rss_mib']:.0f} MiB)   "
              f"python {r['python']['wall_s']:.4f} s wall, {r['python']['time_s']:.4f} s "
              f"solve ({r['python']['iterations']} it, {r['python']['peak_rss_mib']:.0f} MiB)",
              flush=True)
    med = {
        "command_time_s": statistics.median(r["command"]["time_s"] for r in runs),
        "python_wall_s": statistics.median(r["python"]["wall_s"] for r in runs),
        "python_time_s": statistics.median(r["python"]["time_s"] for r in runs),
        "command_peak_rss_mib": statistics.median(r["command"]["peak_rss_mib"] for r in runs),
        "python_peak_rss_mib": statistics.median(r["python"]["peak_rss_mib"] for r in runs),
    }
    med["ratio_wall_to_command"] = med["python_wall_s"] / med["command_time_s"]
    same = all(r["command"]["iterations"] == r["python"]["iterations"] for r in runs)
    print(f"medians of {args.repeat}: command {med['command_time_s']:.4f} s, python "
          f"{med['python_wall_s']:.4f} s wall ({med['python_time_s']:.4f} s in the solve): "
          f"ratio {med['ratio_wall_to_command']:.3f}; peak memory per rank: command "
          f"{med['command_peak_rss_mib']:.0f} MiB, python {med['python_peak_rss_mib']:.0f} MiB; "
          f"iterations {'equal' if same else 'DIFFER'}")
    document = {"schema": "asyncsolve.bench.python_overhead/1",
                "parameters": {k: v for k, v in vars(args).items() if k != "worker"},
                "host": os.uname().nodename, "runs": runs, "medians": med,
                "iterations_equal": same}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(document, indent=2) + "\n")
    return 0 if same else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--method", default="cg")
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--binary", default=str(ROOT / "build" / "asyncsolve"))
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--scratch", default=str(ROOT / "results" / "bench" / "python_overhead"))
    parser.add_argument("--json", default=str(ROOT / "results" / "bench" /
                                              "python_overhead.json"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    return worker(args) if args.worker else driver(args)


if __name__ == "__main__":
    sys.exit(main())
