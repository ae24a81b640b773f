#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/stencil7.hpp"

using namespace asyncsolve;
using grid::Field;
using grid::Int3;

namespace {

void randomise(Field& f, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& v : f.storage()) v = dist(gen);
}

}  // namespace

TEST(Stencil7, HandCheckedSinglePoint) {
  // One interior point with neighbours 1..6 and centre 10.
  Field u({1, 1, 1}, 1);
  u(0, 0, 0) = 10;
  u(-1, 0, 0) = 1;
  u(1, 0, 0) = 2;
  u(0, -1, 0) = 3;
  u(0, 1, 0) = 4;
  u(0, 0, -1) = 5;
  u(0, 0, 1) = 6;
  Field out({1, 1, 1}, 1);
  ops::jacobi_sweep(u, out);
  EXPECT_DOUBLE_EQ(out(0, 0, 0), 21.0 / 6.0);
  // b - A u = 21 - 60 = -39.
  EXPECT_DOUBLE_EQ(ops::residual_norm_sq(u), 39.0 * 39.0);
  // The sweep never touches the output halo.
  EXPECT_EQ(out(-1, 0, 0), 0.0);
}

TEST(Stencil7, FastSweepMatchesReferenceBitForBit) {
  for (const Int3 n :
       {Int3{1, 1, 1}, Int3{7, 5, 3}, Int3{33, 17, 9}, Int3{64, 8, 8}, Int3{13, 1, 21}}) {
    Field u(n, 1);
    randomise(u, 42);
    Field fast(n, 1);
    Field ref(n, 1);
    ops::jacobi_sweep(u, fast);
    ops::jacobi_sweep_ref(u, ref);
    for (std::size_t i = 0; i < fast.storage_size(); ++i) {
      ASSERT_EQ(fast.storage()[i], ref.storage()[i]) << "at storage index " << i;
    }
  }
}

TEST(Stencil7, FastResidualMatchesReference) {
  for (const Int3 n : {Int3{1, 1, 1}, Int3{7, 5, 3}, Int3{33, 17, 9}, Int3{100, 3, 2}}) {
    Field u(n, 1);
    randomise(u, 7);
    const double fast = ops::residual_norm_sq(u);
    const double ref = ops::residual_norm_sq_ref(u);
    EXPECT_NEAR(fast, ref, 1e-12 * ref);
  }
}

TEST(Stencil7, ResidualOfExactSolutionIsZero) {
  // u = 1 everywhere, halo included, solves the ones problem exactly.
  Field u({9, 8, 7}, 1);
  u.fill(1.0);
  EXPECT_EQ(ops::residual_norm_sq(u), 0.0);
  // A linear function is harmonic for the 7-point Laplacian too.
  for (int k = -1; k <= 7; ++k)
    for (int j = -1; j <= 8; ++j)
      for (int i = -1; i <= 9; ++i) u(i, j, k) = 0.5 * i - 0.25 * j + 2.0 * k;
  EXPECT_NEAR(ops::residual_norm_sq(u), 0.0, 1e-20);
}

TEST(Stencil7, CopyInteriorLeavesHaloAlone) {
  Field a({4, 4, 4}, 1);
  Field b({4, 4, 4}, 1);
  a.fill(3.0);
  b.fill(-1.0);
  ops::copy_interior(a, b);
  EXPECT_EQ(b(0, 0, 0), 3.0);
  EXPECT_EQ(b(3, 3, 3), 3.0);
  EXPECT_EQ(b(-1, 0, 0), -1.0);
  EXPECT_EQ(b(0, 4, 0), -1.0);
}

TEST(Stencil7, FastSweepMatchesReferenceOnFieldsLargerThanTheCache) {
  // Two fields of about 66 MiB: past the last-level cache of common CPUs, so
  // the streaming-store path of jacobi_sweep runs where it exists.
  const Int3 n{33, 501, 501};
  Field u(n, 1);
  randomise(u, 3);
  Field fast(n, 1);
  Field ref(n, 1);
  ops::jacobi_sweep(u, fast);
  ops::jacobi_sweep_ref(u, ref);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < fast.storage_size(); ++i) {
    differing += fast.storage()[i] != ref.storage()[i] ? 1 : 0;
  }
  EXPECT_EQ(differing, 0u);
  const double r_fast = ops::residual_norm_sq(u);
  const double r_ref = ops::residual_norm_sq_ref(u);
  EXPECT_NEAR(r_fast, r_ref, 1e-12 * r_ref);
}

TEST(Stencil7, SweepInPiecesEqualsTheWholeSweep) {
  const Int3 n{19, 7, 11};
  Field u(n, 1);
  randomise(u, 11);
  Field whole(n, 1);
  Field pieces(n, 1);
  ops::jacobi_sweep(u, whole);
  for (int k = 0; k < n[2]; k += 3) ops::jacobi_sweep_planes(u, pieces, k, std::min(k + 3, n[2]));
  for (std::size_t i = 0; i < whole.storage_size(); ++i)
    ASSERT_EQ(whole.storage()[i], pieces.storage()[i]);
  ops::jacobi_sweep_planes(u, pieces, 5, 5);  // empty range: no-op
}
