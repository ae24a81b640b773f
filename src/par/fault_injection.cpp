#include "asyncsolve/par/fault_injection.hpp"

#include <chrono>
#include <random>
#include <thread>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/simulation.hpp"

namespace asyncsolve::par {

FaultInjector::FaultInjector(const FaultOptions& options, int rank) {
  slow_ = options.slow_rank == rank && options.slow_factor > 1.0;
  factor_ = options.slow_factor;
  pause_ = options.pause_rank == rank && options.pause_s > 0.0;
  pause_s_ = options.pause_s;
  pause_after_ = options.pause_after < 1 ? 1 : options.pause_after;
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
  if (pause_ && ++sweeps_ == pause_after_) {
    std::this_thread::sleep_for(std::chrono::duration<double>(pause_s_));
    injected_s_ += pause_s_;
  }
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
