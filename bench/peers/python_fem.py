#!/usr/bin/env python3
"""NAME
    python_fem.py - one solve from Python, setup included: asyncsolve beside petsc4py

PURPOSE
    A finite-element system assembled in Python (scikit-fem: -Δu = 1 on the
    unit cube, u = 0 on its boundary, P1 tetrahedra, the boundary condensed
    out), solved from its scipy CSR arrays by the asyncsolve package and by
    petsc4py (Debian's python3-petsc4py, run by the system python3, whose
    numpy it was built for). Each rank takes the same consecutive block of
    rows on both sides (asyncsolve: solve(..., rows=); PETSc: createAIJ with
    csr=); the time is one call's wall time, maximum over ranks, from the
    arrays in memory to the solution: the matrix's distribution, the
    preconditioner's setup and the solve. Every configuration runs --repeat
    times, the two sides alternating; each side's best configuration (by
    median) is compared. Stopping test on both sides: ||b - A x||_2 / ||b||_2
    of the updated residual below --tol, x0 = 0 (PETSc: CG with the
    unpreconditioned norm, atol 0); every solution's true residual is checked.

USAGE
    python_fem.py [--refine 5] [--ranks 2] [--repeat 5] [--tol 1e-8]
                  [--json results/bench/peers_python_fem.json]
    (run by the venv's python with scikit-fem and asyncsolve; it runs itself
    with --side under mpirun for each measurement)

OUTPUT
    A table of every configuration's median, min and max seconds and
    iterations, the best of each side and the ratio asyncsolve / petsc4py,
    and a JSON document (schema asyncsolve.bench.python_fem/1).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ASYNCSOLVE = {  # name: keywords of asyncsolve.solve
    "pcg1-jacobi": {"method": "pcg1", "pc": "jacobi"},
    "pipecg-jacobi": {"method": "pipecg", "pc": "jacobi"},
    "pcg1-chebyshev": {"method": "pcg1", "pc": "chebyshev"},
    "pcg1-boomeramg": {"method": "pcg1", "pc": "boomeramg"},
}
PETSC = {  # name: (KSP type, PC type)
    "cg-jacobi": ("cg", "jacobi"),
    "pipecg-jacobi": ("pipecg", "jacobi"),
    "cg-gamg": ("cg", "gamg"),
    "cg-hypre": ("cg", "hypre"),
}


def assemble(refine: int, path: Path) -> dict:
    """Rank-free: the condensed system, written as an .npz of its CSR arrays."""
    import numpy as np
    import skfem
    from skfem.models.poisson import laplace, unit_load

    t0 = time.perf_counter()
    mesh = skfem.MeshTet().refined(refine)
    basis = skfem.Basis(mesh, skfem.ElementTetP1())
    a, b, _, _ = skfem.condense(skfem.asm(laplace, basis), skfem.asm(unit_load, basis),
                                D=basis.get_dofs())
    a = a.tocsr()
    a.sort_indices()
    np.savez(path, indptr=a.indptr.astype(np.int64), indices=a.indices.astype(np.int32),
             data=a.data, b=np.asarray(b, dtype=np.float64))
    return {"unknowns": int(a.shape[0]), "nnz": int(a.nnz),
            "assemble_s": time.perf_counter() - t0}


def block(npz, rank: int, size: int):
    """This rank's consecutive rows (sizes differing by at most one)."""
    indptr = npz["indptr"]
    n = indptr.size - 1
    first, last = rank * n // size, (rank + 1) * n // size
    lo, hi = indptr[first], indptr[last]
    return (n, first, last, indptr[first:last + 1] - lo, npz["indices"][lo:hi],
            npz["data"][lo:hi], npz["b"][first:last])


def side_asyncsolve(args) -> dict:
    import numpy as np
    import scipy.sparse as sp
    from mpi4py import MPI

    import asyncsolve

    comm = MPI.COMM_WORLD
    n, first, last, indptr, indices, data, b = block(np.load(args.npz), comm.rank, comm.size)
    a = sp.csr_matrix((data, indices, indptr), shape=(last - first, n))
    comm.Barrier()
    t0 = time.perf_counter()
    r = asyncsolve.solve(a, b, comm=comm, rows=(first, last), tol=args.tol,
                         max_iters=100000, **ASYNCSOLVE[args.config])
    wall = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    return {"time_s": wall, "iterations": r.iterations, "true_residual": r.true_residual}


