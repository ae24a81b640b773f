#pragma once
/// The stop decision the asynchronous Jacobi solvers share (structured and
/// CSR): what to do once their convergence reduction has completed.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

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
  /// 1 if this rank has made options.stagnation_span sweeps since the
  /// residual estimate last moved (AsyncStandstill)
  swept_span_value,
};

/// The values array of one round.
using AsyncCheckSums = std::array<double, async_convergence_values>;

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

/// AsyncStandstill also starts a window where the estimate rises more than
/// this many times above the value that started the current one: that
/// value was a stale dip (parts of different ages, all low at once), and
/// progress is measured from the honest level, not from the dip. Without
/// this rule a slow but converging iteration whose window started at a dip
/// under stale_verdict_factor times below its residual was judged standing
/// still once the span was swept, and its true residual did not refute it.
inline constexpr double stale_rise_factor = 100.0;

/// The stagnation rules of an asynchronous iteration, which a synchronous
/// one gets from check_stagnation: a residual estimate that no longer
/// falls (an inconsistent or singular system, a fixed point that is not the
/// solution) or, below stagnation_floor, finds no new smallest value (a
/// --tol below the rounding level). Its estimate is not the residual of
/// one iterate: it sums parts of different ages, so where the iterate
/// drifts (along the null space of a singular A) it wanders by more than
/// check_stagnation's band even at a standstill. The rule therefore asks
/// for progress, not for stillness: a window starts where the estimate
/// falls below (1 - stagnation_rate * span) times the value that started
/// the last one (below stagnation_floor: below it at all) or rises above
/// stale_rise_factor times it, and the solve stops when every rank has
/// swept the span within one window.
///
/// The span is counted in the sweeps of every rank, never in rounds: a
/// rank that idles, waits for news or is descheduled completes rounds
/// without sweeping, and a straggler's next sweep may still bring the
/// estimate down. Each rank reports in its part of a round whether it has
/// swept the span since the window started (swept_span_value,
/// swept_span()): options.stagnation_span sweeps above stagnation_floor,
/// stagnation_iterations below it (as the rounding rule of
/// check_stagnation counts checks, not the span).
///
/// The decision is the same on every rank: every rank sees the same
/// sequence of completed rounds and their sums, and a window starts at a
/// round's completion (a rank's next part comes after it, as one round at
/// a time is in flight), where each rank notes its own sweep count.
class AsyncStandstill {
 public:
  /// `who`: what sweeps, as the detail names it ("rank", or OpenMP's "thread").
  explicit AsyncStandstill(const char* who = "rank") : who_(who) {}

  /// Whether this rank, at iteration k, has swept the window's span
  /// (`stagnation_span` above stagnation_floor, stagnation_iterations below).
  bool swept_span(long k, long stagnation_span) const {
    return started_ && k - since_ >= span(stagnation_span);
  }

  /// How many windows have started (OpenMP's threads note their sweep
  /// counts at each new one).
  long windows() const { return windows_; }

  /// The estimate restarted (a stop the true residual refuted): the next
  /// round starts a new window at the fresh value, which may lie far above
  /// the stale one that started this window.
  void restart() { started_ = false; }

  /// Whether the last stops() stopped the solve (a stagnation verdict).
  bool judged() const { return judged_; }

  /// After a completed round with the global estimate `estimate` (the
  /// relative residual) and `sum`, this rank at iteration k: true, with
  /// `result` marked (reason breakdown, a detail naming the rule), when
  /// every rank has swept the span in the current window. Local.
  bool stops(SolveResult& result, double estimate, const AsyncCheckSums& sum, long k,
             long stagnation_span, int ranks) {
    judged_ = false;
    if (!std::isfinite(estimate)) return false;  // no estimate yet; breakdowns stop elsewhere
    const bool low_level = estimate < stagnation_floor;
    const double margin = low_level ? 0.0 : stagnation_rate * static_cast<double>(stagnation_span);
    if (!started_ || low_level != low_level_ || estimate < (1.0 - margin) * start_ ||
        estimate > stale_rise_factor * start_) {
      started_ = true;
      ++windows_;
      low_level_ = low_level;
      start_ = low_ = high_ = estimate;
      since_ = k;
      return false;
    }
    low_ = std::min(low_, estimate);
    high_ = std::max(high_, estimate);
    if (sum[swept_span_value] < ranks - 0.5) return false;  // some rank has not swept that long
    judged_ = true;
    result.converged = false;
    result.reason = StopReason::breakdown;
    result.detail = low_level ? fmt::format(
                                    "stagnation at iteration {}: every {} made {} sweeps or more "
                                    "without the residual estimate falling below its smallest, "
                                    "{:.3e}{}",
                                    k, who_, span(stagnation_span), start_, rounding_level_causes)
                              : fmt::format(
                                    "stagnation at iteration {}: every {} made {} sweeps or more "
                                    "while the residual estimate did not fall below {:.6e} less "
                                    "{:.0e} of it (its value at iteration {}: on average less "
                                    "than {:.0e} of that value a sweep; since then it stayed "
                                    "between {:.6e} and {:.6e}){}",
                                    k, who_, span(stagnation_span), start_, margin, since_,
                                    stagnation_rate, low_, high_, stagnation_causes);
    return true;
  }

  /// The estimate that started the current window.
  double start() const { return start_; }

