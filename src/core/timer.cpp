#include "asyncsolve/core/timer.hpp"

#include <chrono>
#include <ctime>
#include <utility>

namespace asyncsolve::core {

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
