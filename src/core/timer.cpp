#include "asyncsolve/core/timer.hpp"

#include <atomic>
#include <chrono>
#include <ctime>
#include <utility>

namespace asyncsolve::core {
namespace {

double steady_now_s() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Set at start-up, read by every timer (threads included): relaxed atomics.
std::atomic<ClockFunction> process_clock{&steady_now_s};

}  // namespace

double now_s() noexcept { return process_clock.load(std::memory_order_relaxed)(); }

void set_clock(ClockFunction clock) noexcept {
  process_clock.store(clock != nullptr ? clock : &steady_now_s, std::memory_order_relaxed);
}

std::string iso8601_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

PhaseTimers::PhaseTimers(std::vector<std::string> names)
    : names_(std::move(names)), seconds_(names_.size(), 0.0) {}

}  // namespace asyncsolve::core
