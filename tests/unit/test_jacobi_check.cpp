// What every asynchronous Jacobi shares (src/solvers/jacobi_check.hpp): the
// pace at which it refreshes its idle bound (idle_refresh_gap), the stop
// decision of a round (async_check_stops), and the end of the solve: the
// true residual and the synchronous tail (finish_async).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

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
  AsyncStandstill still;
  EXPECT_TRUE(async_check_stops(r, options, 7, sum, inf, 3, still));
  EXPECT_EQ(r.reason, StopReason::breakdown);
  EXPECT_FALSE(r.converged);
  r = {};
  sum[over_time_value] = 1.0;
  EXPECT_TRUE(async_check_stops(r, options, 7, sum, 1e-5, 3, still));  // tolerance before time
  EXPECT_EQ(r.reason, StopReason::tolerance);
  EXPECT_TRUE(r.converged);
  r = {};
  EXPECT_TRUE(async_check_stops(r, options, 7, sum, 1e-3, 3, still));
  EXPECT_EQ(r.reason, StopReason::max_time);
  r = {};
  sum[over_time_value] = 0.0;
  sum[at_max_iters_value] = 2.0;  // two ranks of three: the slowest goes on
  EXPECT_FALSE(async_check_stops(r, options, 7, sum, 1e-3, 3, still));
  sum[at_max_iters_value] = 3.0;
  EXPECT_TRUE(async_check_stops(r, options, 7, sum, 1e-3, 3, still));
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
  AsyncStandstill still;
  EXPECT_FALSE(async_check_stops(r, options, 3, sum, 0.8, 2, still));
  EXPECT_TRUE(async_check_stops(r, options, 900, sum, inf, 2, still));
  EXPECT_EQ(r.reason, StopReason::diverged);
  EXPECT_NE(r.detail.find("from 8.000e-01 at iteration 3 to inf at iteration 900"),
            std::string::npos)
      << r.detail;
  r.true_residual = inf;
  asyncsolve::solvers::confirm_convergence(r, options.tol);
  EXPECT_EQ(r.reason, StopReason::diverged);
  EXPECT_FALSE(r.converged);
  SolveResult nan_first;  // NaN at the first check: nothing finite before, a breakdown
  EXPECT_TRUE(async_check_stops(nan_first, options, 1, sum, std::nan(""), 2, still));
  EXPECT_EQ(nan_first.reason, StopReason::breakdown);
}

TEST(AsyncStandstill, EveryRankMustSweepTheSpanWithoutProgress) {
  // The estimate wanders (parts of different ages) without falling: the
  // solve stops only once every rank reports the span swept in one window.
  using namespace asyncsolve::solvers::detail;
  using asyncsolve::solvers::stagnation_iterations;
  const long span = 1000;
  AsyncStandstill still;
  AsyncCheckSums sum{};
  SolveResult r;
  EXPECT_FALSE(still.swept_span(5000, span));  // no window before a finite estimate
  EXPECT_FALSE(still.stops(r, std::numeric_limits<double>::infinity(), sum, 0, span, 2));
  EXPECT_FALSE(still.stops(r, 0.5, sum, 10, span, 2));  // the window starts at 10
  EXPECT_FALSE(still.swept_span(1009, span));
  EXPECT_TRUE(still.swept_span(1010, span));
  sum[swept_span_value] = 1.0;  // one rank of two (a straggler) has not swept it
  EXPECT_FALSE(still.stops(r, 0.52, sum, 1010, span, 2));
  sum[swept_span_value] = 2.0;
  EXPECT_TRUE(still.stops(r, 0.5000001, sum, 1020, span, 2));  // within 1e-6 of 0.5
  EXPECT_EQ(r.reason, StopReason::breakdown);
  EXPECT_FALSE(r.converged);
  EXPECT_NE(r.detail.find("every rank made 1000 sweeps or more while the residual estimate "
                          "did not fall below 5.000000e-01"),
            std::string::npos)
      << r.detail;
  EXPECT_NE(r.detail.find("between 5.000000e-01 and 5.200000e-01"), std::string::npos);
  // The rate is relative to the value that started the window, and says where.
  EXPECT_NE(r.detail.find("(its value at iteration 10: on average less than 1e-09 of that "
                          "value a sweep"),
            std::string::npos)
      << r.detail;
  // Progress by more than the margin starts a new window, whatever the ranks
  // reported for the old one.
  AsyncStandstill falling;
  SolveResult f;
  EXPECT_FALSE(falling.stops(f, 0.5, sum, 0, span, 2));
  EXPECT_FALSE(falling.stops(f, 0.4999, sum, 2000, span, 2));
  EXPECT_FALSE(falling.swept_span(2999, span));
  EXPECT_TRUE(falling.swept_span(3000, span));
  // Below stagnation_floor: no new smallest value in stagnation_iterations
  // sweeps (the rounding level), however large the span is above it.
  AsyncStandstill rounding;
  SolveResult g;
  EXPECT_FALSE(rounding.stops(g, 3e-16, sum, 100, 1'000'000, 2));
  EXPECT_TRUE(rounding.swept_span(100 + stagnation_iterations, 1'000'000));
  EXPECT_FALSE(rounding.stops(g, 2e-16, sum, 200, 1'000'000, 2));  // new smallest: a new window
  EXPECT_FALSE(rounding.swept_span(100 + stagnation_iterations, 1'000'000));
  EXPECT_TRUE(rounding.stops(g, 4e-16, sum, 1300, 1'000'000, 2));
  EXPECT_NE(g.detail.find("without the residual estimate falling below its smallest, 2.000e-16"),
            std::string::npos)
      << g.detail;
  EXPECT_NE(g.detail.find("which --tol is below"), std::string::npos);
}

