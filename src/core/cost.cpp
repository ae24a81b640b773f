#include "asyncsolve/core/cost.hpp"

#include <atomic>

namespace asyncsolve::core {
namespace {

// Set at start-up, read by every kernel call (threads included).
std::atomic<CostMeter> cost_meter{nullptr};

}  // namespace

void set_cost_meter(CostMeter meter) noexcept {
  cost_meter.store(meter, std::memory_order_relaxed);
}

void charge_bytes(double bytes) noexcept {
  const CostMeter meter = cost_meter.load(std::memory_order_relaxed);
  if (meter != nullptr) meter(bytes);
}

}  // namespace asyncsolve::core
