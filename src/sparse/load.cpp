// Rank 0 reads, partitions and sends every rank its rows (see load.hpp).
#include "asyncsolve/sparse/load.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/memory.hpp"
#include "asyncsolve/sparse/csr.hpp"

namespace asyncsolve::sparse {
namespace {

constexpr int kTag = 7117;

/// Rank 0's verdict, broadcast: "" (go on), or a kind letter ('I' input,
/// 'R' runtime) and the message. Throws the same exception on every rank:
/// core::InputError, or core::CollectiveFailure (a runtime failure every
/// rank now knows of, so all stop together without an abort).
void share_verdict(const par::Comm& comm, char kind, const std::string& message) {
  std::string text = kind == 0 ? std::string() : std::string(1, kind) + message;
  int length = static_cast<int>(text.size());
  par::check_mpi(MPI_Bcast(&length, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
  text.resize(static_cast<std::size_t>(length));
  par::check_mpi(MPI_Bcast(text.data(), length, MPI_CHAR, 0, comm.get()), "MPI_Bcast");
  if (text.empty()) return;
  if (text[0] == 'I') throw core::InputError(text.substr(1));
  throw core::CollectiveFailure(text.substr(1));
}

/// Collective: throws core::CollectiveFailure on every rank with the lowest
/// rank's non-empty `local_error` (first_error); returns if no rank has one.
void fail_together(const par::Comm& comm, const std::string& local_error) {
  if (const std::string why = first_error(comm, local_error); !why.empty()) {
    throw core::CollectiveFailure(why);
  }
}

/// What rank 0 prepared: the matrix, the vectors and the new row order.
struct Prepared {
  MatrixMarketFile file;       ///< a file's matrix (empty for a caller's)
  std::vector<double> b_read;  ///< a file's b and x0 (empty for a caller's)
  std::vector<double> x0_read;
  CsrView a;                            ///< the matrix: the file's, or the caller's arrays
  std::span<const double> b;            ///< empty: b = A * 1
  std::span<const double> x0;           ///< empty: 0
  std::vector<std::int64_t> order;      ///< file rows in the distributed order
  std::vector<std::int64_t> new_index;  ///< distributed index of every file row
  std::vector<std::int64_t> offsets;    ///< first distributed row of each rank
  double read_s = 0;
  double partition_s = 0;
};

double default_limit() {
  const auto pages = static_cast<double>(::sysconf(_SC_PHYS_PAGES));
  const auto page = static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  return pages > 0 && page > 0 ? 0.5 * pages * page : std::numeric_limits<double>::infinity();
}

/// b = A * 1, the row sums (whose solution is all ones); refuses a row whose
/// sum overflows.
std::vector<double> row_sums(const CsrView& a, std::string_view what) {
  std::vector<double> b(static_cast<std::size_t>(a.rows), 0.0);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) b[i] += a.val[k];
    if (!std::isfinite(b[i])) {
      throw core::InputError(
          fmt::format("{}: row {} sums to more than 1.8e308 in magnitude (overflow), so the "
                      "default right-hand side b = A * 1 overflows: expected a smaller matrix, "
                      "or a right-hand side (--rhs)",
                      what, i + 1));
    }
  }
  return b;
}

/// Refuses a matrix that is not square or has fewer rows than ranks.
void check_shape(const CsrView& a, int ranks, std::string_view what) {
  if (a.rows != a.cols) {
    throw core::InputError(
        fmt::format("{}: a {} x {} matrix: expected a square matrix (a linear "
                    "system)",
                    what, a.rows, a.cols));
  }
  if (a.rows < ranks) {
    throw core::InputError(
        fmt::format("{}: a matrix of {} rows on {} ranks: expected at least "
                    "one row per rank",
                    what, a.rows, ranks));
  }
}

/// Partitions p.a's rows and orders them for distribution.
void plan_distribution(Prepared& p, const PartitionSpec& partition, int ranks,
                       std::string_view what) {
  const CsrView& a = p.a;
  const double t1 = core::now_s();
  const std::vector<int> part = partition_rows(a, ranks, partition);
  // Distributed order: part by part; in a part, the rows whose columns all
  // lie in the part (interior rows) first, then the others; file order within.
  std::vector<std::int64_t> count(static_cast<std::size_t>(ranks) * 2, 0);
  std::vector<char> interior(static_cast<std::size_t>(a.rows), 1);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      if (part[a.col[k]] != part[i]) {
        interior[i] = 0;
        break;
      }
    }
    ++count[2 * part[i] + (interior[i] != 0 ? 0 : 1)];
  }
  std::vector<std::int64_t> next(count.size(), 0);
  p.offsets.assign(static_cast<std::size_t>(ranks) + 1, 0);
  std::int64_t at = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r) {
    p.offsets[r] = at;
    next[2 * r] = at;
    next[2 * r + 1] = at + count[2 * r];
    at += count[2 * r] + count[2 * r + 1];
  }
  p.offsets[ranks] = at;
  p.order.assign(static_cast<std::size_t>(a.rows), 0);
  p.new_index.assign(static_cast<std::size_t>(a.rows), 0);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const std::int64_t to = next[2 * part[i] + (interior[i] != 0 ? 0 : 1)]++;
    p.order[to] = i;
    p.new_index[i] = to;
  }
  for (int r = 0; r < ranks; ++r) {
    std::int64_t nnz = 0;
    for (std::int64_t k = p.offsets[r]; k < p.offsets[r + 1]; ++k)
      nnz += a.row_ptr[p.order[k] + 1] - a.row_ptr[p.order[k]];
    if (nnz > std::numeric_limits<std::int32_t>::max()) {
      throw core::InputError(
          fmt::format("{}: rank {} would hold {} entries: expected at most {} per rank (use "
                      "more ranks{})",
                      what, r, nnz, std::numeric_limits<std::int32_t>::max(),
                      partition.weight == PartWeight::nnz ? ""
                      : partitioner_available(Partitioner::metis)
                          ? ", or a partition that balances the non-zeros, --partition "
                            "metis:nnz or block:nnz"
                          : ", or a partition that balances the non-zeros, --partition "
                            "block:nnz"));
    }
  }
  p.partition_s = core::now_s() - t1;
}

