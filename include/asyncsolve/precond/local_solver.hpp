#pragma once
/// Solvers of one rank's subdomain matrix, factorised once at setup and
/// applied many times (Schwarz methods): SuiteSparse's CHOLMOD (symmetric
/// positive definite) and UMFPACK (general), optional at build time
/// (ASYNCSOLVE_SUITESPARSE), and a built-in incomplete Cholesky IC(0) that
/// keeps A's pattern (memory-light, inexact).
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "asyncsolve/sparse/subdomain.hpp"

namespace asyncsolve::precond {

/// --local-solver: automatic picks cholmod for a symmetric matrix, umfpack
/// otherwise (ic0 where SuiteSparse is not built and the matrix is symmetric).
enum class LocalSolverKind { automatic, cholmod, umfpack, ic0 };

/// The names of the local solvers, in LocalSolverKind's order.
inline constexpr std::array<std::string_view, 4> local_solver_names{"auto", "cholmod", "umfpack",
                                                                    "ic0"};

/// "auto", "cholmod", "umfpack" or "ic0".
std::string_view local_solver_name(LocalSolverKind kind);

/// True when this build has SuiteSparse (CHOLMOD and UMFPACK).
bool suitesparse_available();

/// Throws core::InputError naming --local-solver `kind` when this build
/// lacks it (cholmod or umfpack without SuiteSparse); returns otherwise.
void require_local_solver(LocalSolverKind kind);

/// What a factorisation cost and holds.
struct LocalSolverReport {
  std::string name;               ///< local_solver_name of the solver used
  bool exact = false;             ///< solve() is A^-1 to rounding (a complete factorisation)
  double factor_s = 0;            ///< this rank's factorisation time (symbolic + numeric)
  std::int64_t nnz_a = 0;         ///< non-zeros of the matrix factorised
  std::int64_t nnz_factor = 0;    ///< non-zeros of the factors (L, or L + U)
  double memory_bytes = 0;        ///< the factors' memory (values and indices)
  double fill() const noexcept {  ///< nnz_factor / nnz_a
    return nnz_a > 0 ? static_cast<double>(nnz_factor) / static_cast<double>(nnz_a) : 0.0;
  }
};

/// A factorisation failed on this rank (not positive definite, singular):
/// `what()` names the solver, the row (pivot) and the value found. The
/// Schwarz setup turns it, collectively, into exit code 3.
class FactorisationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One rank's factorised matrix. Move-only through the pointer; local (no
/// communication).
class LocalSolver {
 public:
  virtual ~LocalSolver() = default;
  /// x = A^-1 b (exact for cholmod and umfpack; (L L^T)^-1 b for ic0).
  /// b and x have rows() values and may not alias.
  virtual void solve(std::span<const double> b, std::span<double> x) = 0;
  virtual const LocalSolverReport& report() const = 0;
};

/// True when `a` equals its transpose, pattern and values (exactly).
bool is_symmetric(const sparse::LocalCsr& a);

/// Local: factorises `a` (square, rows sorted by column, no duplicate)
/// with `kind` (automatic resolved by is_symmetric). Throws
/// FactorisationError when the factorisation fails, core::InputError for
/// cholmod or umfpack in a build without SuiteSparse.
std::unique_ptr<LocalSolver> make_local_solver(LocalSolverKind kind, const sparse::LocalCsr& a);

/// The kind `automatic` resolves to for `a` (the others: themselves).
LocalSolverKind resolve_local_solver(LocalSolverKind kind, const sparse::LocalCsr& a);

}  // namespace asyncsolve::precond
