"""Additive Schwarz (--pc asm) on finite-element systems a user would bring
(bench/fem_systems.py, assembled by scikit-fem): asynchronous Jacobi refuses
them (rho >= 1), pcg1 --pc asm reaches a true residual below tol on 1, 2
and 4 ranks, one and two levels; gmres and bicgstab with restricted
additive Schwarz (their default type) on a nonsymmetric system; and the
refusals of bad input (exit 2: restricted Schwarz with CG among them) and
of subdomains that cannot be factorised (exit 3), each one line from rank
0. The Schwarz iteration (--method schwarz) sync, async and racy on every
system, over mpi and rma, and its refusals. The MPI unit test
(mpi_schwarz) covers 1-8 ranks, the iteration against a serial reference."""

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

fem_systems = pytest.importorskip("fem_systems")
pytest.importorskip("skfem")

RANKS = (1, 2, 4)  # the CLI runs kept few (CI's time); mpi_schwarz runs 1-8 ranks
# Small: a few thousand unknowns at most (CI runs on 2 cores).
SIZES = {"poisson-p2": 5, "jump": 9, "elasticity": 5, "convdiff": 16}


@pytest.fixture(scope="module")
def systems(tmp_path_factory):
    out = tmp_path_factory.mktemp("fem")
    return {kind: fem_systems.write(fem_systems.build(kind, n), out)
            for kind, n in SIZES.items()}


def _error_lines(err):
    """asyncsolve's own lines of stderr (mpiexec adds its notice of a non-zero exit)."""
    return [x for x in err.splitlines() if x.startswith("asyncsolve")]


def _rho(path):
    a = sp.csr_matrix(scipy.io.mmread(path))
    d = a.diagonal()
    m = sp.diags(1.0 / np.abs(d)) @ abs(a - sp.diags(d))
    x = np.ones(a.shape[0])
    for _ in range(500):
        y = m @ x
        x = y / np.linalg.norm(y)
    return float(np.linalg.norm(m @ x))


@pytest.mark.parametrize("kind", sorted(SIZES))
def test_async_jacobi_refuses(kind, systems, solve):
    files = systems[kind]["files"]
    assert _rho(files["matrix"]) >= 1.0
    rc, _, err, doc = solve(2, "--matrix", files["matrix"], "--rhs", files["rhs"], "--method",
                            "jacobi", "--variant", "async", "--max-iters", "100")
    assert rc == 2, err
    assert "rho" in err
    assert doc is None
    assert len(_error_lines(err)) == 1, err


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("kind", ["poisson-p2", "jump", "elasticity"])
def test_pcg1_asm_converges(kind, ranks, systems, solve):
    files = systems[kind]["files"]
    rc, out, err, doc = solve(ranks, "--matrix", files["matrix"], "--rhs", files["rhs"],
                              "--method", "pcg1", "--pc", "asm", "--tol", "1e-8",
                              "--max-iters", "500")
    assert rc == 0, out + err
    assert doc["result"]["true_residual"] < 1e-8
    numbers = doc["pc_setup"]
    assert numbers["settings"]["local_solver"] == "auto"
    assert numbers["overlap"] == 1
    if ranks > 1:
        assert numbers["overlap_rows"] > 0
        assert numbers["halo_volume"] >= numbers["overlap_volume"]
    else:
        assert numbers["overlap_rows"] == 0
        # one subdomain solved exactly: one iteration
        assert doc["result"]["iterations"]["max"] <= 2


@pytest.mark.parametrize("ranks", [3, 4])
def test_two_levels_take_fewer_iterations(ranks, systems, solve):
    files = systems["elasticity"]["files"]
    common = ["--matrix", files["matrix"], "--rhs", files["rhs"], "--method", "pcg1", "--pc",
              "asm", "--overlap", "1", "--tol", "1e-8", "--max-iters", "500"]
    counts = {}
    for name, extra in (("one", []), ("nicolaides", ["--coarse", "nicolaides"]),
                        ("rigid", ["--coarse", "nicolaides", "--coordinates",
                                   files["coordinates"]])):
        rc, out, err, doc = solve(ranks, *common, *extra)
        assert rc == 0, out + err
        assert doc["result"]["true_residual"] < 1e-8
        counts[name] = doc["result"]["iterations"]["max"]
        if name == "rigid":
            # 6 rigid-body modes per subdomain
            assert doc["pc_setup"]["coarse_dimension"] == 6 * ranks
            assert doc["method"]["block_size"] == 0  # not given: the file's comment
            assert doc["pc_setup"]["block_size"] == 3
    assert counts["rigid"] <= counts["one"], counts


