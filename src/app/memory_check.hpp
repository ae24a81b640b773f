#pragma once
/// The refusal of a grid too large for a node's memory, shared by the
/// structured solvers (their fields) and --assemble (its matrix).
#include <string_view>

#include "asyncsolve/grid/decomposition.hpp"
#include "solve_options.hpp"

namespace asyncsolve::app {

/// Collective: throws core::InputError (the same verdict on every rank) when
/// `bytes` a rank, summed over a node's ranks, exceed 0.9 of the node's
/// memory: "--local|--global SIZE<what> N GiB on one node, which has M GiB
/// of memory; expected a grid that fits", `what` saying what needs it
/// (": the fields need"). One clear line instead of an allocation failure
/// or the OOM killer on one rank.
void refuse_grid_over_memory(const SolveConfig& config, const grid::Decomposition& decomposition,
                             double bytes, std::string_view what);

}  // namespace asyncsolve::app
