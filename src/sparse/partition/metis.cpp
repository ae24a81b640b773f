// METIS's k-way graph partitioner (Debian libmetis-dev; 32-bit indices).
#include <metis.h>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/partition.hpp"

namespace asyncsolve::sparse::detail {

static_assert(sizeof(idx_t) == sizeof(int), "asyncsolve expects METIS built with 32-bit idx_t");

bool have_metis() noexcept { return true; }

std::vector<int> partition_metis(const AdjacencyGraph& graph, const std::vector<int>& weights,
                                 int parts) {
  auto vertices = static_cast<idx_t>(graph.xadj.size() - 1);
  idx_t constraints = 1;
  idx_t nparts = parts;
  idx_t objective = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same partition on every run
  std::vector<idx_t> xadj(graph.xadj.begin(), graph.xadj.end());
  std::vector<idx_t> adjncy(graph.adjncy.begin(), graph.adjncy.end());
  std::vector<idx_t> vwgt(weights.begin(), weights.end());
  std::vector<idx_t> part(static_cast<std::size_t>(vertices), 0);
  const int rc = METIS_PartGraphKway(&vertices, &constraints, xadj.data(), adjncy.data(),
                                     vwgt.empty() ? nullptr : vwgt.data(), nullptr, nullptr,
                                     &nparts, nullptr, nullptr, options, &objective, part.data());
  if (rc != METIS_OK)
    throw core::RuntimeFailure(fmt::format("METIS_PartGraphKway failed (status {})", rc));
  return {part.begin(), part.end()};
}

}  // namespace asyncsolve::sparse::detail
