#include "simulation_options.hpp"

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/simulation.hpp"

namespace asyncsolve::app {

void refuse_unsimulated(const SolveConfig& config) {
  if (!par::is_simulated()) return;
  constexpr std::string_view why_threads =
      "the simulation build (SimGrid SMPI) runs no threads, expected";
  if (config.transport == Transport::omp || config.transport == Transport::shmem) {
    throw core::InputError(fmt::format(
        "--transport {}: the simulation build (SimGrid SMPI) has no {}, expected "
        "mpi or rma",
        name(config.transport), config.transport == Transport::omp ? "threads" : "OpenSHMEM"));
  }
  if (config.hybrid != comm::HybridMode::none) {
    throw core::InputError(
        fmt::format("--hybrid {}: {} none", comm::hybrid_mode_name(config.hybrid), why_threads));
  }
  if (config.progress.mode == Progress::Mode::thread) {
    throw core::InputError(
        fmt::format("--progress {}: {} none or poll:K", config.progress.name(), why_threads));
  }
  if (config.halo == comm::HaloStrategy::neighbor) {
    throw core::InputError(
        "--halo neighbor: SimGrid SMPI 3.32 has no neighbourhood collectives "
        "(MPI_Ineighbor_alltoallv), expected waitall, alltoallv, ialltoallv or persistent");
  }
}

}  // namespace asyncsolve::app
