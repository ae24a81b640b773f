#include "asyncsolve/ops/vector.hpp"

#include <cassert>
#include <cstddef>
#include <cstring>

#include "asyncsolve/core/cost.hpp"

// Loops over the rows of the interior (x contiguous), vectorised by the
// compiler through `omp simd` (-fopenmp-simd). Every kernel streams each of
// its vectors once, and reports that traffic (streams x 8 B per point) to
// the cost meter (the simulation build's compute model).

namespace asyncsolve::ops {
namespace {

/// Calls body(offset, nx) for every interior row of fields shaped like `f`.
template <class Body>
inline void for_rows(const Field& f, Body&& body) {
  const auto& n = f.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j) body(f.index(0, j, k), n[0]);
}

/// Reports `streams` vectors shaped like `f` read or written once.
void charge_streams(const Field& f, int streams) noexcept {
  const auto& n = f.interior();
  core::charge_bytes(8.0 * streams * n[0] * n[1] * n[2]);
}

[[maybe_unused]] bool same_shape(const Field& a, const Field& b) {
  return a.interior() == b.interior() && a.halo() == b.halo();
}

}  // namespace

double dot(const Field& a, const Field& b) noexcept {
  assert(same_shape(a, b));
  double sum = 0.0;
  for_rows(a, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict pa = a.origin() + o;
    const double* __restrict pb = b.origin() + o;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < nx; ++i) sum += pa[i] * pb[i];
  });
  charge_streams(a, 2);
  return sum;
}

void copy(const Field& x, Field& y) noexcept {
  assert(same_shape(x, y));
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    std::memcpy(y.origin() + o, x.origin() + o, static_cast<std::size_t>(nx) * sizeof(double));
  });
  charge_streams(x, 2);
}

void axpy(double alpha, const Field& x, Field& y) noexcept {
  assert(same_shape(x, y));
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict px = x.origin() + o;
    double* __restrict py = y.origin() + o;
#pragma omp simd
    for (int i = 0; i < nx; ++i) py[i] += alpha * px[i];
  });
  charge_streams(x, 3);
}

void xpby(const Field& x, double beta, Field& y) noexcept {
  assert(same_shape(x, y));
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict px = x.origin() + o;
    double* __restrict py = y.origin() + o;
#pragma omp simd
    for (int i = 0; i < nx; ++i) py[i] = px[i] + beta * py[i];
  });
  charge_streams(x, 3);
}

void waxpby(const Field& x, double beta, const Field& y, Field& z) noexcept {
  assert(same_shape(x, y) && same_shape(x, z));
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict px = x.origin() + o;
    const double* __restrict py = y.origin() + o;
    double* __restrict pz = z.origin() + o;
#pragma omp simd
    for (int i = 0; i < nx; ++i) pz[i] = px[i] + beta * py[i];
  });
  charge_streams(x, 3);
}

double scale_dot(double c, const Field& x, Field& y) noexcept {
  assert(same_shape(x, y));
  double sum = 0.0;
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict px = x.origin() + o;
    double* __restrict py = y.origin() + o;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < nx; ++i) {
      const double v = c * px[i];
      py[i] = v;
      sum += v * v;
    }
  });
  charge_streams(x, 2);
  return sum;
}

void scale(double c, const Field& x, Field& y) noexcept {
  assert(same_shape(x, y));
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict px = x.origin() + o;
    double* __restrict py = y.origin() + o;
#pragma omp simd
    for (int i = 0; i < nx; ++i) py[i] = c * px[i];
  });
  charge_streams(x, 2);
}

void scal(double c, Field& y) noexcept {
  for_rows(y, [&](std::ptrdiff_t o, int nx) {
    double* __restrict py = y.origin() + o;
#pragma omp simd
    for (int i = 0; i < nx; ++i) py[i] *= c;
  });
  charge_streams(y, 2);
}

void diag_scale(const Field& x, double d, Field& y) noexcept {
  assert(same_shape(x, y));
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict px = x.origin() + o;
    double* __restrict py = y.origin() + o;
#pragma omp simd
    for (int i = 0; i < nx; ++i) py[i] = px[i] / d;
  });
  charge_streams(x, 2);
}

double diag_scale_dot(const Field& x, double d, Field& y) noexcept {
  assert(same_shape(x, y));
  double sum = 0.0;
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict px = x.origin() + o;
    double* __restrict py = y.origin() + o;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < nx; ++i) {
      const double v = px[i] / d;
      py[i] = v;
      sum += px[i] * v;
    }
  });
  charge_streams(x, 2);
  return sum;
}

