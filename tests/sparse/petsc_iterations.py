"""PETSc's iteration count on a Matrix Market file, for the nonsymmetric
tests: run by a Python that has petsc4py (Debian's /usr/bin/python3 with
python3-petsc4py; the venv has none), with numpy only.

    python3 petsc_iterations.py FILE.mtx KSP PC [RESTART]

KSP is gmres, fgmres, pgmres, bcgs or pipebcgs; PC none or jacobi. b = A * 1,
x0 = 0, right preconditioning (the unpreconditioned residual norm), rtol
1e-8, atol 0; GMRES with classical Gram-Schmidt refined if needed (as
asyncsolve's default). Prints one JSON object: iterations, reason, residual.
"""

import json
import sys

import numpy as np
from petsc4py import PETSc


def read_mtx(path):
    with open(path, encoding="ascii") as f:
        header = f.readline()
        if "coordinate" not in header or "general" not in header:
            raise SystemExit(f"{path}: expected a coordinate general matrix")
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        rows, cols, _ = (int(v) for v in line.split())
        data = np.loadtxt(f, ndmin=2)
    return rows, cols, data[:, 0].astype(np.int64) - 1, data[:, 1].astype(np.int64) - 1, data[:, 2]


def main():
    path, ksp_type, pc_type = sys.argv[1:4]
    restart = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    n, _, r, c, v = read_mtx(path)
    order = np.lexsort((c, r))
    r, c, v = r[order], c[order], v[order]
    indptr = np.searchsorted(r, np.arange(n + 1)).astype(PETSc.IntType)
    a = PETSc.Mat().createAIJ(size=(n, n), csr=(indptr, c.astype(PETSc.IntType), v),
                              comm=PETSc.COMM_SELF)
    a.assemble()
    x, b = a.createVecs()
    ones = x.duplicate()
    ones.set(1.0)
    a.mult(ones, b)
    x.set(0.0)
    ksp = PETSc.KSP().create(comm=PETSc.COMM_SELF)
    ksp.setOperators(a)
    ksp.setType(ksp_type)
    ksp.getPC().setType(pc_type)
    ksp.setPCSide(PETSc.PC.Side.RIGHT)
    ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
    ksp.setTolerances(rtol=1e-8, atol=0.0, divtol=1e30, max_it=5000)
    if ksp_type in ("gmres", "fgmres", "pgmres"):
        opts = PETSc.Options()
        opts["ksp_gmres_restart"] = restart
        if ksp_type != "pgmres":
            opts["ksp_gmres_cgs_refinement_type"] = "refine_ifneeded"
        ksp.setFromOptions()
    ksp.solve(b, x)
    residual = b.duplicate()
    a.mult(x, residual)
    residual.aypx(-1.0, b)
    print(json.dumps({"iterations": ksp.getIterationNumber(),
                      "reason": int(ksp.getConvergedReason()),
                      "residual": residual.norm() / b.norm()}))


if __name__ == "__main__":
    main()
