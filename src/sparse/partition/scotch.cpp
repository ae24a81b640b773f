// Scotch's graph partitioner with its default strategy (Debian libscotch-dev).
#include <cstdint>
#include <cstdio>

#include <scotch.h>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/partition.hpp"

namespace asyncsolve::sparse::detail {

static_assert(sizeof(SCOTCH_Num) == sizeof(int), "asyncsolve expects Scotch with int SCOTCH_Num");

bool have_scotch() noexcept { return true; }

std::vector<int> partition_scotch(const AdjacencyGraph& graph, const std::vector<int>& weights,
                                  int parts) {
  const auto vertices = static_cast<SCOTCH_Num>(graph.xadj.size() - 1);
  const auto edges = static_cast<SCOTCH_Num>(graph.adjncy.size());
  std::vector<SCOTCH_Num> verttab(graph.xadj.begin(), graph.xadj.end());
  std::vector<SCOTCH_Num> edgetab(graph.adjncy.begin(), graph.adjncy.end());
  std::vector<SCOTCH_Num> velotab(weights.begin(), weights.end());
  std::vector<SCOTCH_Num> part(static_cast<std::size_t>(vertices), 0);
  SCOTCH_Graph g;
  SCOTCH_Graph bound;  // g seen through the context
  SCOTCH_Context context;
  SCOTCH_Strat strategy;
  if (SCOTCH_graphInit(&g) != 0) throw core::RuntimeFailure("SCOTCH_graphInit failed");
  // The same partition on every run: Scotch 7 partitions with threads, which
  // is deterministic only when the context says so, with a fixed seed.
  SCOTCH_contextInit(&context);
  SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
  SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
  SCOTCH_contextRandomReset(&context);
  SCOTCH_graphInit(&bound);
  int rc = SCOTCH_graphBuild(&g, 0, vertices, verttab.data(), nullptr,
                             velotab.empty() ? nullptr : velotab.data(), nullptr, edges,
                             edgetab.data(), nullptr);
  if (rc == 0) rc = SCOTCH_contextBindGraph(&context, &g, &bound);
  if (rc == 0) {
    SCOTCH_stratInit(&strategy);
    rc = SCOTCH_graphPart(&bound, parts, &strategy, part.data());
    SCOTCH_stratExit(&strategy);
  }
  SCOTCH_graphExit(&bound);
  SCOTCH_graphExit(&g);
  SCOTCH_contextExit(&context);
  if (rc != 0)
    throw core::RuntimeFailure(fmt::format("Scotch failed to partition (status {})", rc));
  return {part.begin(), part.end()};
}

}  // namespace asyncsolve::sparse::detail
