#pragma once
// A serial reference for the Krylov solvers: textbook CG on the whole global
// grid, with its own operator and right-hand side, written independently of
// Field, Decomposition and the fast kernels.
#include <vector>

#include "asyncsolve/grid/problem.hpp"

namespace asyncsolve::reference {

struct SerialCg {
  std::vector<double> x;        ///< interior, x fastest
  std::vector<double> history;  ///< ||r_k|| / ||b|| for k = 0, 1, ...
  long iterations = 0;
  bool converged = false;
};

/// y = (stencil + shift I) x on the global grid, Dirichlet points eliminated.
std::vector<double> serial_apply(const grid::Problem& problem, const grid::Int3& global,
                                 double shift, const std::vector<double>& x);

/// b: the problem's source plus the boundary contributions.
std::vector<double> serial_rhs(const grid::Problem& problem, const grid::Int3& global);

/// Hestenes-Stiefel CG from the problem's initial guess until
/// ||r|| / ||b|| < tol or max_iters.
SerialCg serial_cg(const grid::Problem& problem, const grid::Int3& global, double shift, double tol,
                   long max_iters);

}  // namespace asyncsolve::reference
