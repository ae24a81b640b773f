#pragma once
/// How a rank's block splits so that a halo exchange can be in flight while
/// most of a stencil pass is computed (paper 001 §3.4, Listing 3): the points
/// whose stencil stays inside the block, and the shell that needs the halo.
#include <vector>

#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::grid {

/// The interior points of a block whose stencil reaches no other rank's
/// data, and the rest of the block (the boundary) as disjoint boxes. Only
/// sides with a neighbouring rank are peeled off: on one rank the interior is
/// the whole block and the boundary is empty.
struct OverlapSplit {
  Box interior;
  std::vector<Box> boundary;  ///< disjoint, non-empty; with `interior` they tile the block
};
OverlapSplit split_for_overlap(const Decomposition& decomposition);

/// The planes [k_begin, k_end) of `box` (k clamped to the box).
Box planes(const Box& box, int k_begin, int k_end) noexcept;

}  // namespace asyncsolve::grid
