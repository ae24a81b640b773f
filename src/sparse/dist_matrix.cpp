// The distributed matrix: validation, local numbering, ghost discovery, the
// neighbour plan and the metrics of the distribution.
//
// Ghost discovery: each rank lists the global columns it references outside
// its own rows (sorted and unique: its ghosts); plan_for_ghosts
// (neighbour_plan.cpp) makes the plan from them.
#include "asyncsolve/sparse/dist_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "alltoallv_impl.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/simulation.hpp"

namespace asyncsolve::sparse {
namespace {

constexpr std::int64_t kMaxLocal = std::numeric_limits<std::int32_t>::max();

/// This rank's problems with its rows, or "" if none.
std::string check_rows(int rank, std::int64_t global_rows, std::int64_t first_row,
                       const RowsView& rows) {
  if (rows.row_ptr.size() < 2)
    return fmt::format("rank {} has no row: expected at least one", rank);
  const std::int64_t n = static_cast<std::int64_t>(rows.row_ptr.size()) - 1;
  if (n > kMaxLocal)
    return fmt::format("rank {} has {} rows: expected at most {}", rank, n, kMaxLocal);
  if (rows.row_ptr[0] != 0)
    return fmt::format("rank {}: row_ptr[0] is {}: expected 0", rank, rows.row_ptr[0]);
  for (std::int64_t i = 0; i < n; ++i) {
    if (rows.row_ptr[i + 1] < rows.row_ptr[i]) {
      return fmt::format("rank {}: row_ptr decreases at local row {} (global row {})", rank, i,
                         first_row + i);
    }
  }
  const std::int64_t nnz = rows.row_ptr[n];
  if (static_cast<std::int64_t>(rows.col.size()) != nnz ||
      static_cast<std::int64_t>(rows.val.size()) != nnz) {
    return fmt::format("rank {}: row_ptr ends at {} entries but there are {} columns and {} values",
                       rank, nnz, rows.col.size(), rows.val.size());
  }
  if (nnz > kMaxLocal)
    return fmt::format("rank {} has {} entries: expected at most {}", rank, nnz, kMaxLocal);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k) {
      if (rows.col[k] < 0 || rows.col[k] >= global_rows) {
        return fmt::format("rank {}: global row {} has column {}: expected 0 to {}", rank,
                           first_row + i, rows.col[k], global_rows - 1);
      }
      if (!std::isfinite(rows.val[k])) {
        return fmt::format(
            "rank {}: global row {}, column {}: the value {}: expected finite "
            "numbers",
            rank, first_row + i, rows.col[k], rows.val[k]);
      }
    }
  }
  return "";
}

/// Collective: the undirected edges between ranks of the symmetrised
/// pattern, each counted once. Every rank sends each of its cut pairs
/// (min, max) to the owner of the smaller index, which removes duplicates.
std::int64_t count_edge_cut(const par::Comm& comm, const std::vector<std::int64_t>& offsets,
                            std::int64_t first_row, const std::vector<std::int64_t>& row_ptr,
                            const std::vector<std::int32_t>& col,
                            const std::vector<std::int64_t>& ghosts) {
  const int ranks = comm.size();
  const auto n = static_cast<std::int64_t>(row_ptr.size()) - 1;
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(ranks));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      if (col[k] < n) continue;
      const std::int64_t a = first_row + i;
      const std::int64_t b = ghosts[col[k] - n];
      const std::int64_t lo = std::min(a, b);
      auto& to = out[detail::owner_of(offsets, lo)];
      to.push_back(lo);
      to.push_back(std::max(a, b));
    }
  }
  std::vector<int> counts;
  const std::vector<std::int64_t> recv = detail::alltoallv(comm, out, counts);
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  pairs.reserve(recv.size() / 2);
  for (std::size_t i = 0; i + 1 < recv.size(); i += 2) pairs.emplace_back(recv[i], recv[i + 1]);
  std::sort(pairs.begin(), pairs.end());
  std::int64_t cut = std::unique(pairs.begin(), pairs.end()) - pairs.begin();
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &cut, 1, MPI_INT64_T, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  return cut;
}

}  // namespace

