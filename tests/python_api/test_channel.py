"""Channels over NumPy buffers: the ring example, and the API's refusals."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import asyncsolve

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "channel_ring.py"


def load_example():
    spec = importlib.util.spec_from_file_location("channel_ring", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mode", ["async", "racy"])
def test_ring_example(comm, mode):
    ring = load_example()
    report = ring.run(comm, iterations=300, points=4, racy=mode == "racy")
    assert report["bad"] == 0
    assert report["max_error"] < 1e-9
    # One rank has no neighbour on the chain, hence no channel and nothing to send.
    assert (report["sent"] > 0) == (comm.size > 1)


def test_pair_exchange(comm):
    if comm.size < 2:
        pytest.skip("needs two ranks")
    peer = comm.rank ^ 1
    # Split is collective over comm: the odd rank out takes part, then leaves.
    sub = comm.Split(0 if comm.rank < comm.size - comm.size % 2 else 1, comm.rank)
    if peer >= comm.size:
        sub.Free()
        return  # the odd rank out
    send = np.full(3, float(comm.rank))
    recv = np.zeros(3)
    [channel] = asyncsolve.Channel.create(sub, [peer], [send], [recv], max_in_flight=2)
    channel.send()
    while not channel.can_recv():
        channel.progress()
    assert channel.recv() >= 1
    assert np.array_equal(recv, np.full(3, float(peer)))
    assert channel.stats()["sent"] == 1
    asyncsolve.Channel.destroy([channel])
    assert channel.destroyed
    with pytest.raises(asyncsolve.InputError, match="destroyed"):
        channel.send()
    sub.Free()


def test_refusals(comm):
    with pytest.raises(asyncsolve.InputError, match="same size"):
        asyncsolve.Channel.create(comm, [0], [np.zeros(2)], [np.zeros(3)])
    with pytest.raises(asyncsolve.InputError, match="mode 'eager'"):
        asyncsolve.Channel.create(comm, [0], [np.zeros(2)], [np.zeros(2)], mode="eager")
    with pytest.raises(asyncsolve.InputError, match="an mpi4py communicator"):
        asyncsolve.Channel.create(None, [0], [np.zeros(2)], [np.zeros(2)])


@pytest.mark.parametrize(("which", "array", "why"), [
    ("send", np.zeros(6)[::2], "not C-contiguous"),
    ("receive", np.zeros(6)[::2], "not C-contiguous"),
    ("receive", np.zeros((2, 3), order="F"), "not C-contiguous"),
    ("receive", np.zeros((3, 2)).T, "not C-contiguous"),
    ("receive", np.zeros(3).copy(), "read-only"),
    ("send", [0.0, 0.0, 0.0], "a list"),
])
def test_buffers_are_used_in_place_or_refused(comm, which, array, why):
    # A channel works on the caller's arrays: a strided view converted to a copy
    # would send values the caller never sees change, and land arrivals where the
    # caller never looks. Such arrays are refused, as is a read-only receive array.
    if why == "read-only":
        array.flags.writeable = False
    buffers = {"send": np.zeros(3), "receive": np.zeros(3)} | {which: array}
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.Channel.create(comm, [0], [buffers["send"]], [buffers["receive"]])
    text = str(e.value)
    assert f"the {which} array is {why}" in text
    assert "expected a C-contiguous, writeable NumPy array" in text
