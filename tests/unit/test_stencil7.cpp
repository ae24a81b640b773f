#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

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

namespace {

/// Bits of a double, so that EXPECT_EQ reports a difference in the last bit.
std::uint64_t bits(double v) { return std::bit_cast<std::uint64_t>(v); }

bool same_storage(const Field& a, const Field& b) {
  for (std::size_t i = 0; i < a.storage_size(); ++i)
    if (bits(a.storage()[i]) != bits(b.storage()[i])) return false;
  return true;
}

/// Cells where a field swept by a fast kernel (`fast`) and one swept by the
/// reference (`ref`), from the same start, differ in a way the kernels'
/// contract does not allow: anywhere but u_new's x-face halo cells (i < 0
/// or i >= nx of an interior row), and there unless `fast` holds u's value
/// (ops::jacobi_sweep may give them u's values).
std::size_t cells_off_contract(const Field& fast, const Field& ref, const Field& u) {
  const Int3& n = u.interior();
  const int h = u.halo();
  std::size_t off = 0;
  for (int k = -h; k < n[2] + h; ++k)
    for (int j = -h; j < n[1] + h; ++j)
      for (int i = -h; i < n[0] + h; ++i) {
        const double got = fast(i, j, k);
        if (bits(got) == bits(ref(i, j, k))) continue;
        const bool x_halo = (i < 0 || i >= n[0]) && j >= 0 && j < n[1] && k >= 0 && k < n[2];
        if (!x_halo || bits(got) != bits(u(i, j, k))) ++off;
      }
  return off;
}

}  // namespace

TEST(Stencil7, FastSweepMatchesReferenceOnFieldsLargerThanTheCache) {
  // Two fields of about 66 MiB: past the last-level cache of common CPUs, so
  // the streaming-store path of jacobi_sweep runs where it exists.
  const Int3 n{33, 501, 501};
  Field u(n, 1);
  randomise(u, 3);
  Field fast(n, 1);
  Field ref(n, 1);
  fast.fill(-7.0);  // halo cells the sweep must leave alone, unless u's
  ref.fill(-7.0);
  ops::jacobi_sweep(u, fast);
  ops::jacobi_sweep_ref(u, ref);
  EXPECT_EQ(cells_off_contract(fast, ref, u), 0u);
  // The interior, bit for bit.
  std::size_t differing = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) differing += fast(i, j, k) != ref(i, j, k) ? 1 : 0;
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

TEST(Stencil7, FusedSweepResidualIsTheSweepAndThePlainResidualBitForBit) {
  // Odd sizes put rows at every alignment (the peel), short rows have no
  // vector at all, and the last grid is larger than common last-level caches
  // (the streaming-store path).
  for (const Int3 n :
       {Int3{1, 1, 1}, Int3{7, 5, 3}, Int3{8, 4, 4}, Int3{9, 3, 2}, Int3{33, 17, 9}, Int3{64, 8, 8},
        Int3{13, 1, 21}, Int3{100, 3, 2}, Int3{203, 5, 4}, Int3{33, 501, 501}}) {
    Field u(n, 1);
    randomise(u, 5);
    Field fused(n, 1);
    Field plain(n, 1);
    Field ref(n, 1);
    Field fused_ref(n, 1);
    const double r_fused = ops::jacobi_sweep_residual(u, fused);
    ops::jacobi_sweep(u, plain);
    ops::jacobi_sweep_ref(u, ref);
    const double r_fused_ref = ops::jacobi_sweep_residual_ref(u, fused_ref);
    EXPECT_EQ(cells_off_contract(fused, ref, u), 0u) << "fused sweep differs from the reference";
    EXPECT_EQ(cells_off_contract(plain, ref, u), 0u);
    EXPECT_TRUE(same_storage(fused, plain));
    EXPECT_TRUE(same_storage(fused_ref, ref));
    EXPECT_EQ(bits(r_fused), bits(ops::residual_norm_sq(u)))
        << n[0] << "x" << n[1] << "x" << n[2] << ": " << r_fused << " vs "
        << ops::residual_norm_sq(u);
    EXPECT_EQ(bits(r_fused_ref), bits(ops::residual_norm_sq_ref(u)));
    EXPECT_NEAR(r_fused, r_fused_ref, 1e-12 * r_fused_ref);
  }
}

TEST(Stencil7, FusedSweepResidualInPlanesAndBoxes) {
  const Int3 n{19, 7, 11};
  Field u(n, 1);
  randomise(u, 13);
  Field whole(n, 1);
  Field pieces(n, 1);
  ops::jacobi_sweep(u, whole);
  for (int k = 0; k < n[2]; k += 3) {
    const int end = std::min(k + 3, n[2]);
    EXPECT_EQ(bits(ops::jacobi_sweep_residual_planes(u, pieces, k, end)),
              bits(ops::residual_norm_sq_planes(u, k, end)));
  }
  EXPECT_TRUE(same_storage(whole, pieces));
  // Boxes that tile the block along y: the same field, the same residual up
  // to the order of the sum.
  Field boxes(n, 1);
  double total = 0.0;
  for (int j = 0; j < n[1]; j += 2) {
    const grid::Box box{{0, j, 0}, {n[0], std::min(j + 2, n[1]), n[2]}};
    total += ops::jacobi_sweep_residual_box(u, boxes, box);
  }
  EXPECT_TRUE(same_storage(whole, boxes));
  EXPECT_NEAR(total, ops::residual_norm_sq_ref(u), 1e-12 * total);
  EXPECT_EQ(ops::jacobi_sweep_residual_planes(u, pieces, 4, 4), 0.0);  // empty range
  EXPECT_EQ(ops::jacobi_sweep_residual_box(u, pieces, grid::Box{{0, 0, 0}, {0, 0, 0}}), 0.0);
}