  /// The sweeps the current window asks of every rank (or thread).
  long span_for(long stagnation_span) const { return span(stagnation_span); }

 private:
  long span(long stagnation_span) const {
    return low_level_ ? stagnation_iterations : stagnation_span;
  }

  bool started_ = false;
  bool low_level_ = false;  ///< the window is below stagnation_floor
  double start_ = 0.0;      ///< the estimate that started the window
  double low_ = 0.0;        ///< the smallest estimate of the window
  double high_ = 0.0;       ///< its largest
  long since_ = 0;          ///< this rank's iteration at the window's start
  long windows_ = 0;
  bool judged_ = false;
  const char* who_;
};

/// A stagnation verdict is checked against the true residual of the
/// quiescent iterate: the estimate sums parts of different ages (ranks or
/// threads swept against old neighbour data, under load or
/// oversubscription), and a window that started at a dip far below the
/// iterate's residual can look like standing still, or like the rounding
/// level, while the iteration still converges. Refuted (the asynchronous
/// iteration goes on) when the true relative residual lies more than this
/// many times above the value that started the window: at a real fixed
/// point, or at the rounding level, fresh parts sum to about what the
/// stale ones did.
inline constexpr double stale_verdict_factor = 10.0;

/// How many stops on the estimate (below tol) the true residual may refute
/// before the next one is left to the synchronous confirmation
/// (finish_async): each refuted stop reopens the channels and resumes the
/// asynchronous iteration from the quiescent iterate, which costs a true
/// residual and the channels' setup; --max-iters and --max-time bound the
/// resumed iteration too.
inline constexpr long max_resumed_stops = 100;

/// Whether a stagnation verdict whose window started at `judged_start` is
/// refuted by the true relative residual `truth` (stale_verdict_factor).
inline bool stale_verdict(double truth, double judged_start) {
  return truth > stale_verdict_factor * judged_start;
}

/// This rank's part of a round: its residual^2, whether it has made
/// options.max_iters sweeps (k of them), whether it has run
/// options.max_time_s seconds since t0 (core::now_s), and whether it has
/// swept as long as `standstill` asks since the estimate last moved. Local.
inline AsyncCheckSums async_contribution(const JacobiOptions& options, long k, double t0,
                                         double local_r2, const AsyncStandstill& standstill) {
  AsyncCheckSums c{};
  c[residual_sq_value] = local_r2;
  c[at_max_iters_value] = k >= options.max_iters ? 1.0 : 0.0;
  c[over_time_value] =
      std::isfinite(options.max_time_s) && core::now_s() - t0 >= options.max_time_s ? 1.0 : 0.0;
  c[swept_span_value] = standstill.swept_span(k, options.stagnation_span) ? 1.0 : 0.0;
  return c;
}

/// The verdict of a completed round with the global `sum` over `ranks`
/// ranks (the same on every rank): true, with result.converged and
/// result.reason set, when the solve stops: the estimate `estimate` is
/// below options.tol ("tolerance"), not finite (breakdown),
/// divergence_factor times the smallest estimate of the solve or more
/// ("diverged", at round k of this rank), standing still (`standstill`:
/// a breakdown, its detail saying which rule), some rank has run
/// options.max_time_s ("max_time"), or every rank has made
/// options.max_iters sweeps ("max_iters": the limit counts the slowest
/// rank's sweeps, so a fast rank cannot end a solve its partners are still
/// progressing). With every rank at max_iters a non-finite estimate is a
/// max_iters stop, not a breakdown: with --max-iters 0 no rank has a
/// residual yet (its part is +inf); a true residual that is not finite
/// still ends the solve as a breakdown (confirm_convergence). Local.
inline bool async_check_stops(SolveResult& result, const JacobiOptions& options, long k,
                              const AsyncCheckSums& sum, double estimate, int ranks,
                              AsyncStandstill& standstill) {
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
  if (standstill.stops(result, estimate, sum, k, options.stagnation_span, ranks)) return true;
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
/// `iterate` is this rank's whole iterate (its halo included): a tail that
/// did not converge and ended with a larger true residual than the
/// asynchronous iterate's (a synchronous iteration that diverges where the
/// asynchronous one converged, as Schwarz without overlap may) gives it
/// back, and the detail says so. The decision is the same on every rank.
template <class TrueResidual, class SyncTail>
void finish_async(SolveResult& result, double tol, int final_sync, TrueResidual&& true_residual,
                  SyncTail&& sync_tail, std::span<double> iterate) {
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
    const double async_true = result.true_residual;
    const std::vector<double> saved(iterate.begin(), iterate.end());
    const SolveResult tail = sync_tail(n);
    const bool keep_async = !tail.converged && !(tail.true_residual <= async_true);
    if (keep_async) std::copy(saved.begin(), saved.end(), iterate.begin());
    result.final_sync_iterations = tail.iterations;
    result.residual_estimate = tail.residual_estimate;
    result.converged = tail.converged;
    result.true_residual = keep_async ? async_true : tail.true_residual;
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
    if (keep_async) {
      result.detail += fmt::format(
          "{}the iterate returned is the asynchronous iterations' (true residual {:.3e}), "
          "not the synchronous ones' ({:.3e})",
          result.detail.empty() ? "" : "; ", async_true, tail.true_residual);
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