Prepared prepare(const std::filesystem::path& path, const LoadOptions& options, int ranks) {
  Prepared p;
  ReadLimits limits = options.limits;
  if (!(limits.max_bytes > 0)) limits.max_bytes = default_limit();
  const double t0 = core::now_s();
  p.file = read_matrix_market(path, limits);
  p.a = p.file.matrix;
  check_shape(p.a, ranks, path.string());
  p.b_read = options.rhs ? read_vector(*options.rhs, p.a.rows, "--rhs", limits)
                         : row_sums(p.a, path.string());
  if (options.x0) p.x0_read = read_vector(*options.x0, p.a.rows, "--x0", limits);
  p.b = p.b_read;
  p.x0 = p.x0_read;
  p.read_s = core::now_s() - t0;
  plan_distribution(p, options.partition, ranks, path.string());
  return p;
}

/// The caller's system as rank 0 distributes it (no copy of its arrays).
Prepared prepare_view(const SystemView& system, const PartitionSpec& partition, int ranks,
                      std::string_view what) {
  Prepared p;
  p.a = system.matrix;
  if (const std::string bad = check_csr_view(p.a); !bad.empty()) {
    throw core::InputError(fmt::format("{}: {}", what, bad));
  }
  check_shape(p.a, ranks, what);
  for (const auto& [name, v] :
       {std::pair<const char*, std::span<const double>>{"b", system.b}, {"x0", system.x0}}) {
    if (!v.empty() && static_cast<std::int64_t>(v.size()) != p.a.rows) {
      throw core::InputError(fmt::format("{}: {} values for a matrix of {} rows: expected {}", name,
                                         v.size(), p.a.rows, p.a.rows));
    }
    if (const std::string bad = check_finite(name, v); !bad.empty()) throw core::InputError(bad);
  }
  if (system.b.empty()) p.b_read = row_sums(p.a, what);
  p.b = system.b.empty() ? std::span<const double>(p.b_read) : system.b;
  p.x0 = system.x0;
  // What a file would have declared: its shape and entries.
  p.file.info.rows = p.a.rows;
  p.file.info.cols = p.a.cols;
  p.file.info.entries = p.a.nnz();
  plan_distribution(p, partition, ranks, what);
  return p;
}

