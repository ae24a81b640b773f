// `rd`: recursive-doubling allreduce (paper 003 §IV-A) as a schedule for the
// engine.
#include "../algorithms.hpp"

namespace asyncsolve::collectives::detail {

BuiltSchedule recursive_doubling(int rank, int ranks, std::size_t count, ReduceOp op) {
  // Buffer: acc | tmp.
  const std::size_t acc = 0;
  const std::size_t tmp = count;
  BuiltSchedule b{Schedule(2 * count), acc, acc};
  Schedule& s = b.schedule;
  int pof2 = 1;
  while (pof2 <= ranks / 2) pof2 *= 2;
  const int rem = ranks - pof2;
  if (rank >= pof2) {
    // An extra rank: hand the values to the partner, receive the result.
    const int partner = rank - pof2;
    s.add_send(acc, count, partner);
    s.add_recv(tmp, count, partner);
    s.end_round();
    b.result = tmp;
    return b;
  }
  if (rank < rem) {
    s.add_recv(tmp, count, rank + pof2);
    s.add_reduce(acc, tmp, acc, count, op);  // lower rank (this one) first
    s.end_round();
  }
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int partner = rank ^ mask;
    s.add_send(acc, count, partner);
    s.add_recv(tmp, count, partner);
    // Both partners compute lower op higher: the same bits on both.
    if (partner < rank) {
      s.add_reduce(tmp, acc, acc, count, op);
    } else {
      s.add_reduce(acc, tmp, acc, count, op);
    }
    s.end_round();
  }
  if (rank < rem) {
    s.add_send(acc, count, rank + pof2);
    s.end_round();
  }
  return b;
}

}  // namespace asyncsolve::collectives::detail
