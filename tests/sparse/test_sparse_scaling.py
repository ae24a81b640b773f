"""Systems far from 1: a well-conditioned matrix scaled by 10^±160 to
10^±300, and right-hand sides of 10^±300, are solved by every method (the
solve equilibrates the system by powers of two, which rounds nothing), to
the solution of the unscaled system scaled back; a power-of-two scaling
gives the unscaled run's iterates bit for bit."""

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

METHODS = ["cg", "pcg1", "pcg2", "pcg-overlap", "pipecg", "jacobi:sync", "jacobi:async"]
SCALES = [160, -160, 200, -200, 300, -300]


def base_matrix(n=8):
    """A 2-D Laplacian with a heavier diagonal: SPD, rho(|D^-1 (A - D)|) = 8/9."""
    t = sp.diags([-1.0, 4.5, -1.0], [-1, 0, 1], shape=(n, n))
    off = sp.diags([-1.0, -1.0], [-1, 1], shape=(n, n))
    return (sp.kron(sp.eye(n), t) + sp.kron(off, sp.eye(n))).tocsr()


def method_args(method):
    if method.startswith("jacobi:"):
        # An asynchronous rank that goes on without news counts its sweeps: on
        # oversubscribed cores it may sweep thousands of times while a
        # neighbour is descheduled (seen: 5000 sweeps each, 3 ranks, 2 busy cores).
        return ["--method", "jacobi", "--variant", method.split(":")[1], "--max-iters", "50000"]
    return ["--method", method, "--max-iters", "500"]


def write(path, a):
    scipy.io.mmwrite(path, a, symmetry="symmetric", precision=17)
    return path


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scale", SCALES)
def test_a_matrix_scaled_far_from_one_is_solved(solve, tmp_path, scale, method):
    path = write(tmp_path / "a.mtx", base_matrix() * 10.0**scale)
    rc, out, err, doc = solve(2, "--matrix", path, "--tol", "1e-9", *method_args(method))
    assert rc == 0, out + err
    assert doc["result"]["converged"] is True
    assert doc["result"]["error_inf"] < 1e-6  # b = A * 1: the solution is all ones
    assert doc["problem"]["equilibration"]["matrix_exponent"] != 0


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scale", [300, -300, 200, -200])
def test_a_right_hand_side_far_from_one_is_solved(solve, tmp_path, scale, method):
    a = base_matrix()
    path = write(tmp_path / "a.mtx", a)
    b = np.random.default_rng(3).uniform(0.5, 1.5, a.shape[0]) * 10.0**scale
    rhs = tmp_path / "b.mtx"
    scipy.io.mmwrite(rhs, b.reshape(-1, 1), precision=17)
    solution = tmp_path / "x.mtx"
    rc, out, err, doc = solve(3, "--matrix", path, "--rhs", rhs, "--tol", "1e-9",
                              "--write-solution", solution, *method_args(method))
    assert rc == 0, out + err
    assert doc["result"]["converged"] is True
    # compared at the scale of 1 (the norms of x itself would overflow or underflow)
    x = np.asarray(scipy.io.mmread(solution)).ravel() / 10.0**scale
    expected = spla.spsolve(a.tocsc(), b / 10.0**scale)
    assert np.linalg.norm(x - expected) / np.linalg.norm(expected) < 1e-7


@pytest.mark.parametrize("method", ["cg", "pipecg", "jacobi:sync"])
def test_a_power_of_two_scaling_changes_no_bit(solve, tmp_path, method):
    a = base_matrix()
    runs = []
    for exponent in (0, -700, 640):
        path = write(tmp_path / f"a{exponent}.mtx", a * 2.0**exponent)
        solution = tmp_path / f"x{exponent}.mtx"
        rc, out, err, doc = solve(2, "--matrix", path, "--write-solution", solution,
                                  *method_args(method))
        assert rc == 0, out + err
        runs.append((doc["result"]["iterations"]["max"], doc["result"]["true_residual"],
                     solution.read_text().split("\n", 2)[2]))  # past the banner and comment
    assert runs[1] == runs[0]
    assert runs[2] == runs[0]