def test_local_solvers_agree(systems, solve):
    files = systems["jump"]["files"]
    iterations = {}
    for solver in ("cholmod", "umfpack", "ic0"):
        rc, out, err, doc = solve(2, "--matrix", files["matrix"], "--rhs", files["rhs"],
                                  "--method", "pcg1", "--pc", "asm", "--local-solver", solver,
                                  "--tol", "1e-8")
        if rc == 2 and "SuiteSparse" in err:
            continue
        assert rc == 0, out + err
        assert doc["result"]["true_residual"] < 1e-8
        iterations[solver] = doc["result"]["iterations"]["max"]
    if "cholmod" in iterations and "umfpack" in iterations:
        # both exact: the same preconditioner up to rounding
        assert abs(iterations["cholmod"] - iterations["umfpack"]) <= 1


@pytest.mark.parametrize("method", ["gmres", "bicgstab"])
def test_nonsymmetric_methods_take_restricted_asm(method, systems, solve):
    files = systems["convdiff"]["files"]
    rc, out, err, doc = solve(3, "--matrix", files["matrix"], "--rhs", files["rhs"],
                              "--method", method, "--pc", "asm", "--tol", "1e-8",
                              "--max-iters", "500")
    assert rc == 0, out + err
    assert doc["result"]["true_residual"] < 1e-8
    assert doc["pc_setup"]["settings"]["type"] == "restricted"
    # basic, given, is taken too
    rc, out, err, doc = solve(3, "--matrix", files["matrix"], "--rhs", files["rhs"],
                              "--method", method, "--pc", "asm", "--pc-option", "type=basic",
                              "--tol", "1e-8", "--max-iters", "500")
    assert rc == 0, out + err
    assert doc["result"]["true_residual"] < 1e-8
    assert doc["pc_setup"]["settings"]["type"] == "basic"


@pytest.mark.parametrize("method", ["pcg1", "pipecg"])
def test_cg_refuses_restricted_asm(method, systems, solve):
    files = systems["jump"]["files"]
    rc, _, err, doc = solve(2, "--matrix", files["matrix"], "--method", method, "--pc", "asm",
                            "--pc-option", "type=restricted")
    assert rc == 2, err
    assert "type=restricted" in err
    assert "not symmetric" in err
    assert doc is None
    assert len(_error_lines(err)) == 1, err


@pytest.mark.parametrize(("args", "words"), [
    (["--overlap", "9"], "--overlap 9"),
    (["--overlap", "-1"], "--overlap -1"),
    (["--local-solver", "mumps"], "--local-solver"),
    (["--coarse", "deflation"], "--coarse"),
])
def test_bad_schwarz_options(args, words, systems, solve):
    files = systems["jump"]["files"]
    rc, _, err, doc = solve(2, "--matrix", files["matrix"], "--method", "pcg1", "--pc", "asm",
                            *args)
    assert rc == 2, err
    assert words in err
    assert doc is None
    assert len(_error_lines(err)) == 1, err


@pytest.mark.parametrize("variant", ["sync", "async", "racy"])
@pytest.mark.parametrize("kind", sorted(SIZES))
def test_schwarz_iteration_converges(kind, variant, systems, solve):
    # where asynchronous Jacobi refuses (test_async_jacobi_refuses)
    files = systems[kind]["files"]
    rc, out, err, doc = solve(2, "--matrix", files["matrix"], "--rhs", files["rhs"],
                              "--method", "schwarz", "--variant", variant, "--partition",
                              "metis", "--max-iters", "20000")
    assert rc == 0, out + err
    assert doc["result"]["converged"]
    assert doc["result"]["true_residual"] < 1e-6  # schwarz's default tol
    assert doc["method"]["tol"] == 1e-6
    assert doc["method"]["check_every"] == 1
    setup = doc["pc_setup"]
    assert setup["name"] == "schwarz"
    assert setup["settings"]["type"] == "restricted"
    assert setup["overlap"] == 1
    assert setup["overlap_rows"] > 0
    assert setup["halo_volume"] >= setup["overlap_volume"]
    assert doc["problem"]["jacobi_check"] is None  # no rho refusal: Schwarz is not Jacobi


@pytest.mark.parametrize("variant", ["sync", "async", "racy"])
def test_schwarz_iteration_over_rma(variant, systems, solve):
    files = systems["jump"]["files"]
    rc, out, err, doc = solve(3, "--matrix", files["matrix"], "--rhs", files["rhs"],
                              "--method", "schwarz", "--variant", variant, "--transport",
                              "rma", "--overlap", "2", "--max-iters", "20000")
    assert rc == 0, out + err
    assert doc["result"]["true_residual"] < 1e-6
    assert doc["pc_setup"]["overlap"] == 2


