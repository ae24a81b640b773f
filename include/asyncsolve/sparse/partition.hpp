#pragma once
/// Partitioning the rows of a sparse matrix over ranks (`--partition`).
///
/// `block` gives each rank a contiguous range of rows; `metis` (METIS's
/// k-way partitioner) and `scotch` (Scotch's default strategy) partition the
/// graph of the symmetrised pattern (an edge i-j wherever a_ij or a_ji is
/// stored, i != j), minimising the edge cut. Parts are balanced by rows or
/// by non-zeros (`--partition NAME:rows|nnz`, rows by default). METIS and
/// Scotch are optional at build time (Debian libmetis-dev, libscotch-dev):
/// a build without one refuses its name as bad input.
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/sparse/csr.hpp"

namespace asyncsolve::sparse {

enum class Partitioner { block, metis, scotch };
/// What a part's size counts: rows, or stored entries (non-zeros).
enum class PartWeight { rows, nnz };

/// A parsed --partition value.
struct PartitionSpec {
  Partitioner method = Partitioner::block;
  PartWeight weight = PartWeight::rows;
};

/// "block", "metis", "scotch".
std::string_view name(Partitioner method) noexcept;
/// "rows", "nnz".
std::string_view name(PartWeight weight) noexcept;
/// "metis:nnz" (the weight only when it is not rows).
std::string format_partition(const PartitionSpec& spec);

/// True if this build has the partitioner (block always).
bool partitioner_available(Partitioner method) noexcept;

/// Parses `text` ("block", "metis:nnz", ...). Throws core::InputError
/// naming `option` and the text for an unknown name or weight, and for a
/// partitioner this build lacks ("... this build has no METIS").
PartitionSpec parse_partition(std::string_view text, std::string_view option = "--partition");

/// Local: the part (0 .. parts-1) of every row of the square matrix `a`.
/// Every part gets at least one row (requires a.rows >= parts): a graph
/// partitioner's empty part takes a row from the largest one. A matrix
/// without off-diagonal entries is partitioned by blocks (no edge to cut).
/// Deterministic (fixed seeds). Throws core::RuntimeFailure if the
/// partitioner fails.
std::vector<int> partition_rows(const CsrView& a, int parts, const PartitionSpec& spec);

/// The graph of the symmetrised pattern of `a` without its diagonal, in the
/// CSR form METIS and Scotch take (adjacency lists ascending).
struct AdjacencyGraph {
  std::vector<int> xadj;    ///< vertices + 1 offsets
  std::vector<int> adjncy;  ///< neighbours
};
/// Local: builds it. Throws core::InputError for more than 2^31 - 1 edge ends.
AdjacencyGraph symmetrised_graph(const CsrView& a);

/// Local: undirected edges i-j of the symmetrised pattern with
/// part[i] != part[j] (METIS's edge cut).
long long edge_cut(const AdjacencyGraph& graph, const std::vector<int>& part);

namespace detail {
/// The graph partitioners, one file each (partition/metis.cpp,
/// partition/scotch.cpp; partition/no_metis.cpp, no_scotch.cpp in builds without them).
/// `weights` is empty (unit) or one positive weight per vertex.
std::vector<int> partition_metis(const AdjacencyGraph& graph, const std::vector<int>& weights,
                                 int parts);
std::vector<int> partition_scotch(const AdjacencyGraph& graph, const std::vector<int>& weights,
                                  int parts);
bool have_metis() noexcept;
bool have_scotch() noexcept;
}  // namespace detail

}  // namespace asyncsolve::sparse
