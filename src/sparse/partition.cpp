#include "asyncsolve/sparse/partition.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"

namespace asyncsolve::sparse {
namespace {

/// Contiguous parts balanced by `weight` (prefix sums), each non-empty.
std::vector<int> block_parts(const CsrView& a, int parts, PartWeight weight) {
  const std::int64_t n = a.rows;
  std::vector<int> part(static_cast<std::size_t>(n), 0);
  // first[p]: the first row of part p.
  std::vector<std::int64_t> first(static_cast<std::size_t>(parts) + 1, n);
  first[0] = 0;
  if (weight == PartWeight::rows) {
    const std::int64_t base = n / parts;
    const std::int64_t extra = n % parts;
    for (int p = 1; p <= parts; ++p) first[p] = first[p - 1] + base + (p - 1 < extra ? 1 : 0);
  } else {
    // Row i goes to the part whose share of the total its middle falls in;
    // then every part keeps at least one row.
    const double total = static_cast<double>(a.nnz()) + static_cast<double>(n);
    for (int p = 1; p < parts; ++p) {
      const double target = total * p / parts;
      // weight of rows [0, i) = row_ptr[i] + i (a row weighs its entries plus one)
      std::int64_t lo = first[p - 1] + 1;
      std::int64_t hi = n - (parts - p);
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (static_cast<double>(a.row_ptr[mid] + mid) < target) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      first[p] = lo;
    }
  }
  for (int p = 0; p < parts; ++p)
    std::fill(part.begin() + first[p], part.begin() + first[p + 1], p);
  return part;
}

/// Gives every empty part one row of the (then) largest part.
void fill_empty_parts(std::vector<int>& part, int parts) {
  std::vector<std::int64_t> count(static_cast<std::size_t>(parts), 0);
  for (const int p : part) ++count[p];
  for (int p = 0; p < parts; ++p) {
    if (count[p] > 0) continue;
    const int largest =
        static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
    for (std::size_t i = part.size(); i-- > 0;) {
      if (part[i] == largest) {
        part[i] = p;
        --count[largest];
        ++count[p];
        break;
      }
    }
  }
}

}  // namespace

namespace {

/// The names of the partitioners and weights, in their enums' order.
constexpr std::array<std::string_view, 3> partitioner_names{"block", "metis", "scotch"};
constexpr std::array<std::string_view, 2> weight_names{"rows", "nnz"};

}  // namespace

std::string_view name(Partitioner method) noexcept {
  return core::enum_name(partitioner_names, method);
}

std::string_view name(PartWeight weight) noexcept { return core::enum_name(weight_names, weight); }

std::string format_partition(const PartitionSpec& spec) {
  if (spec.weight == PartWeight::rows) return std::string(name(spec.method));
  return fmt::format("{}:{}", name(spec.method), name(spec.weight));
}

bool partitioner_available(Partitioner method) noexcept {
  switch (method) {
    case Partitioner::block:
      return true;
    case Partitioner::metis:
      return detail::have_metis();
    case Partitioner::scotch:
      return detail::have_scotch();
  }
  return false;
}

PartitionSpec parse_partition(std::string_view text, std::string_view option) {
  PartitionSpec spec;
  const std::size_t colon = text.find(':');
  const auto method = core::enum_parse<Partitioner>(partitioner_names, text.substr(0, colon));
  if (!method) {
    throw core::InputError(fmt::format(
        "{} '{}': expected block, metis or scotch (optionally :rows or :nnz)", option, text));
  }
  spec.method = *method;
  if (colon != std::string_view::npos) {
    const std::string_view weight = text.substr(colon + 1);
    const auto parsed = core::enum_parse<PartWeight>(weight_names, weight);
    if (!parsed) {
      throw core::InputError(fmt::format(
          "{} '{}': the weight '{}' is unknown, expected rows or nnz", option, text, weight));
    }
    spec.weight = *parsed;
  }
  if (!partitioner_available(spec.method)) {
    throw core::InputError(
        fmt::format("{} '{}': this build has no {} (install {} and rebuild), expected block{}",
                    option, text, spec.method == Partitioner::metis ? "METIS" : "Scotch",
                    spec.method == Partitioner::metis ? "libmetis-dev" : "libscotch-dev",
                    partitioner_available(Partitioner::metis)    ? " or metis"
                    : partitioner_available(Partitioner::scotch) ? " or scotch"
                                                                 : ""));
  }
  return spec;
}

AdjacencyGraph symmetrised_graph(const CsrView& a) {
  const std::int64_t n = a.rows;
  std::vector<std::int64_t> degree(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t j = a.col[k];
      if (j == i) continue;
      ++degree[i + 1];
      ++degree[j + 1];
    }
  }
  for (std::int64_t i = 0; i < n; ++i) degree[i + 1] += degree[i];
  if (degree.back() > std::numeric_limits<int>::max()) {
    throw core::InputError(fmt::format(
        "the symmetrised graph has {} edge ends: expected at most {} (METIS and Scotch use "
        "32-bit indices)",
        degree.back(), std::numeric_limits<int>::max()));
  }
  std::vector<int> adj(static_cast<std::size_t>(degree.back()));
  std::vector<std::int64_t> next(degree.begin(), degree.end() - 1);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t j = a.col[k];
      if (j == i) continue;
      adj[next[i]++] = static_cast<int>(j);
      adj[next[j]++] = static_cast<int>(i);
    }
  }
  AdjacencyGraph g;
  g.xadj.assign(static_cast<std::size_t>(n) + 1, 0);
  std::size_t out = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto first = adj.begin() + degree[i];
    const auto last = adj.begin() + degree[i + 1];
    std::sort(first, last);
    const auto end = std::unique(first, last);
    for (auto it = first; it != end; ++it) adj[out++] = *it;
    g.xadj[i + 1] = static_cast<int>(out);
  }
  adj.resize(out);
  adj.shrink_to_fit();
  g.adjncy = std::move(adj);
  return g;
}

