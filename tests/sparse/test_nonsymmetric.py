"""The nonsymmetric Krylov methods from the command line, on Matrix Market
files made here (bench/convdiff_mtx.py: upwind convection-diffusion on 2-D
and 3-D grids at Peclet 1, 100 and 1000, and the non-normal Grcar matrix):
every method converges with a true residual below the tolerance; gmres
(restart 30, none and jacobi) takes scipy's GMRES count on the right-
preconditioned system and PETSc's KSPGMRES count within 2, bicgstab
scipy's and PETSc's KSPBCGS count within 5%; the CG family refuses a
nonsymmetric matrix; bad options are refused with one line and exit code 2;
the document carries the restarts and the symmetry check. PETSc runs where
a Python with petsc4py is found (ASYNCSOLVE_PETSC_PYTHON, else
/usr/bin/python3); otherwise those checks are skipped with a message."""

import glob
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse.linalg as spla

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("convdiff_mtx", ROOT / "bench" / "convdiff_mtx.py")
convdiff = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(convdiff)

TOL = 1e-8
MATRICES = {
    "cd2_pe1": lambda: convdiff.convection_diffusion(32, 2, 1.0),
    "cd2_pe100": lambda: convdiff.convection_diffusion(32, 2, 100.0),
    "cd2_pe1000": lambda: convdiff.convection_diffusion(32, 2, 1000.0),
    "cd3_pe1": lambda: convdiff.convection_diffusion(10, 3, 1.0),
    "cd3_pe100": lambda: convdiff.convection_diffusion(10, 3, 100.0),
    "cd3_pe1000": lambda: convdiff.convection_diffusion(10, 3, 1000.0),
    "grcar": lambda: convdiff.grcar(200),
}
METHODS = ["gmres", "fgmres", "pgmres", "bicgstab", "pipebicgstab"]


@pytest.fixture(scope="module")
def matrix_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nonsymmetric")
    files = {}
    for name, make in MATRICES.items():
        a = make()
        path = folder / f"{name}.mtx"
        convdiff.write_mtx(str(path), a, name)
        files[name] = (path, a)
    return files


def _one_line_refusal(rc, out, err, doc):
    """Exit code 2, no document, one line of asyncsolve's on stderr (mpiexec
    adds its own banner about the exit code)."""
    assert rc == 2, (rc, out, err)
    lines = [line for line in err.splitlines() if line.startswith("asyncsolve")]
    assert len(lines) == 1, err
    assert doc is None
    return lines[0]


def _right_preconditioned_scipy(a, jacobi, method):
    """scipy's iteration count on A M^-1 u = b (M = diag(A) or I): right
    preconditioning, which scipy's gmres does not offer itself."""
    n = a.shape[0]
    b = a @ np.ones(n)
    scale = 1.0 / a.diagonal() if jacobi else np.ones(n)
    op = spla.LinearOperator((n, n), matvec=lambda u: a @ (scale * u), dtype=float)
    count = [0]

    def tick(_):
        count[0] += 1

    if method == "gmres":
        u, info = spla.gmres(op, b, rtol=TOL, atol=0.0, restart=30, maxiter=200,
                             callback=tick, callback_type="pr_norm")
    else:
        u, info = spla.bicgstab(op, b, rtol=TOL, atol=0.0, maxiter=5000, callback=tick)
    if info != 0:
        return None  # scipy's method did not converge (its bicgstab stops on a breakdown)
    x = scale * u
    assert np.linalg.norm(b - a @ x) <= 1.01 * TOL * np.linalg.norm(b)
    return count[0]


def _petsc_python():
    """The Python and environment that import petsc4py, or None. Debian's
    python3-petsc4py finds PETSc through /usr/lib/petsc, which only petsc-dev
    provides; without it, through PETSC_DIR set to the installed build."""
    python = os.environ.get("ASYNCSOLVE_PETSC_PYTHON", "/usr/bin/python3")
    dirs = [None] if "PETSC_DIR" in os.environ else \
        [None] + sorted(glob.glob("/usr/lib/petscdir/petsc*/*-real"))
    for petsc_dir in dirs:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        if petsc_dir is not None:
            env["PETSC_DIR"] = petsc_dir
        try:
            probe = subprocess.run([python, "-c", "import petsc4py, numpy; petsc4py.init()"],
                                   capture_output=True, timeout=60, check=False, env=env)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if probe.returncode == 0:
            return python, env
    return None


