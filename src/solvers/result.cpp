// The names of the stop reasons, as result documents and summaries spell them.
#include "asyncsolve/solvers/result.hpp"

#include <array>

#include "asyncsolve/core/enum_names.hpp"

namespace asyncsolve::solvers {

std::string_view stop_reason_name(StopReason reason) noexcept {
  // In StopReason's order.
  static constexpr std::array<std::string_view, 8> names{
      "",           "tolerance", "max_iters",   "max_time",
      "final_sync", "breakdown", "unconfirmed", "diverged"};
  return core::enum_name(names, reason);
}

std::string_view restart_reason_name(RestartReason reason) noexcept {
  // In RestartReason's order.
  static constexpr std::array<std::string_view, 7> names{
      "cycle", "orthogonality", "rho", "sigma", "omega", "replacement", "confirm"};
  return core::enum_name(names, reason);
}

}  // namespace asyncsolve::solvers