TEST(AsyncStandstill, TheRoundsStopARankThatReportsTheSpan) {
  // async_contribution carries the rank's report, async_check_stops the verdict.
  using namespace asyncsolve::solvers::detail;
  asyncsolve::solvers::JacobiOptions options;
  options.tol = 1e-12;
  AsyncStandstill still;
  SolveResult r;
  AsyncCheckSums sum{};
  EXPECT_FALSE(async_check_stops(r, options, 1, sum, 0.3, 1, still));
  EXPECT_EQ(async_contribution(options, 900, 0.0, 0.09, still)[swept_span_value], 0.0);
  sum = async_contribution(options, 1001, 0.0, 0.09, still);
  EXPECT_EQ(sum[swept_span_value], 1.0);
  EXPECT_TRUE(async_check_stops(r, options, 1001, sum, 0.3, 1, still));
  EXPECT_EQ(r.reason, StopReason::breakdown);
}

TEST(AsyncStandstill, ARestartedEstimateStartsANewWindow) {
  // OpenMP's threads: a stop the true residual refuted restarts the estimate
  // from fresh parts, far above the stale value that started the window;
  // without a new window every sweep after it looked like standing still.
  using namespace asyncsolve::solvers::detail;
  const long span = 1000;
  AsyncCheckSums every{};
  every[swept_span_value] = 2.0;
  AsyncStandstill kept;
  SolveResult r;
  EXPECT_FALSE(kept.stops(r, 1.03e-6, every, 100, span, 2));  // stale, just above tol
  EXPECT_TRUE(kept.stops(r, 5e-5, every, 1200, span, 2));     // refuted: 5e-5 in truth
  AsyncStandstill restarted;
  SolveResult s;
  EXPECT_FALSE(restarted.stops(s, 1.03e-6, every, 100, span, 2));
  const long windows = restarted.windows();
  restarted.restart();
  EXPECT_FALSE(restarted.stops(s, 5e-5, every, 1200, span, 2));
  EXPECT_EQ(restarted.windows(), windows + 1);
  EXPECT_FALSE(restarted.swept_span(2199, span));
  EXPECT_TRUE(restarted.stops(s, 5e-5, every, 2200, span, 2));  // standing at 5e-5: a stop
}

TEST(AsyncStandstill, AnEstimateFarAboveTheDipThatStartedTheWindowStartsANewOne) {
  // OpenMP's threads under a load of 7: a window started at a stale dip of
  // 1.87e-4, the estimate rose to 5.8e-2 and fell slowly; the true residual
  // at the verdict was under stale_verdict_factor times the dip, so the
  // verdict stood on a converging iteration. A rise above stale_rise_factor
  // times the start measures progress from the honest level instead.
  using namespace asyncsolve::solvers::detail;
  const long span = 1000;
  AsyncCheckSums every{};
  every[swept_span_value] = 2.0;
  AsyncStandstill still;
  SolveResult r;
  EXPECT_FALSE(still.stops(r, 1.87e-4, every, 100, span, 2));  // the dip
  const long windows = still.windows();
  EXPECT_FALSE(still.stops(r, 5.8e-2, every, 1200, span, 2));  // 310 times above it
  EXPECT_EQ(still.windows(), windows + 1);
  EXPECT_EQ(still.start(), 5.8e-2);
  EXPECT_FALSE(still.stops(r, 0.9 * 5.8e-2, every, 1500, span, 2));  // falling: a new window
  EXPECT_TRUE(still.stops(r, 0.9 * 5.8e-2, every, 2500, span, 2));   // standing: a verdict
  AsyncStandstill lower;  // under stale_rise_factor times the start the window stays
  SolveResult q;
  EXPECT_FALSE(lower.stops(q, 1.87e-4, every, 100, span, 2));
  EXPECT_TRUE(lower.stops(q, 0.99 * stale_rise_factor * 1.87e-4, every, 1200, span, 2));
}

