#pragma once
/// Fault and noise injection for experiments and tests: a straggler rank and
/// periodic interruptions (paper 000 §6.1, paper 003 §VII.D).
#include <cstdint>

namespace asyncsolve::par {

/// What to inject. All off by default.
struct FaultOptions {
  int slow_rank = -1;        ///< this rank's sweeps take slow_factor times longer (-1: none)
  double slow_factor = 1.0;  ///< >= 1
  double noise_us = 0.0;     ///< every rank is interrupted for this long ...
  double noise_hz = 0.0;     ///< ... this many times per second (0: no noise)
  std::uint64_t seed = 1;    ///< seeds each rank's noise phase (rank added)
  /// A stopped process (descheduled, swapped out, halted in a debugger):
  /// this rank sleeps pause_s seconds, once, after its pause_after-th sweep
  /// (-1: none). Sleeping, unlike the straggler's spinning, leaves the core free.
  int pause_rank = -1;
  double pause_s = 0.0;  ///< >= 0
  long pause_after = 1;  ///< sweeps before the pause, >= 1
};

/// Injects the faults of FaultOptions on one rank by busy-waiting, so the
/// delay costs CPU time as a real slow node or OS noise would. Local; one
/// owner thread.
class FaultInjector {
 public:
  FaultInjector() = default;
  FaultInjector(const FaultOptions& options, int rank);

  /// After a sweep that took `seconds`: the slow rank waits (factor - 1) x
  /// seconds; the paused rank sleeps pause_s after its pause_after-th sweep.
  void after_sweep(double seconds) noexcept;
  /// Call often: if a noise interruption is due, waits it out (catching up
  /// on missed ones at most once per call).
  void poll() noexcept;
  /// Seconds injected so far on this rank.
  double injected_s() const noexcept { return injected_s_; }
  bool is_active() const noexcept { return slow_ || noise_ || pause_; }

 private:
  bool slow_ = false;
  double factor_ = 1.0;
  bool noise_ = false;
  double noise_s_ = 0.0;
  double period_s_ = 0.0;
  double next_s_ = 0.0;
  double injected_s_ = 0.0;
  bool pause_ = false;
  double pause_s_ = 0.0;
  long pause_after_ = 1;
  long sweeps_ = 0;
};

}  // namespace asyncsolve::par
