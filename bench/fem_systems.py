#!/usr/bin/env python3
"""NAME
    fem_systems.py - finite-element test and benchmark systems (scikit-fem)

PURPOSE
    Writes linear systems a finite-element user would bring, assembled with
    scikit-fem on tetrahedral (3-D) or triangular (2-D) meshes of the unit
    cube or square, Dirichlet rows eliminated:

      poisson-p1     -div grad u = 1, P1 tetrahedra, nodes perturbed
      poisson-p2     the same with P2 elements
      jump           -div(k grad u) = 1, P1, k = 1e4 on a checkerboard of
                     cells (4 per axis), 1 elsewhere
      elasticity     3-D linear elasticity, vector P1 (E = 1, nu = 0.3),
                     clamped at x = 0, loaded by gravity along -z; block size
                     3 and the nodes' coordinates written too
      convdiff       2-D convection-diffusion at Peclet 100 (eps = 0.01,
                     velocity (1, 0.5)), P1 triangles: nonsymmetric

    Sizes: --n N cells per axis (tests: a few thousand unknowns; benchmarks
    1e5 to 1e6).

USAGE
    python3 bench/fem_systems.py KIND --n N --out DIR [--seed S]
    from fem_systems import build, write      (bench/ on sys.path)

OUTPUT
    DIR/KIND.mtx (coordinate real symmetric, or general for convdiff; the
    header's comment "% block-size: 3" for elasticity), DIR/KIND.rhs.mtx
    (array), for elasticity DIR/KIND.coords.mtx (array, one row per node, x
    y z), and one JSON line on stdout: kind, rows, nnz, block_size, files.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

KINDS = ("poisson-p1", "poisson-p2", "jump", "elasticity", "convdiff")


@dataclass
class System:
    """A x = b with the interior unknowns only (Dirichlet rows eliminated)."""

    kind: str
    a: sp.csr_matrix
    b: np.ndarray
    block_size: int = 1
    coordinates: np.ndarray | None = None  # one row per node (block_size rows each)
    symmetric: bool = True


def _cube(n: int, seed: int, perturb: bool):
    from skfem import MeshTet

    t = np.linspace(0.0, 1.0, n + 1)
    mesh = MeshTet.init_tensor(t, t, t)
    if perturb:
        # Move interior nodes by up to a fifth of a cell: a mesh a user would
        # have, not the 7-point stencil in disguise.
        rng = np.random.default_rng(seed)
        p = mesh.p.copy()
        inside = np.all((p > 1e-12) & (p < 1 - 1e-12), axis=0)
        p[:, inside] += rng.uniform(-0.2, 0.2, size=(3, int(inside.sum()))) / n
        mesh = MeshTet(p, mesh.t)
    return mesh


def _poisson(kind: str, n: int, seed: int) -> System:
    from skfem import Basis, BilinearForm, ElementTetP1, ElementTetP2, LinearForm, condense
    from skfem.helpers import dot, grad

    mesh = _cube(n, seed, perturb=True)
    element = ElementTetP2() if kind == "poisson-p2" else ElementTetP1()
    basis = Basis(mesh, element)

    @BilinearForm
    def a(u, v, w):
        if kind == "jump":
            cells = np.floor(w.x * 4).astype(int)
            k = np.where(cells.sum(axis=0) % 2 == 0, 1e4, 1.0)
        else:
            k = 1.0
        return k * dot(grad(u), grad(v))

    @LinearForm
    def f(v, _):
        return 1.0 * v

    big = a.assemble(basis)
    rhs = f.assemble(basis)
    a_i, b_i, _, _ = condense(big, rhs, D=basis.get_dofs())
    return System(kind, sp.csr_matrix(a_i), np.asarray(b_i))


def _elasticity(n: int, seed: int) -> System:
    from skfem import Basis, ElementTetP1, ElementVector, LinearForm, condense
    from skfem.models.elasticity import lame_parameters, linear_elasticity

    mesh = _cube(n, seed, perturb=True)
    basis = Basis(mesh, ElementVector(ElementTetP1()))
    nodes = mesh.p.shape[1]
    dofs = basis.nodal_dofs  # (3, nodes): the node's x, y, z unknowns
    if not np.array_equal(dofs, np.arange(3 * nodes).reshape(nodes, 3).T):
        raise RuntimeError("scikit-fem's vector P1 unknowns are not interleaved by node")
    big = linear_elasticity(*lame_parameters(1.0, 0.3)).assemble(basis)

    @LinearForm
    def gravity(v, _):
        return -1.0 * v[2]

    rhs = gravity.assemble(basis)
    clamped = np.flatnonzero(mesh.p[0] < 1e-12)
    fixed = dofs[:, clamped].ravel()
    a_i, b_i, _, interior = condense(big, rhs, D=fixed)
    kept = np.setdiff1d(np.arange(nodes), clamped)
    if not np.array_equal(interior, dofs[:, kept].T.ravel()):
        raise RuntimeError("the interior unknowns are not whole nodes in order")
    return System("elasticity", sp.csr_matrix(a_i), np.asarray(b_i), block_size=3,
                  coordinates=mesh.p[:, kept].T.copy())


def _convdiff(n: int, seed: int) -> System:
    from skfem import Basis, BilinearForm, ElementTriP1, LinearForm, MeshTri, condense
    from skfem.helpers import dot, grad

    del seed
    t = np.linspace(0.0, 1.0, n + 1)
    basis = Basis(MeshTri.init_tensor(t, t), ElementTriP1())
    eps = 0.01  # Peclet |beta| L / eps ~ 100 with |beta| ~ 1.1, L = 1
    beta = np.array([1.0, 0.5])

    @BilinearForm
    def a(u, v, _):
        return eps * dot(grad(u), grad(v)) + (beta[0] * grad(u)[0] + beta[1] * grad(u)[1]) * v

    @LinearForm
    def f(v, _):
        return 1.0 * v

    a_i, b_i, _, _ = condense(a.assemble(basis), f.assemble(basis), D=basis.get_dofs())
    return System("convdiff", sp.csr_matrix(a_i), np.asarray(b_i), symmetric=False)


def build(kind: str, n: int, seed: int = 1) -> System:
    """The system `kind` on a mesh of n cells per axis."""
    if kind in ("poisson-p1", "poisson-p2", "jump"):
        return _poisson(kind, n, seed)
    if kind == "elasticity":
        return _elasticity(n, seed)
    if kind == "convdiff":
        return _convdiff(n, seed)
    raise ValueError(f"kind {kind!r}: expected one of {', '.join(KINDS)}")


def write(system: System, out: Path) -> dict:
    """Writes the system's files into `out`; returns their description."""
    out.mkdir(parents=True, exist_ok=True)
    stem = out / system.kind
    a = system.a.tocoo()
    if system.symmetric:
        # exact symmetry (assembly sums in different orders leave rounding)
        a = ((system.a + system.a.T) * 0.5).tocoo()
    comment = f"block-size: {system.block_size}" if system.block_size > 1 else ""
    scipy.io.mmwrite(f"{stem}.mtx", a, comment=comment,
                     symmetry="symmetric" if system.symmetric else "general", precision=17)
    scipy.io.mmwrite(f"{stem}.rhs.mtx", system.b.reshape(-1, 1), precision=17)
    files = {"matrix": f"{stem}.mtx", "rhs": f"{stem}.rhs.mtx"}
    if system.coordinates is not None:
        scipy.io.mmwrite(f"{stem}.coords.mtx", system.coordinates, precision=17)
        files["coordinates"] = f"{stem}.coords.mtx"
    return {"kind": system.kind, "rows": int(system.a.shape[0]), "nnz": int(system.a.nnz),
            "block_size": system.block_size, "files": files}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1].strip())
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--n", type=int, required=True, help="cells per axis (>= 2)")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=1, help="mesh perturbation seed")
    args = parser.parse_args(argv)
    if args.n < 2:
        parser.error(f"--n {args.n}: expected at least 2 cells per axis")
    print(json.dumps(write(build(args.kind, args.n, args.seed), args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
