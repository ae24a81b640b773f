#pragma once
// What the simulation build (SimGrid SMPI, `make sim`) cannot run: threads,
// OpenSHMEM and MPI's neighbourhood collectives. Pure: no MPI, no output.
#include "solve_options.hpp"

namespace asyncsolve::app {

/// In the simulation build (par::is_simulated()), throws core::InputError
/// naming the first option of `config` the simulation cannot run
/// (--transport omp or shmem, --hybrid, --progress thread, --halo
/// neighbor); in every other build does nothing. Local; the same on every
/// rank (same argv).
void refuse_unsimulated(const SolveConfig& config);

}  // namespace asyncsolve::app
