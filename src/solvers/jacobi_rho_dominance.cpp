// Diagonal dominance, decided exactly, and reachability of the strictly
// dominant rows: the part of estimate_jacobi_rho that proves rho < 1 (or
// rho = 1) for the matrices asynchronous Jacobi is most used on, whose
// interior rows are exactly as heavy as their diagonal (a Laplacian), where
// power iterations would need about 1 / (1 - rho) steps to tell.
#include "jacobi_rho_dominance.hpp"

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::solvers::detail {

void ExactRowSum::add(double value) noexcept {
  // TwoSum: t = sum + a rounded, e its exact error (sum + a = t + e)
  const double a = std::abs(value);
  const double t = sum_ + a;
  const double z = t - sum_;
  const double e = (sum_ - (t - z)) + (a - z);
  sum_ = t;
  errors_ += e;
  error_size_ += std::abs(e);
  ++terms_;
}

RowDominance ExactRowSum::compare(double diagonal) const noexcept {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const double d = std::abs(diagonal);
  // The rounded sum is within terms * eps of the exact one (relative): far
  // from d, it decides alone.
  if (sum_ < 0.5 * d) return RowDominance::strict;
  if (sum_ > 2.0 * d) return RowDominance::above;
  const double gap = sum_ - d;  // exact (Sterbenz: d / 2 <= sum <= 2 d)
  if (error_size_ == 0.0) {     // no addition rounded: the sum is exact
    return gap < 0.0 ? RowDominance::strict
                     : (gap > 0.0 ? RowDominance::above : RowDominance::equal);
  }
  // exact sum - d = gap + (sum of the errors), the latter known to within
  // the rounding of its own sum
  const double total = gap + errors_;
  const double slack =
      2.0 * (static_cast<double>(terms_) + 1.0) * eps * error_size_ + 2.0 * eps * std::abs(total);
  if (total > slack) return RowDominance::above;
  if (total < -slack) return RowDominance::strict;
  return RowDominance::unknown;
}

namespace {

/// Rows of the local matrix by column (owned and ghost columns, off-diagonal
/// non-zeros only): the reverse edges along which reaching spreads.
struct ColumnRows {
  std::vector<std::int64_t> start;  // per local column, then one past the last
  std::vector<std::int32_t> rows;
};

ColumnRows column_rows(const sparse::DistMatrix& m) {
  const int n = m.local_rows();
  const auto columns = static_cast<std::size_t>(n) + static_cast<std::size_t>(m.plan().ghosts);
  ColumnRows out;
  out.start.assign(columns + 1, 0);
  const auto edge = [&](int i, std::int64_t k) { return m.col()[k] != i && m.val()[k] != 0.0; };
  for (int i = 0; i < n; ++i)
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
      if (edge(i, k)) ++out.start[static_cast<std::size_t>(m.col()[k]) + 1];
  for (std::size_t c = 0; c < columns; ++c) out.start[c + 1] += out.start[c];
  out.rows.resize(static_cast<std::size_t>(out.start[columns]));
  std::vector<std::int64_t> next(out.start.begin(), out.start.end() - 1);
  for (int i = 0; i < n; ++i)
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
      if (edge(i, k)) out.rows[static_cast<std::size_t>(next[m.col()[k]]++)] = i;
  return out;
}

long long sum_over(const par::Comm& comm, long long local) {
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_LONG_LONG, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  return local;
}

}  // namespace

RhoVerdict dominance_verdict(const sparse::DistMatrix& m) {
  const par::Comm& comm = m.comm();
  const int n = m.local_rows();
  const int ghosts = m.plan().ghosts;
  std::vector<char> reached(static_cast<std::size_t>(n) + static_cast<std::size_t>(ghosts), 0);
  std::vector<std::int32_t> frontier;  // local columns reached, their rows not yet visited
  long long undecidable = 0;
  for (int i = 0; i < n; ++i) {
    ExactRowSum sum;
    double diagonal = 0.0;
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
      if (m.col()[k] == i) {
        diagonal = m.val()[k];
      } else {
        sum.add(m.val()[k]);
      }
    }
    const RowDominance d = sum.compare(diagonal);
    if (d == RowDominance::strict) {
      reached[i] = 1;
      frontier.push_back(i);
    }
    if (d == RowDominance::above || d == RowDominance::unknown) ++undecidable;
  }
  if (sum_over(comm, undecidable) > 0) return RhoVerdict::undecided;

  // A row reaches a strictly dominant row if one of its columns does: spread
  // along the reverse edges, through this rank's rows, then across ranks.
  const ColumnRows by_column = column_rows(m);
  std::vector<double> owned(static_cast<std::size_t>(n));
  std::vector<double> ghost_flags(static_cast<std::size_t>(ghosts) + 1, 0.0);
  for (;;) {
    while (!frontier.empty()) {
      const std::int32_t c = frontier.back();
      frontier.pop_back();
      for (std::int64_t k = by_column.start[c]; k < by_column.start[c + 1]; ++k) {
        const std::int32_t i = by_column.rows[static_cast<std::size_t>(k)];
        if (reached[i] != 0) continue;
        reached[i] = 1;
        frontier.push_back(i);
      }
    }
    for (int i = 0; i < n; ++i) owned[i] = reached[i] != 0 ? 1.0 : 0.0;
    m.exchange_ghosts(owned, ghost_flags);
    long long news = 0;
    for (int g = 0; g < ghosts; ++g) {
      if (ghost_flags[g] == 0.0 || reached[n + g] != 0) continue;
      reached[n + g] = 1;
      frontier.push_back(n + g);
      ++news;
    }
    if (sum_over(comm, news) == 0) break;
  }
  long long unreached = 0;
  for (int i = 0; i < n; ++i) unreached += reached[i] == 0 ? 1 : 0;
  // Unreached rows only reference unreached rows, each summing to exactly
  // 1 in M: a stochastic principal submatrix, so rho(M) = 1 (weak dominance
  // keeps it from exceeding 1).
  return sum_over(comm, unreached) == 0 ? RhoVerdict::below_one : RhoVerdict::at_least_one;
}

}  // namespace asyncsolve::solvers::detail
