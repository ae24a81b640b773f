// Diagonal dominance decided on the exact sum of a row (ExactRowSum,
// src/solvers/jacobi_rho_dominance.hpp): what estimate_jacobi_rho's proof of
// rho < 1 (or = 1) rests on, where the rounded sum alone would misjudge.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>

#include "solvers/jacobi_rho_dominance.hpp"

using asyncsolve::solvers::detail::ExactRowSum;
using asyncsolve::solvers::detail::RowDominance;

namespace {

RowDominance dominance(std::initializer_list<double> off_diagonal, double diagonal) {
  ExactRowSum sum;
  for (const double v : off_diagonal) sum.add(v);
  return sum.compare(diagonal);
}

TEST(RowDominance, ExactSumsDecideExactly) {
  // A Laplacian's rows: six -1 around 6, two -1 around 2, and lighter ones.
  EXPECT_EQ(dominance({-1, -1, -1, -1, -1, -1}, 6.0), RowDominance::equal);
  EXPECT_EQ(dominance({-1, -1}, 2.0), RowDominance::equal);
  EXPECT_EQ(dominance({-1, -1}, -2.0), RowDominance::equal);  // magnitudes
  EXPECT_EQ(dominance({-1, -1, -1}, 4.0), RowDominance::strict);
  EXPECT_EQ(dominance({2.0}, 1.0), RowDominance::above);
  EXPECT_EQ(dominance({}, 1.0), RowDominance::strict);  // a row of its diagonal alone
  EXPECT_EQ(dominance({-0.25, -0.25, -0.25, -0.25}, 1.0), RowDominance::equal);
}

TEST(RowDominance, RoundingDoesNotHideWhatTheExactSumShows) {
  // 1 + 2^-60 rounds to 1, yet the row is heavier than a diagonal of 1
  EXPECT_EQ(dominance({1.0, std::ldexp(1.0, -60)}, 1.0), RowDominance::above);
  EXPECT_EQ(dominance({std::ldexp(1.0, -60), 1.0}, 1.0), RowDominance::above);
  // and lighter than 1 + 2^-52, the next double
  EXPECT_EQ(dominance({1.0, std::ldexp(1.0, -60)}, 1.0 + std::ldexp(1.0, -52)),
            RowDominance::strict);
  // 0.1 + 0.2 is more than 0.3 (as doubles): not dominant
  EXPECT_EQ(dominance({0.1, 0.2}, 0.3), RowDominance::above);
  // entries of either sign count by magnitude: 2^-60 and -2^-60 add up
  EXPECT_EQ(dominance({1.0, std::ldexp(1.0, -60), -std::ldexp(1.0, -60)}, 1.0),
            RowDominance::above);
}

}  // namespace
