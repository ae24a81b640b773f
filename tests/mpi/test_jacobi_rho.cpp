// The bounds of rho(|D^-1 (A - D)|) on 1, 2, 3, 4 and 8 ranks
// (src/solvers/jacobi_rho*.cpp): what is proven, and how (diagonal
// dominance, or the power iterates' Collatz-Wielandt bounds), on matrices
// whose radius is known: weakly dominant Laplacians (rho < 1, rho = 1 with
// Neumann rows), a chain with rho ~ 0.9 hiding one 2 x 2 block with
// rho = 1.1 (the estimate alone settles at 0.9 in two iterations), rho = 2,
// and a matrix that is not dominant yet has rho < 1.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/solvers/jacobi_rho.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

using namespace asyncsolve;
using solvers::RhoProof;
using solvers::RhoVerdict;

namespace {

/// The entries (column, value) of global row i.
using RowFunction = std::function<std::vector<std::pair<std::int64_t, double>>(std::int64_t)>;

/// A matrix of n rows, each rank owning a contiguous share, from `row`.
sparse::DistMatrix distribute(std::int64_t n, const RowFunction& row) {
  const par::Comm w = par::Comm::view(MPI_COMM_WORLD);
  const std::int64_t first = n * w.rank() / w.size();
  const std::int64_t last = n * (w.rank() + 1) / w.size();
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  for (std::int64_t i = first; i < last; ++i) {
    for (const auto& [c, v] : row(i)) {
      col.push_back(c);
      val.push_back(v);
    }
    row_ptr.push_back(static_cast<std::int64_t>(col.size()));
  }
  return sparse::DistMatrix::from_rows(w, n, {row_ptr, col, val});
}

/// The bounds of `m`'s radius (collective).
solvers::JacobiRho bounds(const sparse::DistMatrix& m) {
  const ops::CsrOperator op(m);
  return solvers::estimate_jacobi_rho(m, op);
}

/// A tridiagonal row: a on the diagonal, b beside it (where the chain
/// [first, last) goes on).
std::vector<std::pair<std::int64_t, double>> chain_row(std::int64_t i, std::int64_t first,
                                                       std::int64_t last, double a, double b) {
  std::vector<std::pair<std::int64_t, double>> r;
  if (i > first) r.emplace_back(i - 1, b);
  r.emplace_back(i, a);
  if (i + 1 < last) r.emplace_back(i + 1, b);
  return r;
}

// 1-D Dirichlet Laplacian: interior rows exactly as heavy as their diagonal,
// the two ends strictly heavier; rho = cos(pi / (n + 1)) < 1, too close to 1
// for 1000 power iterations to show, proven by dominance.
TEST(JacobiRho, DirichletLaplacianIsBelowOneByDominance) {
  const std::int64_t n = 4000;
  sparse::DistMatrix m = distribute(n, [&](std::int64_t i) { return chain_row(i, 0, n, 2, -1); });
  const solvers::JacobiRho r = bounds(m);
  EXPECT_EQ(r.verdict, RhoVerdict::below_one);
  EXPECT_EQ(r.proof, RhoProof::dominance);
  EXPECT_LE(r.upper_bound, 1.0);
  EXPECT_LE(r.lower_bound, std::cos(M_PI / (n + 1)));
  m.free();
}

// The same rows with Neumann ends (each end row 1, -1): M is stochastic,
// rho = 1 exactly, proven by dominance (no row is strictly heavier).
TEST(JacobiRho, NeumannLaplacianIsOneByDominance) {
  const std::int64_t n = 300;
  sparse::DistMatrix m = distribute(
      n, [&](std::int64_t i) { return chain_row(i, 0, n, i == 0 || i == n - 1 ? 1.0 : 2.0, -1); });
  const solvers::JacobiRho r = bounds(m);
  EXPECT_EQ(r.verdict, RhoVerdict::at_least_one);
  EXPECT_EQ(r.proof, RhoProof::dominance);
  EXPECT_EQ(r.lower_bound, 1.0);
  EXPECT_EQ(r.upper_bound, 1.0);
  m.free();
}

// Two Laplacian chains, one with Dirichlet ends and one closed on itself (a
// ring: every row exactly as heavy as its diagonal, reaching no heavier
// row): rho = 1, the ring's rows form the closed stochastic set.
TEST(JacobiRho, AClosedRingKeepsRhoAtOne) {
  const std::int64_t half = 200;
  sparse::DistMatrix m = distribute(2 * half, [&](std::int64_t i) {
    if (i < half) return chain_row(i, 0, half, 2, -1);
    std::vector<std::pair<std::int64_t, double>> r{
        {half + (i - half + half - 1) % half, -1}, {i, 2}, {half + (i - half + 1) % half, -1}};
    return r;
  });
  const solvers::JacobiRho r = bounds(m);
  EXPECT_EQ(r.verdict, RhoVerdict::at_least_one);
  EXPECT_EQ(r.proof, RhoProof::dominance);
  m.free();
}

// The chain of rho ~ 0.9 (|b| / a = 0.45 on each side) and a 2 x 2 block
// with rho = 1.1 at its end: the power estimate settles near 0.9 while the
// block's share of the iterate is still small; the cut lower bound finds
// the block once it dominates: rho >= 1 proven.
TEST(JacobiRho, ABlockWithRhoAboveOneHiddenInALongChainIsFound) {
  const std::int64_t chain = 20000;
  sparse::DistMatrix m = distribute(chain + 2, [&](std::int64_t i) {
    if (i < chain) return chain_row(i, 0, chain, 1.0, -0.45);
    return chain_row(i, chain, chain + 2, 1.0, -1.1);
  });
  const solvers::JacobiRho r = bounds(m);
  EXPECT_EQ(r.verdict, RhoVerdict::at_least_one);
  EXPECT_EQ(r.proof, RhoProof::bounds);
  EXPECT_GE(r.lower_bound, 1.0);
  EXPECT_LE(r.lower_bound, 1.1 + 1e-12);
  EXPECT_GE(r.upper_bound, 1.1 - 1e-12);
  m.free();
}

// Blocks [[1, 2], [2, 1]]: rho = 2, both bounds meet it.
TEST(JacobiRho, RhoTwoIsProvenAboveOne) {
  sparse::DistMatrix m = distribute(16, [](std::int64_t i) {
    const std::int64_t first = i - i % 2;
    return chain_row(i, first, first + 2, 1.0, 2.0);
  });
  const solvers::JacobiRho r = bounds(m);
  EXPECT_EQ(r.verdict, RhoVerdict::at_least_one);
  EXPECT_NEAR(r.estimate, 2.0, 1e-9);
  EXPECT_NEAR(r.lower_bound, 2.0, 1e-9);
  EXPECT_NEAR(r.upper_bound, 2.0, 1e-9);
  m.free();
}

// Blocks of three rows whose M has the entries m_01 = 1.5, m_12 = m_20 =
// m_21 = 0.1 (cycles of length 3 and 2, so the power iterates converge):
// row 0 is not dominant (1.5 > 1), yet rho, the root of
// t^3 - 0.01 t - 0.015, is about 0.26: the iterates' upper bound proves it.
TEST(JacobiRho, NotDominantButBelowOneByTheBounds) {
  sparse::DistMatrix m = distribute(24, [](std::int64_t i) {
    const std::int64_t b = i - i % 3;
    std::vector<std::pair<std::int64_t, double>> r{{i, 1.0}};
    if (i % 3 == 0) r.emplace_back(b + 1, -1.5);
    if (i % 3 == 1) r.emplace_back(b + 2, 0.1);
    if (i % 3 == 2) {
      r.emplace_back(b, 0.1);
      r.emplace_back(b + 1, -0.1);
    }
    return r;
  });
  double rho = 0.3;  // Newton on t^3 - 0.01 t - 0.015
  for (int k = 0; k < 50; ++k)
    rho -= (rho * rho * rho - 0.01 * rho - 0.015) / (3 * rho * rho - 0.01);
  const solvers::JacobiRho r = bounds(m);
  EXPECT_EQ(r.verdict, RhoVerdict::below_one);
  EXPECT_EQ(r.proof, RhoProof::bounds);
  EXPECT_NEAR(r.estimate, rho, 5e-3);
  EXPECT_LT(r.upper_bound, 1.0);
  EXPECT_GE(r.upper_bound, rho * (1 - 1e-12));
  EXPECT_LE(r.lower_bound, rho * (1 + 1e-12));
  m.free();
}

// A strictly dominant matrix with rho = 0 (diagonal only): proven at once.
TEST(JacobiRho, ADiagonalMatrixHasRhoZero) {
  sparse::DistMatrix m = distribute(16, [](std::int64_t i) {
    return std::vector<std::pair<std::int64_t, double>>{{i, 1.0 + static_cast<double>(i)}};
  });
  const solvers::JacobiRho r = bounds(m);
  EXPECT_EQ(r.verdict, RhoVerdict::below_one);
  EXPECT_EQ(r.estimate, 0.0);
  EXPECT_EQ(r.upper_bound, 0.0);
  m.free();
}

}  // namespace
