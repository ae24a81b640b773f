#pragma once
/// A Krylov method kept set up on a distributed CSR matrix for solves with
/// new right-hand sides: the checks, the operator and the preconditioner
/// (chebyshev's bounds, BoomerAMG's hierarchy) once, then any number of
/// solves. krylov_solve with KrylovOptions::repeat_solves repeats the solve
/// of one b; this is for callers whose b changes (a time loop; the Python
/// package's Solver).
#include <memory>

#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "asyncsolve/solvers/result.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::solvers {

/// Move-only. Borrows the system, the matrix and the halo exchange, which
/// must outlive it; free() (collective) before the exchange is closed.
class CsrKrylovSolver {
 public:
  /// Collective over the matrix's communicator: checks `options` as
  /// krylov_solve does (core::InputError on every rank) and sets the
  /// preconditioner up. options.repeat_solves is not used (each solve() is
  /// one solve).
  CsrKrylovSolver(CsrSystem& system, const sparse::DistMatrix& matrix,
                  comm::SparseHaloExchange& halo, const KrylovOptions& options);
  CsrKrylovSolver(CsrKrylovSolver&&) noexcept;
  CsrKrylovSolver& operator=(CsrKrylovSolver&&) noexcept;
  CsrKrylovSolver(const CsrKrylovSolver&) = delete;
  CsrKrylovSolver& operator=(const CsrKrylovSolver&) = delete;
  ~CsrKrylovSolver();

  /// Collective: solves A x = b for the system's b (as it is now), from the
  /// system's x (its initial guess), leaving the solution in x. The first
  /// solve's result carries the preconditioner's setup time (phase
  /// precond_setup); every result carries the preconditioner's report.
  SolveResult solve();

  /// Collective: frees the preconditioner. Afterwards only the destructor
  /// may be called.
  void free();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace asyncsolve::solvers