double residual(const Field& b, const Field& ax, Field& r) noexcept {
  assert(same_shape(b, ax) && same_shape(b, r));
  double sum = 0.0;
  for_rows(b, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict pb = b.origin() + o;
    const double* __restrict pa = ax.origin() + o;
    double* __restrict pr = r.origin() + o;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < nx; ++i) {
      const double v = pb[i] - pa[i];
      pr[i] = v;
      sum += v * v;
    }
  });
  charge_streams(b, 3);
  return sum;
}

double cg_update(double alpha, const Field& p, const Field& q, Field& x, Field& r) noexcept {
  assert(same_shape(p, q) && same_shape(p, x) && same_shape(p, r));
  double sum = 0.0;
  for_rows(p, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict pp = p.origin() + o;
    const double* __restrict pq = q.origin() + o;
    double* __restrict px = x.origin() + o;
    double* __restrict pr = r.origin() + o;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < nx; ++i) {
      px[i] += alpha * pp[i];
      const double v = pr[i] - alpha * pq[i];
      pr[i] = v;
      sum += v * v;
    }
  });
  charge_streams(p, 6);
  return sum;
}

double axpy_dot(double alpha, const Field& s, Field& r) noexcept {
  assert(same_shape(s, r));
  double sum = 0.0;
  for_rows(s, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict ps = s.origin() + o;
    double* __restrict pr = r.origin() + o;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < nx; ++i) {
      const double v = pr[i] - alpha * ps[i];
      pr[i] = v;
      sum += v * v;
    }
  });
  charge_streams(s, 3);
  return sum;
}

namespace {

/// M^-1 = c I seen as a row: minv[i] is c for every i.
struct ConstantRow {
  double c;
  double operator[](int) const noexcept { return c; }
};

template <class Minv>
std::array<double, 3> pipecg_update_impl(double alpha, double beta, const Minv& minv_row,
                                         const PipeVectors& v) noexcept {
  double ru = 0.0;
  double wu = 0.0;
  double rr = 0.0;
  for_rows(*v.x, [&](std::ptrdiff_t o, int nx) {
    double* __restrict x = v.x->origin() + o;
    double* __restrict r = v.r->origin() + o;
    double* __restrict u = v.u->origin() + o;
    double* __restrict w = v.w->origin() + o;
    double* __restrict m = v.m->origin() + o;
    const double* __restrict n = v.n->origin() + o;
    double* __restrict z = v.z->origin() + o;
    double* __restrict q = v.q->origin() + o;
    double* __restrict s = v.s->origin() + o;
    double* __restrict p = v.p->origin() + o;
    const auto minv = minv_row(o);
#pragma omp simd reduction(+ : ru, wu, rr)
    for (int i = 0; i < nx; ++i) {
      const double zi = n[i] + beta * z[i];
      const double qi = m[i] + beta * q[i];
      const double si = w[i] + beta * s[i];
      const double pi = u[i] + beta * p[i];
      z[i] = zi;
      q[i] = qi;
      s[i] = si;
      p[i] = pi;
      x[i] += alpha * pi;
      const double ri = r[i] - alpha * si;
      const double ui = u[i] - alpha * qi;
      const double wi = w[i] - alpha * zi;
      r[i] = ri;
      u[i] = ui;
      w[i] = wi;
      m[i] = minv[i] * wi;
      ru += ri * ui;
      wu += wi * ui;
      rr += ri * ri;
    }
  });
  charge_streams(*v.x, 19);
  return {ru, wu, rr};
}

template <class Minv>
std::array<double, 3> pipecg_dots_impl(const Minv& minv_row, const PipeVectors& v) noexcept {
  double ru = 0.0;
  double wu = 0.0;
  double rr = 0.0;
  for_rows(*v.x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict r = v.r->origin() + o;
    const double* __restrict u = v.u->origin() + o;
    const double* __restrict w = v.w->origin() + o;
    double* __restrict m = v.m->origin() + o;
    const auto minv = minv_row(o);
#pragma omp simd reduction(+ : ru, wu, rr)
    for (int i = 0; i < nx; ++i) {
      m[i] = minv[i] * w[i];
      ru += r[i] * u[i];
      wu += w[i] * u[i];
      rr += r[i] * r[i];
    }
  });
  charge_streams(*v.x, 4);
  return {ru, wu, rr};
}

}  // namespace

