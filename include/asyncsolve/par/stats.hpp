#pragma once
/// Per-rank quantities summarised over a communicator.
#include <span>
#include <string>
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

/// Collective: the largest `value` over the ranks of `comm`, on every rank
/// (a time: the slowest rank sets the pace).
double max_over_ranks(const Comm& comm, double value);

/// Collective: the smallest `value` over the ranks of `comm`, on every rank.
double min_over_ranks(const Comm& comm, double value);

/// Collective: every element of `values` replaced by its largest value over
/// the ranks of `comm` (one reduction for several figures).
void max_over_ranks(const Comm& comm, std::span<double> values);

/// Collective: whether `flag` is true on any rank of `comm` (a failure one
/// rank found, agreed on by all).
bool any_rank(const Comm& comm, bool flag);

/// Collective: `value` from every rank, in rank order, on rank 0 (empty elsewhere).
std::vector<double> gather_to_root(const Comm& comm, double value);

/// Collective: rank 0's `text` on every rank (what the other ranks pass is
/// ignored). How a verdict reached on rank 0 alone, e.g. an unwritable file,
/// stops every rank together.
std::string broadcast_from_root(const Comm& comm, std::string text);

/// What the busiest node needs against what the smallest node has, in bytes.
struct NodeMemory {
  double need_bytes = 0;  ///< the largest sum of `rank_bytes` over the ranks of one node
  double have_bytes = 0;  ///< the least physical memory of a node (1e300 if unknown)
};

/// Collective: sums `rank_bytes` over the ranks that share a node (one
/// MPI_Comm_split_type), then takes the worst node over `comm`; the same
/// verdict on every rank.
NodeMemory node_memory(const Comm& comm, double rank_bytes);

}  // namespace asyncsolve::par