@pytest.mark.parametrize(("args", "words"), [
    (["--coarse", "nicolaides", "--variant", "async"], "--coarse"),
    (["--coarse", "nicolaides", "--variant", "racy"], "--coarse"),
    (["--pc", "asm"], "--pc asm"),
    (["--transport", "omp"], "--transport omp"),
    (["--local-solver", "mumps"], "--local-solver"),
    (["--overlap", "9"], "--overlap 9"),
])
def test_schwarz_iteration_refusals(args, words, systems, solve):
    files = systems["jump"]["files"]
    rc, _, err, doc = solve(2, "--matrix", files["matrix"], "--method", "schwarz", *args)
    assert rc == 2, err
    assert words in err
    assert doc is None
    assert len(_error_lines(err)) == 1, err


@pytest.mark.parametrize("ranks", [3, 4])
def test_schwarz_iteration_two_levels(ranks, systems, solve):
    files = systems["elasticity"]["files"]
    common = ["--matrix", files["matrix"], "--rhs", files["rhs"], "--method", "schwarz",
              "--max-iters", "5000"]
    counts = {}
    for name, extra in (("one", []), ("rigid", ["--coarse", "nicolaides", "--coordinates",
                                               files["coordinates"]])):
        rc, out, err, doc = solve(ranks, *common, *extra)
        assert rc == 0, out + err
        assert doc["result"]["true_residual"] < 1e-6
        counts[name] = doc["result"]["iterations"]["max"]
    assert doc["pc_setup"]["coarse_dimension"] == 6 * ranks
    assert counts["rigid"] < counts["one"], counts


def test_schwarz_iteration_needs_a_matrix(solve):
    rc, _, err, doc = solve(2, "--method", "schwarz", "--problem", "plume")
    assert rc == 2, err
    assert "--matrix FILE or --assemble" in err
    assert doc is None
    assert len(_error_lines(err)) == 1, err


def test_coarse_needs_asm(systems, solve):
    files = systems["jump"]["files"]
    for method in (["--method", "pcg1", "--pc", "jacobi"], ["--method", "cg"],
                   ["--method", "jacobi"]):
        rc, _, err, _ = solve(2, "--matrix", files["matrix"], *method, "--coarse", "nicolaides")
        assert rc == 2, err
        assert "--coarse" in err
        assert len(_error_lines(err)) == 1, err


def test_coordinates_need_the_coarse_space(systems, solve):
    files = systems["elasticity"]["files"]
    for pc in (["--pc", "asm"], ["--pc", "boomeramg"]):
        rc, _, err, doc = solve(2, "--matrix", files["matrix"], "--method", "pcg1", *pc,
                                "--coordinates", files["coordinates"])
        assert rc == 2, err
        assert "--coordinates" in err
        assert doc is None
        assert len(_error_lines(err)) == 1, err


def test_cholmod_refuses_an_indefinite_subdomain(tmp_path, solve):
    # -A of a Laplacian: every subdomain is negative definite.
    a = -fem_systems.build("poisson-p1", 4).a
    scipy.io.mmwrite(tmp_path / "neg.mtx", sp.coo_matrix(a), symmetry="symmetric")
    rc, out, err, doc = solve(3, "--matrix", tmp_path / "neg.mtx", "--method", "pcg1", "--pc",
                              "asm", "--local-solver", "cholmod")
    if "SuiteSparse" in err:
        pytest.skip("no SuiteSparse in this build")
    assert rc == 3, out + err
    # A breakdown before the first iteration, reported as any other: the summary
    # and the document (none was written before), x0's true residual.
    assert _error_lines(err) == [], err
    assert "NOT converged (breakdown) after 0 iterations" in out
    r = doc["result"]
    assert r["reason"] == "breakdown"
    assert r["detail"].startswith("rank 0's subdomain"), r["detail"]
    assert "not positive definite" in r["detail"]
    assert r["residual_estimate"] is None
    assert r["true_residual"] == pytest.approx(1.0)


def test_singular_subdomain_is_refused(tmp_path, solve):
    # A pure Neumann Laplacian (a path graph): singular, so the one
    # subdomain of one rank is.
    n = 30
    a = sp.diags([-np.ones(n - 1), np.r_[1.0, 2.0 * np.ones(n - 2), 1.0], -np.ones(n - 1)],
                 [-1, 0, 1])
    scipy.io.mmwrite(tmp_path / "neumann.mtx", sp.coo_matrix(a), symmetry="symmetric")
    # A * 1 = 0 here (the command warns of such a b): a right-hand side of its own
    scipy.io.mmwrite(tmp_path / "b.mtx", np.linspace(1.0, 2.0, n).reshape(-1, 1))
    for solver in ("auto", "ic0"):
        rc, out, err, _ = solve(1, "--matrix", tmp_path / "neumann.mtx", "--rhs",
                                tmp_path / "b.mtx", "--method", "pcg1", "--pc", "asm",
                                "--local-solver", solver)
        assert rc == 3, out + err
        assert "breakdown  rank 0's subdomain" in out, out
        assert _error_lines(err) == [], err
