// What every asynchronous Jacobi shares (src/solvers/jacobi_check.hpp): the
// pace at which it refreshes its idle bound (idle_refresh_gap), the stop
// decision of a round (async_check_stops), and the end of the solve: the
// true residual and the synchronous tail (finish_async).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "asyncsolve/solvers/norm.hpp"
#include "solvers/jacobi_check.hpp"

namespace {

using asyncsolve::solvers::detail::idle_refresh_gap;
using asyncsolve::solvers::detail::idle_refresh_max;
using asyncsolve::solvers::detail::idle_refresh_min;

TEST(IdleRefreshGap, MinimumWithoutTwoFallingRefreshesAboveTheBound) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(idle_refresh_gap(inf, -1, 1.0, 0, 1e-6), idle_refresh_min);  // first refresh
  EXPECT_EQ(idle_refresh_gap(inf, 0, 1.0, 4, 1e-6), idle_refresh_min);   // no finite previous one
  EXPECT_EQ(idle_refresh_gap(1.0, 0, 1.0, 4, 1e-6), idle_refresh_min);   // not falling
  EXPECT_EQ(idle_refresh_gap(1.0, 0, 2.0, 4, 1e-6), idle_refresh_min);   // rising (news)
  EXPECT_EQ(idle_refresh_gap(1.0, 0, 1e-7, 4, 1e-6), idle_refresh_min);  // below: it idles
  EXPECT_EQ(idle_refresh_gap(1.0, 4, 0.5, 4, 1e-6), idle_refresh_min);   // same iteration
  EXPECT_EQ(idle_refresh_gap(1.0, 0, 0.5, 4, 0.0), idle_refresh_min);    // no bound
}

TEST(IdleRefreshGap, HalfThePredictedSweepsWithinTheLimits) {
  // Halved every 10 sweeps: 2^-6 below 0.5 is 60 sweeps away, refresh in 30.
  EXPECT_EQ(idle_refresh_gap(1.0, 0, 0.5, 10, 0.5 * std::pow(2.0, -6)), 30);
  // Nearly there: 10 sweeps away, but not sooner than the minimum.
  EXPECT_EQ(idle_refresh_gap(1.0, 0, 0.5, 10, 0.25), idle_refresh_min + 1);
  EXPECT_EQ(idle_refresh_gap(1.0, 0, 0.5, 10, 0.4), idle_refresh_min);
  // A slow decay far above the bound (a straggler's block): the maximum.
  EXPECT_EQ(idle_refresh_gap(1.0, 100, 0.99, 104, 1e-12), idle_refresh_max);
}

using asyncsolve::solvers::SolveResult;
using asyncsolve::solvers::StopReason;

TEST(AsyncCheckStops, BreakdownThenToleranceThenTimeThenEveryRankAtMaxIters) {
  using namespace asyncsolve::solvers::detail;
  asyncsolve::solvers::JacobiOptions options;
  options.tol = 1e-4;
  const double inf = std::numeric_limits<double>::infinity();
  AsyncCheckSums sum{};
  SolveResult r;
  EXPECT_TRUE(async_check_stops(r, options, 7, sum, inf, 3));
  EXPECT_EQ(r.reason, StopReason::breakdown);
  EXPECT_FALSE(r.converged);
  r = {};
  sum[over_time_value] = 1.0;
  EXPECT_TRUE(async_check_stops(r, options, 7, sum, 1e-5, 3));  // tolerance before time
  EXPECT_EQ(r.reason, StopReason::tolerance);
  EXPECT_TRUE(r.converged);
  r = {};
  EXPECT_TRUE(async_check_stops(r, options, 7, sum, 1e-3, 3));
  EXPECT_EQ(r.reason, StopReason::max_time);
  r = {};
  sum[over_time_value] = 0.0;
  sum[at_max_iters_value] = 2.0;  // two ranks of three: the slowest goes on
  EXPECT_FALSE(async_check_stops(r, options, 7, sum, 1e-3, 3));
  sum[at_max_iters_value] = 3.0;
  EXPECT_TRUE(async_check_stops(r, options, 7, sum, 1e-3, 3));
  EXPECT_EQ(r.reason, StopReason::max_iters);
}

