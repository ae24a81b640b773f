#pragma once
/// The stop decision the asynchronous Jacobi solvers share (structured and
/// CSR): what to do once their convergence reduction has completed.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "asyncsolve/solvers/result.hpp"

namespace asyncsolve::solvers::detail {

/// The values of a round of the asynchronous convergence reduction
/// (async_convergence_values doubles), each summed over the ranks.
enum AsyncCheckValue : std::size_t {
  residual_sq_value,   ///< this rank's ||b - A u||^2
  at_max_iters_value,  ///< 1 if this rank has made max_iters sweeps
  over_time_value,     ///< 1 if this rank has run options.max_time_s seconds
};

/// The values array of one round.
using AsyncCheckSums = std::array<double, async_convergence_values>;

/// This rank's part of a round: its residual^2, whether it has made
/// options.max_iters sweeps (k of them) and whether it has run
/// options.max_time_s seconds since t0 (core::now_s). Local.
inline AsyncCheckSums async_contribution(const JacobiOptions& options, long k, double t0,
                                         double local_r2) {
  AsyncCheckSums c{};
  c[residual_sq_value] = local_r2;
  c[at_max_iters_value] = k >= options.max_iters ? 1.0 : 0.0;
  c[over_time_value] =
      std::isfinite(options.max_time_s) && core::now_s() - t0 >= options.max_time_s ? 1.0 : 0.0;
  return c;
}

/// With --idle on, the sweeps between two refreshes of a rank's idle bound
/// (a fused sweep that measures its ||b - A u||^2): never fewer than
/// idle_refresh_min (the pace near the threshold), never more than
/// idle_refresh_max.
inline constexpr long idle_refresh_min = 4;
inline constexpr long idle_refresh_max = 64;

/// Sweeps from a refresh at iteration k that measured r2 to the next, given
/// the previous refresh (prev_r2 at prev_k; prev_k < 0 when there was none)
/// and the bound below which the rank idles, idle_r2: half the sweeps that
/// the decay from prev_r2 to r2, continued geometrically, needs to reach
/// idle_r2, within [idle_refresh_min, idle_refresh_max]. So a rank far above
/// the bound (a slow rank, which never idles) seldom pays for the fused
/// sweep, and one approaching it refreshes at the minimum pace. The minimum
/// when the residual did not fall or is already below idle_r2. Local.
inline long idle_refresh_gap(double prev_r2, long prev_k, double r2, long k, double idle_r2) {
  if (prev_k < 0 || k <= prev_k || !(r2 > idle_r2) || !(r2 < prev_r2) || !std::isfinite(prev_r2) ||
      !(idle_r2 > 0.0)) {
    return idle_refresh_min;
  }
  const double log_rate = std::log(r2 / prev_r2) / static_cast<double>(k - prev_k);  // < 0
  const double predicted = std::log(idle_r2 / r2) / log_rate;                        // > 0
  if (!(predicted < 2.0 * static_cast<double>(idle_refresh_max))) return idle_refresh_max;
  return std::max(idle_refresh_min, static_cast<long>(predicted / 2.0));
}

/// The verdict of a completed round with the global `sum` over `ranks`
/// ranks (the same on every rank): true, with result.converged and
/// result.reason set, when the solve stops: the estimate `estimate` is
/// below options.tol ("tolerance"), not finite (breakdown),
/// divergence_factor times the smallest estimate of the solve or more
/// ("diverged", at round k of this rank), some rank has run
/// options.max_time_s ("max_time"), or every rank has made
/// options.max_iters sweeps ("max_iters": the limit counts the slowest
/// rank's sweeps, so a fast rank cannot end a solve its partners are still
/// progressing). With every rank at max_iters a non-finite estimate is a
/// max_iters stop, not a breakdown: with --max-iters 0 no rank has a
/// residual yet (its part is +inf); a true residual that is not finite
/// still ends the solve as a breakdown (confirm_convergence). Local.
inline bool async_check_stops(SolveResult& result, const JacobiOptions& options, long k,
                              const AsyncCheckSums& sum, double estimate, int ranks) {
  if (estimate < options.tol) {
    result.converged = true;
    result.reason = StopReason::tolerance;
    return true;
  }
  const bool at_max_iters = sum[at_max_iters_value] > ranks - 0.5;
  if (at_max_iters && !std::isfinite(estimate)) {
    result.reason = StopReason::max_iters;
    return true;
  }
  if (breaks_down(estimate)) {  // the same reduced sum on every rank: all stop
    set_breakdown(result, estimate, k);
    return true;
  }
  if (check_divergence(result, estimate, k, async_divergence_floor)) return true;
  if (sum[over_time_value] > 0.0) {
    result.reason = StopReason::max_time;
    return true;
  }
  if (at_max_iters) {
    result.reason = StopReason::max_iters;
    return true;
  }
  return false;
}

/// Called on every rank when a round has completed with the global `sum`:
/// sets `estimate` (the relative residual), records the check at iteration
/// k in result.history (calling options.monitor), and returns
/// async_check_stops's verdict. Local; t0 is the solve's start (core::now_s).
inline bool finish_async_check(SolveResult& result, const JacobiOptions& options, long k, double t0,
                               const AsyncCheckSums& sum, double local_r2, double b_norm, int ranks,
                               double& estimate) {
  estimate = std::sqrt(sum[residual_sq_value]) / b_norm;
  const HistoryPoint point{k, core::now_s() - t0, estimate, std::sqrt(local_r2) / b_norm};
  result.history.push_back(point);
  if (options.monitor) options.monitor(point);
  return async_check_stops(result, options, k, sum, estimate, ranks);
}

/// Sync iterations that confirm a stop on a stale estimate: an asynchronous
/// solve whose estimate met tol but whose true residual did not gets up to
/// this many before it could end "unconfirmed".
inline constexpr long confirm_iterations = 1000;

/// How many synchronous iterations follow an asynchronous stop, given its
/// measured true residual: none when it met tol, broke down, diverged or ran out of
/// --max-time (the guard ends the solve, no tail after it); up to
/// `final_sync` (--final-sync) after any other stop; after a stop on the
/// tolerance at least confirm_iterations, so that "converged" keeps meaning
/// that the true residual met tol. Local, the same on every rank (the stop
/// and the true residual are reduced values).
inline long final_sync_iterations(const SolveResult& result, double tol, int final_sync) {
  if (result.reason == StopReason::breakdown || result.reason == StopReason::diverged ||
      result.reason == StopReason::max_time || result.true_residual < tol) {
    return 0;
  }
  const long confirm = result.reason == StopReason::tolerance ? confirm_iterations : 0;
  return final_sync > confirm ? final_sync : confirm;
}

/// The end of every asynchronous Jacobi (MPI over any operator, and
/// OpenMP), its channels or threads quiet: the true residual of the
/// returned iterate (`true_residual()`, collective); then, as
/// final_sync_iterations says, `sync_tail(n)`: up to n synchronous
/// iterations from that iterate, checking every one, with no monitor and no
/// time guard, whose outcome becomes the solve's (reason "tolerance" or
/// "final_sync", the estimate its last check's); then confirm_convergence.
/// A stop on max_iters or max_time whose true residual met tol is a
/// convergence (reason "tolerance", the detail saying so).
/// A tail that diverged or broke down gives the solve that reason and its
/// detail; one that confirmed a stop on the tolerance (a stale estimate)
/// and did not converge ends it "unconfirmed" (mark_unconfirmed), not
/// "final_sync", which is for the --final-sync iterations asked for.
template <class TrueResidual, class SyncTail>
void finish_async(SolveResult& result, double tol, int final_sync, TrueResidual&& true_residual,
                  SyncTail&& sync_tail) {
  result.true_residual = true_residual();
  if ((result.reason == StopReason::max_iters || result.reason == StopReason::max_time) &&
      result.true_residual < tol) {
    // The last round's estimate lagged (it sums residuals the ranks had
    // before their last sweeps); the iterate returned meets the tolerance,
    // as a synchronous check of it would have found.
    result.detail = fmt::format(
        "stopped on {} with a residual estimate of {:.3e}; the true residual of the iterate "
        "returned, {:.3e}, met the tolerance",
        stop_reason_name(result.reason), result.residual_estimate, result.true_residual);
    result.reason = StopReason::tolerance;
    result.converged = true;
  }
  if (const long n = final_sync_iterations(result, tol, final_sync); n > 0) {
    const bool confirming = result.reason == StopReason::tolerance;
    const double stale_estimate = result.residual_estimate;
    const SolveResult tail = sync_tail(n);
    result.final_sync_iterations = tail.iterations;
    result.residual_estimate = tail.residual_estimate;
    result.converged = tail.converged;
    result.true_residual = tail.true_residual;
    result.time_s += tail.time_s;
    result.sweep_bytes += tail.sweep_bytes;
    if (tail.converged) {
      result.reason = StopReason::tolerance;
    } else if (tail.reason == StopReason::diverged || tail.reason == StopReason::breakdown) {
      result.reason = tail.reason;
      result.detail = "in the synchronous iterations after the asynchronous stop, " + tail.detail;
    } else if (confirming) {
      mark_unconfirmed(result, stale_estimate, tol, tail.iterations);
    } else {
      result.reason = StopReason::final_sync;
    }
  }
  confirm_convergence(result, tol);
}

/// The options of the synchronous tail: `base` checking every iteration
/// for at most `iterations`, exchanging halos every iteration, with no
/// monitor and no time guard (a straggler stays slow).
inline JacobiOptions sync_tail_options(JacobiOptions base, long iterations) {
  base.max_iters = iterations;
  base.check_every = 1;
  base.halo_every = 1;
  base.monitor = nullptr;
  base.max_time_s = std::numeric_limits<double>::infinity();
  return base;
}

}  // namespace asyncsolve::solvers::detail
