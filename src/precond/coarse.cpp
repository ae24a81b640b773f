// The coarse space: E = Z^T A Z assembled from every rank's rows, its
// pseudo-inverse's rows for this rank, and the additive correction.
//
// Assembly: rank i's rows of E are E[(i,a), (j,b)] = sum over owned rows r
// and stored columns c of Z_i[r,a] a_rc Z_j[c,b], with j the owner of c;
// Z_j at the ghost columns arrives through the matrix's own plan (one
// exchange per column of Z). One MPI_Allgather then gives every rank all of
// E, which each decomposes (dsyev: dimension^3 / 3 flops, 1536 rows at 256
// ranks x 6 modes take about a second) and keeps its count rows of E^+.
//
// Per apply: count dot products over the owned rows, one MPI_Allgather of
// count doubles per rank, count x dimension multiply-adds, count axpys.
#include "asyncsolve/precond/coarse.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/check.hpp"

extern "C" void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
                       double* w, double* work, const int* lwork, int* info, std::size_t jobz_len,
                       std::size_t uplo_len);

extern "C" void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a,
                        const int* lda, double* s, double* u, const int* ldu, double* vt,
                        const int* ldvt, double* work, const int* lwork, int* info,
                        std::size_t jobu_len, std::size_t jobvt_len);

namespace asyncsolve::precond {
namespace {

/// Whether E (dim x dim, row by row) equals its transpose to 1e-12 of its
/// largest entry (a symmetric A gives a symmetric E up to rounding).
bool symmetric(const std::vector<double>& e, std::size_t dim) {
  double largest = 0.0;
  double asymmetry = 0.0;
  for (std::size_t p = 0; p < dim; ++p) {
    for (std::size_t q = 0; q < dim; ++q) {
      largest = std::max(largest, std::abs(e[p * dim + q]));
      asymmetry = std::max(asymmetry, std::abs(e[p * dim + q] - e[q * dim + p]));
    }
  }
  return asymmetry <= 1e-12 * largest;
}

/// Rows first .. first + count - 1 of E^+ for a nonsymmetric E (row by row,
/// `order` rows) by its singular value decomposition: LAPACK reads the array
/// as E^T = U S V^T, so E^+ = U S^+ V^T, E^+[p][q] = sum_k U[p][k] V^T[k][q]
/// / s_k; singular values below 1e-12 of the largest are dropped (counted in
/// `dropped`).
std::vector<double> general_inverse_rows(std::vector<double> e, int order, int first, int count,
                                         int& dropped) {
  const auto dim = static_cast<std::size_t>(order);
  std::vector<double> s(dim);
  std::vector<double> u(dim * dim);
  std::vector<double> vt(dim * dim);
  int info = 0;
  int lwork = -1;
  double query = 0;
  dgesvd_("A", "A", &order, &order, e.data(), &order, s.data(), u.data(), &order, vt.data(), &order,
          &query, &lwork, &info, 1, 1);
  lwork = std::max(1, static_cast<int>(query));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgesvd_("A", "A", &order, &order, e.data(), &order, s.data(), u.data(), &order, vt.data(), &order,
          work.data(), &lwork, &info, 1, 1);
  if (info != 0) {
    throw core::CollectiveFailure(
        fmt::format("--coarse: LAPACK dgesvd failed on the {} x {} coarse matrix (info {})", order,
                    order, info));
  }
  const double largest = s.empty() ? 0.0 : s.front();  // descending
  std::vector<double> rows(static_cast<std::size_t>(count) * dim, 0.0);
  for (std::size_t k = 0; k < dim; ++k) {
    if (!(s[k] > 1e-12 * largest)) {
      ++dropped;
      continue;
    }
    for (int a = 0; a < count; ++a) {
      const double left = u[static_cast<std::size_t>(first + a) + k * dim] / s[k];
      double* row = &rows[static_cast<std::size_t>(a) * dim];
      for (std::size_t q = 0; q < dim; ++q) row[q] += left * vt[k + q * dim];
    }
  }
  return rows;
}

}  // namespace

CoarseSpace::CoarseSpace(const sparse::DistMatrix& m, std::vector<double> z, int count)
    : rows_(m.local_rows()), count_(count), z_(std::move(z)) {
  const double t0 = core::now_s();
  const par::Comm& comm = m.comm();
  const int ranks = comm.size();
  dimension_ = ranks * count_;
  first_ = comm.rank() * count_;
  const int n = rows_;
  const auto& offsets = m.row_offsets();
  // Z's values at the ghost columns, column by column.
  const auto ghosts = static_cast<std::size_t>(m.plan().ghosts);
  std::vector<double> zg(ghosts * count_ + 1, 0.0);
  for (int b = 0; b < count_; ++b) {
    m.exchange_ghosts({z_.data() + static_cast<std::size_t>(b) * n, static_cast<std::size_t>(n)},
                      {zg.data() + b * ghosts, ghosts});
  }
  std::vector<int> ghost_owner(ghosts);
  for (std::size_t g = 0; g < ghosts; ++g) {
    ghost_owner[g] =
        static_cast<int>(std::upper_bound(offsets.begin(), offsets.end(), m.ghost_globals()[g]) -
                         offsets.begin()) -
        1;
  }
  // This rank's rows of E, row (i,a) by row.
  const auto dim = static_cast<std::size_t>(dimension_);
  std::vector<double> mine(static_cast<std::size_t>(count_) * dim, 0.0);
  const int me = comm.rank();
  for (int r = 0; r < n; ++r) {
    for (std::int64_t k = m.row_ptr()[r]; k < m.row_ptr()[r + 1]; ++k) {
      const std::int32_t c = m.col()[k];
      const bool owned = c < n;
      const int j = owned ? me : ghost_owner[c - n];
      for (int a = 0; a < count_; ++a) {
        const double left = z_[static_cast<std::size_t>(a) * n + r] * m.val()[k];
        if (left == 0.0) continue;
        double* row = &mine[a * dim + static_cast<std::size_t>(j) * count_];
        for (int b = 0; b < count_; ++b) {
          const double right =
              owned ? z_[static_cast<std::size_t>(b) * n + c] : zg[b * ghosts + (c - n)];
          row[b] += left * right;
        }
      }
    }
  }
  std::vector<double> e(dim * dim);
  par::check_mpi(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, e.data(),
                               static_cast<int>(mine.size()), MPI_DOUBLE, comm.get()),
                 "MPI_Allgather");
  local_.assign(static_cast<std::size_t>(count_), 0.0);
  gathered_.assign(dim, 0.0);
  if (!symmetric(e, dim)) {
    // A nonsymmetric A (convection-diffusion): E is not symmetric either.
    inverse_ = general_inverse_rows(std::move(e), dimension_, first_, count_, dropped_);
    setup_s_ = core::now_s() - t0;
    return;
  }
  // E is symmetric up to rounding; take its symmetric part.
  for (std::size_t p = 0; p < dim; ++p) {
    for (std::size_t q = p + 1; q < dim; ++q) {
      const double s = 0.5 * (e[p * dim + q] + e[q * dim + p]);
      e[p * dim + q] = s;
      e[q * dim + p] = s;
    }
  }
  // E = V diag(w) V^T (column-major V in e after dsyev; E is symmetric).
  std::vector<double> w(dim);
  const int order = dimension_;
  int info = 0;
  int lwork = -1;
  double query = 0;
  dsyev_("V", "U", &order, e.data(), &order, w.data(), &query, &lwork, &info, 1, 1);
  lwork = std::max(1, static_cast<int>(query));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dsyev_("V", "U", &order, e.data(), &order, w.data(), work.data(), &lwork, &info, 1, 1);
  if (info != 0) {
    throw core::CollectiveFailure(
        fmt::format("--coarse: LAPACK dsyev failed on the {} x {} coarse matrix (info {})", order,
                    order, info));
  }
  // w is ascending: the largest magnitude is at one end.
  const double largest = w.empty() ? 0.0 : std::max(std::abs(w.front()), std::abs(w.back()));
  // This rank's rows of E^+ = sum over kept eigenpairs of v v^T / w.
  inverse_.assign(static_cast<std::size_t>(count_) * dim, 0.0);
  for (std::size_t t = 0; t < dim; ++t) {
    if (!(std::abs(w[t]) > 1e-12 * largest)) {
      ++dropped_;
      continue;
    }
    const double* v = &e[t * dim];
    for (int a = 0; a < count_; ++a) {
      const double s = v[first_ + a] / w[t];
      double* row = &inverse_[a * dim];
      for (std::size_t q = 0; q < dim; ++q) row[q] += s * v[q];
    }
  }
  setup_s_ = core::now_s() - t0;
}