TEST(AsyncCheckStops, AnEstimateThatOverflowsAfterAFiniteOneHasDiverged) {
  // A diverging iteration whose round spans hundreds of sweeps (a crowded
  // node) sees 0.8, then inf: divergence, not a breakdown, and the
  // non-finite true residual of its iterate does not turn it into one.
  using namespace asyncsolve::solvers::detail;
  asyncsolve::solvers::JacobiOptions options;
  options.tol = 1e-4;
  const double inf = std::numeric_limits<double>::infinity();
  AsyncCheckSums sum{};
  SolveResult r;
  EXPECT_FALSE(async_check_stops(r, options, 3, sum, 0.8, 2));
  EXPECT_TRUE(async_check_stops(r, options, 900, sum, inf, 2));
  EXPECT_EQ(r.reason, StopReason::diverged);
  EXPECT_NE(r.detail.find("from 8.000e-01 at iteration 3 to inf at iteration 900"),
            std::string::npos)
      << r.detail;
  r.true_residual = inf;
  asyncsolve::solvers::confirm_convergence(r, options.tol);
  EXPECT_EQ(r.reason, StopReason::diverged);
  EXPECT_FALSE(r.converged);
  SolveResult nan_first;  // NaN at the first check: nothing finite before, a breakdown
  EXPECT_TRUE(async_check_stops(nan_first, options, 1, sum, std::nan(""), 2));
  EXPECT_EQ(nan_first.reason, StopReason::breakdown);
}

TEST(CheckDivergence, GrowthAboveTheFloorOnlyStopsTheSolve) {
  using asyncsolve::solvers::check_divergence;
  using asyncsolve::solvers::StopReason;
  {  // wandering at the roundoff floor: 1e-22, then 1e-16 (1e6 times) is no divergence
    asyncsolve::solvers::SolveResult r;
    EXPECT_FALSE(check_divergence(r, 1e-22, 10));
    EXPECT_FALSE(check_divergence(r, 1e-16, 20));
    EXPECT_FALSE(check_divergence(r, 1e-9, 30));
    EXPECT_EQ(r.reason, StopReason::none);
    EXPECT_EQ(r.best_iteration, 10);
  }
  {  // from 1e-3 to 1e4 and from the floor to above it: divergence
    asyncsolve::solvers::SolveResult r;
    EXPECT_FALSE(check_divergence(r, 1e-3, 5));
    EXPECT_FALSE(check_divergence(r, 9e2, 6));
    EXPECT_TRUE(check_divergence(r, 1e4, 7));
    EXPECT_EQ(r.reason, StopReason::diverged);
    EXPECT_FALSE(r.converged);
    asyncsolve::solvers::SolveResult f;
    EXPECT_FALSE(check_divergence(f, 1e-22, 1));
    EXPECT_TRUE(check_divergence(f, 1e-7, 2));
  }
  {  // asynchronous Jacobi's upper bound: 1.5e-9, then a bound of 0.97 is no divergence
    using asyncsolve::solvers::async_divergence_floor;
    asyncsolve::solvers::SolveResult r;
    EXPECT_FALSE(check_divergence(r, 1.5e-9, 5000, async_divergence_floor));
    EXPECT_FALSE(check_divergence(r, 0.97, 5000, async_divergence_floor));
    EXPECT_TRUE(check_divergence(r, 11.0, 5100, async_divergence_floor));
  }
}

