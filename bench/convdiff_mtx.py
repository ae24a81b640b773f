#!/usr/bin/env python3
"""NAME
    convdiff_mtx.py - nonsymmetric test matrices as Matrix Market files

PURPOSE
    The matrices the nonsymmetric Krylov methods are tested and benchmarked
    on: -Laplace(u) + w . grad(u) on the unit square or cube with n points per
    side, Dirichlet boundary eliminated, first-order upwind convection, scaled
    by h^2, w = peclet (1, 1/2, 1/4) (its first 2 or 3 components); and the
    non-normal Grcar matrix (1 on the diagonal, -1 below, 1 on the three
    diagonals above). tests/mpi/serial_krylov.cpp builds the same matrices.

USAGE
    bench/convdiff_mtx.py --dims 3 --n 100 --peclet 100 -o cd3d_100.mtx
    bench/convdiff_mtx.py --grcar 1000 -o grcar.mtx

OUTPUT
    A "coordinate real general" Matrix Market file (written to a temporary
    name, then renamed); its size on stdout.
"""

import argparse
import os
import sys

import numpy as np
import scipy.sparse as sp


def convection_diffusion(n, dims, peclet):
    """The upwind convection-diffusion matrix (CSR), x fastest."""
    h = 1.0 / (n + 1)
    wind = [peclet, 0.5 * peclet, 0.25 * peclet][:dims]
    eye = sp.identity(n, format="csr")
    total = None
    for axis, w in enumerate(wind):
        # -u'' gives (-1, 2, -1); upwind w u' (w > 0) gives w h (u_i - u_{i-1})
        one_d = sp.diags(
            [np.full(n - 1, -1.0 - w * h), np.full(n, 2.0 + w * h), np.full(n - 1, -1.0)],
            [-1, 0, 1], format="csr")
        term = sp.identity(1, format="csr")
        for other in reversed(range(dims)):
            term = sp.kron(term, one_d if other == axis else eye, format="csr")
        total = term if total is None else total + term
    return total.tocsr()


def grcar(n):
    """The Grcar matrix (CSR)."""
    return sp.diags([-np.ones(n - 1)] + [np.ones(n - d) for d in range(4)],
                    [-1, 0, 1, 2, 3], format="csr")


def write_mtx(path, a, comment):
    """`a` as a coordinate real general Matrix Market file, atomically."""
    coo = a.tocoo()
    order = np.lexsort((coo.col, coo.row))
    rows, cols, vals = coo.row[order] + 1, coo.col[order] + 1, coo.data[order]
    temporary = f"{path}.tmp{os.getpid()}"
    with open(temporary, "w", encoding="ascii") as out:
        out.write("%%MatrixMarket matrix coordinate real general\n")
        out.write(f"% {comment}\n")
        out.write(f"{a.shape[0]} {a.shape[1]} {coo.nnz}\n")
        np.savetxt(out, np.column_stack((rows, cols, vals)), fmt=("%d", "%d", "%.17g"))
    os.replace(temporary, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1].strip())
    parser.add_argument("--dims", type=int, choices=(2, 3), default=3)
    parser.add_argument("--n", type=int, default=100, help="points per side")
    parser.add_argument("--peclet", type=float, default=100.0)
    parser.add_argument("--grcar", type=int, default=0, help="write Grcar(N) instead")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    if args.grcar > 0:
        a = grcar(args.grcar)
        comment = f"Grcar matrix, n = {args.grcar}"
    else:
        if args.n < 2:
            parser.error(f"--n {args.n}: expected at least 2 points per side")
        a = convection_diffusion(args.n, args.dims, args.peclet)
        comment = (f"upwind convection-diffusion, {args.dims}-D, n = {args.n} per side, "
                   f"Peclet {args.peclet:g}, w = Pe (1, 1/2, 1/4), scaled by h^2")
    write_mtx(args.output, a, comment)
    print(f"{args.output}: {a.shape[0]} rows, {a.nnz} non-zeros")
    return 0


if __name__ == "__main__":
    sys.exit(main())
