#!/usr/bin/env python3
"""NAME
    soak_matrices.py - the Matrix Market systems of bench/soak.sh's --matrix runs

USAGE
    bench/soak_matrices.py OUTDIR

    Writes three square sparse matrices on which asynchronous Jacobi
    converges for every delay pattern (rho(|D^-1 (A - D)|) < 1, so
    `asyncsolve solve --variant async|racy` accepts them without --force),
    small enough that one solve takes about a second on a loaded machine,
    different in what they give the sparse path to do:

    laplace2d_40.mtx    5-point Laplacian plus 0.2 I on a 40 x 40 grid,
                        stored as one triangle (`symmetric`: the reader
                        expands it); rho ~ 0.95
    convdiff2d_40.mtx   -Laplacian + convection (first-order upwind) plus
                        0.2 I, unsymmetric values (`general`); rho < 0.97
    random_1600.mtx     1600 rows, 6 negative off-diagonal entries per row
                        at random columns (fixed seed), the diagonal 1.25
                        times the row's absolute sum: rho = 0.8, an
                        unsymmetric pattern whose ghosts come from every
                        other rank

    Plain Python, deterministic output; prints the files' names. Exit code 2
    for a missing or unwritable OUTDIR.
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "data"))
from make_matrices import grid_matrix, write  # the examples' grid writer


def random_matrix(m: int, per_row: int, seed: int) -> list[tuple[int, int, float]]:
    """m*m rows; per_row negative entries at random columns; diagonal 1.25 x their |sum|.

    |D^-1 (A - D)| = -D^-1 (A - D) has every row sum 0.8, hence rho = 0.8.
    """
    rng = random.Random(seed)
    n = m * m
    entries = []
    for i in range(n):
        columns = set()
        while len(columns) < per_row:
            j = rng.randrange(n)
            if j != i:
                columns.add(j)
        values = [-rng.uniform(0.1, 1.0) for _ in columns]
        entries.extend((i, j, v) for j, v in zip(sorted(columns), values, strict=True))
        entries.append((i, i, 1.25 * sum(abs(v) for v in values)))
    return entries


def main() -> int:
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: soak_matrices.py OUTDIR (an existing folder)", file=sys.stderr)
        return 2
    out = sys.argv[1]
    n = 40
    c = 2.0  # convection, upwind, scaled by h^2
    files = [
        ("laplace2d_40.mtx", n, grid_matrix(n, -1.0, -1.0, -1.0, -1.0, 4.2), True,
         "5-point Laplacian + 0.2 I, 40 x 40 grid (bench/soak_matrices.py)"),
        ("convdiff2d_40.mtx", n, grid_matrix(n, -1.0 - c, -1.0, -1.0, -1.0, 4.2 + c), False,
         "-Laplacian + upwind convection + 0.2 I, 40 x 40 grid (bench/soak_matrices.py)"),
        ("random_1600.mtx", 40, random_matrix(40, 6, seed=1600), False,
         ("negative entries at random columns, diagonal 1.25 x their absolute sum "
          "(bench/soak_matrices.py)")),
    ]
    try:
        for name, m, entries, symmetric, comment in files:
            write(os.path.join(out, name), m, entries, symmetric, comment)
            print(os.path.join(out, name))
    except OSError as e:
        print(f"soak_matrices.py: {out}: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
