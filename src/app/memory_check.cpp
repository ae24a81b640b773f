#include "memory_check.hpp"

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/triple.hpp"
#include "asyncsolve/par/stats.hpp"

namespace asyncsolve::app {

void refuse_grid_over_memory(const SolveConfig& config, const grid::Decomposition& decomposition,
                             double bytes, std::string_view what) {
  const par::NodeMemory memory = par::node_memory(decomposition.comm(), bytes);
  if (memory.need_bytes <= 0.9 * memory.have_bytes) return;
  const bool global = config.decomposition.global.has_value();
  const grid::Int3 size = global ? *config.decomposition.global
                                 : config.decomposition.local.value_or(decomposition.local());
  throw core::InputError(fmt::format(
      "--{} {}{} {:.1f} GiB on one node, which has {:.1f} GiB of memory; expected a grid that "
      "fits",
      global ? "global" : "local", core::format_triple(size), what,
      memory.need_bytes / 1073741824.0, memory.have_bytes / 1073741824.0));
}

}  // namespace asyncsolve::app
