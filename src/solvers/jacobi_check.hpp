#pragma once
/// The stop decision the asynchronous Jacobi solvers share (structured and
/// CSR): what to do once their convergence reduction has completed.
#include <cmath>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "asyncsolve/solvers/result.hpp"

namespace asyncsolve::solvers::detail {

/// Called on every rank when the reduction of {||b - A u||^2 on this rank,
/// 1 if this rank is at max_iters} has completed with the global `sum`:
/// sets `estimate` (the relative residual), records the check at iteration
/// k in result.history (calling options.monitor), and returns whether to
/// stop, with result.converged and result.reason set: a residual that is not
/// finite (breakdown), below options.tol, or some rank reached max_iters. Local; t0 is the solve's
/// start (core::now_s).
inline bool finish_async_check(SolveResult& result, const JacobiOptions& options, long k, double t0,
                               const double (&sum)[2], double local_r2, double b_norm,
                               double& estimate) {
  estimate = std::sqrt(sum[0]) / b_norm;
  const HistoryPoint point{k, core::now_s() - t0, estimate, std::sqrt(local_r2) / b_norm};
  result.history.push_back(point);
  if (options.monitor) options.monitor(point);
  if (breaks_down(estimate)) {  // the same reduced sum on every rank: all stop
    set_breakdown(result, estimate, k);
    return true;
  }
  if (estimate < options.tol) {
    result.converged = true;
    result.reason = "tolerance";
    return true;
  }
  if (sum[1] > 0.0) {
    result.reason = "max_iters";
    return true;
  }
  return false;
}

/// Sync iterations that confirm a stop on a stale estimate: an asynchronous
/// solve whose estimate met tol but whose true residual did not gets up to
/// this many before it could end "unconfirmed".
inline constexpr long confirm_iterations = 1000;

/// How many synchronous iterations follow an asynchronous stop, given its
/// measured true residual: none when it met tol or broke down; up to
/// `final_sync` (--final-sync) after any other stop; after a stop on the
/// tolerance at least confirm_iterations, so that "converged" keeps meaning
/// that the true residual met tol. Local, the same on every rank (the stop
/// and the true residual are reduced values).
inline long final_sync_iterations(const SolveResult& result, double tol, int final_sync) {
  if (result.reason == "breakdown" || result.true_residual < tol) return 0;
  const long confirm = result.reason == "tolerance" ? confirm_iterations : 0;
  return final_sync > confirm ? final_sync : confirm;
}

}  // namespace asyncsolve::solvers::detail
