#pragma once
// A serial reference for synchronous Jacobi on the whole global grid, written
// independently of Field, Decomposition and the fast kernels.
#include <vector>

#include "asyncsolve/grid/problem.hpp"

namespace asyncsolve::reference {

struct SerialJacobi {
  std::vector<double> u;  ///< interior, x fastest, global[0]*global[1]*global[2]
  long iterations = 0;
  double residual = 0;
  bool converged = false;
  double b_norm = 0;
};

/// Runs Figure 1 of paper 000 serially: every check_every iterations (and at
/// max_iters, so that the residual is the last iterate's) compute
/// ||b - A u|| / ||b|| and stop below tol; stop at max_iters otherwise.
SerialJacobi serial_jacobi(const grid::Problem& problem, const grid::Int3& global, double tol,
                           long max_iters, int check_every);

}  // namespace asyncsolve::reference
