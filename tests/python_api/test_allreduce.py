"""NonblockingAllreduce against mpi4py's comm.Allreduce."""

from __future__ import annotations

import numpy as np
import pytest
from mpi4py import MPI

import asyncsolve
from conftest import last_rank_capped


def reference(comm, values, op):
    """mpi4py's reduction of the array, element by element (its buffer Allreduce:
    the pickled allreduce compares whole arrays for min and max)."""
    out = np.empty_like(values)
    comm.Allreduce(values, out, op=op)
    return out


@pytest.mark.parametrize("algorithm", ["mpi", "impi", "tree", "rd", "knomial:3",
                                       "twolevel:rd", "shm", "twolevel:shm+impi"])
@pytest.mark.parametrize("op", ["sum", "min", "max"])
def test_against_comm_allreduce(comm, algorithm, op):
    values = np.array([comm.rank + 1.0, -2.0 * comm.rank, 0.5 ** comm.rank])
    reduction = asyncsolve.NonblockingAllreduce(comm, 3, algorithm=algorithm, op=op)
    try:
        mpi_op = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}[op]
        for round_ in range(3):
            v = values * (round_ + 1)
            reduction.start(v)
            assert reduction.active
            result = reduction.test()
            while result is None:
                result = reduction.test()
            assert not reduction.active
            expected = reference(comm, v, mpi_op)
            assert np.allclose(result, expected, rtol=1e-15, atol=0)
        reduction.start(values)
        assert np.allclose(reduction.wait(), reference(comm, values, mpi_op))
        assert reduction.completed == 4
    finally:
        reduction.free()


def test_refusals(comm):
    with pytest.raises(asyncsolve.InputError, match="--allreduce 'ring'"):
        asyncsolve.NonblockingAllreduce(comm, 2, algorithm="ring")
    with pytest.raises(asyncsolve.InputError, match="op 'prod'"):
        asyncsolve.NonblockingAllreduce(comm, 2, op="prod")
    reduction = asyncsolve.NonblockingAllreduce(comm, 2)
    try:
        with pytest.raises(asyncsolve.InputError, match="3 values: expected 2"):
            reduction.start(np.zeros(3))
        with pytest.raises(asyncsolve.InputError, match="no reduction is active"):
            reduction.wait()
    finally:
        reduction.free()


class FakeArray:
    """Looks like an array, but its dtype has no name (as some array types' do not)."""

    dtype = "x"
    shape = (2,)


@pytest.mark.parametrize("op", ["sum", "min", "max"])
@pytest.mark.parametrize("bad", ["length", "none", "text", "fake"])
def test_bad_start_on_one_rank_raises_on_every_rank(comm, op, bad):
    # The others had started and spun in test() for ever.
    last = comm.rank == comm.size - 1
    reduction = asyncsolve.NonblockingAllreduce(comm, 2, algorithm="tree", op=op)
    try:
        values = np.ones(2)
        if last:
            values = {"length": np.ones(3), "none": None, "text": np.array(["a", "b"]),
                      "fake": FakeArray()}[bad]
        def start_and_complete():
            reduction.start(values)
            while reduction.test() is None:
                pass

        with pytest.raises(asyncsolve.InputError) as e:
            start_and_complete()
        if last:
            expected = {"length": "start: 3 values: expected 2",
                        "none": "start: values is a NoneType: expected a 1-D array of 2 float64",
                        "text": "start: values is an array of dtype str32 and shape (2,): expected "
                                "a 1-D array of 2 float64",
                        "fake": "start: values is a test_allreduce.FakeArray: expected a 1-D "
                                "array of 2 float64"}[bad]
            assert str(e.value).startswith(expected), str(e.value)
        else:
            assert "start() was refused on another rank of comm" in str(e.value)
        assert not reduction.active
        # The reduction is as good as new.
        reduction.start(np.full(2, comm.rank + 1.0))
        expected = {"sum": comm.size * (comm.size + 1) / 2, "min": 1.0, "max": comm.size}[op]
        assert np.array_equal(reduction.wait(), np.full(2, expected))
    finally:
        reduction.free()


@pytest.mark.parametrize("size", [2**31 - 1, 2**63, 2**64 - 1])
def test_a_size_beyond_an_mpi_count_is_refused(comm, size):
    # 2^64 - 1 was taken (size + 1, for the reduction's flag, wrapped to 0) and start()
    # then wrote past the end.
    with pytest.raises(asyncsolve.InputError, match=f"size {size}: expected 1 to "
                       f"{2**31 - 2} values"):
        asyncsolve.NonblockingAllreduce(comm, size)


@pytest.mark.parametrize(("bad", "message"), [
    ({"size": 2.0}, "size: a float: expected an integer"),
    ({"size": True}, "size: a bool: expected an integer"),
    ({"size": 0}, ("size 0: expected 1 to 2147483646 values (an MPI count, less the "
                   "reduction's flag)")),
    ({"algorithm": None}, "algorithm: a NoneType: expected a str"),
    ({"op": b"sum"}, "op: a bytes: expected a str"),
])
def test_a_wrong_type_on_one_rank_is_refused_on_every_rank(comm, bad, message):
    # A type nanobind refused at the call raised on that rank alone, and the others
    # waited in the constructor's collective check for ever.
    args = {"size": 2} | (bad if comm.rank == comm.size - 1 else {})
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.NonblockingAllreduce(comm, **args)
    # Every rank names the rank whose argument was refused.
    assert str(e.value) == (message if comm.size == 1 else f"rank {comm.size - 1}: {message}")


def test_out_of_memory_on_one_rank_is_a_runtime_failure_on_every_rank(comm):
    # The buffers were allocated in start(): a rank that ran out of memory there raised a
    # raw MemoryError alone, and the other ranks waited in wait() for its share for ever.
    # The last rank's address space is capped 16 MiB above what it maps now, so the
    # reduction's 32 MiB buffers cannot be allocated there.
    last = comm.rank == comm.size - 1
    with last_rank_capped(comm, 16 * 2**20), pytest.raises(asyncsolve.RuntimeFailure) as e:
        asyncsolve.NonblockingAllreduce(comm, 2**22, algorithm="rd")
    if last:
        assert str(e.value).startswith(f"rank {comm.rank}: out of memory allocating a "
                                       f"reduction of {2**22} values")
    else:
        assert str(e.value) == ("out of memory on another rank of comm while allocating the "
                                "reduction")
    # The ranks go on together: a reduction after the failure completes.
    reduction = asyncsolve.NonblockingAllreduce(comm, 1)
    try:
        reduction.start(np.ones(1))
        assert reduction.wait()[0] == comm.size
    finally:
        reduction.free()