@pytest.fixture(scope="module")
def petsc():
    found = _petsc_python()
    if found is None:
        pytest.skip("PETSc comparison skipped: no Python with petsc4py (apt-get install "
                    "python3-petsc4py, or set ASYNCSOLVE_PETSC_PYTHON)")
    return found


def _petsc_iterations(petsc, path, ksp, pc):
    python, env = petsc
    helper = ROOT / "tests" / "sparse" / "petsc_iterations.py"
    p = subprocess.run([python, str(helper), str(path), ksp, pc], capture_output=True, text=True,
                       timeout=300, check=True, env=env)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    return out["iterations"] if out["reason"] > 0 else None  # None: PETSc did not converge


def _restarted_for_breakdown(doc):
    return any(r["reason"] in ("rho", "sigma", "omega") for r in doc["result"]["restarts"])


@pytest.mark.parametrize("ranks", [1, 2, 3, 4, 8])
def test_every_method_converges(solve, matrix_files, ranks):
    # each matrix once per rank count, the methods and preconditioners spread over them
    for index, (name, (path, _)) in enumerate(matrix_files.items()):
        method = METHODS[(index + ranks) % len(METHODS)]
        pc = ["none", "jacobi", "ilu0"][(index + ranks) % 3]
        rc, out, err, doc = solve(ranks, "--matrix", path, "--method", method, "--pc", pc,
                                  "--tol", TOL, "--max-iters", 5000)
        assert rc == 0, (name, method, pc, out, err)
        r = doc["result"]
        assert r["converged"], (name, method, r)
        assert r["true_residual"] < TOL, (name, method, r)
        assert doc["problem"]["symmetry"]["symmetric"] is False
        assert doc["method"]["pc"] == pc


@pytest.mark.parametrize("name", list(MATRICES))
def test_counts_match_scipy(solve, matrix_files, name):
    path, a = matrix_files[name]
    for ranks, pc in ((1, "none"), (3, "jacobi")):
        for method in ("gmres", "bicgstab"):
            reference = _right_preconditioned_scipy(a, pc == "jacobi", method)
            rc, out, err, doc = solve(ranks, "--matrix", path, "--method", method, "--pc", pc,
                                      "--tol", TOL, "--max-iters", 5000)
            assert rc == 0, (out, err)
            if reference is None or _restarted_for_breakdown(doc):
                continue  # see test_counts_match_petsc
            got = doc["result"]["iterations"]["max"]
            # scipy's bicgstab also stops half way through an iteration
            slack = 2 if method == "gmres" else max(1, round(0.05 * reference)) + 1
            assert abs(got - reference) <= slack, (name, method, pc, got, reference)


@pytest.mark.parametrize("name", list(MATRICES))
def test_counts_match_petsc(solve, matrix_files, petsc, name):
    """gmres within 2 of KSPGMRES everywhere; bicgstab within 5% of KSPBCGS where
    KSPBCGS converges (not on Grcar) and ours made no breakdown restart (after
    one the two methods follow different paths by design: on the 2-D problem
    at Peclet 1000 the cosine of (r, r0) falls to 5e-18 and KSPBCGS goes on
    with that rho)."""
    path, _ = matrix_files[name]
    for pc, ranks in (("none", 1), ("jacobi", 2)):
        for method, ksp in (("gmres", "gmres"), ("bicgstab", "bcgs")):
            reference = _petsc_iterations(petsc, path, ksp, pc)
            rc, out, err, doc = solve(ranks, "--matrix", path, "--method", method, "--pc",
                                      pc, "--tol", TOL, "--max-iters", 5000)
            assert rc == 0, (out, err)
            if method == "gmres":
                assert reference is not None, (name, pc)
            elif reference is None or _restarted_for_breakdown(doc):
                continue
            got = doc["result"]["iterations"]["max"]
            slack = 2 if method == "gmres" else max(1, round(0.05 * reference))
            assert abs(got - reference) <= slack, (name, method, pc, ranks, got, reference)


