#pragma once
// The options of `asyncsolve solve --method lanczos --problem tfim` (paper
// 004's SPIN benchmark): declared beside the other solve options, validated
// here. Pure: no MPI.
#include <CLI/CLI.hpp>

#include "cli.hpp"

namespace asyncsolve::app {

/// Adds --sites, --coupling, --field, --lattice, --buffers and --chunk to `solve`.
void add_spin_options(CLI::App& solve, SolveConfig& config);

/// Which of the other solve options the command line gave.
struct SpinRaw {
  bool grid_given = false;  ///< --global, --local or --dims
  bool tol_given = false;
  bool threads_given = false;
};

/// Validates a solve of --method lanczos or --problem tfim: the two go
/// together, the grid and Jacobi/Krylov options are refused. Throws
/// core::InputError naming the value and what was expected. Checks that
/// need the rank count are made when the solve starts (run_lanczos).
void validate_spin(SolveConfig& config, const SpinRaw& raw);

}  // namespace asyncsolve::app
