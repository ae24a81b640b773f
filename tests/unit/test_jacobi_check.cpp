// The pace at which asynchronous Jacobi refreshes its idle bound
// (detail::idle_refresh_gap in src/solvers/jacobi_check.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

}  // namespace