std::array<double, 3> pipecg_update(double alpha, double beta, double minv,
                                    const PipeVectors& v) noexcept {
  return pipecg_update_impl(
      alpha, beta, [minv](std::ptrdiff_t) { return ConstantRow{minv}; }, v);
}

std::array<double, 3> pipecg_update(double alpha, double beta, const Field& minv,
                                    const PipeVectors& v) noexcept {
  assert(same_shape(minv, *v.x));
  return pipecg_update_impl(
      alpha, beta, [&minv](std::ptrdiff_t o) { return minv.origin() + o; }, v);
}

std::array<double, 3> pipecg_update_scalar(double alpha, double beta, double c,
                                           const PipeScalarVectors& v) noexcept {
  double rr = 0.0;
  double wr = 0.0;
  for_rows(*v.x, [&](std::ptrdiff_t o, int nx) {
    double* __restrict x = v.x->origin() + o;
    double* __restrict r = v.r->origin() + o;
    double* __restrict w = v.w->origin() + o;
    const double* __restrict aw = v.aw->origin() + o;
    double* __restrict z = v.z->origin() + o;
    double* __restrict s = v.s->origin() + o;
    double* __restrict p = v.p->origin() + o;
#pragma omp simd reduction(+ : rr, wr)
    for (int i = 0; i < nx; ++i) {
      const double zi = c * aw[i] + beta * z[i];
      const double si = w[i] + beta * s[i];
      const double pi = c * r[i] + beta * p[i];
      z[i] = zi;
      s[i] = si;
      p[i] = pi;
      x[i] += alpha * pi;
      const double ri = r[i] - alpha * si;
      const double wi = w[i] - alpha * zi;
      r[i] = ri;
      w[i] = wi;
      rr += ri * ri;
      wr += wi * ri;
    }
  });
  charge_streams(*v.x, 13);
  return {c * rr, c * wr, rr};
}

std::array<double, 3> pipecg_dots_scalar(double c, const PipeScalarVectors& v) noexcept {
  double rr = 0.0;
  double wr = 0.0;
  for_rows(*v.x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict r = v.r->origin() + o;
    double* __restrict w = v.w->origin() + o;
#pragma omp simd reduction(+ : rr, wr)
    for (int i = 0; i < nx; ++i) {
      const double wi = c * w[i];
      w[i] = wi;
      rr += r[i] * r[i];
      wr += wi * r[i];
    }
  });
  charge_streams(*v.x, 3);
  return {c * rr, c * wr, rr};
}

std::array<double, 3> pipecg_dots(double minv, const PipeVectors& v) noexcept {
  return pipecg_dots_impl([minv](std::ptrdiff_t) { return ConstantRow{minv}; }, v);
}

std::array<double, 3> pipecg_dots(const Field& minv, const PipeVectors& v) noexcept {
  assert(same_shape(minv, *v.x));
  return pipecg_dots_impl([&minv](std::ptrdiff_t o) { return minv.origin() + o; }, v);
}

double scale_dot(const Field& c, const Field& x, Field& y) noexcept {
  assert(same_shape(c, x) && same_shape(x, y));
  double sum = 0.0;
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict pc = c.origin() + o;
    const double* __restrict px = x.origin() + o;
    double* __restrict py = y.origin() + o;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < nx; ++i) {
      const double v = pc[i] * px[i];
      py[i] = v;
      sum += v * v;
    }
  });
  return sum;
}

void scale(const Field& c, const Field& x, Field& y) noexcept {
  assert(same_shape(c, x) && same_shape(x, y));
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict pc = c.origin() + o;
    const double* __restrict px = x.origin() + o;
    double* __restrict py = y.origin() + o;
#pragma omp simd
    for (int i = 0; i < nx; ++i) py[i] = pc[i] * px[i];
  });
}

double diag_scale_dot(const Field& x, const Field& d, Field& y) noexcept {
  assert(same_shape(x, d) && same_shape(x, y));
  double sum = 0.0;
  for_rows(x, [&](std::ptrdiff_t o, int nx) {
    const double* __restrict pd = d.origin() + o;
    const double* __restrict px = x.origin() + o;
    double* __restrict py = y.origin() + o;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < nx; ++i) {
      const double v = px[i] / pd[i];
      py[i] = v;
      sum += px[i] * v;
    }
  });
  return sum;
}

}  // namespace asyncsolve::ops
