#pragma once
/// Reading a linear system from Matrix Market files onto every rank.
///
/// Rank 0 reads the whole file (read_matrix_market), partitions its rows
/// (partition_rows), renumbers them so that every rank owns a contiguous
/// range (the rows of part 0 first; within a part the rows without an edge
/// to another part first, then the others, each in file order) and sends
/// every rank its rows, one rank at a time (MPI_Send of the row lengths,
/// global columns and values, and of the matching entries of b and x0).
/// Rank 0 needs read_bytes_estimate() bytes to read, 8 per entry more for a
/// graph partitioner's graph, and the largest rank's rows to send (16 bytes
/// per entry); every other rank about 28 bytes per entry of its own rows.
/// The file is refused from its header when the estimate exceeds
/// LoadOptions::limits (by default half of rank 0's node memory).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"
#include "asyncsolve/sparse/partition.hpp"

namespace asyncsolve::sparse {

/// What to read and how to distribute it.
struct LoadOptions {
  PartitionSpec partition;
  /// Reader limits on rank 0; max_bytes <= 0 means half of rank 0's node memory.
  ReadLimits limits{0.0, "half of rank 0's memory"};
  std::optional<std::filesystem::path> rhs;  ///< b (--rhs); without it b = A * 1
  std::optional<std::filesystem::path> x0;   ///< initial guess (--x0); without it 0
};

/// One rank's part of A x = b as read from files.
struct LoadedSystem {
  DistMatrix matrix;
  std::vector<double> b;   ///< this rank's entries of b
  std::vector<double> x0;  ///< this rank's entries of the initial guess
  /// Row of the file (0-based) of each local row: the distributed numbering
  /// is a permutation of the file's.
  std::vector<std::int64_t> file_rows;
  MatrixMarketInfo info;     ///< what the matrix file declared (every rank)
  bool exact_known = false;  ///< b = A * 1 (no --rhs): the solution is all ones
  double read_s = 0;         ///< seconds rank 0 spent reading
  double partition_s = 0;    ///< seconds rank 0 spent partitioning
  double distribute_s = 0;   ///< seconds of the distribution and ghost discovery
};

/// Collective over `comm`: reads `matrix` (and the vectors) on rank 0 and
/// distributes them. Bad input (a missing, unreadable or malformed file, a
/// directory, an empty file, a file over the limit, a non-square matrix,
/// fewer rows than ranks, a vector of the wrong length) throws
/// core::InputError with the same one-line message on every rank, after
/// rank 0 broadcast its verdict: no rank goes on alone. A failure of rank
/// 0 that is not the input's (out of memory while it reads, a partitioner
/// that fails) throws core::CollectiveFailure on every rank likewise.
LoadedSystem load_system(const par::Comm& comm, const std::filesystem::path& matrix,
                         const LoadOptions& options);

/// A linear system held whole by rank 0 in a caller's arrays (the Python
/// package's scipy matrices): not owned, read only on rank 0.
struct SystemView {
  CsrView matrix;
  std::span<const double> b;   ///< empty: b = A * 1
  std::span<const double> x0;  ///< empty: 0
};

/// Collective over `comm`: distributes `system` (read on rank 0 only; the
/// other ranks' views are ignored) as load_system distributes a file's
/// matrix: partitioned, renumbered, each rank sent its rows, with
/// file_rows the rows' indices in `system`. Rank 0 copies no array of the
/// system: it packs each rank's rows from them (two ranks' rows at a time).
/// Bad input (arrays that do not hold together, a non-square matrix, fewer
/// rows than ranks, b or x0 of another length) throws core::InputError with
/// the same one-line message, starting with `what`, on every rank.
LoadedSystem distribute_system(const par::Comm& comm, const SystemView& system,
                               const PartitionSpec& partition,
                               std::string_view what = "the matrix");

/// Collective over the matrix's communicator: gathers `x` (this rank's
/// entries, in the distributed numbering; `file_rows` their rows in the
/// file) on rank 0 and writes it in the file's row order as an N x 1 array
/// file, atomically (a temporary file renamed over `path`). Throws
/// core::CollectiveFailure on every rank if rank 0 cannot write.
void write_solution(const DistMatrix& matrix, std::span<const std::int64_t> file_rows,
                    std::span<const double> x, const std::filesystem::path& path);

/// Collective over `comm`: throws core::CollectiveFailure on every rank
/// alike ("rank R: out of memory: ...") when some rank cannot reserve its
/// `bytes` (par::can_reserve), naming the lowest such rank, `what` needs it and
/// the size. The checkpoint before a set-up whose collectives would leave
/// the other ranks waiting if one rank failed an allocation inside it.
void agree_on_memory(const par::Comm& comm, double bytes, std::string_view what);

/// Collective: x from every rank into one vector on rank 0, in the order of
/// `file_rows` (the file's order); empty on the other ranks.
std::vector<double> gather_in_file_order(const par::Comm& comm,
                                         std::span<const std::int64_t> file_rows,
                                         std::span<const double> x, std::int64_t global_rows);

}  // namespace asyncsolve::sparse
