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