def split_diagonal_system(tmp_path, n=20):
    """A 2-D Laplacian D^1/2 L D^1/2 whose diagonal is 4e-6 on half the rows
    and 4e6 on the other half, b = 1 on the first half: the residual of the
    unit-diagonal scaled system understates this one's by about 10^6."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    lap = (sp.kron(t, sp.eye(n)) + sp.kron(sp.eye(n), t)).tocsr()
    d = np.r_[np.full(n * n // 2, 1e-6), np.full(n * n // 2, 1e6)]
    s = sp.diags(np.sqrt(d))
    a = (s @ lap @ s).tocsr()
    b = np.zeros(n * n)
    b[: n * n // 2] = 1.0
    scipy.io.mmwrite(tmp_path / "b.mtx", b.reshape(-1, 1), precision=17)
    return a, b, write(tmp_path / "split.mtx", a), tmp_path / "b.mtx"


@pytest.mark.parametrize("method", ["cg", "gmres", "schwarz", "jacobi:async"])
def test_unit_diagonal_scaling_is_judged_on_the_system_as_given(solve, tmp_path, method):
    # --scale unit-diagonal solves D^-1/2 A D^-1/2 y = D^-1/2 b; its residual
    # met --tol here, but b - A x is 10^5 times larger: "unconfirmed", exit 3,
    # with the given system's true residual (as scipy measures it), the
    # scaled one's beside it, and a hint. Without --scale the solve converges.
    a, b, matrix, rhs = split_diagonal_system(tmp_path)
    x_path = tmp_path / "x.mtx"
    extra = method_args(method) if method.startswith("jacobi:") else ["--method", method]
    tol = "1e-4" if method.startswith("jacobi:") else "1e-6"
    rc, out, err, doc = solve(3, "--matrix", matrix, "--rhs", rhs, "--scale", "unit-diagonal",
                              "--tol", tol, "--write-solution", x_path, *extra)
    assert rc == 3, out + err
    r = doc["result"]
    assert not r["converged"], r
    assert r["reason"] == "unconfirmed", r
    x = scipy.io.mmread(x_path).ravel()
    given = np.linalg.norm(b - a @ x) / np.linalg.norm(b)
    assert r["true_residual"] == pytest.approx(given, rel=1e-6)
    assert r["scaled_true_residual"] < float(tol) < given
    assert "the system as given has" in r["detail"]
    assert any("solve without --scale" in h for h in r["hints"]), r["hints"]
    assert "NOT converged (unconfirmed)" in out
    if method == "cg":
        rc, out, err, doc = solve(3, "--matrix", matrix, "--rhs", rhs, "--tol", tol,
                                  "--max-iters", "5000", *extra)
        assert rc == 0, out + err
        assert doc["result"]["converged"], out + err
        assert doc["result"]["true_residual"] < float(tol)
        assert "scaled_true_residual" not in doc["result"]


@pytest.mark.parametrize("method", ["cg", "gmres", "schwarz", "jacobi:sync"])
def test_a_matrix_of_subnormal_entries_is_solved(solve, tmp_path, method):
    # 10^-310 is below the normal range (2.2e-308): the equilibration scales
    # A by 2^1030 (S A S with S = 2^515), a factor the double cannot hold in
    # one number: S_i S_j overflowed, and the solve reported a NaN breakdown
    # (Schwarz: "not positive definite").
    path = write(tmp_path / "a.mtx", base_matrix() * 1e-310)
    rc, out, err, doc = solve(2, "--matrix", path, "--tol", "1e-9", *method_args(method))
    assert rc == 0, out + err
    assert doc["result"]["converged"] is True
    assert doc["result"]["error_inf"] < 1e-6
    assert doc["problem"]["equilibration"]["matrix_exponent"] > 1023


@pytest.mark.parametrize("method", ["cg", "pipecg", "gmres", "bicgstab", "jacobi"])
def test_a_breakdown_before_the_first_estimate_shows_no_estimate(solve, tmp_path, method):
    # x0 = 1e308 on every row: r^T r overflows at iteration 0, before any
    # estimate. The summary showed "residual 0.000e+00" beside the true 1e308.
    a = base_matrix()
    path = write(tmp_path / "a.mtx", a)
    x0 = tmp_path / "x0.mtx"
    scipy.io.mmwrite(x0, np.full((a.shape[0], 1), 1e308), precision=17)
    rc, out, err, doc = solve(2, "--matrix", path, "--x0", x0, *method_args(method))
    assert rc == 3, out + err
    assert doc["result"]["reason"] == "breakdown"
    if method != "jacobi":  # Jacobi's first estimate is the overflowed residual itself
        assert doc["result"]["residual_estimate"] is None
        assert "residual   none (true " in out, out
    # the breakdown names the initial guess that caused it
    assert f"the initial guess --x0 {x0} has values up to |x0| = 1.000e+308" in \
        doc["result"]["detail"], doc["result"]["detail"]
