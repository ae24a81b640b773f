"""Fixtures of the sparse tests: the binaries ctest names (ASYNCSOLVE_BINARY,
ASYNCSOLVE_MM_ROUNDTRIP, ASYNCSOLVE_MPIEXEC) or the ones in build/, and a
runner of `asyncsolve solve` under mpiexec."""

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _binary(variable, default):
    path = Path(os.environ.get(variable, ROOT / "build" / default))
    if not path.exists():
        pytest.skip(f"{path} not built")
    return path


@pytest.fixture(scope="session")
def roundtrip():
    return _binary("ASYNCSOLVE_MM_ROUNDTRIP", "tests/mm_roundtrip")


@pytest.fixture(scope="session")
def asyncsolve():
    return _binary("ASYNCSOLVE_BINARY", "asyncsolve")


@pytest.fixture(scope="session")
def mpiexec():
    line = os.environ.get("ASYNCSOLVE_MPIEXEC", "mpiexec --oversubscribe")
    return shlex.split(line.replace(";", " "))


class Solve:
    """Runs `asyncsolve solve ARGS` on `ranks` ranks; returns (rc, stdout,
    stderr, document or None)."""

    def __init__(self, binary, mpiexec, tmp_path):
        self.binary = binary
        self.mpiexec = mpiexec
        self.tmp_path = tmp_path
        self.count = 0

    def __call__(self, ranks, *args, timeout=120):
        self.count += 1
        doc = self.tmp_path / f"run{self.count}.json"
        command = [*self.mpiexec, "-n", str(ranks), str(self.binary), "solve", *map(str, args),
                   "--json", str(doc)]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_rmaps_base_oversubscribe="1",
                   OPENBLAS_NUM_THREADS="1")
        p = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env,
                           check=False)
        document = json.loads(doc.read_text()) if doc.exists() else None
        return p.returncode, p.stdout, p.stderr, document


@pytest.fixture
def solve(asyncsolve, mpiexec, tmp_path):
    return Solve(asyncsolve, mpiexec, tmp_path)


@pytest.fixture(scope="module")
def has_boomeramg(asyncsolve, mpiexec, tmp_path_factory):
    """Whether this build has hypre (one without it refuses --pc boomeramg, exit 2)."""
    probe = Solve(asyncsolve, mpiexec, tmp_path_factory.mktemp("probe"))
    rc, _, err, _ = probe(1, "--problem", "ones", "--global", "4,4,4", "--method", "pcg1",
                          "--pc", "boomeramg")
    return rc == 0 or "hypre" not in err
