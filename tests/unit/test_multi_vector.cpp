// The nonsymmetric methods' vector kernels (ops/multi_vector.hpp) against
// their plain `_ref` twins, on structured fields (rows with a halo) and on
// one long row (a CSR vector, longer than a chunk), with a hand-checked case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/multi_vector.hpp"

using namespace asyncsolve;
using grid::Field;
using grid::Int3;

namespace {

Field random_field(const Int3& n, int halo, unsigned seed) {
  Field f(n, halo);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& v : f.storage()) v = dist(gen);
  return f;
}

Field clone(const Field& f) {
  Field out(f.interior(), f.halo());
  std::copy(f.storage().begin(), f.storage().end(), out.storage().begin());
  return out;
}

std::vector<Field> clone(const std::vector<Field>& v) {
  std::vector<Field> out;
  for (const Field& f : v) out.push_back(clone(f));
  return out;
}

/// max |a - b| over the interiors, relative to max |b|.
double difference(const Field& a, const Field& b) {
  double worst = 0.0;
  double biggest = 1e-300;
  const Int3& n = a.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        worst = std::max(worst, std::abs(a(i, j, k) - b(i, j, k)));
        biggest = std::max(biggest, std::abs(b(i, j, k)));
      }
  return worst / biggest;
}

struct Shape {
  Int3 n;
  int halo;
};

const std::vector<Shape> shapes{
    {{7, 5, 3}, 1}, {{1, 1, 1}, 1}, {{1000, 1, 1}, 0}, {{300, 2, 2}, 1}};

std::vector<Field> basis(const Shape& s, int count, unsigned seed) {
  std::vector<Field> v;
  for (int q = 0; q < count; ++q) v.push_back(random_field(s.n, s.halo, seed + q));
  return v;
}

std::vector<Field*> pointers(std::vector<Field>& v) {
  std::vector<Field*> p;
  for (Field& f : v) p.push_back(&f);
  return p;
}

}  // namespace

TEST(MultiVector, HandChecked) {
  Field w({3, 1, 1}, 0);
  Field a({3, 1, 1}, 0);
  Field b({3, 1, 1}, 0);
  w.storage()[0] = 1, w.storage()[1] = 2, w.storage()[2] = 3;
  a.storage()[0] = 1, a.storage()[1] = 0, a.storage()[2] = 0;
  b.storage()[0] = 1, b.storage()[1] = 1, b.storage()[2] = 1;
  std::vector<Field*> v{&a, &b};
  std::vector<double> out(2);
  ops::mdot(v, w, out);
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], 6.0);
  // w += 2 a - 1 b = (2, 1, 2), |w|^2 = 9
  const std::vector<double> c{2.0, -1.0};
  EXPECT_EQ(ops::maxpy_norm(v, c, w), 9.0);
  EXPECT_EQ(w.storage()[0], 2.0);
  EXPECT_EQ(w.storage()[1], 1.0);
}

TEST(MultiVector, FastKernelsMatchTheirTwins) {
  for (const Shape& s : shapes) {
    for (const int count : {1, 3, 8}) {
      std::vector<Field> v = basis(s, count, 10);
      const std::vector<Field*> p = pointers(v);
      const Field w = random_field(s.n, s.halo, 3);
      std::vector<double> fast(count), ref(count), c(count);
      ops::mdot(p, w, fast);
      ops::mdot_ref(p, w, ref);
      for (int q = 0; q < count; ++q) {
        EXPECT_NEAR(fast[q], ref[q], 1e-12 * (1.0 + std::abs(ref[q])));
        c[q] = 0.1 * (q + 1) - 0.25;
      }
      Field w1 = clone(w);
      Field w2 = clone(w);
      const double n1 = ops::maxpy_norm(p, c, w1);
      const double n2 = ops::maxpy_norm_ref(p, c, w2);
      EXPECT_NEAR(n1, n2, 1e-12 * n2);
      EXPECT_LE(difference(w1, w2), 1e-14);
      Field f1 = clone(w);
      Field f2 = clone(w);
      std::vector<double> g1(count + 1), g2(count + 1);
      ops::maxpy_mdot_norm(p, c, f1, g1);
      ops::maxpy_mdot_norm_ref(p, c, f2, g2);
      EXPECT_LE(difference(f1, f2), 1e-14);
      for (int q = 0; q <= count; ++q) EXPECT_NEAR(g1[q], g2[q], 1e-12 * (1.0 + std::abs(g2[q])));
      Field o1 = random_field(s.n, s.halo, 4);
      Field o2 = clone(o1);
      ops::combine(p, c, o1);
      ops::combine_ref(p, c, o2);
      EXPECT_LE(difference(o1, o2), 1e-14);
    }
  }
}