void CoarseSpace::restrict_local(std::span<const double> r, std::span<double> out) const {
  for (int a = 0; a < count_; ++a) {
    const double* za = &z_[static_cast<std::size_t>(a) * rows_];
    double s = 0.0;
    for (int i = 0; i < rows_; ++i) s += za[i] * r[i];
    out[a] = s;
  }
}

void CoarseSpace::prolong_add(std::span<const double> g, std::span<double> z) const {
  const auto dim = static_cast<std::size_t>(dimension_);
  for (int a = 0; a < count_; ++a) {
    // c_a = (E^+ g)_(i,a)
    const double* row = &inverse_[a * dim];
    double c = 0.0;
    for (std::size_t q = 0; q < dim; ++q) c += row[q] * g[q];
    // z += c_a Z_i[:, a]
    const double* za = &z_[static_cast<std::size_t>(a) * rows_];
    for (int i = 0; i < rows_; ++i) z[i] += c * za[i];
  }
}

void CoarseSpace::apply_add(const par::Comm& comm, std::span<const double> r, std::span<double> z) {
  restrict_local(r, local_);
  par::check_mpi(MPI_Allgather(local_.data(), count_, MPI_DOUBLE, gathered_.data(), count_,
                               MPI_DOUBLE, comm.get()),
                 "MPI_Allgather");
  prolong_add(gathered_, z);
}

}  // namespace asyncsolve::precond
