// `knomial:K`: k-nomial reduce to rank 0, then k-nomial broadcast (paper 003
// §IV-B), as a schedule for the engine. The reduce and broadcast halves are
// also the node level of `twolevel` (twolevel.cpp).
#include <algorithm>
#include <cassert>

#include "../algorithms.hpp"

namespace asyncsolve::collectives::detail {
namespace {

/// The parent of `rank` in the k-nomial tree rooted at 0 and the stride at
/// which it hangs below it (the stride of its lowest non-zero base-k digit);
/// for rank 0 the parent is -1 and the stride the first power of k >= ranks.
struct TreePosition {
  int parent = -1;
  long long stride = 1;
};

TreePosition knomial_position(int rank, int ranks, int degree) {
  TreePosition pos;
  long long s = 1;
  while (s < ranks) {
    const long long digit = (rank / s) % degree;
    if (digit != 0) {
      pos.parent = static_cast<int>(rank - digit * s);
      pos.stride = s;
      return pos;
    }
    s *= degree;
  }
  pos.stride = s;
  return pos;
}

}  // namespace

void append_knomial_reduce(Schedule& s, int rank, int ranks, int degree, std::size_t acc,
                           std::size_t tmp, std::size_t count, ReduceOp op) {
  const TreePosition pos = knomial_position(rank, ranks, degree);
  // Children hang at every stride below the rank's own: rank + j*stride.
  // One round per stride: receive all of them, then acc = acc op child_j in
  // order of j (a fixed order; only the root's total is used).
  for (long long stride = 1; stride < pos.stride; stride *= degree) {
    int children = 0;
    for (int j = 1; j < degree; ++j) {
      const long long child = rank + j * stride;
      if (child >= ranks) break;
      s.add_recv(tmp + static_cast<std::size_t>(j - 1) * count, count, static_cast<int>(child));
      ++children;
    }
    for (int j = 1; j <= children; ++j)
      s.add_reduce(acc, tmp + static_cast<std::size_t>(j - 1) * count, acc, count, op);
    s.end_round();
  }
  if (pos.parent >= 0) s.add_send(acc, count, pos.parent);  // round left open
}

void append_knomial_bcast(Schedule& s, int rank, int ranks, int degree, std::size_t offset,
                          std::size_t count) {
  const TreePosition pos = knomial_position(rank, ranks, degree);
  if (pos.parent >= 0) {
    s.add_recv(offset, count, pos.parent);
    s.end_round();
  }
  // Forward to the children, the largest subtrees (largest stride) first.
  long long top = 1;
  while (top * degree < pos.stride) top *= degree;
  for (long long stride = top; stride >= 1 && stride < pos.stride; stride /= degree) {
    for (int j = 1; j < degree; ++j) {
      const long long child = rank + j * stride;
      if (child >= ranks) break;
      s.add_send(offset, count, static_cast<int>(child));
    }
  }
  s.end_round();
}

BuiltSchedule knomial(int rank, int ranks, int degree, std::size_t count, ReduceOp op) {
  assert(degree >= 2);
  // Buffer: acc | res | degree-1 receive areas. The root broadcasts from acc,
  // the others receive into res (while their send from acc may be pending).
  const std::size_t acc = 0;
  const std::size_t res = count;
  const std::size_t tmp = 2 * count;
  // A rank has at most min(degree, ranks) - 1 children per stride.
  const int areas = std::max(0, std::min(degree, ranks) - 1);
  BuiltSchedule b{Schedule(2 * count + static_cast<std::size_t>(areas) * count), acc,
                  rank == 0 ? acc : res};
  append_knomial_reduce(b.schedule, rank, ranks, degree, acc, tmp, count, op);
  append_knomial_bcast(b.schedule, rank, ranks, degree, b.result, count);
  return b;
}

}  // namespace asyncsolve::collectives::detail