TEST(FinishAsync, TailOnlyWhereTheStopNeedsOneAndItsOutcomeWins) {
  using asyncsolve::solvers::detail::confirm_iterations;
  using asyncsolve::solvers::detail::finish_async;
  const double tol = 1e-4;
  long asked = -1;
  const auto tail = [&](bool converges) {
    return [&asked, converges](long n) {
      asked = n;
      SolveResult t;
      t.iterations = 12;
      t.converged = converges;
      t.reason = converges ? StopReason::tolerance : StopReason::max_iters;
      t.true_residual = converges ? 5e-5 : 2e-4;
      t.residual_estimate = t.true_residual;
      t.time_s = 1.0;
      t.sweep_bytes = 100.0;
      return t;
    };
  };
  // Met tol and confirmed by the true residual: no tail.
  SolveResult r;
  r.converged = true;
  r.reason = StopReason::tolerance;
  finish_async(
      r, tol, 50, [] { return 5e-5; }, tail(true));
  EXPECT_EQ(asked, -1);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.true_residual, 5e-5);
  // A stale estimate: the tail confirms it, at least confirm_iterations long.
  r = {};
  r.converged = true;
  r.reason = StopReason::tolerance;
  r.time_s = 2.0;
  finish_async(
      r, tol, 50, [] { return 3e-4; }, tail(true));
  EXPECT_EQ(asked, confirm_iterations);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.reason, StopReason::tolerance);
  EXPECT_EQ(r.final_sync_iterations, 12);
  EXPECT_EQ(r.residual_estimate, 5e-5);
  EXPECT_EQ(r.time_s, 3.0);
  // max_iters with --final-sync: the tail runs that long; it does not converge.
  asked = -1;
  r = {};
  r.reason = StopReason::max_iters;
  finish_async(
      r, tol, 50, [] { return 3e-4; }, tail(false));
  EXPECT_EQ(asked, 50);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.reason, StopReason::final_sync);
  // A stale estimate the tail does not confirm: "unconfirmed", naming the
  // stale estimate and the tail, not "final_sync" (--final-sync was 0).
  asked = -1;
  r = {};
  r.converged = true;
  r.reason = StopReason::tolerance;
  r.residual_estimate = 7e-10;
  finish_async(
      r, tol, 0, [] { return 3e-4; }, tail(false));
  EXPECT_EQ(asked, confirm_iterations);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.reason, StopReason::unconfirmed);
  EXPECT_EQ(r.final_sync_iterations, 12);
  EXPECT_NE(r.detail.find("7.000e-10"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("after 12 synchronous iterations"), std::string::npos) << r.detail;
  // A tail that diverges: the solve diverged, with the tail's reason.
  r = {};
  r.converged = true;
  r.reason = StopReason::tolerance;
  finish_async(
      r, tol, 0, [] { return 3e-4; },
      [](long) {
        SolveResult t;
        t.iterations = 4;
        t.true_residual = 1e7;
        mark_diverged(t, 1.0, 1, 1e7, 4, 1e6);
        return t;
      });
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.reason, StopReason::diverged);
  EXPECT_EQ(r.detail.rfind("in the synchronous iterations after the asynchronous stop, the "
                           "residual grew from",
                           0),
            0U)
      << r.detail;
  // max_time: never a tail.
  asked = -1;
  r = {};
  r.reason = StopReason::max_time;
  finish_async(
      r, tol, 50, [] { return 3e-4; }, tail(true));
  EXPECT_EQ(asked, -1);
  EXPECT_EQ(r.reason, StopReason::max_time);
  // max_iters or max_time with a lagging estimate, and a returned iterate that
  // meets tol: converged (a synchronous check of it would have found so), with
  // no tail; it was reported "NOT converged (max_iters)" with a true residual
  // below tol.
  for (const StopReason stop : {StopReason::max_iters, StopReason::max_time}) {
    asked = -1;
    r = {};
    r.reason = stop;
    r.residual_estimate = 2e-4;
    finish_async(
        r, tol, 50, [] { return 5e-5; }, tail(false));
    EXPECT_EQ(asked, -1);
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.reason, StopReason::tolerance);
    EXPECT_EQ(r.residual_estimate, 2e-4);
    EXPECT_NE(r.detail.find("2.000e-04"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("5.000e-05, met the tolerance"), std::string::npos) << r.detail;
  }
}

}  // namespace
