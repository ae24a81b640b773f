// The Krylov kernels: matrix-free operators against their plain twins and a
// hand-checked point; the fused vector kernels against plain loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/grid/split.hpp"
#include "asyncsolve/ops/stencil.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "asyncsolve/solvers/norm.hpp"

using namespace asyncsolve;
using grid::Field;
using grid::Int3;

namespace {

void randomise(Field& f, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& v : f.storage()) v = dist(gen);
}

Field random_field(const Int3& n, unsigned seed) {
  Field f(n, 1);
  randomise(f, seed);
  return f;
}

template <class F>
void for_interior(const Field& f, F&& body) {
  const Int3& n = f.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) body(i, j, k);
}

}  // namespace

TEST(Stencil, HandCheckedPoints) {
  // Centre 10, every neighbour 1 (27-point: 26 of them, 7-point: 6).
  Field p({1, 1, 1}, 1);
  p.fill(1.0);
  p(0, 0, 0) = 10.0;
  Field q({1, 1, 1}, 1);
  const double d7 = ops::apply({ops::Stencil::seven_point, 0.0}, p, q, p.interior_box());
  EXPECT_EQ(q(0, 0, 0), 60.0 - 6.0);
  EXPECT_EQ(d7, 10.0 * 54.0);
  ops::apply({ops::Stencil::twenty_seven_point, 1.5}, p, q, p.interior_box());
  EXPECT_EQ(q(0, 0, 0), 27.5 * 10.0 - 26.0);
  EXPECT_EQ((ops::StencilOperator{ops::Stencil::twenty_seven_point, -2.0}.diagonal()), 24.0);
}

TEST(Stencil, FastKernelsMatchTheirTwins) {
  for (const auto stencil : {ops::Stencil::seven_point, ops::Stencil::twenty_seven_point}) {
    for (const Int3 n : {Int3{1, 1, 1}, Int3{7, 5, 3}, Int3{33, 9, 4}, Int3{64, 8, 8}}) {
      const Field p = random_field(n, 11);
      Field fast(n, 1);
      Field ref(n, 1);
      const ops::StencilOperator a{stencil, 0.25};
      const double d_fast = ops::apply(a, p, fast, p.interior_box());
      const double d_ref = ops::apply_ref(a, p, ref, p.interior_box());
      for_interior(p, [&](int i, int j, int k) {
        ASSERT_NEAR(fast(i, j, k), ref(i, j, k), 1e-13) << ops::points(stencil) << " " << i;
      });
      EXPECT_NEAR(d_fast, d_ref, 1e-11 * (1.0 + std::abs(d_ref)));
      // In pieces of planes and boxes: the same values, bit for bit.
      Field pieces(n, 1);
      double d_pieces = 0.0;
      for (int k = 0; k < n[2]; k += 2) {
        d_pieces += ops::apply(a, p, pieces, grid::planes(p.interior_box(), k, k + 2));
      }
      for_interior(p, [&](int i, int j, int k) { ASSERT_EQ(pieces(i, j, k), fast(i, j, k)); });
      EXPECT_NEAR(d_pieces, d_fast, 1e-12 * (1.0 + std::abs(d_fast)));
    }
  }
}

TEST(Stencil, PlanesClampToTheBox) {
  const grid::Box box{{1, 2, 3}, {5, 6, 9}};
  EXPECT_EQ(grid::planes(box, 0, 4).lo[2], 3);
  EXPECT_EQ(grid::planes(box, 0, 4).hi[2], 4);
  EXPECT_EQ(grid::planes(box, 8, 20).hi[2], 9);
  EXPECT_EQ(grid::planes(box, 10, 20).size(), 0);
}

TEST(Vector, FusedKernelsMatchPlainLoops) {
  const Int3 n{19, 6, 5};
  const Field a = random_field(n, 1);
  const Field b = random_field(n, 2);
  double expected = 0.0;
  for_interior(a, [&](int i, int j, int k) { expected += a(i, j, k) * b(i, j, k); });
  EXPECT_NEAR(ops::dot(a, b), expected, 1e-12);

  // cg_update: x += alpha p, r -= alpha q, returns r . r.
  Field x = random_field(n, 3);
  Field r = random_field(n, 4);
  Field x0 = random_field(n, 3);
  Field r0 = random_field(n, 4);
  const double rr = ops::cg_update(0.3, a, b, x, r);
  double rr_expected = 0.0;
  for_interior(a, [&](int i, int j, int k) {
    ASSERT_DOUBLE_EQ(x(i, j, k), x0(i, j, k) + 0.3 * a(i, j, k));
    const double v = r0(i, j, k) - 0.3 * b(i, j, k);
    ASSERT_DOUBLE_EQ(r(i, j, k), v);
    rr_expected += v * v;
  });
  EXPECT_NEAR(rr, rr_expected, 1e-12);
  // The halo is never touched.
  EXPECT_EQ(x(-1, 0, 0), x0(-1, 0, 0));

  Field y(n, 1);
  const double yy = ops::scale_dot(0.5, a, y);
  double yy_expected = 0.0;
  for_interior(a, [&](int i, int j, int k) {
    ASSERT_EQ(y(i, j, k), 0.5 * a(i, j, k));
    yy_expected += 0.25 * a(i, j, k) * a(i, j, k);
  });
  EXPECT_NEAR(yy, yy_expected, 1e-12);
  const double xy = ops::diag_scale_dot(a, 4.0, y);
  double xy_expected = 0.0;
  for_interior(a, [&](int i, int j, int k) {
    ASSERT_EQ(y(i, j, k), a(i, j, k) / 4.0);
    xy_expected += a(i, j, k) * a(i, j, k) / 4.0;
  });
  EXPECT_NEAR(xy, xy_expected, 1e-12);
  Field z(n, 1);
  ops::waxpby(a, -2.0, b, z);
  for_interior(a,
               [&](int i, int j, int k) { ASSERT_EQ(z(i, j, k), a(i, j, k) - 2.0 * b(i, j, k)); });
}