TEST(MultiVector, PgmresPassMatchesItsTwin) {
  for (const Shape& s : shapes) {
    for (const int n : {1, 2, 5}) {
      for (const double scale : {1.0, 0.37}) {
        std::vector<Field> v1 = basis(s, n + 2, 20);
        std::vector<Field> v2 = clone(v1);
        std::vector<Field*> p1 = pointers(v1);
        std::vector<Field*> p2 = pointers(v2);
        std::vector<double> a(n), c(n), out1(n + 3), out2(n + 3);
        for (int q = 0; q < n; ++q) {
          a[q] = 0.3 - 0.1 * q;
          c[q] = -0.2 + 0.05 * q;
        }
        ops::pgmres_pass(ops::FieldList{p1.data(), static_cast<std::size_t>(n)}, v1[n], v1[n + 1],
                         scale, a, 0.7, c, out1);
        ops::pgmres_pass_ref(ops::FieldList{p2.data(), static_cast<std::size_t>(n)}, v2[n],
                             v2[n + 1], scale, a, 0.7, c, out2);
        for (int q = 0; q < n + 2; ++q) EXPECT_LE(difference(v1[q], v2[q]), 1e-14) << q;
        for (int q = 0; q < n + 3; ++q)
          EXPECT_NEAR(out1[q], out2[q], 1e-12 * (1.0 + std::abs(out2[q]))) << q;
      }
    }
  }
}

TEST(MultiVector, Dcgs2KernelsMatchTheirTwins) {
  for (const Shape& s : shapes) {
    for (const int n : {0, 1, 2, 5}) {
      std::vector<Field> v1 = basis(s, n + 2, 70);
      std::vector<Field> v2 = clone(v1);
      std::vector<Field*> p1 = pointers(v1);
      std::vector<Field*> p2 = pointers(v2);
      const ops::FieldList q1{p1.data(), static_cast<std::size_t>(n)};
      const ops::FieldList q2{p2.data(), static_cast<std::size_t>(n)};
      const auto size = static_cast<std::size_t>(2 * n + 3);
      std::vector<double> out1(size, -9.0), out2(size, -9.0);
      ops::mdot_pair(q1, v1[n], v1[n + 1], out1);
      ops::mdot_pair_ref(q2, v2[n], v2[n + 1], out2);
      for (std::size_t i = 0; i < size; ++i)
        EXPECT_NEAR(out1[i], out2[i], 1e-12 * (1.0 + std::abs(out2[i]))) << i;
      std::vector<double> a(n), e(n);
      for (int q = 0; q < n; ++q) {
        a[q] = 0.25 - 0.1 * q;
        e[q] = -0.3 + 0.07 * q;
      }
      ops::dcgs2_update(q1, a, e, 0.45, 1.7, 0.6, v1[n], v1[n + 1]);
      ops::dcgs2_update_ref(q2, a, e, 0.45, 1.7, 0.6, v2[n], v2[n + 1]);
      for (int q = 0; q < n + 2; ++q) EXPECT_LE(difference(v1[q], v2[q]), 1e-14) << q;
    }
  }
}

TEST(MultiVector, BicgstabJacobiKernelsMatchTheirTwins) {
  for (const Shape& s : shapes) {
    const Field d = random_field(s.n, s.halo, 80);
    for (const ops::Scaling minv : {ops::Scaling{0.4, nullptr}, ops::Scaling{1.0, &d}}) {
      for (const bool first : {true, false}) {
        std::vector<Field> f = basis(s, 3, 90);
        std::vector<Field> g = clone(f);
        ops::bicgstab_direction_jacobi(minv, 0.8, -1.3, first, f[0], f[1], f[2]);
        ops::bicgstab_direction_jacobi_ref(minv, 0.8, -1.3, first, g[0], g[1], g[2]);
        EXPECT_LE(difference(f[2], g[2]), 1e-14);
      }
      std::vector<Field> f = basis(s, 4, 100);
      std::vector<Field> g = clone(f);
      ops::bicgstab_half_step_jacobi(minv, 0.55, f[0], f[1], f[2], f[3]);
      ops::bicgstab_half_step_jacobi_ref(minv, 0.55, g[0], g[1], g[2], g[3]);
      EXPECT_LE(difference(f[2], g[2]), 1e-14);
      EXPECT_LE(difference(f[3], g[3]), 1e-14);
    }
  }
}