std::vector<int> NeighbourPlan::neighbours() const {
  std::vector<int> out;
  for (const RecvLink& r : recvs) out.push_back(r.rank);
  for (const SendLink& s : sends) out.push_back(s.rank);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::int64_t NeighbourPlan::send_volume() const noexcept {
  std::int64_t v = 0;
  for (const SendLink& s : sends) v += static_cast<std::int64_t>(s.indices.size());
  return v;
}

void DistMatrix::exchange_ghosts(std::span<const double> owned, std::span<double> ghosts) const {
  exchange_plan(comm_, plan_, owned, ghosts);
}

void DistMatrix::scale_symmetric(std::span<const double> s) {
  std::vector<double> ghosts(static_cast<std::size_t>(plan_.ghosts) + 1, 0.0);
  exchange_ghosts(s, ghosts);
  const int n = local_rows_;
  for (int i = 0; i < n; ++i) {
    for (std::int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k) {
      const std::int32_t c = col_[k];
      const double sc = c < n ? s[c] : ghosts[c - n];
      const double f = s[i] * sc;
      // s_i s_j can overflow where the scaled entry does not (the power-of-
      // two equilibration of subnormal entries, 2^514 2^514): then one
      // factor at a time.
      val_[k] = std::isfinite(f) ? val_[k] * f : val_[k] * s[i] * sc;
    }
  }
}

namespace {

/// A duplicate of a communicator under way (MPI_Comm_idup): finish()
/// gives it, with MPI_ERRORS_RETURN set as par::Comm::dup's; left
/// unfinished (an exception), the destructor completes and frees it. The
/// simulation build duplicates at once: SimGrid's SMPI has no
/// MPI_Comm_idup (it aborts the simulation, "Not yet implemented").
class PendingDup {
 public:
  explicit PendingDup(const par::Comm& comm) {
    if (par::is_simulated()) {
      par::check_mpi(MPI_Comm_dup(comm.get(), &out_), "MPI_Comm_dup");
      return;
    }
    par::check_mpi(MPI_Comm_idup(comm.get(), &out_, &request_), "MPI_Comm_idup");
  }
  PendingDup(const PendingDup&) = delete;
  PendingDup& operator=(const PendingDup&) = delete;
  ~PendingDup() {
    if (request_ == MPI_REQUEST_NULL && out_ == MPI_COMM_NULL) return;
    MPI_Wait(&request_, MPI_STATUS_IGNORE);
    if (out_ != MPI_COMM_NULL) MPI_Comm_free(&out_);
  }
  par::Comm finish() {
    par::check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
    par::check_mpi(MPI_Comm_set_errhandler(out_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    return par::Comm::adopt(std::exchange(out_, MPI_COMM_NULL));
  }

 private:
  MPI_Comm out_ = MPI_COMM_NULL;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace

namespace {

/// Sorts one row's (global column, value) entries by column, stably.
/// Rows usually arrive sorted, or nearly (a renumbering moves a few
/// columns): insertion sort, stable and without the buffer that
/// std::stable_sort allocates on every call, for short rows.
void sort_by_column(std::vector<std::pair<std::int64_t, double>>& row) {
  const auto by_column = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (row.size() <= 32) {
    for (std::size_t q = 1; q < row.size(); ++q) {
      const auto entry = row[q];
      std::size_t at = q;
      for (; at > 0 && by_column(entry, row[at - 1]); --at) row[at] = row[at - 1];
      row[at] = entry;
    }
  } else if (!std::is_sorted(row.begin(), row.end(), by_column)) {
    std::stable_sort(row.begin(), row.end(), by_column);
  }
}

/// The local rows of an n-row local CSR whose columns are all owned (< n).
std::int64_t interior_rows(std::int64_t n, const std::vector<std::int64_t>& row_ptr,
                           const std::vector<std::int32_t>& col) {
  std::int64_t interior = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    bool inner = true;
    for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) inner = inner && col[k] < n;
    interior += inner ? 1 : 0;
  }
  return interior;
}

}  // namespace

DistMatrix DistMatrix::from_rows(const par::Comm& comm, std::int64_t global_rows, RowsView rows) {
  DistMatrix m;
  // The matrix's own communicator (its halo exchanges') is duplicated
  // while the rows are sorted, not before: MPI_Comm_dup waits for every
  // rank (70 to 170 us on 2 ranks, docs/PERFORMANCE.md). The setup's
  // collectives run on `comm`.
  PendingDup own(comm);
  const par::Comm& c = comm;
  const int ranks = c.size();
  const int rank = c.rank();
  m.global_rows_ = global_rows;

  // Row ranges: every rank's count, in rank order.
  const std::int64_t n =
      rows.row_ptr.empty() ? 0 : static_cast<std::int64_t>(rows.row_ptr.size()) - 1;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks));
  par::check_mpi(MPI_Allgather(&n, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, c.get()),
                 "MPI_Allgather");
  m.offsets_.assign(static_cast<std::size_t>(ranks) + 1, 0);
  for (int r = 0; r < ranks; ++r) m.offsets_[r + 1] = m.offsets_[r] + counts[r];
  if (m.offsets_.back() != global_rows) {
    throw core::InputError(
        fmt::format("the ranks own {} rows in all: expected {} (the global "
                    "rows)",
                    m.offsets_.back(), global_rows));
  }
  m.first_row_ = m.offsets_[rank];
  raise_together(c, check_rows(rank, global_rows, m.first_row_, rows));
  m.local_rows_ = static_cast<int>(n);

  // Ghosts: the referenced columns outside [first, first + n), ascending.
  const std::int64_t first = m.first_row_;
  const std::int64_t last = first + n;
  for (const std::int64_t j : rows.col)
    if (j < first || j >= last) m.ghost_globals_.push_back(j);
  std::sort(m.ghost_globals_.begin(), m.ghost_globals_.end());
  m.ghost_globals_.erase(std::unique(m.ghost_globals_.begin(), m.ghost_globals_.end()),
                         m.ghost_globals_.end());
  if (n + static_cast<std::int64_t>(m.ghost_globals_.size()) > kMaxLocal) {
    throw core::RuntimeFailure(
        fmt::format("rank {}: {} rows and {} ghosts exceed 32-bit local "
                    "indices",
                    rank, n, m.ghost_globals_.size()));
  }

  // The local CSR: each row sorted by global column, repeated columns summed.
  m.row_ptr_.assign(static_cast<std::size_t>(n) + 1, 0);
  m.col_.reserve(rows.col.size());
  m.val_.reserve(rows.val.size());
  std::vector<std::pair<std::int64_t, double>> row;
  for (std::int64_t i = 0; i < n; ++i) {
    row.clear();
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
      row.emplace_back(rows.col[k], rows.val[k]);
    sort_by_column(row);
    std::int64_t previous = -1;
    for (const auto& [j, v] : row) {
      if (j == previous) {
        m.val_.back() += v;
        continue;
      }
      previous = j;
      const std::int64_t local =
          (j >= first && j < last)
              ? j - first
              : n + (std::lower_bound(m.ghost_globals_.begin(), m.ghost_globals_.end(), j) -
                     m.ghost_globals_.begin());
      m.col_.push_back(static_cast<std::int32_t>(local));
      m.val_.push_back(v);
    }
    m.row_ptr_[i + 1] = static_cast<std::int64_t>(m.col_.size());
  }

  // The duplicate is finished before the first sparse exchange: Open MPI
  // 4.1 hung (about 9 runs in 10 on 4 ranks) when the exchange's
  // MPI_Ibarrier ran on the parent while its MPI_Comm_idup was pending.
  m.comm_ = own.finish();

  // The plan: the ghosts' owners told what to send.
  m.plan_ = plan_for_ghosts(c, m.offsets_, m.ghost_globals_);
  const NeighbourPlan& plan = m.plan_;

  // Metrics, the same on every rank.
  PartitionMetrics& s = m.metrics_;
  const std::int64_t interior = interior_rows(n, m.row_ptr_, m.col_);
  std::int64_t sums[4] = {static_cast<std::int64_t>(plan.ghosts),
                          static_cast<std::int64_t>(plan.recvs.size()), interior, m.local_nnz()};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_INT64_T, MPI_SUM, c.get()),
                 "MPI_Allreduce");
  s.volume = sums[0];
  s.messages = sums[1];
  s.interior_rows = sums[2];
  m.global_nnz_ = sums[3];
  std::int64_t maxima[5] = {static_cast<std::int64_t>(plan.ghosts),
                            static_cast<std::int64_t>(plan.neighbours().size()), n, -n,
                            m.local_nnz()};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, maxima, 5, MPI_INT64_T, MPI_MAX, c.get()),
                 "MPI_Allreduce");
  s.max_rank_volume = maxima[0];
  s.max_neighbours = static_cast<int>(maxima[1]);
  s.max_rows = maxima[2];
  s.min_rows = -maxima[3];
  s.row_imbalance = static_cast<double>(maxima[2]) * ranks / static_cast<double>(global_rows);
  s.nnz_imbalance = m.global_nnz_ > 0 ? static_cast<double>(maxima[4]) * ranks /
                                            static_cast<double>(m.global_nnz_)
                                      : 1.0;
  s.edge_cut = count_edge_cut(c, m.offsets_, first, m.row_ptr_, m.col_, m.ghost_globals_);
  return m;
}