TEST(Vector, PipelinedUpdateMatchesItsDefinition) {
  const Int3 n{11, 4, 3};
  Field f[10];
  for (unsigned i = 0; i < 10; ++i) f[i] = random_field(n, 20 + i);
  Field g[10];
  for (unsigned i = 0; i < 10; ++i) g[i] = random_field(n, 20 + i);  // copies
  const auto view = [](Field* v) {
    return ops::PipeVectors{&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]};
  };
  const double alpha = 0.7;
  const double beta = 0.2;
  const double minv = 0.5;
  const auto dots = ops::pipecg_update(alpha, beta, minv, view(f));
  // x r u w m n z q s p = 0..9, from the original values in g.
  double ru = 0.0, wu = 0.0, rr = 0.0;
  for_interior(f[0], [&](int i, int j, int k) {
    const auto o = [&](int v) { return g[v](i, j, k); };
    const double z = o(5) + beta * o(6);
    const double q = o(4) + beta * o(7);
    const double s = o(3) + beta * o(8);
    const double p = o(2) + beta * o(9);
    const double x = o(0) + alpha * p;
    const double r = o(1) - alpha * s;
    const double u = o(2) - alpha * q;
    const double w = o(3) - alpha * z;
    ASSERT_DOUBLE_EQ(f[0](i, j, k), x);
    ASSERT_DOUBLE_EQ(f[1](i, j, k), r);
    ASSERT_DOUBLE_EQ(f[2](i, j, k), u);
    ASSERT_DOUBLE_EQ(f[3](i, j, k), w);
    ASSERT_DOUBLE_EQ(f[4](i, j, k), minv * w);
    ASSERT_DOUBLE_EQ(f[9](i, j, k), p);
    ru += r * u;
    wu += w * u;
    rr += r * r;
  });
  EXPECT_NEAR(dots[0], ru, 1e-12);
  EXPECT_NEAR(dots[1], wu, 1e-12);
  EXPECT_NEAR(dots[2], rr, 1e-12);
}

// M^-1 = c I: the seven-vector pass does what the ten-vector one does on
// vectors with u = c r, m = c w, q = c s and n = c A w (to rounding).
TEST(Vector, PipelinedScalarUpdateMatchesTheGeneralOne) {
  const Int3 n{13, 5, 4};
  const double c = 1.0 / 6.0;
  const double alpha = 0.7;
  const double beta = 0.2;
  // x r w aw z s p, and the general pass's ten vectors built from them.
  Field v[7];
  for (unsigned i = 0; i < 7; ++i) v[i] = random_field(n, 40 + i);
  Field g[10];
  for (auto& f : g) f = Field(n, 1);
  for_interior(v[0], [&](int i, int j, int k) {
    const auto o = [&](int q) { return v[q](i, j, k); };
    g[0](i, j, k) = o(0);      // x
    g[1](i, j, k) = o(1);      // r
    g[2](i, j, k) = c * o(1);  // u = c r
    g[3](i, j, k) = o(2);      // w
    g[4](i, j, k) = c * o(2);  // m = c w
    g[5](i, j, k) = c * o(3);  // n = A m = c A w
    g[6](i, j, k) = o(4);      // z
    g[7](i, j, k) = c * o(5);  // q = c s
    g[8](i, j, k) = o(5);      // s
    g[9](i, j, k) = o(6);      // p
  });
  const auto general = ops::pipecg_update(
      alpha, beta, c,
      ops::PipeVectors{&g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7], &g[8], &g[9]});
  const auto scalar = ops::pipecg_update_scalar(
      alpha, beta, c, ops::PipeScalarVectors{&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]});
  for_interior(v[0], [&](int i, int j, int k) {
    EXPECT_NEAR(v[0](i, j, k), g[0](i, j, k), 1e-14);      // x
    EXPECT_NEAR(v[1](i, j, k), g[1](i, j, k), 1e-14);      // r
    EXPECT_NEAR(v[2](i, j, k), g[3](i, j, k), 1e-14);      // w
    EXPECT_NEAR(v[4](i, j, k), g[6](i, j, k), 1e-14);      // z
    EXPECT_NEAR(v[5](i, j, k), g[8](i, j, k), 1e-14);      // s
    EXPECT_NEAR(v[6](i, j, k), g[9](i, j, k), 1e-14);      // p
    EXPECT_NEAR(c * v[1](i, j, k), g[2](i, j, k), 1e-14);  // u = c r still
  });
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(scalar[d], general[d], 1e-12) << d;
  // The first iteration: w = c (A r), the dots of u = c r.
  Field r = random_field(n, 60);
  Field ar = random_field(n, 61);
  Field w = random_field(n, 61);  // A r, and a copy of it
  const auto first =
      ops::pipecg_dots_scalar(c, ops::PipeScalarVectors{&v[0], &r, &w, &v[3], &v[4], &v[5], &v[6]});
  double rr = 0.0, wr = 0.0;
  for_interior(r, [&](int i, int j, int k) {
    ASSERT_EQ(w(i, j, k), c * ar(i, j, k));
    rr += r(i, j, k) * r(i, j, k);
    wr += w(i, j, k) * r(i, j, k);
  });
  EXPECT_NEAR(first[0], c * rr, 1e-12);
  EXPECT_NEAR(first[1], c * wr, 1e-12);
  EXPECT_NEAR(first[2], rr, 1e-12);
}

