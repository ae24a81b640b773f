#pragma once
/// The pieces of krylov_solve that a solver kept for several solves shares
/// (internal to the solvers layer; krylov.cpp defines them): the checks of
/// a CSR system, the preconditioner's setup, and one solve in a fresh
/// KrylovContext.
#include <memory>

#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "krylov_context.hpp"

namespace asyncsolve::solvers::detail {

/// The method's loop (one file each).
KrylovLoop loop_of(KrylovMethod method);

/// Collective: throws core::InputError on every rank for what the CSR
/// system cannot have: a general preconditioner with cg, chebyshev with a
/// nonsymmetric method, --hybrid, or a preconditioner dividing by the
/// diagonal with a diagonal entry <= 0 (SPD methods, chebyshev) or = 0
/// (the nonsymmetric methods).
void check_csr_krylov(CsrSystem& system, const sparse::DistMatrix& matrix,
                      const KrylovOptions& options);

/// A general preconditioner (chebyshev, ilu0, boomeramg; null otherwise)
/// and the seconds its setup took on this rank.
struct PreparedPc {
  std::unique_ptr<precond::Preconditioner> pc;
  double setup_s = 0.0;
};

/// Collective: throws core::InputError for a restart length the nodes'
/// memory cannot hold, then sets options.pc up over `a` when it is general
/// (with the nonsymmetric defaults for a nonsymmetric method).
PreparedPc setup_preconditioner(LinearOperator& a, const KrylovOptions& options);

/// Collective: one solve of A x = b from x's value, in a fresh context;
/// `setup_s` (> 0: the first solve after the setup) is added as the
/// precond_setup phase, and pc's report (pc may be null) to the result.
SolveResult solve_once(LinearOperator& a, grid::Field& x, const grid::Field& b,
                       const KrylovOptions& options, KrylovLoop loop, precond::Preconditioner* pc,
                       double setup_s);

}  // namespace asyncsolve::solvers::detail