/// One rank's rows as sent: row lengths, global columns (distributed
/// numbering), values, file rows, b and x0 entries.
struct Part {
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  std::vector<std::int64_t> file_rows;
  std::vector<double> b;
  std::vector<double> x0;
};

/// How many rows, entries, right-hand-side and x0 values part r has.
std::array<std::int64_t, 4> part_sizes(const Prepared& p, int r) {
  const CsrView& a = p.a;
  std::int64_t nnz = 0;
  for (std::int64_t k = p.offsets[r]; k < p.offsets[r + 1]; ++k)
    nnz += a.row_ptr[p.order[k] + 1] - a.row_ptr[p.order[k]];
  const std::int64_t rows = p.offsets[r + 1] - p.offsets[r];
  return {rows, nnz, p.b.empty() ? 0 : rows, p.x0.empty() ? 0 : rows};
}

Part pack_part(const Prepared& p, int r) {
  Part out;
  const CsrView& a = p.a;
  const auto sizes = part_sizes(p, r);
  out.col.reserve(static_cast<std::size_t>(sizes[1]));
  out.val.reserve(static_cast<std::size_t>(sizes[1]));
  out.row_ptr.reserve(static_cast<std::size_t>(sizes[0]) + 1);
  out.file_rows.reserve(static_cast<std::size_t>(sizes[0]));
  for (std::int64_t k = p.offsets[r]; k < p.offsets[r + 1]; ++k) {
    const std::int64_t i = p.order[k];
    for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
      out.col.push_back(p.new_index[a.col[e]]);
      out.val.push_back(a.val[e]);
    }
    out.row_ptr.push_back(static_cast<std::int64_t>(out.col.size()));
    out.file_rows.push_back(i);
    if (!p.b.empty()) out.b.push_back(p.b[i]);
    if (!p.x0.empty()) out.x0.push_back(p.x0[i]);
  }
  return out;
}