def test_cg_family_refuses_a_nonsymmetric_matrix(solve, matrix_files):
    path, _ = matrix_files["cd2_pe100"]
    for method in ("cg", "pcg1", "pipecg"):
        line = _one_line_refusal(*solve(2, "--matrix", path, "--method", method))
        for word in ("not symmetric", "gmres", "--force"):
            assert word in line, line
    # --force runs it (whatever CG makes of it), and the document says why
    rc, out, err, doc = solve(2, "--matrix", path, "--method", "pcg1", "--force",
                              "--max-iters", 50)
    assert rc in (0, 3), (out, err)
    assert doc["problem"]["symmetry"]["symmetric"] is False
    assert doc["problem"]["symmetry"]["forced"] is True
    assert "NOT symmetric" in out


def test_a_symmetric_matrix_is_said_to_be(solve, tmp_path):
    a = convdiff.convection_diffusion(8, 3, 0.0)
    path = tmp_path / "laplace.mtx"
    convdiff.write_mtx(str(path), a, "Laplacian")
    rc, out, err, doc = solve(3, "--matrix", path, "--method", "pcg1")
    assert rc == 0, (out, err)
    assert doc["problem"]["symmetry"]["symmetric"] is True
    assert "symmetry" in out
    assert "NOT symmetric" not in out


def test_bad_options_are_refused(solve, matrix_files):
    path, _ = matrix_files["cd3_pe100"]
    cases = [
        (["--method", "gmres", "--pc", "chebyshev"], "Chebyshev"),
        (["--method", "pipebicgstab", "--pc", "chebyshev:4"], "Chebyshev"),
        (["--method", "gmres", "--restart", "0"], "--restart"),
        (["--method", "pgmres", "--restart", "1000000"], "--restart 1000000"),
        (["--method", "bicgstab", "--restart", "10"], "--restart"),
        (["--method", "bicgstab", "--cgs-refinement", "always"], "--cgs-refinement"),
        (["--method", "gmres", "--cgs-refinement", "sometimes"], "--cgs-refinement"),
        (["--method", "cg", "--pc", "ilu0", "--force"], "--pc"),
        (["--method", "gmsres"], "--method"),
    ]
    for args, word in cases:
        line = _one_line_refusal(*solve(2, "--matrix", path, *args))
        assert word in line, (args, line)


def test_the_document_records_restarts(solve, matrix_files):
    path, _ = matrix_files["cd2_pe100"]
    rc, out, err, doc = solve(2, "--matrix", path, "--method", "gmres", "--pc", "jacobi",
                              "--restart", "10", "--cgs-refinement", "always", "--tol", TOL)
    assert rc == 0, (out, err)
    m, r = doc["method"], doc["result"]
    assert m["restart"] == 10
    assert m["cgs_refinement"] == "always"
    assert r["restarts"]
    assert all(x["reason"] == "cycle" for x in r["restarts"])
    assert all(x["iteration"] % 10 == 0 for x in r["restarts"])
    assert r["refinements"] == r["iterations"]["max"]
    assert "restarts" in out
    for key in ("orthog", "reduce_start", "reduce_wait", "matvec_hidden"):
        assert key in doc["phases"], key
    rc, out, err, doc = solve(2, "--matrix", path, "--method", "pgmres", "--pc", "ilu0",
                              "--tol", TOL)
    assert rc == 0, (out, err)
    # --allreduce auto for the pipelined methods: the progress-free
    # shared-memory reduction in each node, impi among the nodes' leaders
    assert doc["method"]["allreduce"] == "twolevel:shm+impi"
    assert doc["result"]["matvecs_behind_reduction"] > 0
    assert doc["phases"]["matvec_hidden"]["max"] > 0