TEST(Stencil7, FusedResidualIsThatOfTheIterateRead) {
  // b - A u = 6 (u_new - u) on every interior point: the residual returned
  // is that of u, the field read, not of u_new.
  const Int3 n{6, 5, 4};
  Field u(n, 1);
  randomise(u, 21);
  Field u_new(n, 1);
  const double r2 = ops::jacobi_sweep_residual(u, u_new);
  double via_update = 0.0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const double d = 6.0 * (u_new(i, j, k) - u(i, j, k));
        via_update += d * d;
      }
  EXPECT_NEAR(r2, via_update, 1e-12 * r2);
}

TEST(Stencil7, EveryVariantMatchesTheReference) {
  // Rows of every length modulo the vector widths (4 and 8), narrower than a
  // vector, and the last two grids larger than common last-level caches (the
  // streaming stores, and the choice between cached and streamed passes).
  const std::vector<Int3> grids{{1, 1, 1},      {3, 2, 2},      {4, 3, 3},  {5, 4, 3},
                                {7, 5, 3},      {17, 6, 5},     {64, 8, 8}, {203, 5, 4},
                                {33, 501, 501}, {202, 201, 103}};
  std::vector<double> residual_of_portable;
  for (const ops::Stencil7Kernel kernel : ops::stencil7_kernels()) {
    if (kernel == ops::Stencil7Kernel::automatic) continue;
    ops::stencil7_set_kernel(kernel);
    EXPECT_EQ(ops::stencil7_kernel(Field({2, 2, 2}, 1)), kernel);
    const std::string name(ops::stencil7_kernel_name(kernel));
    for (std::size_t g = 0; g < grids.size(); ++g) {
      const Int3 n = grids[g];
      const std::string at = name + " " + std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" +
                             std::to_string(n[2]);
      Field u(n, 1);
      randomise(u, 17 + static_cast<unsigned>(g));
      Field sweep(n, 1);
      Field fused(n, 1);
      Field ref(n, 1);
      sweep.fill(-7.0);  // halo cells the kernels must leave alone, unless u's
      fused.fill(-7.0);
      ref.fill(-7.0);
      ops::jacobi_sweep(u, sweep);
      const double r_fused = ops::jacobi_sweep_residual(u, fused);
      ops::jacobi_sweep_ref(u, ref);
      EXPECT_EQ(cells_off_contract(sweep, ref, u), 0u) << at;
      EXPECT_EQ(cells_off_contract(fused, ref, u), 0u) << at;
      const double r = ops::residual_norm_sq(u);
      EXPECT_EQ(bits(r_fused), bits(r)) << at;
      const double r_ref = ops::residual_norm_sq_ref(u);
      EXPECT_NEAR(r, r_ref, 1e-12 * r_ref) << at;
      // portable and stream sum in the same order.
      if (kernel == ops::Stencil7Kernel::portable) residual_of_portable.push_back(r);
      if (kernel == ops::Stencil7Kernel::stream) {
        EXPECT_EQ(bits(r), bits(residual_of_portable[g])) << at;
      }
    }
    const auto used = ops::stencil7_kernels_used();
    EXPECT_NE(std::find(used.begin(), used.end(), kernel), used.end()) << name;
  }
  ops::stencil7_set_kernel(ops::Stencil7Kernel::automatic);
}

TEST(Stencil7, VariantsNotBuiltAreRefusedAndAutoMeasuresOnce) {
  const auto built = ops::stencil7_kernels();
  ASSERT_FALSE(built.empty());
  EXPECT_EQ(built.front(), ops::Stencil7Kernel::automatic);
  for (const auto kernel : {ops::Stencil7Kernel::stream, ops::Stencil7Kernel::avx512}) {
    if (std::find(built.begin(), built.end(), kernel) == built.end()) {
      EXPECT_THROW(ops::stencil7_set_kernel(kernel), std::invalid_argument);
    }
  }
  EXPECT_EQ(ops::stencil7_kernel_name(ops::Stencil7Kernel::automatic), "auto");
  ops::stencil7_set_kernel(ops::Stencil7Kernel::automatic);
  const Field u({21, 13, 9}, 1);
  const ops::Stencil7Kernel chosen = ops::stencil7_kernel(u);
  EXPECT_NE(chosen, ops::Stencil7Kernel::automatic);
  EXPECT_NE(std::find(built.begin(), built.end(), chosen), built.end());
  for (int call = 0; call < 3; ++call) EXPECT_EQ(ops::stencil7_kernel(u), chosen);  // kept
}
