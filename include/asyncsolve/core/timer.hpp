#pragma once
/// Phase timers: wall-clock seconds accumulated per named phase of a solver.
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace asyncsolve::core {

/// Monotonic wall-clock time in seconds since an arbitrary origin.
/// The current UTC time as ISO 8601, e.g. "2026-11-22T04:33:32Z" (the
/// `started` field of every result document).
std::string iso8601_now();

inline double now_s() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Seconds accumulated per phase on this rank. Phases are fixed at
/// construction and addressed by index (solvers define an enum for them).
/// Not thread-safe: one owner thread.
class PhaseTimers {
 public:
  explicit PhaseTimers(std::vector<std::string> names);

  /// Adds `seconds` to phase `phase`.
  void add(std::size_t phase, double seconds) { seconds_.at(phase) += seconds; }

  /// Seconds accumulated so far in `phase`.
  double seconds(std::size_t phase) const { return seconds_.at(phase); }

  /// Phase names in index order.
  const std::vector<std::string>& names() const noexcept { return names_; }
  std::size_t size() const noexcept { return names_.size(); }

  /// RAII guard: adds the time between its construction and destruction.
  class Scope {
   public:
    Scope(PhaseTimers& timers, std::size_t phase) : timers_(timers), phase_(phase), t0_(now_s()) {}
    ~Scope() { timers_.add(phase_, now_s() - t0_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PhaseTimers& timers_;
    std::size_t phase_;
    double t0_;
  };

  /// Starts timing `phase` until the returned guard goes out of scope.
  [[nodiscard]] Scope time(std::size_t phase) { return Scope(*this, phase); }

 private:
  std::vector<std::string> names_;
  std::vector<double> seconds_;
};

}  // namespace asyncsolve::core
