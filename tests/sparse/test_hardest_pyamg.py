"""The hardest of pyamg's symmetric positive definite examples
(pyamg.gallery.load_example), the fourth problem of issue 16's benchmark:
which one it is (the most CG and Jacobi-CG iterations to 1e-6), and every
preconditioned CG method with --pc boomeramg and --pc chebyshev converging
on it on 1, 2, 3, 4 and 8 ranks as bench/peers/run_pc.py runs it (the file
its --write-pyamg writes, b = A*1, x0 = 0, --partition block), ten solves
after one setup each taking the first one's iterations."""

import sys
from pathlib import Path

import numpy as np
import pyamg
import pytest
import scipy.io
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "peers"))
import run_pc

HARDEST = "local_disc_galerkin_diffusion"
RANKS = [1, 2, 3, 4, 8]
PCG = ["pcg1", "pcg2", "pcg-overlap", "pipecg"]


def cg_iterations(a, preconditioner):
    """scipy's CG iterations on a x = a 1 from x0 = 0 to ||r|| < 1e-6 ||b||."""
    b = a @ np.ones(a.shape[0])
    m = sp.diags(1.0 / a.diagonal()) if preconditioner == "jacobi" else None
    count = [0]

    def callback(_):
        count[0] += 1

    _, info = spla.cg(a, b, rtol=1e-6, maxiter=20000, M=m, callback=callback)
    assert info == 0
    return count[0]


def classify(name):
    """(kind, matrix): kind is "spd", or why the example is not one."""
    a = sp.csr_matrix(pyamg.gallery.load_example(name)["A"])
    if np.iscomplexobj(a.data):
        return "complex", None
    a = a.astype(float)
    if abs(a - a.T).max() > 1e-12 * abs(a).max():
        return "unsymmetric", None
    w = scipy.linalg.eigvalsh(((a + a.T) / 2).toarray())
    if w[0] <= 1e-12 * w[-1]:
        return "semidefinite", None  # unit_square: a Neumann Laplacian, A 1 = 0
    return "spd", a


@pytest.fixture(scope="module")
def spd_examples():
    out = {}
    for name in pyamg.gallery.example.example_names:
        kind, a = classify(name)
        if kind == "spd":
            out[name] = a
    return out


def test_the_hardest_spd_example(spd_examples):
    assert HARDEST in spd_examples
    # helmholtz_2D is complex, recirc_flow unsymmetric, unit_square singular
    assert set(spd_examples) == {"airfoil", "bar", "knot", HARDEST, "unit_cube"}
    for preconditioner in ("none", "jacobi"):
        its = {n: cg_iterations(a, preconditioner) for n, a in spd_examples.items()}
        assert max(its, key=its.get) == HARDEST, its


@pytest.fixture(scope="module")
def hardest_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("hardest") / f"{HARDEST}.mtx"
    run_pc.write_pyamg(str(path), HARDEST)
    a = sp.csr_matrix(pyamg.gallery.load_example(HARDEST)["A"])
    written = sp.csr_matrix(scipy.io.mmread(path))
    assert abs(written - a).max() == 0.0  # the very matrix
    return path


def test_unpreconditioned_and_jacobi_counts_are_scipys(solve, hardest_file, spd_examples):
    a = spd_examples[HARDEST]
    for method, preconditioner in (("cg", "none"), ("pcg1", "jacobi")):
        rc, out, err, doc = solve(1, "--matrix", hardest_file, "--partition", "block",
                                  "--method", method)
        assert rc == 0, out + err
        assert abs(doc["result"]["iterations"]["max"] - cg_iterations(a, preconditioner)) <= 1


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("pc", ["boomeramg", "chebyshev"])
@pytest.mark.parametrize("method", PCG)
def test_every_pcg_method_converges(solve, hardest_file, has_boomeramg, method, pc, ranks):
    if pc == "boomeramg" and not has_boomeramg:
        pytest.skip("this build has no hypre (--pc boomeramg refused)")
    rc, out, err, doc = solve(ranks, "--matrix", hardest_file, "--partition", "block",
                              "--method", method, "--pc", pc, "--tol", "1e-6",
                              "--max-iters", "5000", "--repeat-solve", "10")
    assert rc == 0, out + err
    r = doc["result"]
    assert r["converged"] is True
    assert r["true_residual"] < 1e-6
    assert r["error_inf"] < 1e-3  # b = A 1: x = 1
    assert r["iterations"]["max"] < 172  # fewer than Jacobi-PCG's
    rs = r["repeat_solves"]
    assert rs["count"] == 10
    assert rs["iterations"] == [r["iterations"]["max"]] * 10
    assert max(rs["change_inf"]) == 0.0
    assert doc["pc_setup"]["name"] == pc
