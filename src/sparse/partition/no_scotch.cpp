// Compiled instead of scotch.cpp in builds without Scotch: parse_partition
// refuses "scotch" there, so partition_scotch is never reached through it.
#include <stdexcept>

#include "asyncsolve/sparse/partition.hpp"

namespace asyncsolve::sparse::detail {

bool have_scotch() noexcept { return false; }

std::vector<int> partition_scotch(const AdjacencyGraph&, const std::vector<int>&, int) {
  throw std::logic_error("partition_scotch: this build has no Scotch");
}

}  // namespace asyncsolve::sparse::detail
