// check_symmetry: every stored a_ij against a_ji. A rank holds rows; a_ji of
// an owned column j is in its own row j, found by a binary search (columns
// ascend by global index in every row); a_ji of a ghost column lives on the
// column's owner, so each such entry travels there transposed, as (row j,
// column i, a_ij, a_ii), in a sparse all-to-all (only to the ranks it
// concerns). Each pair is measured against
// max |a| and against sqrt(|a_ii a_jj|): the second does not change under a
// diagonal scaling (Jacobi's, --scale's), so a row scaled far below the
// largest cannot hide its asymmetry.
#include "asyncsolve/sparse/symmetry.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "alltoallv_impl.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::sparse {
namespace {

/// The global index of local column c.
std::int64_t global_column(const DistMatrix& m, std::int32_t c) {
  return c < m.local_rows() ? m.first_row() + c
                            : m.ghost_globals()[static_cast<std::size_t>(c - m.local_rows())];
}

/// a_(row, column) of local row `row` and global `column`, and whether it is stored.
std::pair<double, bool> lookup(const DistMatrix& m, int row, std::int64_t column) {
  const auto begin = m.col().begin() + m.row_ptr()[static_cast<std::size_t>(row)];
  const auto end = m.col().begin() + m.row_ptr()[static_cast<std::size_t>(row) + 1];
  const auto at = std::lower_bound(
      begin, end, column, [&](std::int32_t c, std::int64_t g) { return global_column(m, c) < g; });
  if (at == end || global_column(m, *at) != column) return {0.0, false};
  return {m.val()[static_cast<std::size_t>(at - m.col().begin())], true};
}

}  // namespace

Symmetry check_symmetry(const DistMatrix& m, double tolerance) {
  const par::Comm& comm = m.comm();
  const int ranks = comm.size();
  const int n = m.local_rows();
  double largest = 0.0;
  for (const double v : m.val()) largest = std::max(largest, std::abs(v));
  double worst = 0.0;         // max |a_ij - a_ji|
  double worst_scaled = 0.0;  // max |a_ij - a_ji| / sqrt(|a_ii a_jj|), non-zero diagonals
  std::int64_t missing = 0;   // stored a_ij without a stored a_ji
  std::vector<double> diagonal(static_cast<std::size_t>(n));  // |a_ii|
  for (int i = 0; i < n; ++i)
    diagonal[static_cast<std::size_t>(i)] = std::abs(lookup(m, i, m.first_row() + i).first);
  const auto compare = [&](double a, double t, double d) {
    worst = std::max(worst, std::abs(a - t));
    if (d > 0.0) worst_scaled = std::max(worst_scaled, std::abs(a - t) / std::sqrt(d));
  };

  // owned columns here; ghost columns to their owners, as (j, i) pairs and a_ij
  std::vector<std::vector<std::int64_t>> pairs(static_cast<std::size_t>(ranks));
  std::vector<std::vector<double>> values(static_cast<std::size_t>(ranks));
  for (int i = 0; i < n; ++i) {
    const std::int64_t gi = m.first_row() + i;
    for (std::int64_t e = m.row_ptr()[static_cast<std::size_t>(i)];
         e < m.row_ptr()[static_cast<std::size_t>(i) + 1]; ++e) {
      const std::int32_t c = m.col()[static_cast<std::size_t>(e)];
      const double a = m.val()[static_cast<std::size_t>(e)];
      const double a_ii = diagonal[static_cast<std::size_t>(i)];
      if (c < n) {
        const auto [t, stored] = lookup(m, c, gi);
        compare(a, t, a_ii * diagonal[static_cast<std::size_t>(c)]);
        missing += stored ? 0 : 1;
      } else {
        const std::int64_t gj = global_column(m, c);
        const auto r = static_cast<std::size_t>(detail::owner_of(m.row_offsets(), gj));
        pairs[r].insert(pairs[r].end(), {gj, gi});
        values[r].insert(values[r].end(), {a, a_ii});  // a_ij and |a_ii|
      }
    }
  }
  std::vector<int> counts;
  const std::vector<double> recv_values = detail::alltoallv(comm, values, counts);
  const std::vector<std::int64_t> recv_pairs = detail::alltoallv(comm, pairs, counts);
  const auto received = static_cast<int>(recv_pairs.size() / 2);
  // a_ij arrived as (j, i): a_ji is in this rank's row j
  for (int e = 0; e < received; ++e) {
    const std::int64_t row = recv_pairs[2 * static_cast<std::size_t>(e)];
    const std::int64_t column = recv_pairs[2 * static_cast<std::size_t>(e) + 1];
    const int local = static_cast<int>(row - m.first_row());
    const auto [t, stored] = lookup(m, local, column);
    const double* a = &recv_values[2 * static_cast<std::size_t>(e)];  // a_ij, |a_ii|
    compare(a[0], t, a[1] * diagonal[static_cast<std::size_t>(local)]);
    missing += stored ? 0 : 1;
  }

  double maxima[3] = {largest, worst, worst_scaled};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, maxima, 3, MPI_DOUBLE, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_INT64_T, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  Symmetry out;
  out.tolerance = tolerance;
  out.unmatched = missing;
  out.structural = missing == 0;
  out.max_asymmetry = maxima[0] > 0.0 ? maxima[1] / maxima[0] : 0.0;
  out.max_scaled_asymmetry = maxima[2];
  out.numerical = out.max_asymmetry <= tolerance && out.max_scaled_asymmetry <= tolerance;
  return out;
}

std::string Symmetry::statement() const {
  return fmt::format("max |a_ij - a_ji| / max |a| = {:.3e}, / sqrt(|a_ii a_jj|) = {:.3e}",
                     max_asymmetry, max_scaled_asymmetry);
}

}  // namespace asyncsolve::sparse
