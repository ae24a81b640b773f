#include "asyncsolve/solvers/jacobi_rho.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::solvers {
namespace {

/// y = |D^-1 (A - D)| x over this rank's rows (x's ghosts in `ghosts`).
void abs_jacobi_matvec(const sparse::DistMatrix& m, const std::vector<double>& x,
                       const std::vector<double>& ghosts, std::vector<double>& y) {
  const int n = m.local_rows();
  for (int i = 0; i < n; ++i) {
    double sum = 0.0;
    double diagonal = 0.0;
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
      const std::int32_t c = m.col()[k];
      if (c == i) {
        diagonal += std::abs(m.val()[k]);
        continue;
      }
      sum += std::abs(m.val()[k]) * (c < n ? x[c] : ghosts[c - n]);
    }
    y[i] = sum / diagonal;
  }
}

double global_sum(const par::Comm& comm, double local) {
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_DOUBLE, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  return local;
}

}  // namespace

JacobiRho estimate_jacobi_rho(const sparse::DistMatrix& matrix, const ops::CsrOperator& op,
                              int max_iterations, double rtol) {
  for (const double d : op.diagonal())
    if (d == 0.0) throw std::invalid_argument("estimate_jacobi_rho: a zero diagonal entry");
  const par::Comm& comm = matrix.comm();
  const auto n = static_cast<std::size_t>(matrix.local_rows());
  std::vector<double> x(n, 1.0);
  std::vector<double> y(n, 0.0);
  std::vector<double> ghosts(static_cast<std::size_t>(matrix.plan().ghosts) + 1, 0.0);
  double xx = global_sum(comm, static_cast<double>(n));
  JacobiRho out;
  double previous = -1.0;
  for (int it = 1; it <= max_iterations; ++it) {
    // y = M x; estimate = ||y|| / ||x||; x = y / ||y||
    matrix.exchange_ghosts(x, ghosts);
    abs_jacobi_matvec(matrix, x, ghosts, y);
    double yy = 0.0;
    for (const double v : y) yy += v * v;
    yy = global_sum(comm, yy);
    out.iterations = it;
    out.estimate = std::sqrt(yy / xx);
    if (yy == 0.0) break;  // M x = 0: a diagonal matrix (rho = 0)
    const double norm = std::sqrt(yy);
    for (std::size_t i = 0; i < n; ++i) x[i] = y[i] / norm;
    xx = 1.0;
    if (std::abs(out.estimate - previous) <= rtol * out.estimate) break;
    previous = out.estimate;
  }
  // Collatz-Wielandt: for x > 0, rho(M) <= max_i (M x)_i / x_i.
  double largest = 0.0;
  for (const double v : x) largest = std::max(largest, v);
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  const double floor = largest > 0.0 ? 1e-8 * largest : 1.0;
  for (double& v : x) v = std::max(v, floor);
  matrix.exchange_ghosts(x, ghosts);
  abs_jacobi_matvec(matrix, x, ghosts, y);
  double bound = 0.0;
  for (std::size_t i = 0; i < n; ++i) bound = std::max(bound, y[i] / x[i]);
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  out.upper_bound = bound;
  return out;
}

}  // namespace asyncsolve::solvers