double jacobi_sweep_growth(const DistMatrix& a) {
  const int n = a.local_rows();
  std::vector<double> diag(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    for (std::int64_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col()[k] == i) diag[i] += std::abs(a.val()[k]);
  }
  // M_ij = a_ij / a_jj for own columns j != i: row sums and column sums.
  std::vector<double> column(static_cast<std::size_t>(n), 0.0);
  double row_max = 0.0;
  for (int i = 0; i < n; ++i) {
    double row = 0.0;
    for (std::int64_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const int j = a.col()[k];
      if (j == i || j >= n) continue;
      if (diag[j] == 0.0) return std::numeric_limits<double>::infinity();
      row += std::abs(a.val()[k]) / diag[j];
      column[j] += std::abs(a.val()[k]) / diag[j];
    }
    row_max = std::max(row_max, row);
  }
  const double column_max = n > 0 ? *std::max_element(column.begin(), column.end()) : 0.0;
  return std::sqrt(row_max * column_max);
}

double ghost_block_norm(const DistMatrix& a) {
  const int n = a.local_rows();
  std::vector<double> column(static_cast<std::size_t>(a.plan().ghosts), 0.0);
  double row_max = 0.0;
  for (int i = 0; i < n; ++i) {
    double row = 0.0;
    for (std::int64_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const int j = a.col()[k];
      if (j < n) continue;
      row += std::abs(a.val()[k]);
      column[static_cast<std::size_t>(j - n)] += std::abs(a.val()[k]);
    }
    row_max = std::max(row_max, row);
  }
  const double column_max = column.empty() ? 0.0 : *std::max_element(column.begin(), column.end());
  return std::sqrt(row_max * column_max);
}

}  // namespace asyncsolve::sparse
