"""Every method on scipy-made SPD and nonsymmetric matrices, against spsolve."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import asyncsolve
from conftest import block_of, rhs

# The conjugate-gradient family needs a symmetric positive definite matrix;
# every other method (Jacobi, and any the library adds) is also run on the
# nonsymmetric one.
CG_FAMILY = {"cg", "pcg1", "pcg2", "pcg-overlap", "pipecg"}


NONSYMMETRIC_METHODS = {"gmres", "fgmres", "pgmres", "bicgstab", "pipebicgstab"}


def test_methods_listed():
    methods = asyncsolve.methods()
    assert "jacobi" in methods
    assert "pcg1" in methods
    assert "schwarz" in methods
    assert set(methods) >= CG_FAMILY
    assert set(methods) >= NONSYMMETRIC_METHODS
    assert "lanczos" not in methods


@pytest.mark.parametrize("method", asyncsolve.methods())
def test_spd_every_method_against_spsolve(comm, spd, method):
    b = rhs(spd.shape[0])
    exact = spla.spsolve(spd.tocsc(), b)
    tol = 1e-10 if method != "jacobi" else 1e-9
    r = asyncsolve.solve(spd if comm.rank == 0 else None, b, comm=comm, method=method, tol=tol,
                         max_iters=100000, gather=True)
    assert r.converged
    assert r.reason == "tolerance"
    assert r.true_residual < tol
    assert r.x.shape == (spd.shape[0],)
    assert np.allclose(r.x, exact, rtol=0, atol=1e-6 * np.abs(exact).max())


@pytest.mark.parametrize("method", [m for m in asyncsolve.methods() if m not in CG_FAMILY])
def test_nonsymmetric_against_spsolve(comm, nonsymmetric, method):
    a = nonsymmetric
    b = rhs(a.shape[0])
    exact = spla.spsolve(a.tocsc(), b)
    r = asyncsolve.solve(a if comm.rank == 0 else None, b, comm=comm, method=method, tol=1e-10,
                         max_iters=100000, gather=True)
    assert r.converged
    assert np.allclose(r.x, exact, rtol=0, atol=1e-7 * np.abs(exact).max())


@pytest.mark.parametrize("method", ["jacobi", "schwarz"])
@pytest.mark.parametrize("variant", ["async", "racy"])
def test_asynchronous_methods(comm, nonsymmetric, method, variant):
    a = nonsymmetric
    b = rhs(a.shape[0])
    exact = spla.spsolve(a.tocsc(), b)
    r = asyncsolve.solve(a if comm.rank == 0 else None, b, comm=comm, method=method,
                         variant=variant, tol=1e-9, final_sync=100000, gather=True)
    assert r.converged
    assert np.allclose(r.x, exact, rtol=0, atol=1e-6 * np.abs(exact).max())


def test_rows_of_each_rank(comm, spd):
    block, rows = block_of(spd, comm)
    b = rhs(spd.shape[0])
    exact = spla.spsolve(spd.tocsc(), b)
    r = asyncsolve.solve(block, b[rows[0]:rows[1]], comm=comm, method="pcg2", tol=1e-10,
                         rows=rows)
    assert r.converged
    # This rank's rows, in the caller's numbering.
    assert list(r.rows) == list(range(*rows))
    assert np.allclose(r.x, exact[rows[0]:rows[1]], atol=1e-6 * np.abs(exact).max())
    g = asyncsolve.solve(block, b[rows[0]:rows[1]], comm=comm, method="pcg2", tol=1e-10,
                         rows=rows, gather=True)
    assert np.allclose(g.x, exact, atol=1e-6 * np.abs(exact).max())


def test_local_rows_with_whole_matrix(comm, spd):
    # Without gather, x is this rank's rows of the distributed numbering.
    b = rhs(spd.shape[0])
    exact = spla.spsolve(spd.tocsc(), b)
    r = asyncsolve.solve(spd if comm.rank == 0 else None, b, comm=comm, method="cg", tol=1e-10,
                         partition="block:nnz")
    assert r.x.shape == r.rows.shape
    assert np.allclose(r.x, exact[r.rows], atol=1e-6 * np.abs(exact).max())
    assert sum(comm.allgather(len(r.rows))) == spd.shape[0]


@pytest.mark.parametrize("pc", ["jacobi", "chebyshev:3", "boomeramg"])
def test_preconditioners(comm, spd, pc):
    b = rhs(spd.shape[0])
    exact = spla.spsolve(spd.tocsc(), b)
    try:
        r = asyncsolve.solve(spd if comm.rank == 0 else None, b, comm=comm, method="pcg1", pc=pc,
                             tol=1e-10, gather=True)
    except asyncsolve.InputError as e:
        # A build without hypre refuses boomeramg as bad input, on every rank.
        assert pc == "boomeramg"
        assert "hypre" in str(e)  # noqa: PT017
        return
    assert np.allclose(r.x, exact, atol=1e-6 * np.abs(exact).max())
    assert r.phases  # phase times, by name


def test_default_rhs_gives_ones(comm, spd):
    r = asyncsolve.solve(spd if comm.rank == 0 else None, comm=comm, method="pcg1", tol=1e-10,
                         gather=True)
    assert np.allclose(r.x, 1.0, atol=1e-7)
    assert r.residuals.size >= 1
    assert r.history[0]["rank"] == 0


def test_scaled_system(comm, nonsymmetric):
    a = nonsymmetric * 7.0
    b = rhs(a.shape[0])
    exact = spla.spsolve(a.tocsc(), b)
    r = asyncsolve.solve(a if comm.rank == 0 else None, b, comm=comm, method="jacobi",
                         scale="unit-diagonal", tol=1e-10, gather=True)
    assert np.allclose(r.x, exact, atol=1e-7 * np.abs(exact).max())


def test_version_is_the_library_version():
    assert asyncsolve.__version__ == asyncsolve._core.version
    import importlib.metadata

    assert importlib.metadata.version("asyncsolve") == asyncsolve.__version__


@pytest.mark.parametrize(("method", "options"), [
    ("gmres", {"pc": "ilu0", "restart": 5}),
    ("fgmres", {"pc": "jacobi", "restart": 8, "cgs_refinement": "always"}),
    ("pgmres", {"restart": 12}),
    ("bicgstab", {"pc": "ilu0"}),
    ("pipebicgstab", {"pc": "jacobi"}),
])
def test_nonsymmetric_options_against_spsolve(comm, nonsymmetric, method, options):
    a = nonsymmetric
    b = rhs(a.shape[0])
    exact = spla.spsolve(a.tocsc(), b)
    r = asyncsolve.solve(a if comm.rank == 0 else None, b, comm=comm, method=method, tol=1e-10,
                         max_iters=100000, gather=True, **options)
    assert r.converged
    assert r.true_residual < 1e-9
    assert np.allclose(r.x, exact, rtol=0, atol=1e-7 * np.abs(exact).max())
    assert r.document["problem"]["symmetry"]["symmetric"] is False


def test_nonsymmetric_rows_of_each_rank(comm, nonsymmetric):
    block, rows = block_of(nonsymmetric, comm)
    b = rhs(nonsymmetric.shape[0])
    exact = spla.spsolve(nonsymmetric.tocsc(), b)
    r = asyncsolve.solve(block, b[rows[0]:rows[1]], comm=comm, method="bicgstab", tol=1e-10,
                         rows=rows, gather=True)
    assert r.converged
    assert np.allclose(r.x, exact, atol=1e-7 * np.abs(exact).max())


def test_the_typing_stub_describes_the_module():
    from pathlib import Path

    stub = Path(asyncsolve._core.__file__).with_name("_core.pyi")
    text = stub.read_text()
    for name in ("class Channel", "class NonblockingAllreduce", "class System", "version: str"):
        assert name in text, f"{name!r} missing from {stub}"
