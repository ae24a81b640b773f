"""What `asyncsolve solve --matrix` proves and advises beyond its result, as
the result document records it: the verdict on rho(|D^-1 (A - D)|) and its
proof, a diverging Jacobi stopped early with a method that fits, a zero
right-hand side warned of, a graph partitioner suggested where the block
partition exchanges much, and Chebyshev's largest eigenvalue kept above the
spectrum when too few Lanczos steps find it."""

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp


def laplacian_1d(n):
    return sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), dtype=float)


def laplacian_2d(n):
    t, i = laplacian_1d(n), sp.eye(n)
    return (sp.kron(i, t) + sp.kron(t, i)).tocsr()


def write(path, a, symmetric=True):
    scipy.io.mmwrite(path, sp.csr_matrix(a), symmetry="symmetric" if symmetric else "general")
    return path


def chain_with_block(chain=2000):
    """A chain with rho(|D^-1 (A - D)|) ~ 0.9 and a 2 x 2 block with 1.1."""
    c = sp.diags([-0.45, 1.0, -0.45], [-1, 0, 1], shape=(chain, chain))
    return sp.block_diag([c, sp.csr_matrix([[1.0, -1.1], [-1.1, 1.0]])]).tocsr()


def test_rho_verdicts_and_their_proofs(solve, tmp_path):
    lap = write(tmp_path / "lap.mtx", laplacian_2d(30))
    rc, out, err, doc = solve(2, "--matrix", lap, "--variant", "async", "--max-iters", "20")
    check = doc["problem"]["jacobi_check"]
    assert (check["verdict"], check["proof"]) == ("below_one", "dominance"), out + err
    assert check["rho_upper_bound"] <= 1.0
    assert "converges for every delay pattern" in out
    assert check["statement"] in out

    hidden = write(tmp_path / "chain.mtx", chain_with_block())
    rc, out, err, doc = solve(3, "--matrix", hidden, "--variant", "async")
    assert rc == 2, out + err
    assert doc is None
    assert "at least" in err
    assert "--scale" not in err
    rc, out, err, doc = solve(3, "--matrix", hidden, "--variant", "async", "--force",
                              "--max-iters", "10")
    check = doc["problem"]["jacobi_check"]
    assert (check["verdict"], check["proof"]) == ("at_least_one", "bounds")
    assert 1.0 <= check["rho_lower_bound"] <= 1.1 + 1e-9
    assert check["rho_estimate"] < 1.0 or check["power_iterations"] > 2  # not settled at 0.9


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_jacobi_on_a_diverging_matrix_stops_early_with_a_hint(solve, tmp_path, variant):
    blocks = sp.block_diag([sp.csr_matrix([[1.0, 1.5], [1.5, 1.0]])] * 20).tocsr()
    path = write(tmp_path / "d.mtx", blocks)
    rc, out, err, doc = solve(2, "--matrix", path, "--variant", variant, "--force",
                              "--max-iters", "100000", "--check-every", "1")
    assert rc == 3, out + err
    result = doc["result"]
    assert result["reason"] == "diverged"
    # sync: 1.5^k reaches 10^6 at k = 35; async: a round of checks every few sweeps
    assert result["iterations"]["max"] < (60 if variant == "sync" else 1000)
    assert any("--method pcg1" in h for h in result["hints"]), result["hints"]
    if variant == "sync":
        assert "asynchronous" not in out + err


def test_async_jacobi_stops_sweeping_once_its_residual_overflows(solve, tmp_path):
    # No round before sweep 100000: each rank measures its residual at least
    # every 64 sweeps, and once it outgrew the double (1.5^k: about sweep 870)
    # it stops sweeping and starts the round that ends the solve. Nothing
    # finite was checked before, so it is a breakdown, not a divergence.
    blocks = sp.block_diag([sp.csr_matrix([[1.0, 1.5], [1.5, 1.0]])] * 20).tocsr()
    path = write(tmp_path / "d.mtx", blocks)
    rc, out, err, doc = solve(2, "--matrix", path, "--variant", "async", "--force",
                              "--max-iters", "100000", "--check-every", "100000")
    assert rc == 3, out + err
    result = doc["result"]
    assert result["reason"] == "breakdown", result
    assert result["detail"].startswith("residual = inf at iteration"), result["detail"]
    assert 860 < result["iterations"]["max"] < 1000, result["iterations"]


def test_a_zero_right_hand_side_is_warned_of(solve, tmp_path):
    neumann = laplacian_1d(40).tolil()
    neumann[0, 0] = neumann[39, 39] = 1.0
    path = write(tmp_path / "n.mtx", neumann)
    rc, out, err, doc = solve(2, "--matrix", path, "--method", "cg")
    assert rc == 0, out + err
    assert doc["result"]["error_inf"] is None
    assert len(doc["result"]["warnings"]) == 1
    assert "A is singular" in doc["result"]["warnings"][0]
    assert "asyncsolve: warning: b = A * 1 is zero" in err


def test_an_empty_row_with_b_zero_there_is_warned_of(solve, tmp_path):
    # b = A 1 is 0 on the empty row: the system is consistent and GMRES converges to
    # one of its solutions; the error against all ones meant nothing and was reported.
    a = laplacian_1d(50).tolil()
    a[10, :] = 0
    path = write(tmp_path / "e.mtx", a, symmetric=False)
    rc, out, err, doc = solve(3, "--matrix", path, "--method", "gmres", "--pc", "none")
    assert rc == 0, out + err
    assert doc["result"]["error_inf"] is None
    expected = ("file row 11 is empty (no non-zero entry) and b is 0 there: A is "
                "singular and the solution is not unique")
    assert [w[:len(expected)] for w in doc["result"]["warnings"]] == [expected]
    assert err.splitlines() == [f"asyncsolve: warning: {doc['result']['warnings'][0]}"]


@pytest.mark.parametrize(("shuffle", "partition", "hinted"),
                         [(True, "block", True), (True, "metis", False), (False, "block", False)])
def test_a_graph_partitioner_is_suggested_where_blocks_exchange_much(solve, tmp_path, shuffle,
                                                                     partition, hinted):
    a = laplacian_2d(40)
    if shuffle:
        p = np.random.default_rng(3).permutation(a.shape[0])
        a = a[p][:, p]
    path = write(tmp_path / "a.mtx", a)
    rc, out, err, doc = solve(4, "--matrix", path, "--method", "cg", "--partition", partition)
    assert rc == 0, out + err
    part = doc["problem"]["partition"]
    per_row = part["communication_volume"] / doc["problem"]["matrix"]["rows"]
    hints = [h for h in doc["result"]["hints"] if "--partition metis" in h]
    assert bool(hints) == hinted, (per_row, doc["result"]["hints"])
    assert (per_row >= 0.25) == shuffle or partition != "block"


@pytest.mark.parametrize(("steps", "from_ritz"), [(2, False), (10, True)])
def test_chebyshev_keeps_lambda_max_above_the_spectrum(solve, tmp_path, steps, from_ritz):
    path = write(tmp_path / "p.mtx", laplacian_2d(16))
    rc, out, err, doc = solve(2, "--matrix", path, "--method", "pcg1", "--pc", "chebyshev",
                              "--pc-option", f"lanczos_steps={steps}")
    assert rc == 0, out + err
    pc = doc["pc_setup"]
    assert pc["gershgorin_bound"] == 2.0
    assert bool(pc["lambda_max_from_ritz"]) == from_ritz
    # D^-1 A's largest eigenvalue is 1 + cos(pi / 17) ~ 1.983
    assert 1.983 < pc["lambda_max"] <= 2.0
