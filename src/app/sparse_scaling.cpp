// The way back from --scale unit-diagonal: the solvers solved
// (S A S) y = S b, and judged their tolerance on that system's residual
// r_s = S b - S A S y. The system as given has x = S y and
// b - A x = S^-1 r_s, whose norm can be far from ||r_s|| when S spans
// many orders of magnitude; the verdict is made on it.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/par/check.hpp"
#include "sparse_session.hpp"

namespace asyncsolve::app {
namespace {

/// ||v / s|| over the ranks, without over- or underflow in the squares.
double unscaled_norm(const par::Comm& comm, std::span<const double> v,
                     const std::vector<double>& s) {
  double largest = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) largest = std::max(largest, std::abs(v[i] / s[i]));
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  if (!(largest > 0.0) || !std::isfinite(largest)) return largest;
  double sum = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double t = v[i] / s[i] / largest;
    sum += t * t;
  }
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  return largest * std::sqrt(sum);
}

}  // namespace

void confirm_on_given_system(const SolveConfig& config, const SparseProblem& p, SparseSetup& setup,
                             solvers::SolveResult& result) {
  const std::vector<double>& s = setup.scale;
  if (config.sparse.scale == Scale::none || result.reason == solvers::StopReason::breakdown) return;
  solvers::CsrSystem& system = setup.system;
  const auto n = static_cast<std::size_t>(p.matrix.local_rows());
  setup.halo->exchange(system.x);
  std::vector<double> r(n);
  (void)ops::residual(system.op, system.b.origin(), system.x.origin(), setup.halo->ghosts().data(),
                      r.data());
  const par::Comm& comm = p.matrix.comm();
  // The powers of two of the equilibration scale r and b alike: they cancel.
  const double b_norm = unscaled_norm(comm, {system.b.origin(), n}, s);
  const double given = b_norm > 0.0 ? unscaled_norm(comm, r, s) / b_norm : 0.0;
  const double scaled = result.true_residual;
  result.true_residual = given;
  result.scaled_true_residual = scaled;
  if (!result.converged || given < config.tol) return;
  result.converged = false;
  result.reason = solvers::StopReason::unconfirmed;
  result.detail = fmt::format(
      "the scaled system (--scale unit-diagonal) met the tolerance {:.1e} with a true residual "
      "{:.3e}; the system as given has {:.3e} (b - A x = S^-1 (S b - S A S y), S = |D|^-1/2)",
      config.tol, scaled, given);
}

void unscale_solution(const SparseProblem& p, SparseSetup& setup) {
  // Back to the unscaled unknowns: x = S 2^(a - c) y.
  grid::Field& x = setup.system.x;
  setup.powers.unscale({x.origin(), static_cast<std::size_t>(p.matrix.local_rows())});
  const std::vector<double>& s = setup.scale;
  for (std::size_t i = 0; i < s.size(); ++i) x.origin()[i] *= s[i];
}

}  // namespace asyncsolve::app