/// A part's arrays in flight to or from a rank: six messages, one an array.
struct Transfer {
  Part part;
  std::array<MPI_Request, 6> requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                                      MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  void wait() {
    par::check_mpi(MPI_Waitall(6, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
};

/// Starts sending `t.part` to rank `to` (its sizes went ahead).
void start_send(Transfer& t, int to, MPI_Comm comm) {
  Part& part = t.part;
  const auto n = static_cast<int>(part.file_rows.size());
  const auto nnz = static_cast<int>(part.col.size());
  auto& q = t.requests;
  par::check_mpi(MPI_Isend(part.row_ptr.data(), n + 1, MPI_INT64_T, to, kTag, comm, &q[0]),
                 "MPI_Isend");
  par::check_mpi(MPI_Isend(part.col.data(), nnz, MPI_INT64_T, to, kTag, comm, &q[1]), "MPI_Isend");
  par::check_mpi(MPI_Isend(part.val.data(), nnz, MPI_DOUBLE, to, kTag, comm, &q[2]), "MPI_Isend");
  par::check_mpi(MPI_Isend(part.file_rows.data(), n, MPI_INT64_T, to, kTag, comm, &q[3]),
                 "MPI_Isend");
  par::check_mpi(
      MPI_Isend(part.b.data(), static_cast<int>(part.b.size()), MPI_DOUBLE, to, kTag, comm, &q[4]),
      "MPI_Isend");
  par::check_mpi(MPI_Isend(part.x0.data(), static_cast<int>(part.x0.size()), MPI_DOUBLE, to, kTag,
                           comm, &q[5]),
                 "MPI_Isend");
}

/// Sends every other rank its part: all the sizes first (so that the
/// ranks allocate while rank 0 packs), then each part as soon as it is
/// packed, the next packed while it travels (at most two parts held at
/// once); rank 0's own part is packed last, while the last one travels.
Part scatter_parts(const Prepared& p, const par::Comm& world) {
  const int ranks = world.size();
  const MPI_Comm comm = world.get();
  std::vector<std::array<std::int64_t, 4>> sizes(static_cast<std::size_t>(ranks));
  std::vector<MPI_Request> size_requests(static_cast<std::size_t>(ranks), MPI_REQUEST_NULL);
  for (int r = 1; r < ranks; ++r) {
    sizes[r] = part_sizes(p, r);
    par::check_mpi(MPI_Isend(sizes[r].data(), 4, MPI_INT64_T, r, kTag, comm, &size_requests[r]),
                   "MPI_Isend");
  }
  // Every rank receives its sizes before the allocation verdict (receive_part).
  par::check_mpi(MPI_Waitall(ranks, size_requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  fail_together(world, "");
  Transfer previous;
  for (int r = 1; r < ranks; ++r) {
    Transfer current;
    current.part = pack_part(p, r);
    start_send(current, r, comm);
    previous.wait();
    previous = std::move(current);
  }
  Part mine = pack_part(p, 0);
  previous.wait();
  return mine;
}

/// Receives this rank's part. Its arrays are allocated before anything is
/// received, with room for the local matrix DistMatrix::from_rows builds
/// from them (twice the part, par::can_reserve), and every rank learns whether
/// each could (first_error, met by scatter_parts): a rank out of memory
/// fails the distribution on every rank alike (core::CollectiveFailure)
/// instead of leaving rank 0 sending or the others in from_rows' exchanges.
Part receive_part(const par::Comm& world) {
  const MPI_Comm comm = world.get();
  std::int64_t sizes[4] = {0, 0, 0, 0};
  par::check_mpi(MPI_Recv(sizes, 4, MPI_INT64_T, 0, kTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  Transfer t;
  Part& part = t.part;
  const auto n = static_cast<int>(sizes[0]);
  const auto nnz = static_cast<int>(sizes[1]);
  std::string error;
  try {
    part.row_ptr.resize(static_cast<std::size_t>(n) + 1);
    part.col.resize(static_cast<std::size_t>(nnz));
    part.val.resize(static_cast<std::size_t>(nnz));
    part.file_rows.resize(static_cast<std::size_t>(n));
    part.b.resize(static_cast<std::size_t>(sizes[2]));
    part.x0.resize(static_cast<std::size_t>(sizes[3]));
    if (!par::can_reserve(16.0 * (2.0 * n + 2.0 * nnz))) throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
    part = Part{};
    const double bytes = 8.0 * (2.0 * n + 1.0 + 2.0 * nnz + static_cast<double>(sizes[2]) +
                                static_cast<double>(sizes[3]));
    error = fmt::format(
        "rank {}: out of memory for its part of the matrix ({} rows, {} non-zeros, {:.3g} GiB "
        "as received): try more ranks, or ranks where more memory is free",
        world.rank(), n, nnz, bytes / (1024.0 * 1024.0 * 1024.0));
  }
  fail_together(world, error);
  auto& q = t.requests;
  par::check_mpi(MPI_Irecv(part.row_ptr.data(), n + 1, MPI_INT64_T, 0, kTag, comm, &q[0]),
                 "MPI_Irecv");
  par::check_mpi(MPI_Irecv(part.col.data(), nnz, MPI_INT64_T, 0, kTag, comm, &q[1]), "MPI_Irecv");
  par::check_mpi(MPI_Irecv(part.val.data(), nnz, MPI_DOUBLE, 0, kTag, comm, &q[2]), "MPI_Irecv");
  par::check_mpi(MPI_Irecv(part.file_rows.data(), n, MPI_INT64_T, 0, kTag, comm, &q[3]),
                 "MPI_Irecv");
  par::check_mpi(
      MPI_Irecv(part.b.data(), static_cast<int>(sizes[2]), MPI_DOUBLE, 0, kTag, comm, &q[4]),
      "MPI_Irecv");
  par::check_mpi(
      MPI_Irecv(part.x0.data(), static_cast<int>(sizes[3]), MPI_DOUBLE, 0, kTag, comm, &q[5]),
      "MPI_Irecv");
  t.wait();
  return std::move(t.part);
}

/// Collective: rank 0 prepares (`prepare_root`, only called there) and
/// broadcasts its verdict, then sends every rank its rows. `info` is filled
/// from rank 0's; `exact_known` is b = A * 1.
template <class PrepareRoot>
LoadedSystem distribute(const par::Comm& comm, PrepareRoot prepare_root, std::string_view what,
                        bool rhs_given, bool x0_given) {
  LoadedSystem out;
  Prepared prepared;
  if (comm.is_root()) {
    char kind = 0;
    std::string message;
    try {
      prepared = prepare_root();
    } catch (const core::InputError& e) {
      kind = 'I';
      message = e.what();
    } catch (const core::RuntimeFailure& e) {
      kind = 'R';
      message = e.what();
    } catch (const std::bad_alloc&) {
      // Not the file's fault (its size passed the --matrix-memory check):
      // a runtime failure, with what can help.
      kind = 'R';
      message = fmt::format(
          "{}: rank 0 ran out of memory while reading and partitioning the matrix, which it "
          "holds whole (try running rank 0 where more memory is free, e.g. fewer ranks on its "
          "node, or give --matrix-memory the GiB rank 0 may use, so that a file too large is "
          "refused at its size line)",
          what);
    }
    share_verdict(comm, kind, message);
  } else {
    share_verdict(comm, 0, "");
  }

  // What the file declared, and rank 0's times, on every rank.
  const MatrixMarketInfo& info = prepared.file.info;
  std::int64_t header[12] = {static_cast<std::int64_t>(info.format),
                             static_cast<std::int64_t>(info.field),
                             static_cast<std::int64_t>(info.symmetry),
                             info.rows,
                             info.cols,
                             info.entries,
                             info.duplicates,
                             info.mirrored,
                             info.zeros_dropped,
                             prepared.a.nnz(),
                             0,
                             0};
  par::check_mpi(MPI_Bcast(header, 12, MPI_INT64_T, 0, comm.get()), "MPI_Bcast");
  double times[2] = {prepared.read_s, prepared.partition_s};
  par::check_mpi(MPI_Bcast(times, 2, MPI_DOUBLE, 0, comm.get()), "MPI_Bcast");
  out.info.format = static_cast<MmFormat>(header[0]);
  out.info.field = static_cast<MmField>(header[1]);
  out.info.symmetry = static_cast<MmSymmetry>(header[2]);
  out.info.rows = header[3];
  out.info.cols = header[4];
  out.info.entries = header[5];
  out.info.duplicates = header[6];
  out.info.mirrored = header[7];
  out.info.zeros_dropped = header[8];
  out.read_s = times[0];
  out.partition_s = times[1];

  const double t0 = core::now_s();
  Part mine;
  if (comm.is_root()) {
    mine = scatter_parts(prepared, comm);
    prepared = Prepared{};  // rank 0's copy of the whole matrix is no longer needed
  } else {
    mine = receive_part(comm);
  }
  out.matrix = DistMatrix::from_rows(comm, out.info.rows, {mine.row_ptr, mine.col, mine.val});
  out.file_rows = std::move(mine.file_rows);
  const auto n = static_cast<std::size_t>(out.matrix.local_rows());
  out.exact_known = !rhs_given;
  out.b = std::move(mine.b);  // the given b, or A * 1 (rank 0 checked its sums)
  out.x0 = x0_given ? std::move(mine.x0) : std::vector<double>(n, 0.0);
  out.distribute_s = core::now_s() - t0;
  return out;
}

}  // namespace

LoadedSystem load_system(const par::Comm& comm, const std::filesystem::path& matrix,
                         const LoadOptions& options) {
  const int ranks = comm.size();
  return distribute(
      comm, [&] { return prepare(matrix, options, ranks); }, matrix.string(),
      options.rhs.has_value(), options.x0.has_value());
}

LoadedSystem distribute_system(const par::Comm& comm, const SystemView& system,
                               const PartitionSpec& partition, std::string_view what) {
  const int ranks = comm.size();
  // Whether b and x0 were given: rank 0's word.
  int given[2] = {system.b.empty() ? 0 : 1, system.x0.empty() ? 0 : 1};
  par::check_mpi(MPI_Bcast(given, 2, MPI_INT, 0, comm.get()), "MPI_Bcast");
  return distribute(
      comm, [&] { return prepare_view(system, partition, ranks, what); }, what, given[0] != 0,
      given[1] != 0);
}

void agree_on_memory(const par::Comm& comm, double bytes, std::string_view what) {
  std::string error;
  if (!par::can_reserve(bytes)) {
    error = fmt::format(
        "rank {}: out of memory: {} need about {:.3g} GiB on it, which it cannot allocate: try "
        "more ranks, or ranks where more memory is free",
        comm.rank(), what, bytes / (1024.0 * 1024.0 * 1024.0));
  }
  fail_together(comm, error);
}

std::vector<double> gather_in_file_order(const par::Comm& comm,
                                         std::span<const std::int64_t> file_rows,
                                         std::span<const double> x, std::int64_t global_rows) {
  const int ranks = comm.size();
  const int n = static_cast<int>(x.size());
  std::vector<int> counts(comm.is_root() ? static_cast<std::size_t>(ranks) : 0);
  par::check_mpi(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm.get()),
                 "MPI_Gather");
  std::vector<int> displs(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  const std::size_t total = comm.is_root() ? static_cast<std::size_t>(global_rows) : 0;
  std::vector<double> values(total + 1);
  std::vector<std::int64_t> rows(total + 1);
  par::check_mpi(MPI_Gatherv(x.data(), n, MPI_DOUBLE, values.data(), counts.data(), displs.data(),
                             MPI_DOUBLE, 0, comm.get()),
                 "MPI_Gatherv");
  par::check_mpi(MPI_Gatherv(file_rows.data(), n, MPI_INT64_T, rows.data(), counts.data(),
                             displs.data(), MPI_INT64_T, 0, comm.get()),
                 "MPI_Gatherv");
  std::vector<double> out(total, 0.0);
  for (std::size_t k = 0; k < total; ++k) out[rows[k]] = values[k];
  return out;
}

void write_solution(const DistMatrix& matrix, std::span<const std::int64_t> file_rows,
                    std::span<const double> x, const std::filesystem::path& path) {
  const par::Comm& comm = matrix.comm();
  const std::vector<double> all = gather_in_file_order(comm, file_rows, x, matrix.global_rows());
  char kind = 0;
  std::string message;
  if (comm.is_root()) {
    try {
      core::write_file_atomic(path, format_vector(all));
    } catch (const core::RuntimeFailure& e) {
      kind = 'R';
      message = e.what();
    }
  }
  share_verdict(comm, kind, message);
}

}  // namespace asyncsolve::sparse
