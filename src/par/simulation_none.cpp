// Every build but the simulation one: the steady wall clock (core's
// default), no cost meter, and busy waits on the real clock.
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/simulation.hpp"

namespace asyncsolve::par {

bool is_simulated() noexcept { return false; }

void install_simulation_hooks() noexcept {}

void occupy_for(double seconds) noexcept {
  const double end = core::now_s() + seconds;
  while (core::now_s() < end) {
  }
}

}  // namespace asyncsolve::par