// Issue 19: norms neither underflow to 0 nor overflow to infinity, a
// residual that is not finite is a breakdown, and "converged" needs the true
// residual below the tolerance.
TEST(ScaledNorm, NeitherUnderflowsNorOverflows) {
  for (const double scale : {1e-300, 1e-160, 1.0, 1e160, 1e300}) {
    Field x(Int3{3, 2, 2}, 1);
    for (double& v : x.storage()) v = 0.0;
    x(0, 0, 0) = 3.0 * scale;
    x(2, 1, 1) = 4.0 * scale;
    const double norm = solvers::field_norm(x, nullptr);
    EXPECT_TRUE(std::isfinite(norm)) << scale;
    EXPECT_NEAR(norm / scale, 5.0, 1e-12) << scale;
  }
  Field z(Int3{2, 2, 2}, 1);
  for (double& v : z.storage()) v = 0.0;
  EXPECT_EQ(solvers::field_norm(z, nullptr), 0.0);
  z(1, 1, 1) = std::nan("");
  EXPECT_FALSE(std::isfinite(solvers::field_norm(z, nullptr)));
}

TEST(ScaledNorm, NonFiniteResidualsBreakDownAndConvergenceNeedsTheTrueResidual) {
  EXPECT_TRUE(solvers::breaks_down(std::nan("")));
  EXPECT_TRUE(solvers::breaks_down(HUGE_VAL));
  EXPECT_FALSE(solvers::breaks_down(1e300));
  // An error term of a NaN iterate is +inf, not dropped by std::max.
  EXPECT_EQ(solvers::error_term(std::nan(""), 1.0), HUGE_VAL);
  EXPECT_EQ(std::max(0.5, solvers::error_term(std::nan(""), 1.0)), HUGE_VAL);
  EXPECT_EQ(solvers::error_term(-2.0, 1.0), 3.0);
  solvers::SolveResult r;
  r.converged = true;
  r.reason = solvers::StopReason::tolerance;
  r.true_residual = 2.5e-15;
  solvers::confirm_convergence(r, 1e-300);
  EXPECT_FALSE(r.converged);
  EXPECT_NE(r.reason, solvers::StopReason::tolerance);
  solvers::SolveResult ok;
  ok.converged = true;
  ok.reason = solvers::StopReason::tolerance;
  ok.true_residual = 1e-9;
  solvers::confirm_convergence(ok, 1e-6);
  EXPECT_TRUE(ok.converged);
}

TEST(ScaledNorm, AnUnconfirmedStopShowsTheDigitsThatDiffer) {
  // --tol 1 with x0 = 0: the estimate ||r0|| / ||b|| computed one way rounds
  // below 1, the true residual computed another way does not. The detail
  // read "1.000e+00 met 1.0e+00, 1.000e+00 did not".
  solvers::SolveResult r;
  r.true_residual = 1.0;
  solvers::mark_unconfirmed(r, 0.9999999999999999, 1.0, 0);
  EXPECT_EQ(r.reason, solvers::StopReason::unconfirmed);
  EXPECT_NE(r.detail.find("0.99999999999999989 met the tolerance 1, the true residual 1 did "
                          "not: the two differ by rounding only"),
            std::string::npos)
      << r.detail;
  // Different in the fourth digit: four digits, no claim about rounding.
  solvers::SolveResult far;
  far.true_residual = 1.5e-6;
  solvers::mark_unconfirmed(far, 9e-7, 1e-6, 12);
  EXPECT_EQ(far.detail,
            "the residual estimate 9.000e-07 met the tolerance 1.0e-06, the true residual "
            "1.500e-06 did not, after 12 synchronous iterations that tried to confirm the stop");
}
