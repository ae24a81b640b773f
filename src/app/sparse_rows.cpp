// The rows and the right-hand side, checked before the solve. A zero b:
// a warning (check_rhs). An empty row (no non-zero entry) makes A
// singular: with b_i != 0 in it, A x = b has no solution, and every method
// would run to --max-iters or --max-time; refused before the solve. With
// b_i = 0 the system is still consistent (a Krylov method can converge, to
// one of many solutions): a warning, except for Schwarz's factorisations
// (refused here, naming the row); the methods that divide by the diagonal
// refuse it themselves.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/stats.hpp"
#include "solve_advice.hpp"
#include "sparse_session.hpp"

namespace asyncsolve::app {

std::vector<std::string> check_rhs(const SolveConfig& config, SparseProblem& p) {
  if (!p.loaded) return {};
  double largest = 0.0;
  for (const double v : p.b) largest = std::max(largest, std::abs(v));
  largest = par::max_over_ranks(p.matrix.comm(), largest);
  if (largest != 0.0) return {};
  const std::string warning = zero_rhs_warning(config.sparse.matrix_path, config.sparse.rhs_path);
  if (config.sparse.rhs_path.empty()) p.loaded->exact_known = false;
  if (p.matrix.comm().is_root()) std::fprintf(stderr, "asyncsolve: warning: %s\n", warning.c_str());
  return {warning};
}

std::string check_empty_rows(const SolveConfig& config, SparseProblem& p) {
  const sparse::DistMatrix& m = p.matrix;
  const std::vector<std::int64_t>& row_ptr = m.row_ptr();
  const std::vector<double>& val = m.val();
  // The first empty row in the user's numbering (the distributed one if
  // none), and whether b is non-zero there.
  constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
  std::int64_t first = none;
  double b_there = 0.0;
  for (int i = 0; i < m.local_rows(); ++i) {
    bool empty = true;
    for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1] && empty; ++k) empty = val[k] == 0.0;
    const std::int64_t row = p.row_names.row_of(i, m.first_row());
    if (empty && row < first) {
      first = row;
      b_there = p.b[static_cast<std::size_t>(i)];
    }
  }
  const par::Comm& comm = m.comm();
  std::int64_t global_first = first;
  par::check_mpi(MPI_Allreduce(&first, &global_first, 1, MPI_INT64_T, MPI_MIN, comm.get()),
                 "MPI_Allreduce");
  if (global_first == none) return {};
  double b_value = first == global_first ? std::abs(b_there) : 0.0;
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &b_value, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  if (b_value != 0.0) {
    throw core::InputError(fmt::format(
        "{} of the matrix is empty (no non-zero entry) and b has {:g} there: A x = b has no "
        "solution; expected a matrix without empty rows (or b = 0 in them)",
        p.row_names.name(global_first), b_value));
  }
  const std::string row = p.row_names.name(global_first);
  const std::string_view factorises = config.method == Method::schwarz ? "--method schwarz"
                                      : config.pc.kind == precond::PcKind::additive_schwarz
                                          ? "--pc asm"
                                          : "";
  if (!factorises.empty()) {
    throw core::InputError(fmt::format(
        "{} is empty (no non-zero entry): A is singular, and {} factorises "
        "subdomain blocks, the one holding that row singular too; expected a matrix without "
        "empty rows",
        row, factorises));
  }
  if (p.loaded) p.loaded->exact_known = false;
  return fmt::format(
      "{} is empty (no non-zero entry) and b is 0 there: A is singular and the "
      "solution is not unique (no error against an exact solution is reported)",
      row);
}

void warn_of_empty_row(const SparseProblem& p, const SparseSetup& setup) {
  if (!setup.empty_row.empty() && p.matrix.comm().is_root()) {
    std::fprintf(stderr, "asyncsolve: warning: %s\n", setup.empty_row.c_str());
  }
}

}  // namespace asyncsolve::app
