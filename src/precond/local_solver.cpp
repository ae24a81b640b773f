// The local solvers' factory, names and the symmetry test that picks one.
#include "asyncsolve/precond/local_solver.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"
#include "local_solver_impl.hpp"

namespace asyncsolve::precond {

std::string_view local_solver_name(LocalSolverKind kind) {
  return core::enum_name(local_solver_names, kind, "unknown");
}

void require_local_solver(LocalSolverKind kind) {
  if ((kind == LocalSolverKind::cholmod || kind == LocalSolverKind::umfpack) &&
      !suitesparse_available()) {
    throw core::InputError(fmt::format(
        "--local-solver {}: this build has no SuiteSparse (configure with libsuitesparse-dev "
        "installed), expected ic0 or auto",
        local_solver_name(kind)));
  }
}

bool is_symmetric(const sparse::LocalCsr& a) {
  const int n = a.rows();
  // a_ij == a_ji for every stored entry: look a_ji up in row j (sorted).
  for (int i = 0; i < n; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const int j = a.col[k];
      const auto begin = a.col.begin() + a.row_ptr[j];
      const auto end = a.col.begin() + a.row_ptr[j + 1];
      const auto it = std::lower_bound(begin, end, i);
      if (it == end || *it != i || a.val[it - a.col.begin()] != a.val[k]) return false;
    }
  }
  return true;
}

LocalSolverKind resolve_local_solver(LocalSolverKind kind, const sparse::LocalCsr& a) {
  if (kind != LocalSolverKind::automatic) return kind;
  const bool symmetric = is_symmetric(a);
  if (!suitesparse_available()) return LocalSolverKind::ic0;
  return symmetric ? LocalSolverKind::cholmod : LocalSolverKind::umfpack;
}

std::unique_ptr<LocalSolver> make_local_solver(LocalSolverKind kind, const sparse::LocalCsr& a) {
  const LocalSolverKind resolved = resolve_local_solver(kind, a);
  require_local_solver(resolved);
  switch (resolved) {
    case LocalSolverKind::cholmod:
      return detail::make_cholmod(a);
    case LocalSolverKind::umfpack:
      return detail::make_umfpack(a);
    case LocalSolverKind::ic0:
    case LocalSolverKind::automatic:
      break;
  }
  return detail::make_ic0(a);
}

}  // namespace asyncsolve::precond
