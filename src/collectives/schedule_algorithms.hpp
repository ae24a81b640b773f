#pragma once
/// Schedules of the allreduce and barrier algorithms (internal): pure
/// functions of (rank, ranks, parameters), so they can be inspected without
/// communication. Message counts are documented in docs/design.md
/// ("Collectives").
#include <cstddef>

#include "asyncsolve/collectives/schedule.hpp"

namespace asyncsolve::collectives::detail {

/// A schedule plus where the caller's input goes and where the result lies
/// (offsets into its buffer, `count` doubles each).
struct BuiltSchedule {
  Schedule schedule;
  std::size_t input = 0;
  std::size_t result = 0;
};

/// Recursive doubling over the largest power of two pof2 <= ranks; rank
/// p >= pof2 first hands its values to p - pof2 and receives the result from
/// it at the end. Every combine puts the lower rank's operand first.
BuiltSchedule recursive_doubling(int rank, int ranks, std::size_t count, ReduceOp op);

/// k-nomial reduce to rank 0, then k-nomial broadcast of rank 0's result.
BuiltSchedule knomial(int rank, int ranks, int degree, std::size_t count, ReduceOp op);

/// Appends the k-nomial reduce to rank 0 of buffer[acc, acc+count) (rank 0
/// ends with the total in acc), receiving into degree-1 areas from `tmp` on.
/// A non-root rank's last round (the send to its parent) is left open, so
/// that the caller may add actions to it.
void append_knomial_reduce(Schedule& s, int rank, int ranks, int degree, std::size_t acc,
                           std::size_t tmp, std::size_t count, ReduceOp op);

/// Appends the k-nomial broadcast from rank 0 of buffer[offset, offset+count):
/// a non-root rank receives it from its parent (into the round left open, if
/// any), then every rank forwards it to its children.
void append_knomial_bcast(Schedule& s, int rank, int ranks, int degree, std::size_t offset,
                          std::size_t count);

/// The n-way dissemination barrier (paper 001 §2.2): in round r rank p
/// sends to (p + i(n+1)^r) mod P and receives from (p - i(n+1)^r) mod P for
/// i = 1..n with i(n+1)^r < P; ceil(log_{n+1} P) rounds of empty messages.
Schedule dissemination_barrier(int rank, int ranks, int ways);

}  // namespace asyncsolve::collectives::detail