@pytest.mark.parametrize("name", ["cd3_pe100", "grcar"])
def test_every_refinement_takes_the_same_path(solve, matrix_files, name):
    """--cgs-refinement never, ifneeded, always and delayed (the default:
    DCGS2, the second pass one iteration later) build the same Krylov space:
    gmres and fgmres take the same iteration count within 2 with each, and
    delayed reorthogonalises every vector (refinements = iterations)."""
    path, _ = matrix_files[name]
    for method, pc, ranks in (("gmres", "jacobi", 3), ("fgmres", "ilu0", 2)):
        counts = {}
        for refinement in ("never", "ifneeded", "always", "delayed"):
            rc, out, err, doc = solve(ranks, "--matrix", path, "--method", method, "--pc", pc,
                                      "--cgs-refinement", refinement, "--tol", TOL,
                                      "--max-iters", 5000)
            assert rc == 0, (refinement, out, err)
            r = doc["result"]
            assert r["converged"], (name, method, refinement, r)
            assert r["true_residual"] < TOL, (name, method, refinement, r)
            counts[refinement] = r["iterations"]["max"]
            if refinement == "delayed":
                assert doc["method"]["cgs_refinement"] == "delayed"
                assert r["refinements"] == r["iterations"]["max"]
        assert max(counts.values()) - min(counts.values()) <= 2, (name, method, pc, counts)


def test_an_invariant_krylov_space_ends_gmres_at_once(solve, tmp_path):
    """A matrix with three distinct eigenvalues (upper bidiagonal, so not
    symmetric, but diagonalisable): the Krylov space of any right-hand side
    is invariant after 3 vectors, and GMRES's residual is zero there (a
    happy breakdown, where the delayed second pass meets a vector that is
    rounding only). Every refinement stops at 3 iterations at most with the
    true residual below the tolerance."""
    import scipy.sparse as sp

    n = 300
    diagonal = np.array([1.0, 2.0, 5.0])[np.arange(n) % 3]
    upper = np.where(np.arange(n - 1) % 3 == 0, 0.5, 0.0)
    a = sp.diags([diagonal, upper], [0, 1], format="csr")
    # block diagonal 2x2 [[1, .5], [0, 2]] blocks and 5s: eigenvalues 1, 2, 5
    path = tmp_path / "three_eigenvalues.mtx"
    convdiff.write_mtx(str(path), a, "three eigenvalues")
    for refinement in ("delayed", "always"):
        for ranks in (1, 3):
            rc, out, err, doc = solve(ranks, "--matrix", path, "--method", "gmres", "--pc",
                                      "none", "--cgs-refinement", refinement, "--tol", "1e-12")
            assert rc == 0, (refinement, out, err)
            r = doc["result"]
            assert r["converged"], (refinement, r)
            assert r["iterations"]["max"] <= 3, (refinement, r["iterations"])
            assert r["true_residual"] < 1e-12, (refinement, r)


def test_skew_matrix_stops_bicgstab_with_exit_code_3(solve, tmp_path):
    n = 64
    import scipy.sparse as sp

    a = sp.diags([-np.ones(n - 1), np.ones(n - 1)], [-1, 1], format="csr")
    path = tmp_path / "skew.mtx"
    convdiff.write_mtx(str(path), a, "skew")
    rc, out, err, doc = solve(2, "--matrix", path, "--method", "bicgstab", "--pc", "none")
    assert rc == 3, (out, err)
    assert doc["result"]["reason"] == "breakdown"
    assert "cannot proceed" in doc["result"]["detail"]
    assert doc["result"]["restarts"][0]["reason"] == "sigma"
    rc, out, err, doc = solve(2, "--matrix", path, "--method", "gmres", "--pc", "none")
    assert rc == 0, (out, err)


def test_growing_residual_stops_as_diverged(solve, tmp_path):
    """An upper bidiagonal matrix with 1e8 above the unit diagonal (condition
    number near 1e150): pipelined BiCGStab's residual grows without bound.
    The solve stops as diverged within a few iterations (exit code 3)
    instead of running until --max-time."""
    n = 20
    import scipy.sparse as sp

    a = sp.diags([np.ones(n), 1e8 * np.ones(n - 1)], [0, 1], format="csr")
    path = tmp_path / "bidiagonal.mtx"
    convdiff.write_mtx(str(path), a, "bidiagonal")
    for method, reasons in (("pipebicgstab", ("diverged",)),
                            ("bicgstab", ("diverged", "breakdown"))):
        rc, out, err, doc = solve(2, "--matrix", path, "--method", method, "--pc", "none",
                                  "--max-time", "60")
        assert rc == 3, (method, out, err)
        r = doc["result"]
        assert r["reason"] in reasons, (method, r["reason"], r.get("detail"))
        assert r["iterations"]["max"] < 1000, (method, r["iterations"])
        if r["reason"] == "diverged":
            assert "grew from" in r["detail"], r["detail"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
