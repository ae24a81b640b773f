#!/usr/bin/env python3
"""NAME    channel_ring.py: asynchronous Jacobi on a chain of ranks, halos through channels.

PURPOSE The Python twin of channel_ring.c: asyncsolve.Channel over NumPy buffers.
        Rank r owns `points` consecutive unknowns of u'' = 0 on (0, 1), u(0) = 0,
        u(1) = 1, plus one ghost per side. Neighbours on the chain exchange their
        boundary values through one channel each, never waiting for each other: a
        send is skipped when the channel is full, a ghost is refreshed only when a
        newer value has arrived.

USAGE   mpirun -n 4 python3 examples/channel_ring.py [--racy] [--iterations N] [--points N]

OUTPUT  One line from rank 0 with the channel traffic and the self-check's verdict;
        exit status 0 if the check passed, 1 if not.

Self-check, as in the C example: every message carries the sender's value, its
iteration ("stamp") and a checksum; stamps never go backwards and advance by at
least the messages that arrived; no send blocks; after the asynchronous phase the
channels are destroyed and synchronous Jacobi (mpi4py Sendrecv + allreduce) runs to
convergence, which must give the exact discrete solution u_i = x_i.
"""

from __future__ import annotations

import argparse
import struct
import sys

import numpy as np
from mpi4py import MPI

import asyncsolve

LEFT, RIGHT = 0, 1
MAX_IN_FLIGHT = 4  # unacknowledged messages per direction


def checksum(value: float, stamp: int) -> float:
    """The check word, stored in a float64 slot: the value's bits xor a stamp hash."""
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    mixed = (bits ^ (stamp * 0x9E3779B97F4A7C15)) & 0xFFFFFFFFFFFFF  # 52 bits: exact
    return float(mixed)


def run(comm: MPI.Comm, iterations: int = 5000, points: int = 8, racy: bool = False) -> dict:
    """Collective: the ring on `comm`; the totals over ranks (on every rank)."""
    rank, size = comm.rank, comm.size
    n = points
    # The channels get a communicator of their own (they use tags 2*tag and
    # 2*tag+1 on it, and receives may still be posted after a neighbour's
    # destroy has returned).
    channel_comm = comm.Dup()
    u = np.zeros(n + 2)
    u_new = np.zeros(n + 2)
    peer = [rank - 1 if rank > 0 else MPI.PROC_NULL,
            rank + 1 if rank < size - 1 else MPI.PROC_NULL]
    u[n + 1] = u_new[n + 1] = 1.0 if peer[RIGHT] == MPI.PROC_NULL else 0.0

    # One halo message: value, stamp, check (3 x 8 bytes: valid in racy mode too).
    sides = [s for s in (LEFT, RIGHT) if peer[s] != MPI.PROC_NULL]
    out = {s: np.zeros(3) for s in sides}
    inbox = {s: np.zeros(3) for s in sides}
    for s in sides:
        inbox[s][2] = checksum(0.0, 0)
    channels = asyncsolve.Channel.create(
        channel_comm, [peer[s] for s in sides], [out[s] for s in sides],
        [inbox[s] for s in sides], max_in_flight=MAX_IN_FLIGHT, mode="racy" if racy else "async")

    # Asynchronous phase. Per iteration: at most one 24-byte message to each
    # neighbour, no waiting and no reduction.
    sent = skipped = batches = messages = bad = 0
    last_stamp = dict.fromkeys(sides, 0)
    for t in range(1, iterations + 1):
        for s, ch in zip(sides, channels, strict=True):
            if not ch.can_recv():
                continue
            batch = ch.recv()
            if batch == 0:
                continue  # racy: can_recv is always true
            batches += 1
            messages += batch
            value, stamp, check = inbox[s]
            stamp = int(stamp)
            torn = check != checksum(value, stamp)
            if torn or stamp - last_stamp[s] < batch or stamp > iterations:
                bad += 1
            last_stamp[s] = stamp
            u[0 if s == LEFT else n + 1] = value
        # u_new_i = (u_{i-1} + u_{i+1}) / 2
        u_new[1:n + 1] = 0.5 * (u[0:n] + u[2:n + 2])
        u_new[0], u_new[n + 1] = u[0], u[n + 1]
        u, u_new = u_new, u
        for s, ch in zip(sides, channels, strict=True):
            if not ch.can_send():
                skipped += 1
                continue
            value = u[1 if s == LEFT else n]
            out[s][:] = (value, float(t), checksum(value, t))
            ch.send()  # out[s] may be changed again now
            sent += 1

    counted = 0
    for ch in channels:
        stats = ch.stats()
        bad += stats["blocked_sends"] != 0
        counted += stats["sent"]
    bad += counted != sent
    asyncsolve.Channel.destroy(channels)
    channel_comm.Free()

    # Synchronous phase: Jacobi to convergence (one Sendrecv each way per
    # neighbour and one allreduce per iteration).
    tolerance = 1e-13
    update, sync_iterations = 1.0, 0
    while update > tolerance and sync_iterations < 10_000_000:
        right = comm.sendrecv(u[1], dest=peer[LEFT], source=peer[RIGHT])
        left = comm.sendrecv(u[n], dest=peer[RIGHT], source=peer[LEFT])
        if right is not None:
            u[n + 1] = right
        if left is not None:
            u[0] = left
        u_new[1:n + 1] = 0.5 * (u[0:n] + u[2:n + 2])
        local = float(np.abs(u_new[1:n + 1] - u[1:n + 1]).max())
        u[1:n + 1] = u_new[1:n + 1]
        update = comm.allreduce(local, op=MPI.MAX)
        sync_iterations += 1
    bad += update > tolerance
    x = (rank * n + np.arange(1, n + 1)) / (size * n + 1)
    error = float(np.abs(u[1:n + 1] - x).max())
    bad += error > tolerance * (size * n) ** 2
    totals = comm.allreduce(np.array([sent, skipped, batches, messages, bad]), op=MPI.SUM)
    return {"sent": int(totals[0]), "skipped": int(totals[1]), "batches": int(totals[2]),
            "messages": int(totals[3]), "bad": int(totals[4]),
            "max_error": comm.allreduce(error, op=MPI.MAX), "sync_iterations": sync_iterations}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racy", action="store_true")
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--points", type=int, default=8)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    report = run(comm, args.iterations, args.points, args.racy)
    if comm.rank == 0:
        verdict = "Solution validates" if report["bad"] == 0 else "FAILED"
        print(f"channel_ring.py: ranks {comm.size} mode {'racy' if args.racy else 'async'} "
              f"iterations {args.iterations} sent {report['sent']} skipped "
              f"{report['skipped']} batches {report['batches']} sync_iterations "
              f"{report['sync_iterations']} max_error {report['max_error']:.1e}: {verdict}")
    return 0 if report["bad"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
