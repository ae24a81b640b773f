"""to_dict() against the `result` of the command's JSON document for the same system."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import asyncsolve


def clean_environment() -> dict[str, str]:
    """This process's environment without what its launcher set (PMIx and Open
    MPI's job variables; MPICH's Hydra: PMI_*, the PMI socket's descriptor
    among them, and its own), so the command starts as a singleton of its
    own; the user's Open MPI settings (OMPI_ALLOW_*, OMPI_MCA_* below) stay."""
    keep = ("OMPI_ALLOW_", "OMPI_MCA_mpi_yield", "OMPI_MCA_rmaps_base_oversubscribe",
            "OMPI_MCA_osc", "OMPI_MCA_btl", "OMPI_MCA_pml")
    launcher = ("OMPI_", "PMIX_", "OPAL_", "PMI_", "HYDRA_", "HYDI_", "MPI_LOCALNRANKS",
                "MPI_LOCALRANKID")
    return {k: v for k, v in os.environ.items()
            if not k.startswith(launcher) or k.startswith(keep)}


def keys(value: object) -> object:
    """The shape of a JSON value: its keys, recursively (lists by their first element)."""
    if isinstance(value, dict):
        return {k: keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [keys(value[0])] if value else []
    return type(value).__name__ if not isinstance(value, int | float) else "number"


@pytest.mark.parametrize(("matrix", "method", "extra"), [
    ("spd", "pcg1", []), ("spd", "jacobi", []), ("spd", "pcg1", ["--repeat-solve", "2"]),
    ("nonsymmetric", "gmres", ["--pc", "ilu0", "--restart", "6"]),
    ("nonsymmetric", "pipebicgstab", ["--pc", "jacobi"]),
])
def test_to_dict_matches_the_command(comm, request, tmp_path_factory, matrix, method, extra):
    if comm.size != 1:
        pytest.skip("the command runs as a singleton next to the one-rank suite")
    binary = os.environ.get("ASYNCSOLVE_BINARY") or shutil.which("asyncsolve")
    if not binary:
        pytest.skip("no asyncsolve binary (ASYNCSOLVE_BINARY)")
    spd = request.getfixturevalue(matrix)
    folder: Path = tmp_path_factory.mktemp("document")
    matrix = folder / "a.mtx"
    out = folder / "run.json"
    scipy.io.mmwrite(matrix, spd)
    run = subprocess.run([binary, "solve", "--matrix", str(matrix), "--method", method,
                          "--tol", "1e-09", "--json", str(out), *extra],
                         env=clean_environment(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    command = json.loads(out.read_text())["result"]
    # The command's options as keywords (--repeat-solve 2 -> repeat_solve="2").
    options = {extra[k][2:].replace("-", "_"): extra[k + 1] for k in range(0, len(extra), 2)}
    ours = asyncsolve.solve(spd, comm=comm, method=method, tol=1e-9, **options).to_dict()
    assert keys(ours) == keys(command)  # the same schema
    for field in ("converged", "reason", "detail", "final_sync_iterations", "warnings"):
        assert ours[field] == command[field]
    assert ours["iterations"]["max"] == command["iterations"]["max"]
    assert ours["true_residual"] == pytest.approx(command["true_residual"], rel=1e-6)
    # b = A 1 on both sides: the solution is all ones, and both report the error.
    assert ours["error_inf"] == pytest.approx(command["error_inf"], rel=1e-6, abs=1e-14)


def test_document_header(comm, spd):
    r = asyncsolve.solve(spd if comm.rank == 0 else None, comm=comm, method="cg", tol=1e-8)
    doc = r.document
    assert doc["schema"] == "asyncsolve.result/1"
    assert doc["version"] == asyncsolve.__version__
    assert doc["method"]["name"] == "cg"
    assert doc["environment"]["ranks"] == comm.size
    assert doc["problem"]["matrix"]["rows"] == spd.shape[0]
    assert doc["problem"]["matrix"]["nnz"] == spd.nnz
    assert r.to_dict() == doc["result"]
    # The same on every rank.
    assert comm.allgather(json.dumps(r.to_dict(), sort_keys=True)) == [
        json.dumps(r.to_dict(), sort_keys=True)] * comm.size


def test_a_zero_right_hand_side_is_warned_of(comm, spd):
    """A zero b (x = 0 solves A x = b) is warned of in the result's
    warnings, as the command's --rhs of zeros is; where b = A * 1 is zero (A
    is singular, every row sums to 0) no error against the all-ones vector is
    reported. Both used to come back with no warning, the second with its
    error_inf against a solution that is not the only one."""
    n = spd.shape[0]
    r = asyncsolve.solve(spd if comm.rank == 0 else None, np.zeros(n) if comm.rank == 0 else None,
                         comm=comm, method="cg", tol=1e-8)
    assert [w for w in r.to_dict()["warnings"] if w.startswith("b is zero")], r.to_dict()
    r = asyncsolve.solve(spd if comm.rank == 0 else None, comm=comm, method="cg", tol=1e-8)
    assert not [w for w in r.to_dict()["warnings"] if "is zero" in w]
    # A path graph's Laplacian of 16 nodes (rows of it on up to 8 ranks): every row sums to 0.
    d = np.full(16, 2.0)
    d[[0, -1]] = 1.0
    laplacian = sp.diags([-np.ones(15), d, -np.ones(15)], [-1, 0, 1], format="csr")
    r = asyncsolve.solve(laplacian if comm.rank == 0 else None, comm=comm, method="cg", tol=1e-8)
    assert [w for w in r.to_dict()["warnings"] if w.startswith("b = A * 1 is zero")]
    assert r.to_dict()["error_inf"] is None
