// The way back from --scale unit-diagonal: the solvers solved
// (S A S) y = S b, and judged their tolerance on that system's residual
// r_s = S b - S A S y. The system as given has x = S y and
// b - A x = S^-1 r_s, whose norm can be far from ||r_s|| when S spans
// many orders of magnitude; the verdict is made on it.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/par/check.hpp"
#include "sparse_session.hpp"

namespace asyncsolve::app {
namespace {

/// ||v / s|| over the ranks (||v|| where s is empty: no --scale), without
/// over- or underflow in the squares.
double unscaled_norm(const par::Comm& comm, std::span<const double> v,
                     const std::vector<double>& s) {
  const auto at = [&](std::size_t i) { return s.empty() ? v[i] : v[i] / s[i]; };
  double largest = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) largest = std::max(largest, std::abs(at(i)));
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  if (!(largest > 0.0) || !std::isfinite(largest)) return largest;
  double sum = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double t = at(i) / largest;
    sum += t * t;
  }
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  return largest * std::sqrt(sum);
}

/// Collective: ||b - A x|| / ||b|| of the system as given (S^-1 undoes
/// --scale; the powers of two of the equilibration scale r and b alike and
/// cancel), 0 where b = 0.
double given_residual(const SparseProblem& p, SparseSetup& setup) {
  solvers::CsrSystem& system = setup.system;
  const auto n = static_cast<std::size_t>(p.matrix.local_rows());
  setup.halo->exchange(system.x);
  std::vector<double> r(n);
  (void)ops::residual(system.op, system.b.origin(), system.x.origin(), setup.halo->ghosts().data(),
                      r.data());
  const par::Comm& comm = p.matrix.comm();
  const double b_norm = unscaled_norm(comm, {system.b.origin(), n}, setup.scale);
  return b_norm > 0.0 ? unscaled_norm(comm, r, setup.scale) / b_norm : 0.0;
}

}  // namespace

solvers::SolveResult breakdown_before_iterating(const SparseProblem& p, SparseSetup& setup,
                                                std::string detail) {
  solvers::SolveResult result;
  result.converged = false;
  result.reason = solvers::StopReason::breakdown;
  result.detail = std::move(detail);
  result.residual_estimate = std::numeric_limits<double>::quiet_NaN();  // none was made
  result.true_residual = given_residual(p, setup);
  return result;
}

void confirm_on_given_system(const SolveConfig& config, const SparseProblem& p, SparseSetup& setup,
                             solvers::SolveResult& result) {
  if (config.sparse.scale == Scale::none || result.reason == solvers::StopReason::breakdown) return;
  const double given = given_residual(p, setup);
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

void annotate_breakdown(const SolveConfig& config, const SparseSetup& setup, bool iterated,
                        solvers::SolveResult& result) {
  if (result.reason != solvers::StopReason::breakdown || result.detail.empty()) return;
  const sparse::PowerOfTwoScaling& powers = setup.powers;
  if (iterated && (powers.matrix_exponent != 0 || powers.rhs_exponent != 0)) {
    result.detail += fmt::format(
        " (a value of the system as equilibrated before the solve: A times 2^{}, b times 2^{}; "
        "problem.equilibration)",
        powers.matrix_exponent, powers.rhs_exponent);
  }
  if (result.iterations == 0 && !config.sparse.x0_path.empty()) {
    result.detail += fmt::format("; the initial guess --x0 {} has values up to |x0| = {:.3e}",
                                 config.sparse.x0_path, setup.x0_max);
  }
}

}  // namespace asyncsolve::app