long long edge_cut(const AdjacencyGraph& graph, const std::vector<int>& part) {
  long long cut = 0;
  const std::size_t n = graph.xadj.size() - 1;
  for (std::size_t i = 0; i < n; ++i)
    for (int k = graph.xadj[i]; k < graph.xadj[i + 1]; ++k)
      if (static_cast<std::size_t>(graph.adjncy[k]) > i && part[graph.adjncy[k]] != part[i]) ++cut;
  return cut;
}

std::vector<int> partition_rows(const CsrView& a, int parts, const PartitionSpec& spec) {
  if (parts < 1 || a.rows < parts) {
    throw core::InputError(
        fmt::format("a matrix of {} rows cannot be split into {} parts: "
                    "expected at least one row per part",
                    a.rows, parts));
  }
  if (spec.method == Partitioner::block || parts == 1) return block_parts(a, parts, spec.weight);
  if (!partitioner_available(spec.method)) {
    throw core::InputError(
        fmt::format("--partition {}: this build has no {}", name(spec.method), name(spec.method)));
  }
  const AdjacencyGraph graph = symmetrised_graph(a);
  if (graph.adjncy.empty()) return block_parts(a, parts, spec.weight);
  std::vector<int> weights;
  if (spec.weight == PartWeight::nnz) {
    weights.resize(static_cast<std::size_t>(a.rows));
    for (std::int64_t i = 0; i < a.rows; ++i)
      weights[i] = static_cast<int>(std::min<std::int64_t>(
          a.row_ptr[i + 1] - a.row_ptr[i] + 1, std::numeric_limits<int>::max() / parts));
  }
  std::vector<int> part = spec.method == Partitioner::metis
                              ? detail::partition_metis(graph, weights, parts)
                              : detail::partition_scotch(graph, weights, parts);
  fill_empty_parts(part, parts);
  return part;
}

}  // namespace asyncsolve::sparse
