#pragma once
/// The local solvers' constructors (internal to the precond layer), one
/// file each: ic0.cpp, cholmod.cpp and umfpack.cpp (no_suitesparse.cpp in a
/// build without SuiteSparse).
#include <memory>

#include "asyncsolve/precond/local_solver.hpp"

namespace asyncsolve::precond::detail {

/// Incomplete Cholesky with A's pattern; throws FactorisationError on a
/// pivot that is not positive.
std::unique_ptr<LocalSolver> make_ic0(const sparse::LocalCsr& a);
/// CHOLMOD's Cholesky factorisation (supernodal, AMD ordering); throws
/// FactorisationError when `a` is not positive definite.
std::unique_ptr<LocalSolver> make_cholmod(const sparse::LocalCsr& a);
/// UMFPACK's LU factorisation; throws FactorisationError when `a` is singular.
std::unique_ptr<LocalSolver> make_umfpack(const sparse::LocalCsr& a);

/// Below this reciprocal condition estimate a factorisation is called
/// singular (a pure Neumann block, solved exactly, meets it at rounding level).
inline constexpr double kSingularRcond = 1e-13;

}  // namespace asyncsolve::precond::detail
