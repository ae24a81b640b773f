// The simulation build (SimGrid SMPI): every timer reads simulated time
// (MPI_Wtime), and, since smpirun runs with smpi/simulate-computation:no
// (sim/README.md), computation costs simulated time only where it is
// charged: the kernels report the bytes they stream (core::charge_bytes),
// which become smpi_execute_flops on this rank's simulated host, whose speed
// the platform files give in bytes per second (calibrated from
// bench/jacobi_sweep). A charged cost does not depend on how busy the real
// machine is, so a simulated run replays exactly.
#include <mpi.h>
#include <smpi/smpi.h>

#include "asyncsolve/core/cost.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/simulation.hpp"

namespace asyncsolve::par {
namespace {

double simulated_now_s() noexcept { return MPI_Wtime(); }

// One simulated flop is one byte streamed: host speeds are in bytes/s.
void charge_to_host(double bytes) noexcept {
  if (bytes > 0.0) smpi_execute_flops(bytes);
}

}  // namespace

bool is_simulated() noexcept { return true; }

void install_simulation_hooks() noexcept {
  core::set_clock(&simulated_now_s);
  core::set_cost_meter(&charge_to_host);
}

void occupy_for(double seconds) noexcept {
  if (seconds > 0.0) smpi_execute(seconds);
}

}  // namespace asyncsolve::par
