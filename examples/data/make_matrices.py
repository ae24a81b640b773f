"""Writes the small Matrix Market files shipped in examples/data (plain
Python, no dependencies): python3 make_matrices.py

poisson2d_16.mtx   the 5-point Laplacian on a 16 x 16 grid (256 rows,
                   symmetric positive definite; `coordinate real symmetric`)
convdiff2d_16.mtx  -Laplacian + 20 d/dx, upwind, on the same grid
                   (unsymmetric, diagonally dominant; `coordinate real general`)
"""


def grid_matrix(n, west, east, south, north, centre):
    entries = []
    for y in range(n):
        for x in range(n):
            i = x + n * y
            if y > 0:
                entries.append((i, i - n, south))
            if x > 0:
                entries.append((i, i - 1, west))
            entries.append((i, i, centre))
            if x < n - 1:
                entries.append((i, i + 1, east))
            if y < n - 1:
                entries.append((i, i + n, north))
    return entries


def write(path, n, entries, symmetric, comment):
    if symmetric:
        entries = [e for e in entries if e[0] >= e[1]]
    with open(path, "w", encoding="ascii") as f:
        kind = "symmetric" if symmetric else "general"
        f.write(f"%%MatrixMarket matrix coordinate real {kind}\n% {comment}\n")
        f.write(f"{n * n} {n * n} {len(entries)}\n")
        f.writelines(f"{i + 1} {j + 1} {v:.17g}\n" for i, j, v in entries)


if __name__ == "__main__":
    n = 16
    write("poisson2d_16.mtx", n, grid_matrix(n, -1.0, -1.0, -1.0, -1.0, 4.0), True,
          "5-point Laplacian, 16 x 16 grid, Dirichlet boundary (examples/data/make_matrices.py)")
    h = 1.0 / (n + 1)
    c = 20.0 * h  # convection 20 d/dx, first-order upwind, scaled by h^2
    write("convdiff2d_16.mtx", n, grid_matrix(n, -1.0 - c, -1.0, -1.0, -1.0, 4.0 + c), False,
          "-Laplacian + 20 d/dx, upwind, 16 x 16 grid (examples/data/make_matrices.py)")