def side_petsc(args) -> dict:
    import numpy as np
    import petsc4py

    petsc4py.init(sys.argv[:1])
    from petsc4py import PETSc

    comm = PETSc.COMM_WORLD
    n, first, last, indptr, indices, data, b = block(np.load(args.npz), comm.rank, comm.size)
    ksp_type, pc_type = PETSC[args.config]
    comm.barrier()
    t0 = time.perf_counter()
    a = PETSc.Mat().createAIJ(size=((last - first, n), (last - first, n)),
                              csr=(indptr.astype(PETSc.IntType),
                                   indices.astype(PETSc.IntType), data), comm=comm)
    a.assemble()
    x, rhs = a.createVecs()
    rhs.setArray(b)
    ksp = PETSc.KSP().create(comm)
    ksp.setOperators(a)
    ksp.setType(ksp_type)
    ksp.getPC().setType(pc_type)
    if pc_type == "hypre":
        ksp.getPC().setHYPREType("boomeramg")
    ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
    ksp.setTolerances(rtol=args.tol, atol=0.0, max_it=100000)
    ksp.setInitialGuessNonzero(False)
    ksp.setUp()
    ksp.solve(rhs, x)
    wall = _max_over_ranks(comm, time.perf_counter() - t0)
    residual = rhs.duplicate()
    a.mult(x, residual)
    residual.aypx(-1.0, rhs)
    true_residual = residual.norm() / rhs.norm()
    converged = ksp.getConvergedReason() > 0
    return {"time_s": wall, "iterations": ksp.getIterationNumber(),
            "true_residual": true_residual, "converged": converged}


def _max_over_ranks(comm, value: float) -> float:
    """The maximum of `value` over PETSc's communicator (a Vec reduction: no mpi4py)."""
    from petsc4py import PETSc

    v = PETSc.Vec().createMPI((1, comm.size), comm=comm)
    v.setValue(comm.rank, value)
    v.assemble()
    return v.max()[1]


def side(args) -> int:
    out = side_asyncsolve(args) if args.side == "asyncsolve" else side_petsc(args)
    if int(os.environ.get("OMPI_COMM_WORLD_RANK", "0")) == 0:
        Path(args.out).write_text(json.dumps(out))
    return 0


def driver(args) -> int:
    scratch = Path(tempfile.mkdtemp(prefix="python_fem_"))
    npz = scratch / "system.npz"
    system = assemble(args.refine, npz)
    print(f"scikit-fem: {system['unknowns']} unknowns, {system['nnz']} non-zeros "
          f"(assembled in {system['assemble_s']:.1f} s)", flush=True)
    pythons = {"asyncsolve": args.python, "petsc4py": args.system_python}
    configs = [("asyncsolve", c) for c in ASYNCSOLVE] + [("petsc4py", c) for c in PETSC]
    runs = {f"{s}/{c}": [] for s, c in configs}
    commands = {}
    for _ in range(args.repeat):
        for (s, c) in configs:  # alternating sides, repeats outermost
            out = scratch / "out.json"
            cmd = ["mpiexec", "--oversubscribe", "-n", str(args.ranks), pythons[s],
                   str(Path(__file__).resolve()), "--side",
                   "asyncsolve" if s == "asyncsolve" else "petsc", "--config", c, "--npz",
                   str(npz), "--tol", repr(args.tol), "--out", str(out)]
            commands[f"{s}/{c}"] = " ".join(cmd)
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                print(f"{s}/{c}: failed ({done.returncode}): {done.stderr.strip()[-400:]}")
                runs[f"{s}/{c}"].append(None)
                continue
            runs[f"{s}/{c}"].append(json.loads(out.read_text()))
    summary = {}
    for key, values in runs.items():
        ok = [v for v in values if v is not None and v["true_residual"] < 10 * args.tol]
        if not ok:
            print(f"{key:28s} no valid run")
            continue
        times = [v["time_s"] for v in ok]
        summary[key] = {"median_s": statistics.median(times), "min_s": min(times),
                        "max_s": max(times), "iterations": ok[0]["iterations"],
                        "runs": len(ok), "true_residual": max(v["true_residual"] for v in ok)}
        s = summary[key]
        print(f"{key:28s} median {s['median_s']:.4f} s (min {s['min_s']:.4f}, max "
              f"{s['max_s']:.4f}), {s['iterations']} iterations, true residual "
              f"{s['true_residual']:.1e}", flush=True)
    best = {}
    for s in ("asyncsolve", "petsc4py"):
        mine = {k: v for k, v in summary.items() if k.startswith(s + "/")}
        if mine:
            best[s] = min(mine, key=lambda k: mine[k]["median_s"])
    ratio = None
    if len(best) == 2:
        ratio = summary[best["asyncsolve"]]["median_s"] / summary[best["petsc4py"]]["median_s"]
        print(f"best: {best['asyncsolve']} {summary[best['asyncsolve']]['median_s']:.4f} s, "
              f"{best['petsc4py']} {summary[best['petsc4py']]['median_s']:.4f} s: ratio "
              f"asyncsolve / petsc4py {ratio:.2f}")
    document = {"schema": "asyncsolve.bench.python_fem/1", "host": os.uname().nodename,
                "parameters": {k: v for k, v in vars(args).items() if k != "side"},
                "system": system, "commands": commands, "runs": runs, "summary": summary,
                "best": best, "ratio_best": ratio}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(document, indent=2) + "\n")
    return 0 if ratio is not None else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--refine", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tol", type=float, default=1e-8)
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--system-python", default="/usr/bin/python3")
    parser.add_argument("--json", default=str(ROOT / "results" / "bench" /
                                              "peers_python_fem.json"))
    parser.add_argument("--side", choices=["asyncsolve", "petsc"], help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--npz", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    return side(args) if args.side else driver(args)


if __name__ == "__main__":
    sys.exit(main())