TEST(MultiVector, Dcgs2HandChecked) {
  // q = (1, 0, 0); u = (3, 4, 0); w = (1, 2, 2)
  Field q({3, 1, 1}, 0), u({3, 1, 1}, 0), w({3, 1, 1}, 0);
  q.storage()[0] = 1.0;
  u.storage()[0] = 3.0, u.storage()[1] = 4.0;
  w.storage()[0] = 1.0, w.storage()[1] = 2.0, w.storage()[2] = 2.0;
  std::vector<Field*> v{&q};
  std::vector<double> out(5);
  ops::mdot_pair(v, u, w, out);
  EXPECT_EQ(out, (std::vector<double>{3.0, 1.0, 25.0, 11.0, 9.0}));
  // u' = (u - 3 q) / 4 = (0, 1, 0); w' = 0.5 (w - 1 q - 2 u) = (-3, -3, 1)
  const std::vector<double> a{3.0}, e{1.0};
  ops::dcgs2_update(v, a, e, 2.0, 0.25, 0.5, u, w);
  EXPECT_EQ(u.storage()[0], 0.0);
  EXPECT_EQ(u.storage()[1], 1.0);
  EXPECT_EQ(w.storage()[0], -3.0);
  EXPECT_EQ(w.storage()[1], -3.0);
  EXPECT_EQ(w.storage()[2], 1.0);
}

TEST(MultiVector, BicgstabKernelsMatchTheirTwins) {
  for (const Shape& s : shapes) {
    std::vector<Field> f = basis(s, 16, 40);
    std::vector<Field> g = clone(f);
    Field x1 = random_field(s.n, s.halo, 1);
    Field x2 = clone(x1);
    const auto u1 = ops::bicgstab_update(0.3, -0.7, f[0], f[1], f[2], f[3], f[4], x1, f[5]);
    const auto u2 = ops::bicgstab_update_ref(0.3, -0.7, g[0], g[1], g[2], g[3], g[4], x2, g[5]);
    EXPECT_LE(difference(x1, x2), 1e-14);
    EXPECT_LE(difference(f[5], g[5]), 1e-14);
    for (int q = 0; q < 2; ++q) EXPECT_NEAR(u1[q], u2[q], 1e-12 * (1.0 + std::abs(u2[q])));
    for (const bool first : {true, false}) {
      std::vector<Field> h1 = basis(s, 16, 60);
      std::vector<Field> h2 = clone(h1);
      const auto vectors = [](Field& x, std::vector<Field>& h) {
        return ops::PipeBicgVectors{&x,    &h[0], &h[1], &h[2],  &h[3],  &h[4],  &h[5],  &h[6],
                                    &h[7], &h[8], &h[9], &h[10], &h[11], &h[12], &h[13], &h[14]};
      };
      Field y1 = random_field(s.n, s.halo, 2);
      Field y2 = clone(y1);
      const auto d1 = ops::pipebicgstab_directions(0.4, 0.9, 0.6, first, vectors(y1, h1));
      const auto d2 = ops::pipebicgstab_directions_ref(0.4, 0.9, 0.6, first, vectors(y2, h2));
      for (int q = 0; q < 3; ++q) EXPECT_NEAR(d1[q], d2[q], 1e-12 * (1.0 + std::abs(d2[q])));
      const auto e1 = ops::pipebicgstab_update(0.4, 0.6, vectors(y1, h1));
      const auto e2 = ops::pipebicgstab_update_ref(0.4, 0.6, vectors(y2, h2));
      for (int q = 0; q < 5; ++q) EXPECT_NEAR(e1[q], e2[q], 1e-12 * (1.0 + std::abs(e2[q])));
      for (int q = 0; q < 15; ++q) EXPECT_LE(difference(h1[q], h2[q]), 1e-13) << q;
      EXPECT_LE(difference(y1, y2), 1e-14);
    }
  }
}
