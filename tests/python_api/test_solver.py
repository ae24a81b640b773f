"""Solver: one setup, many right-hand sides."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import asyncsolve
from conftest import block_of


@pytest.mark.parametrize("pc", [None, "chebyshev"])
def test_repeated_solves_against_spsolve(comm, spd, pc):
    n = spd.shape[0]
    lu = spla.splu(spd.tocsc())
    with asyncsolve.Solver(spd if comm.rank == 0 else None, comm=comm, method="pcg1", pc=pc,
                           tol=1e-10) as solver:
        setups = []
        for k in range(3):
            b = np.cos(np.arange(n) * (k + 1.0))
            r = solver.solve(b if comm.rank == 0 else None, gather=True)
            assert r.converged
            assert np.allclose(r.x, lu.solve(b), atol=1e-7)
            setups.append(r.phases.get("precond_setup", 0.0))
        ones = solver.solve(gather=True)  # b = A 1
        assert np.allclose(ones.x, 1.0, atol=1e-7)
    if pc == "chebyshev":
        # The preconditioner is set up once: its time is in the first solve only.
        assert setups[0] > 0.0
        assert setups[1] == 0.0
        assert setups[2] == 0.0
    with pytest.raises(asyncsolve.InputError, match="closed"):
        solver.solve()


@pytest.mark.parametrize("method", ["pcg1", "gmres"])
def test_each_right_hand_side_is_equilibrated_as_solve_does(comm, spd, method):
    # solve() scales A, b and x0 by powers of two, so that b of 1e+-300 does
    # not overflow r^T r (or underflow it into a false "converged"); a
    # Solver's later b must get the same, not the construction's power.
    n = spd.shape[0]
    lu = spla.splu(spd.tocsc())
    with asyncsolve.Solver(spd if comm.rank == 0 else None, comm=comm, method=method,
                           tol=1e-10) as solver:
        for scale in (1.0, 1e300, 1e-300, 1.0):
            b = np.cos(np.arange(n) + 1.0) * scale
            r = solver.solve(b if comm.rank == 0 else None, gather=True)
            assert r.converged, (scale, r.reason)
            assert r.document["problem"]["equilibration"]["rhs_exponent"] != 0 or scale == 1.0
            assert np.allclose(r.x / scale, lu.solve(b / scale), atol=1e-7), scale
        ones = solver.solve(gather=True)  # b = A 1 again, after the others
        assert np.allclose(ones.x, 1.0, atol=1e-7)


def test_solver_from_rows_with_initial_guess(comm, spd):
    block, rows = block_of(spd, comm)
    n = spd.shape[0]
    exact = np.linspace(-1.0, 1.0, n)
    b = spd @ exact
    solver = asyncsolve.Solver(block, comm=comm, method="cg", tol=1e-12, rows=rows)
    try:
        cold = solver.solve(b[rows[0]:rows[1]])
        warm = solver.solve(b[rows[0]:rows[1]], x0=cold.x)
        assert np.allclose(cold.x, exact[rows[0]:rows[1]], atol=1e-8)
        # From the solution itself, the solve has nothing left to do.
        assert warm.iterations <= 1
    finally:
        solver.close()


def test_jacobi_solver(comm, nonsymmetric):
    a = nonsymmetric
    with asyncsolve.Solver(a if comm.rank == 0 else None, comm=comm, method="jacobi",
                           tol=1e-10) as solver:
        for k in range(2):
            b = np.full(a.shape[0], k + 1.0)
            r = solver.solve(b if comm.rank == 0 else None, gather=True)
            assert np.allclose(a @ r.x, b, atol=1e-8)


def test_solver_refuses_repeat_solve(comm, spd):
    with pytest.raises(asyncsolve.InputError, match="repeat_solve"):
        asyncsolve.Solver(spd, comm=comm, repeat_solve=3)
    # An array (it has no truth value), and on one rank only: refused on every
    # rank alike, none left waiting in the collective set-up.
    last = {"repeat_solve": np.array([1, 1])} if comm.rank == comm.size - 1 else {}
    with pytest.raises(asyncsolve.InputError, match="expected no repeat_solve"):
        asyncsolve.Solver(spd, comm=comm, **last)


def test_repeat_solve_keyword(comm, spd):
    r = asyncsolve.solve(spd if comm.rank == 0 else None, comm=comm, method="pcg1",
                         repeat_solve=3, tol=1e-9)
    repeats = r.to_dict()["repeat_solves"]
    assert repeats["count"] == 3
    assert all(repeats["converged"])


@pytest.mark.parametrize(("method", "pc"), [("gmres", "ilu0"), ("pipebicgstab", "jacobi")])
def test_nonsymmetric_repeated_solves_against_spsolve(comm, nonsymmetric, method, pc):
    a = nonsymmetric
    n = a.shape[0]
    lu = spla.splu(a.tocsc())
    with asyncsolve.Solver(a if comm.rank == 0 else None, comm=comm, method=method, pc=pc,
                           tol=1e-10) as solver:
        for k in range(3):
            b = np.sin(np.arange(n) * (k + 0.5))
            r = solver.solve(b if comm.rank == 0 else None, gather=True)
            assert r.converged
            assert np.allclose(r.x, lu.solve(b), atol=1e-7 * np.abs(lu.solve(b)).max())
