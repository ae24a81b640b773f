#include <gtest/gtest.h>

#include <cmath>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/grid/problem.hpp"

using namespace asyncsolve::grid;
using asyncsolve::core::InputError;

TEST(Problem, PlumeSourceIsAGaussianInsideTheBottomCircle) {
  const auto p = make_problem("plume", {});
  const Int3 n{9, 9, 9};  // h = 0.1
  // Centre of the bottom plane: exp(0) = 1.
  EXPECT_DOUBLE_EQ(p->boundary_value({5, 5, 0}, n), 1.0);
  // (0.3, 0.5): r^2 = 0.04.
  EXPECT_DOUBLE_EQ(p->boundary_value({3, 5, 0}, n), std::exp(-0.04));
  // Outside the circle (corner region) and on the other faces: zero.
  EXPECT_EQ(p->boundary_value({1, 1, 0}, n), 0.0);
  EXPECT_EQ(p->boundary_value({5, 5, 10}, n), 0.0);
  EXPECT_EQ(p->boundary_value({0, 5, 5}, n), 0.0);
  EXPECT_EQ(p->initial_value(), 0.0);
  EXPECT_FALSE(p->exact_value({1, 1, 1}, n).has_value());
}

TEST(Problem, PlumeOffsetShiftsBoundaryAndInitialGuess) {
  const auto p = make_problem("plume", {1.0});
  const Int3 n{9, 9, 9};
  EXPECT_DOUBLE_EQ(p->boundary_value({5, 5, 0}, n), 2.0);
  EXPECT_DOUBLE_EQ(p->boundary_value({5, 5, 10}, n), 1.0);
  EXPECT_DOUBLE_EQ(p->initial_value(), 1.0);
}

TEST(Problem, OnesHasExactSolutionOne) {
  const auto p = make_problem("ones", {});
  EXPECT_EQ(p->boundary_value({0, 3, 3}, {5, 5, 5}), 1.0);
  EXPECT_EQ(p->initial_value(), 0.0);
  EXPECT_EQ(p->exact_value({2, 2, 2}, {5, 5, 5}), 1.0);
}

TEST(Problem, RejectsUnknownNamesAndMisplacedOffset) {
  EXPECT_THROW(make_problem("poisson", {}), InputError);
  EXPECT_THROW(make_problem("ones", {0.5}), InputError);
  EXPECT_THROW(make_problem("plume", {std::nan("")}), InputError);
}
