"""Channels over NumPy buffers: the ring example, and the API's refusals."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

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


def arrays(count, size=3):
    return [np.zeros(size) for _ in range(count)], [np.zeros(size) for _ in range(count)]


@pytest.mark.parametrize("transport", ["mpi", "rma"])
def test_ends_that_do_not_pair_are_refused_on_every_rank(comm, transport):
    # The rank with an unmatched channel waited for ever for its peer.
    if comm.size < 2:
        pytest.skip("needs two ranks")
    peers = [1] if comm.rank == 0 else []
    sends, recvs = arrays(len(peers))
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.Channel.create(comm, peers, sends, recvs, transport=transport)
    assert str(e.value) == ("rank 0 lists a channel to rank 1 (tag 0) and rank 1 lists none to "
                            "rank 0 with that tag: expected both ends of every channel in the "
                            "create call")


def test_one_way_ring_is_refused(comm):
    if comm.size < 3:
        pytest.skip("needs three ranks (on two, a ring pairs up)")
    sends, recvs = arrays(1)
    with pytest.raises(asyncsolve.InputError, match=re.escape(
            "rank 0 lists a channel to rank 1 (tag 0) and rank 1 lists none to rank 0")):
        asyncsolve.Channel.create(comm, [(comm.rank + 1) % comm.size], sends, recvs)


def test_ends_that_differ_are_refused_on_every_rank(comm):
    if comm.size < 2:
        pytest.skip("needs two ranks")
    peer = comm.rank ^ 1
    peers = [peer] if peer < comm.size else []
    sends, recvs = arrays(len(peers), size=3 if comm.rank % 2 == 0 else 2)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.Channel.create(comm, peers, sends, recvs, max_in_flight=2)
    assert str(e.value) == ("the channel between ranks 0 and 1 (tag 0): 24 bytes, max_in_flight "
                            "2, async on rank 0; 16 bytes, max_in_flight 2, async on rank 1: "
                            "expected the same message size, max_in_flight and mode at both ends")


def test_rma_needs_a_channel_on_every_rank(comm):
    # The rma window is allocated over comm: a rank without a channel left the
    # others waiting in the allocation.
    if comm.size < 3:
        pytest.skip("needs a rank without a channel beside a pair")
    peers = [1 - comm.rank] if comm.rank < 2 else []
    sends, recvs = arrays(len(peers))
    with pytest.raises(asyncsolve.InputError, match="transport rma: rank 2 has no channel"):
        asyncsolve.Channel.create(comm, peers, sends, recvs, transport="rma")
    with pytest.raises(asyncsolve.InputError, match=r"transport differs between the ranks "
                       r"\(rank 0: mpi, rank 1: rma\)"):
        asyncsolve.Channel.create(comm, peers, sends, recvs,
                                  transport="rma" if comm.rank == 1 else "mpi")


@pytest.mark.parametrize(("make", "why"), [
    (lambda: (np.array([1, 2], dtype=object), np.array([0, 0], dtype=object)),
     "the send array holds Python objects (dtype object)"),
    (lambda: (np.ones(6, dtype=np.int8), np.zeros(6, dtype=np.int8)),
     "racy mode with a message of 6 bytes: expected a multiple of 8 bytes"),
])
def test_arrays_a_channel_cannot_carry(comm, make, why):
    if comm.size < 2:
        pytest.skip("needs two ranks")
    send, recv = make()
    with pytest.raises(asyncsolve.InputError, match=re.escape(why)):
        asyncsolve.Channel.create(comm, [(comm.rank + 1) % comm.size], [send], [recv],
                                  mode="racy")


def test_peer_outside_comm(comm):
    sends, recvs = arrays(1)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.Channel.create(comm, [comm.size], sends, recvs)
    if comm.size == 1:
        assert str(e.value) == "peer 1: expected another rank of comm, and comm has one rank"
    else:
        assert str(e.value) == (f"rank 0: peer {comm.size}: expected another rank of comm, 0 "
                                f"to {comm.size - 1}")


@pytest.mark.parametrize(("bad", "message"), [
    ({"peers": "ring"}, "peers: a str: expected a list"),
    ({"sends": None}, "sends: a NoneType: expected a list"),
    ({"tags": [None]}, "tags[0]: a NoneType: expected an integer"),
    ({"max_in_flight": 2.0}, "max_in_flight: a float: expected an integer"),
    ({"max_in_flight": 2**70}, f"max_in_flight {2**70}: expected 1 to 2147483647"),
    ({"max_in_flight": 2**31}, f"max_in_flight {2**31}: expected 1 to 2147483647"),
    ({"tags": [2**32]}, f"tags[0] {2**32}: expected a tag from 0 to "),
    ({"mode": None}, "mode: a NoneType: expected a str"),
    ({"transport": 3}, "transport: an int: expected a str"),
    ({"peers": "float"}, "peers[0]: a float: expected an integer"),
])
def test_a_wrong_type_on_one_rank_is_refused_on_every_rank(comm, bad, message):
    # A type nanobind refused at the call raised on that rank alone, before the
    # collective check, and the other ranks waited in it for ever.
    peer = (comm.rank + 1) % comm.size if comm.size > 1 else 1
    sends, recvs = arrays(1)
    args = {"peers": [peer], "sends": sends, "recvs": recvs}
    if comm.rank == comm.size - 1:
        args |= {"peers": [float(peer)]} if bad.get("peers") == "float" else bad
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.Channel.create(comm, **args)
    # Every rank names the rank whose argument was refused.
    expected = message if comm.size == 1 else f"rank {comm.size - 1}: {message}"
    # (a tag's range is the MPI library's: the message is checked up to it)
    assert str(e.value).startswith(expected) if expected.endswith(" to ") else \
        str(e.value) == expected


def test_none_and_a_channel_twice_are_refused(comm):
    # Refused before anything is destroyed (they were a null pointer and a
    # double free, both a segmentation fault); every rank gives the same lists.
    with pytest.raises(asyncsolve.InputError, match=r"channels\[0\]: None: expected a Channel"):
        asyncsolve.Channel.destroy([None])
    with pytest.raises(asyncsolve.InputError, match=r"channels\[0\]: None: expected a Channel"):
        asyncsolve.Channel.wait_any([None], 0.0)
    # Not a list, or a list of something else: nanobind's TypeError ("incompatible
    # function arguments") before, not an asyncsolve.Error.
    for call in (asyncsolve.Channel.destroy, lambda c: asyncsolve.Channel.wait_any(c, 0.0)):
        for value, text in (("x", r"channels: a str: expected a list of Channel"),
                            (5, r"channels: a int: expected a list of Channel"),
                            (None, r"channels: a NoneType: expected a list of Channel"),
                            ([None, "x"], r"channels\[1\]: a str: expected a Channel")):
            with pytest.raises(asyncsolve.InputError, match=text):
                call(value)
    if comm.size < 2:
        return
    peer = comm.rank ^ 1
    sub = comm.Split(0 if comm.rank < comm.size - comm.size % 2 else 1, comm.rank)
    if peer >= comm.size:
        sub.Free()
        return  # the odd rank out
    [channel] = asyncsolve.Channel.create(sub, [peer], [np.zeros(2)], [np.zeros(2)])
    with pytest.raises(asyncsolve.InputError,
                       match=r"channels\[1\]: the same channel as channels\[0\]"):
        asyncsolve.Channel.destroy([channel, channel])
    assert not channel.destroyed
    asyncsolve.Channel.destroy([channel])
    assert channel.destroyed
    sub.Free()


@pytest.mark.parametrize(("timeout", "text"), [(float("nan"), "nan"), (-5.0, "-5"),
                                               (float("inf"), "inf")])
def test_wait_any_names_a_bad_timeout(comm, timeout, text):
    # It was "as_channels_wait_any: invalid argument", the value and the range unsaid.
    with pytest.raises(asyncsolve.InputError,
                       match=rf"^timeout_s {text}: expected a finite number of seconds >= 0"):
        asyncsolve.Channel.wait_any([], timeout)


def test_a_structured_dtype_is_named(comm):
    # It was refused as "not a C-contiguous, writeable NumPy array", which it is.
    if comm.size < 2:
        pytest.skip("needs a peer")
    peer = comm.rank ^ 1 if (comm.rank ^ 1) < comm.size else comm.rank
    record = np.zeros(3, dtype=[("a", np.float64), ("b", np.int32)])
    with pytest.raises(asyncsolve.InputError, match=r"the send array has a structured dtype"):
        asyncsolve.Channel.create(comm, [peer], [record], [np.zeros(3)])


def test_a_message_over_an_mpi_count_is_named(comm):
    # 2^31 bytes (np.zeros maps them untouched): it was "as_channels_create: invalid
    # argument", neither the size nor the limit named.
    if comm.size < 2:
        pytest.skip("needs a peer")
    peer = comm.rank ^ 1 if (comm.rank ^ 1) < comm.size else comm.rank
    big = np.zeros(2**28)
    with pytest.raises(asyncsolve.InputError,
                       match=r"a message of 2147483648 bytes: expected at most 2147483647"):
        asyncsolve.Channel.create(comm, [peer], [big], [np.zeros(2**28)])


@pytest.mark.parametrize(("transport", "gib"), [("mpi", "3.36e\\+07"), ("rma", "1.68e\\+07")])
def test_out_of_memory_names_what_the_channels_need(comm, transport, gib):
    # 2^31 - 1 slots of 8 MiB (2^54 bytes) fit in no memory. Over rma it was "the transport
    # reported an error"; neither transport named the size or max_in_flight. Over mpi the
    # senders' private copies take as much again (the figure counted the landing slots only,
    # half of what a rank grew to), and the refusal comes before any slot is touched.
    if comm.size < 2:
        pytest.skip("needs a peer")
    # Pairs (0, 1), (2, 3), ...; the odd rank out takes part in the split, then leaves.
    sub = comm.Split(0 if comm.rank < comm.size - comm.size % 2 else 1, comm.rank)
    if comm.rank >= comm.size - comm.size % 2:
        sub.Free()
        return
    with pytest.raises(asyncsolve.RuntimeFailure,
                       match=r"out of memory: this rank's channels need about " + gib + r" GiB of "
                       r"message slots \(max_in_flight up to 2147483647\)"):
        asyncsolve.Channel.create(sub, [sub.rank ^ 1], [np.zeros(2**20)], [np.zeros(2**20)],
                                  max_in_flight=2**31 - 1, transport=transport)
    sub.Free()


def test_rma_destroy_takes_every_channel_of_one_create_call(comm):
    # A part of one rma create call was a RuntimeFailure ("operation not allowed in the
    # channel's state"): it is the caller's error, said as such, on every rank alike.
    if comm.size < 3:
        pytest.skip("a ring needs three ranks")
    peers = [(comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size]
    sends, recvs = [np.zeros(2), np.zeros(2)], [np.zeros(2), np.zeros(2)]
    chs = asyncsolve.Channel.create(comm, peers, sends, recvs, tags=[0, 0], transport="rma")
    with pytest.raises(asyncsolve.InputError,
                       match=r"channels\[0\]: transport rma: destroy takes the channels of one "
                       r"create call, all of them together \(2 from that call\), got 1 channel$"):
        asyncsolve.Channel.destroy(chs[:1])
    assert not chs[0].destroyed
    asyncsolve.Channel.destroy(chs)
    assert all(c.destroyed for c in chs)


def test_an_intercommunicator_is_refused(comm):
    if comm.size < 2:
        pytest.skip("an intercommunicator needs two groups")
    local = comm.Split(comm.rank % 2, comm.rank)
    inter = local.Create_intercomm(0, comm, 1 - comm.rank % 2, tag=7)
    try:
        with pytest.raises(asyncsolve.InputError, match="comm: an intercommunicator"):
            asyncsolve.NonblockingAllreduce(inter, 1)
        with pytest.raises(asyncsolve.InputError, match="comm: an intercommunicator"):
            asyncsolve.Channel.create(inter, [0], [np.zeros(1)], [np.zeros(1)])
        with pytest.raises(asyncsolve.InputError, match="comm: an intercommunicator"):
            asyncsolve.solve(sp.identity(4, format="csr"), comm=inter)
    finally:
        inter.Free()
        local.Free()
