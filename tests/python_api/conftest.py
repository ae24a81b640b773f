"""The asyncsolve package's tests, run by pytest on every rank under mpirun (1 to 4 ranks).

Every test is collective: all ranks run the same tests in the same order.
Matrices are made with scipy on every rank (the same on all); the whole
matrix goes in from rank 0, or each rank's block of rows with rows=.
"""

from __future__ import annotations

import contextlib
import resource

import numpy as np
import pytest
import scipy.sparse as sp
from mpi4py import MPI


@pytest.fixture
def comm() -> MPI.Comm:
    return MPI.COMM_WORLD


def laplacian_2d(n: int) -> sp.csr_matrix:
    """The 5-point Laplacian on an n x n grid: SPD, n^2 rows."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    eye = sp.identity(n)
    return (sp.kron(t, eye) + sp.kron(eye, t)).tocsr()


def convection_diffusion(n: int, wind: float = 0.4) -> sp.csr_matrix:
    """A nonsymmetric, strictly diagonally dominant matrix (upwinded convection)."""
    a = laplacian_2d(n).tolil()
    for i in range(n * n):
        if i + 1 < n * n:
            a[i, i + 1] -= wind
        a[i, i] += 1.0 + wind
    return a.tocsr()


def whole(a, comm: MPI.Comm):
    """The whole-matrix form: `a` on rank 0, None elsewhere."""
    return a if comm.rank == 0 else None


def block_of(a: sp.csr_matrix, comm: MPI.Comm) -> tuple[sp.csr_matrix, tuple[int, int]]:
    """This rank's consecutive rows of `a` (sizes differing by at most one)."""
    n = a.shape[0]
    first = comm.rank * n // comm.size
    last = (comm.rank + 1) * n // comm.size
    return a[first:last], (first, last)


@pytest.fixture
def spd() -> sp.csr_matrix:
    return laplacian_2d(12)


@pytest.fixture
def nonsymmetric() -> sp.csr_matrix:
    return convection_diffusion(10)


def rhs(n: int) -> np.ndarray:
    return np.sin(np.arange(n) + 1.0)


def address_space_bytes() -> int:
    """This process's mapped address space (VmSize)."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmSize:")) * 1024


@contextlib.contextmanager
def last_rank_capped(comm: MPI.Comm, headroom: int):
    """The last rank's address space capped `headroom` bytes above what it maps now."""
    last = comm.rank == comm.size - 1
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if last:
        resource.setrlimit(resource.RLIMIT_AS, (address_space_bytes() + headroom, hard))
    try:
        yield
    finally:
        if last:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
