#!/usr/bin/env python3
"""NAME    fem_poisson.py: a finite-element system from scikit-fem, solved by asyncsolve.

PURPOSE Show asyncsolve.solve on a matrix a Python code assembled: -Δu = 1 on the
        unit square, u = 0 on its boundary, P1 triangles (scikit-fem). Rank 0
        assembles and condenses the system; asyncsolve partitions it, solves it on
        every rank of the communicator and gathers the solution; rank 0 checks it
        against scipy.sparse.linalg.spsolve.

USAGE   mpirun -n 2 python3 examples/fem_poisson.py [--refine N] [--method M] [--pc PC]

OUTPUT  One line from rank 0: unknowns, iterations, time, the largest difference
        from spsolve and the verdict; exit status 0 if it agrees to 1e-8.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from mpi4py import MPI

import asyncsolve


def assemble(refine: int):
    """The condensed stiffness matrix and load vector of -Δu = 1, u = 0 on the boundary."""
    import skfem
    from skfem.models.poisson import laplace, unit_load

    mesh = skfem.MeshTri().refined(refine)
    basis = skfem.Basis(mesh, skfem.ElementTriP1())
    a = skfem.asm(laplace, basis)
    b = skfem.asm(unit_load, basis)
    a_inner, b_inner, _, _ = skfem.condense(a, b, D=basis.get_dofs())
    return a_inner.tocsr(), np.asarray(b_inner)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refine", type=int, default=5)
    parser.add_argument("--method", default="pcg1")
    parser.add_argument("--pc", default="jacobi")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    a, b = assemble(args.refine) if comm.rank == 0 else (None, None)
    result = asyncsolve.solve(a, b, comm=comm, method=args.method, pc=args.pc, tol=1e-12,
                              partition="metis", gather=True)
    ok = True
    if comm.rank == 0:
        import scipy.sparse.linalg

        reference = scipy.sparse.linalg.spsolve(a.tocsc(), b)
        difference = float(np.abs(result.x - reference).max() / np.abs(reference).max())
        ok = difference < 1e-8
        print(f"fem_poisson.py: {a.shape[0]} unknowns, {a.nnz} non-zeros, {comm.size} ranks, "
              f"{args.method} pc {args.pc}: {result.iterations} iterations in "
              f"{result.time_s:.4f} s, max |x - spsolve| / max |spsolve| = {difference:.1e}: "
              f"{'agrees with spsolve' if ok else 'FAILED'}")
    return 0 if comm.bcast(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
