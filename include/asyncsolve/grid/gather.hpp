#pragma once
/// Assembling a distributed field on one rank.
#include <vector>

#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::grid {

/// Collective over the decomposition's communicator: the interior of `field`
/// from every rank, assembled on rank 0 as one global array of
/// global[0]*global[1]*global[2] values, x fastest. Empty on other ranks.
/// Meant for checks and output of modest grids: rank 0 holds it all.
std::vector<double> gather_to_root(const Decomposition& decomposition, const Field& field);

}  // namespace asyncsolve::grid