TEST(AsyncStandstill, AVerdictIsMarkedAndCheckedAgainstTheTrueResidual) {
  // The loop hands a verdict's window start to its caller (judged), which
  // measures the quiescent iterate's true residual: a window that started at
  // a dip of the estimate (parts of different ages) far below it is refuted
  // and the iteration resumes; at a real standstill the two agree.
  using namespace asyncsolve::solvers::detail;
  const long span = 1000;
  AsyncCheckSums every{};
  every[swept_span_value] = 2.0;
  AsyncStandstill still;
  SolveResult r;
  EXPECT_FALSE(still.stops(r, 5.8e-8, every, 100, span, 2));  // a dip starts the window
  EXPECT_FALSE(still.judged());
  EXPECT_TRUE(still.stops(r, 2.9e-6, every, 1200, span, 2));
  EXPECT_TRUE(still.judged());
  EXPECT_EQ(still.start(), 5.8e-8);
  EXPECT_TRUE(stale_verdict(1e-6, still.start()));   // the iterate: 17 times above
  EXPECT_FALSE(stale_verdict(3e-7, still.start()));  // 5 times: the verdict stands
  EXPECT_FALSE(stale_verdict(std::numeric_limits<double>::quiet_NaN(), still.start()));
  still.restart();
  EXPECT_FALSE(still.stops(r, 1e-6, every, 1300, span, 2));  // a new window, no verdict
  EXPECT_FALSE(still.judged());
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
  // The iterate: the asynchronous iterations leave 1s, a tail writes 9s.
  std::vector<double> x(3, 1.0);
  const auto tail = [&](bool converges) {
    return [&asked, &x, converges](long n) {
      asked = n;
      std::fill(x.begin(), x.end(), 9.0);
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
      r, tol, 50, [] { return 5e-5; }, tail(true), x);
  EXPECT_EQ(asked, -1);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.true_residual, 5e-5);
  // A stale estimate: the tail confirms it, at least confirm_iterations long.
  r = {};
  r.converged = true;
  r.reason = StopReason::tolerance;
  r.time_s = 2.0;
  finish_async(
      r, tol, 50, [] { return 3e-4; }, tail(true), x);
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
      r, tol, 50, [] { return 3e-4; }, tail(false), x);
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
      r, tol, 0, [] { return 3e-4; }, tail(false), x);
  EXPECT_EQ(asked, confirm_iterations);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.reason, StopReason::unconfirmed);
  EXPECT_EQ(r.final_sync_iterations, 12);
  EXPECT_NE(r.detail.find("7.000e-10"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("after 12 synchronous iterations"), std::string::npos) << r.detail;
  EXPECT_EQ(x, std::vector<double>(3, 9.0));  // the tail's iterate, the better one
  EXPECT_EQ(r.true_residual, 2e-4);
  // A tail that diverges: the solve diverged, with the tail's reason, and the
  // iterate returned is the asynchronous one, with its true residual.
  std::fill(x.begin(), x.end(), 1.0);
  r = {};
  r.converged = true;
  r.reason = StopReason::tolerance;
  finish_async(
      r, tol, 0, [] { return 3e-4; },
      [&x](long) {
        std::fill(x.begin(), x.end(), 9.0);
        SolveResult t;
        t.iterations = 4;
        t.true_residual = 1e7;
        mark_diverged(t, 1.0, 1, 1e7, 4, 1e6);
        return t;
      },
      x);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.reason, StopReason::diverged);
  EXPECT_EQ(r.detail.rfind("in the synchronous iterations after the asynchronous stop, the "
                           "residual grew from",
                           0),
            0U)
      << r.detail;
  EXPECT_EQ(x, std::vector<double>(3, 1.0));
  EXPECT_EQ(r.true_residual, 3e-4);
  EXPECT_NE(r.detail.find("; the iterate returned is the asynchronous iterations' (true "
                          "residual 3.000e-04), not the synchronous ones' (1.000e+07)"),
            std::string::npos)
      << r.detail;
  // A stale estimate whose confirmation ends worse than the asynchronous
  // iterate (not diverged, not converged): unconfirmed, the detail naming the
  // asynchronous iterate's true residual, which is kept.
  r = {};
  r.converged = true;
  r.reason = StopReason::tolerance;
  r.residual_estimate = 7e-10;
  finish_async(
      r, tol, 0, [] { return 1.5e-4; }, tail(false), x);
  EXPECT_EQ(r.reason, StopReason::unconfirmed);
  EXPECT_EQ(x, std::vector<double>(3, 1.0));
  EXPECT_EQ(r.true_residual, 1.5e-4);
  EXPECT_NE(r.detail.find("the true residual 1.500e-04 did not"), std::string::npos) << r.detail;
  // max_time: never a tail.
  asked = -1;
  r = {};
  r.reason = StopReason::max_time;
  finish_async(
      r, tol, 50, [] { return 3e-4; }, tail(true), x);
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
        r, tol, 50, [] { return 5e-5; }, tail(false), x);
    EXPECT_EQ(asked, -1);
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.reason, StopReason::tolerance);
    EXPECT_EQ(r.residual_estimate, 2e-4);
    EXPECT_NE(r.detail.find("2.000e-04"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("5.000e-05, met the tolerance"), std::string::npos) << r.detail;
  }
}

}  // namespace
