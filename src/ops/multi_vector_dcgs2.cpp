// The two kernels of delayed classical Gram-Schmidt (DCGS2, Swirydowicz,
// Langou, Ananthan, Yang and Thomas 2021; Bielich et al. 2022): per GMRES
// iteration one pass computes every inner product the step needs (the last
// vector's reorthogonalisation coefficients and the new vector's projections,
// one reduction), and one pass applies both updates. The basis crosses
// memory twice an iteration, where classical Gram-Schmidt with a second pass
// reads it three times.
#include <algorithm>
#include <cassert>
#include <cstddef>

#include "asyncsolve/ops/multi_vector.hpp"
#include "multi_vector_chunks.hpp"

namespace asyncsolve::ops {

using namespace chunked;  // NOLINT(google-build-using-namespace)

namespace {

/// out[q] += v[q] . u and out[n + q] += v[q] . w over one chunk, each basis
/// chunk read once for both, four vectors at a time.
inline void pair_dots_chunk(FieldList v, const double* __restrict pu, const double* __restrict pw,
                            std::ptrdiff_t o, int len, std::span<double> out) {
  const std::size_t n = v.size();
  std::size_t q = 0;
  for (; q + 4 <= n; q += 4) {
    const double* __restrict a = v[q]->origin() + o;
    const double* __restrict b = v[q + 1]->origin() + o;
    const double* __restrict c = v[q + 2]->origin() + o;
    const double* __restrict d = v[q + 3]->origin() + o;
    double au = 0.0, bu = 0.0, cu = 0.0, du = 0.0, aw = 0.0, bw = 0.0, cw = 0.0, dw = 0.0;
#pragma omp simd reduction(+ : au, bu, cu, du, aw, bw, cw, dw)
    for (int i = 0; i < len; ++i) {
      au += a[i] * pu[i];
      bu += b[i] * pu[i];
      cu += c[i] * pu[i];
      du += d[i] * pu[i];
      aw += a[i] * pw[i];
      bw += b[i] * pw[i];
      cw += c[i] * pw[i];
      dw += d[i] * pw[i];
    }
    out[q] += au;
    out[q + 1] += bu;
    out[q + 2] += cu;
    out[q + 3] += du;
    out[n + q] += aw;
    out[n + q + 1] += bw;
    out[n + q + 2] += cw;
    out[n + q + 3] += dw;
  }
  for (; q < n; ++q) {
    const double* __restrict a = v[q]->origin() + o;
    double au = 0.0, aw = 0.0;
#pragma omp simd reduction(+ : au, aw)
    for (int i = 0; i < len; ++i) {
      au += a[i] * pu[i];
      aw += a[i] * pw[i];
    }
    out[q] += au;
    out[n + q] += aw;
  }
}

/// u -= sum_q a[q] v[q] and w -= sum_q e[q] v[q] over one chunk, each basis
/// chunk read once for both, four vectors at a time.
inline void pair_axpys_chunk(FieldList v, std::span<const double> a, std::span<const double> e,
                             double* __restrict pu, double* __restrict pw, std::ptrdiff_t o,
                             int len) {
  const std::size_t n = v.size();
  std::size_t q = 0;
  for (; q + 4 <= n; q += 4) {
    const double* __restrict x = v[q]->origin() + o;
    const double* __restrict y = v[q + 1]->origin() + o;
    const double* __restrict z = v[q + 2]->origin() + o;
    const double* __restrict t = v[q + 3]->origin() + o;
    const double ax = a[q], ay = a[q + 1], az = a[q + 2], at = a[q + 3];
    const double ex = e[q], ey = e[q + 1], ez = e[q + 2], et = e[q + 3];
#pragma omp simd
    for (int i = 0; i < len; ++i) {
      pu[i] -= ax * x[i] + ay * y[i] + az * z[i] + at * t[i];
      pw[i] -= ex * x[i] + ey * y[i] + ez * z[i] + et * t[i];
    }
  }
  for (; q < n; ++q) {
    const double* __restrict x = v[q]->origin() + o;
    const double ax = a[q], ex = e[q];
#pragma omp simd
    for (int i = 0; i < len; ++i) {
      pu[i] -= ax * x[i];
      pw[i] -= ex * x[i];
    }
  }
}

}  // namespace

void mdot_pair(FieldList q, const Field& u, const Field& w, std::span<double> out) noexcept {
  const std::size_t n = q.size();
  assert(out.size() >= 2 * n + 3);
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(2 * n + 3), 0.0);
  for_chunks(u, [&](std::ptrdiff_t o, int len) {
    const double* __restrict pu = u.origin() + o;
    const double* __restrict pw = w.origin() + o;
    pair_dots_chunk(q, pu, pw, o, len, out);
    double uu = 0.0;
    double uw = 0.0;
    double ww = 0.0;
#pragma omp simd reduction(+ : uu, uw, ww)
    for (int i = 0; i < len; ++i) {
      uu += pu[i] * pu[i];
      uw += pu[i] * pw[i];
      ww += pw[i] * pw[i];
    }
    out[2 * n] += uu;
    out[2 * n + 1] += uw;
    out[2 * n + 2] += ww;
  });
  charge_streams(u, n + 2);
}

void mdot_pair_ref(FieldList q, const Field& u, const Field& w, std::span<double> out) noexcept {
  const std::size_t n = q.size();
  mdot_ref(q, u, out.subspan(0, n));
  mdot_ref(q, w, out.subspan(n, n));
  double uu = 0.0;
  double uw = 0.0;
  double ww = 0.0;
  for_points(u, [&](std::ptrdiff_t i) {
    uu += u.origin()[i] * u.origin()[i];
    uw += u.origin()[i] * w.origin()[i];
    ww += w.origin()[i] * w.origin()[i];
  });
  out[2 * n] = uu;
  out[2 * n + 1] = uw;
  out[2 * n + 2] = ww;
}

void dcgs2_update(FieldList q, std::span<const double> a, std::span<const double> e, double d,
                  double su, double sw, Field& u, Field& w) noexcept {
  for_chunks(u, [&](std::ptrdiff_t o, int len) {
    double* __restrict pu = u.origin() + o;
    double* __restrict pw = w.origin() + o;
    // w's update takes the old u
#pragma omp simd
    for (int i = 0; i < len; ++i) pw[i] -= d * pu[i];
    pair_axpys_chunk(q, a, e, pu, pw, o, len);
#pragma omp simd
    for (int i = 0; i < len; ++i) {
      pu[i] *= su;
      pw[i] *= sw;
    }
  });
  charge_streams(u, q.size() + 4);
}

void dcgs2_update_ref(FieldList q, std::span<const double> a, std::span<const double> e, double d,
                      double su, double sw, Field& u, Field& w) noexcept {
  double* pu = u.origin();
  double* pw = w.origin();
  for_points(u, [&](std::ptrdiff_t i) { pw[i] -= d * pu[i]; });
  for (std::size_t k = 0; k < q.size(); ++k) {
    const double* pq = q[k]->origin();
    for_points(u, [&](std::ptrdiff_t i) { pu[i] -= a[k] * pq[i]; });
    for_points(u, [&](std::ptrdiff_t i) { pw[i] -= e[k] * pq[i]; });
  }
  for_points(u, [&](std::ptrdiff_t i) {
    pu[i] *= su;
    pw[i] *= sw;
  });
  charge_streams(u, q.size() + 4);
}

}  // namespace asyncsolve::ops
