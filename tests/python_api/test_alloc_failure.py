"""A rank out of memory inside a collective set-up: every rank raises the same error.

The last rank's address space is capped a little above what it maps now
(conftest.last_rank_capped), so that what the set-up allocates there fails.
An allocation is then refused only if the process's heap holds no free
memory to serve it, and freed memory is not always returned (here Open
MPI's memory hooks keep the heap from shrinking): so these tests run first
(the file's name), and check that the heap holds little free memory.
"""

from __future__ import annotations

import ctypes

import pytest
import scipy.sparse as sp

import asyncsolve
from conftest import block_of, laplacian_2d, last_rank_capped, whole


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _free_heap_bytes() -> int:
    """glibc's free bytes in the heap (mallinfo2's fordblks)."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    return libc.mallinfo2().fordblks


def _capped(comm, headroom):
    # The last rank's verdict on every rank: a failed assert on one rank alone would
    # leave the others waiting in the solve.
    last = comm.size - 1
    free = comm.bcast(_free_heap_bytes() if comm.rank == last else None, root=last)
    assert free < headroom, (f"rank {last}'s heap holds {free} free bytes: a test that ran "
                             "before this file left them, and the cap would not bite")
    return last_rank_capped(comm, headroom)


def test_out_of_memory_in_the_distribution_fails_every_rank(comm):
    # Rank 0 sends the last rank its part, which cannot hold it: that rank raised a raw
    # MemoryError alone and rank 0 waited for ever to send it.
    if comm.size == 1:
        pytest.skip("needs a rank that receives its part")
    n = 2_000_000
    a = None
    if comm.rank == 0:
        a = sp.diags([-1.0, -1.0, 4.0, -1.0, -1.0], [-1000, -1, 0, 1, 1000], shape=(n, n),
                     format="csr")
    with _capped(comm, 32 * 2**20), pytest.raises(asyncsolve.RuntimeFailure) as e:
        asyncsolve.solve(a, comm=comm, method="cg", max_iters=2)
    assert str(e.value).startswith(f"rank {comm.size - 1}: out of memory for its part of the "
                                   "matrix (")
    del a
    # The ranks go on together.
    assert asyncsolve.solve(whole(laplacian_2d(8), comm), comm=comm).converged


def test_out_of_memory_in_the_set_up_fails_every_rank(comm):
    # GMRES's basis of 1001 vectors does not fit on the last rank: it raised a raw
    # MemoryError there, inside the set-up, and the other ranks waited in its collectives.
    block, rows = block_of(laplacian_2d(400), comm)
    with _capped(comm, 64 * 2**20), pytest.raises(asyncsolve.RuntimeFailure) as e:
        asyncsolve.solve(block, comm=comm, rows=rows, method="gmres", restart=1000, max_iters=2)
    assert str(e.value).startswith(f"rank {comm.size - 1}: out of memory: the solver's set-up "
                                   "and vectors need about ")
    assert asyncsolve.solve(whole(laplacian_2d(8), comm), comm=comm).converged
