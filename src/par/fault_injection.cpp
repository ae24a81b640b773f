#include "asyncsolve/par/fault_injection.hpp"

#include <random>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/simulation.hpp"

namespace asyncsolve::par {

FaultInjector::FaultInjector(const FaultOptions& options, int rank) {
  slow_ = options.slow_rank == rank && options.slow_factor > 1.0;
  factor_ = options.slow_factor;
  noise_ = options.noise_us > 0.0 && options.noise_hz > 0.0;
  if (noise_) {
    noise_s_ = options.noise_us * 1e-6;
    period_s_ = 1.0 / options.noise_hz;
    // Each rank gets its own phase, so interruptions are not synchronised.
    std::mt19937_64 gen(options.seed + static_cast<std::uint64_t>(rank));
    next_s_ = core::now_s() + std::uniform_real_distribution<double>(0.0, period_s_)(gen);
  }
}

void FaultInjector::after_sweep(double seconds) noexcept {
  if (!slow_) return;
  const double extra = (factor_ - 1.0) * seconds;
  occupy_for(extra);
  injected_s_ += extra;
}

void FaultInjector::poll() noexcept {
  if (!noise_) return;
  const double now = core::now_s();
  if (now < next_s_) return;
  occupy_for(noise_s_);
  injected_s_ += noise_s_;
  // Skip interruptions missed while the rank was busy elsewhere: at most one per call.
  while (next_s_ <= now) next_s_ += period_s_;
}

}  // namespace asyncsolve::par
