#pragma once
/// Per-rank quantities summarised over a communicator.
#include <vector>

#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::par {

/// Minimum, maximum and mean of one value over the ranks of a communicator.
struct RankStats {
  double min = 0;
  double max = 0;
  double mean = 0;
};

/// Collective: min, max and mean of `value` over `comm`, known on every rank.
RankStats rank_stats(const Comm& comm, double value);

/// Collective: `value` from every rank, in rank order, on rank 0 (empty elsewhere).
std::vector<double> gather_to_root(const Comm& comm, double value);

}  // namespace asyncsolve::par
