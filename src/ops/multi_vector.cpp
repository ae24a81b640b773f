#include "asyncsolve/ops/multi_vector.hpp"

#include <algorithm>
#include <cassert>
#include <cstddef>

#include "multi_vector_chunks.hpp"

namespace asyncsolve::ops {

using namespace chunked;  // NOLINT(google-build-using-namespace)

void mdot(FieldList v, const Field& w, std::span<double> out) noexcept {
  const std::size_t n = v.size();
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n), 0.0);
  for_chunks(w, [&](std::ptrdiff_t o, int len) { dots_chunk(v, w.origin() + o, o, len, out); });
  charge_streams(w, n + 1);
}

void mdot_ref(FieldList v, const Field& w, std::span<double> out) noexcept {
  for (std::size_t q = 0; q < v.size(); ++q) {
    double sum = 0.0;
    for_points(w, [&](std::ptrdiff_t i) { sum += v[q]->origin()[i] * w.origin()[i]; });
    out[q] = sum;
  }
  charge_streams(w, v.size() + 1);
}

double maxpy_norm(FieldList v, std::span<const double> c, Field& w) noexcept {
  double norm = 0.0;
  for_chunks(w, [&](std::ptrdiff_t o, int len) {
    double* pw = w.origin() + o;
    axpys_chunk(v, c, pw, o, len);
    norm += norm_chunk(pw, len);
  });
  charge_streams(w, v.size() + 2);
  return norm;
}

double maxpy_norm_ref(FieldList v, std::span<const double> c, Field& w) noexcept {
  for (std::size_t q = 0; q < v.size(); ++q)
    for_points(w, [&](std::ptrdiff_t i) { w.origin()[i] += c[q] * v[q]->origin()[i]; });
  double norm = 0.0;
  for_points(w, [&](std::ptrdiff_t i) { norm += w.origin()[i] * w.origin()[i]; });
  charge_streams(w, v.size() + 2);
  return norm;
}

void maxpy_mdot_norm(FieldList v, std::span<const double> c, Field& w,
                     std::span<double> out) noexcept {
  const std::size_t n = v.size();
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n + 1), 0.0);
  for_chunks(w, [&](std::ptrdiff_t o, int len) {
    double* pw = w.origin() + o;
    axpys_chunk(v, c, pw, o, len);
    dots_chunk(v, pw, o, len, out);  // the basis' chunks again, from cache
    out[n] += norm_chunk(pw, len);
  });
  charge_streams(w, n + 2);
}

void maxpy_mdot_norm_ref(FieldList v, std::span<const double> c, Field& w,
                         std::span<double> out) noexcept {
  out[v.size()] = maxpy_norm_ref(v, c, w);
  mdot_ref(v, w, out);
}

void combine(FieldList v, std::span<const double> c, Field& out) noexcept {
  for_chunks(out, [&](std::ptrdiff_t o, int len) {
    double* pw = out.origin() + o;
    std::fill(pw, pw + len, 0.0);
    axpys_chunk(v, c, pw, o, len);
  });
  charge_streams(out, v.size() + 1);
}

void combine_ref(FieldList v, std::span<const double> c, Field& out) noexcept {
  for_points(out, [&](std::ptrdiff_t i) { out.origin()[i] = 0.0; });
  for (std::size_t q = 0; q < v.size(); ++q)
    for_points(out, [&](std::ptrdiff_t i) { out.origin()[i] += c[q] * v[q]->origin()[i]; });
  charge_streams(out, v.size() + 1);
}

void pgmres_pass(FieldList v, Field& zcur, Field& znext, double scale, std::span<const double> a,
                 double hh, std::span<const double> c, std::span<double> out) noexcept {
  const std::size_t n = v.size();
  assert(n >= 1 && out.size() >= n + 3);
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n + 3), 0.0);
  const bool scaling = scale != 1.0;
  for_chunks(zcur, [&](std::ptrdiff_t o, int len) {
    double* __restrict zc = zcur.origin() + o;
    double* __restrict zn = znext.origin() + o;
    if (scaling) {
      double* __restrict last = v[n - 1]->origin() + o;
#pragma omp simd
      for (int i = 0; i < len; ++i) {
        last[i] *= scale;
        zc[i] *= scale;
        zn[i] *= scale;
      }
    }
    double before = 0.0;
#pragma omp simd reduction(+ : before)
    for (int i = 0; i < len; ++i) {
      before += zc[i] * zc[i];
      zn[i] -= hh * zc[i];
    }
    out[n + 2] += before;
    axpys_chunk(v, a, zn, o, len, -1.0);
    axpys_chunk(v, c, zc, o, len, -1.0);  // the basis' chunks again, from cache
    dots_chunk(v, zn, o, len, out);
    double cross = 0.0;
    double after = 0.0;
#pragma omp simd reduction(+ : cross, after)
    for (int i = 0; i < len; ++i) {
      cross += zc[i] * zn[i];
      after += zc[i] * zc[i];
    }
    out[n] += cross;
    out[n + 1] += after;
  });
  charge_streams(zcur, n + 4 + (scaling ? 3 : 0));
}

void pgmres_pass_ref(FieldList v, Field& zcur, Field& znext, double scale,
                     std::span<const double> a, double hh, std::span<const double> c,
                     std::span<double> out) noexcept {
  const std::size_t n = v.size();
  double* zc = zcur.origin();
  double* zn = znext.origin();
  for_points(zcur, [&](std::ptrdiff_t i) {
    v[n - 1]->origin()[i] *= scale;
    zc[i] *= scale;
    zn[i] *= scale;
  });
  double before = 0.0;
  for_points(zcur, [&](std::ptrdiff_t i) { before += zc[i] * zc[i]; });
  for_points(zcur, [&](std::ptrdiff_t i) { zn[i] -= hh * zc[i]; });
  for (std::size_t q = 0; q < n; ++q)
    for_points(zcur, [&](std::ptrdiff_t i) { zn[i] -= a[q] * v[q]->origin()[i]; });
  for (std::size_t q = 0; q < n; ++q)
    for_points(zcur, [&](std::ptrdiff_t i) { zc[i] -= c[q] * v[q]->origin()[i]; });
  for (std::size_t q = 0; q < n; ++q) {
    double sum = 0.0;
    for_points(zcur, [&](std::ptrdiff_t i) { sum += v[q]->origin()[i] * zn[i]; });
    out[q] = sum;
  }
  double cross = 0.0;
  double after = 0.0;
  for_points(zcur, [&](std::ptrdiff_t i) {
    cross += zc[i] * zn[i];
    after += zc[i] * zc[i];
  });
  out[n] = cross;
  out[n + 1] = after;
  out[n + 2] = before;
  charge_streams(zcur, n + 7);
}

void lincomb3(double a, const Field& x, double b, const Field& y, double c, Field& z) noexcept {
  for_chunks(z, [&](std::ptrdiff_t o, int len) {
    const double* __restrict px = x.origin() + o;
    const double* __restrict py = y.origin() + o;
    double* __restrict pz = z.origin() + o;
#pragma omp simd
    for (int i = 0; i < len; ++i) pz[i] = a * px[i] + b * py[i] + c * pz[i];
  });
  charge_streams(z, 4);
}

std::array<double, 2> dots2(const Field& a, const Field& b, const Field& c) noexcept {
  double ab = 0.0;
  double ac = 0.0;
  for_chunks(a, [&](std::ptrdiff_t o, int len) {
    const double* __restrict pa = a.origin() + o;
    const double* __restrict pb = b.origin() + o;
    const double* __restrict pc = c.origin() + o;
#pragma omp simd reduction(+ : ab, ac)
    for (int i = 0; i < len; ++i) {
      ab += pa[i] * pb[i];
      ac += pa[i] * pc[i];
    }
  });
  charge_streams(a, &a == &c || &b == &c ? 2 : 3);
  return {ab, ac};
}

std::array<double, 3> dots3(const Field& t, const Field& s) noexcept {
  double ts = 0.0;
  double tt = 0.0;
  double ss = 0.0;
  for_chunks(t, [&](std::ptrdiff_t o, int len) {
    const double* __restrict pt = t.origin() + o;
    const double* __restrict ps = s.origin() + o;
#pragma omp simd reduction(+ : ts, tt, ss)
    for (int i = 0; i < len; ++i) {
      ts += pt[i] * ps[i];
      tt += pt[i] * pt[i];
      ss += ps[i] * ps[i];
    }
  });
  charge_streams(t, 2);
  return {ts, tt, ss};
}

std::array<double, 2> bicgstab_update(double alpha, double omega, const Field& phat,
                                      const Field& shat, const Field& s, const Field& t,
                                      const Field& r0, Field& x, Field& r) noexcept {
  double rr = 0.0;
  double rr0 = 0.0;
  for_chunks(x, [&](std::ptrdiff_t o, int len) {
    const double* __restrict pp = phat.origin() + o;
    const double* __restrict ps = shat.origin() + o;
    const double* __restrict s_ = s.origin() + o;
    const double* __restrict t_ = t.origin() + o;
    const double* __restrict q0 = r0.origin() + o;
    double* __restrict px = x.origin() + o;
    double* __restrict pr = r.origin() + o;
#pragma omp simd reduction(+ : rr, rr0)
    for (int i = 0; i < len; ++i) {
      px[i] += alpha * pp[i] + omega * ps[i];
      const double ri = s_[i] - omega * t_[i];
      pr[i] = ri;
      rr += ri * ri;
      rr0 += ri * q0[i];
    }
  });
  charge_streams(x, 8);
  return {rr, rr0};
}

std::array<double, 2> bicgstab_update_ref(double alpha, double omega, const Field& phat,
                                          const Field& shat, const Field& s, const Field& t,
                                          const Field& r0, Field& x, Field& r) noexcept {
  for_points(x, [&](std::ptrdiff_t i) { x.origin()[i] += alpha * phat.origin()[i]; });
  for_points(x, [&](std::ptrdiff_t i) { x.origin()[i] += omega * shat.origin()[i]; });
  for_points(x, [&](std::ptrdiff_t i) { r.origin()[i] = s.origin()[i] - omega * t.origin()[i]; });
  double rr = 0.0;
  double rr0 = 0.0;
  for_points(x, [&](std::ptrdiff_t i) {
    rr += r.origin()[i] * r.origin()[i];
    rr0 += r.origin()[i] * r0.origin()[i];
  });
  charge_streams(x, 8);
  return {rr, rr0};
}

namespace {

/// A constant Jacobi scaling, indexed as its field would be.
struct ConstantScaling {
  double c;
  double operator[](int /*i*/) const { return c; }
};

/// Calls body(d, o, len) for every chunk, d minv's values there (a pointer,
/// or the constant): the branch outside the vector loops.
template <class Body>
inline void for_scaled_chunks(const Scaling& minv, const Field& f, Body&& body) {
  if (minv.values != nullptr) {
    for_chunks(f, [&](std::ptrdiff_t o, int len) {
      body(static_cast<const double*>(minv.values->origin() + o), o, len);
    });
  } else {
    for_chunks(f, [&](std::ptrdiff_t o, int len) { body(ConstantScaling{minv.constant}, o, len); });
  }
}

}  // namespace

void bicgstab_direction_jacobi(const Scaling& minv, double beta, double omega, bool first,
                               const Field& r, const Field& v, Field& phat) noexcept {
  const double bo = beta * omega;
  if (first) {
    // phat = minv r: the old phat, never set, must not reach the result
    for_scaled_chunks(minv, r, [&](auto d, std::ptrdiff_t o, int len) {
      const double* __restrict pr = r.origin() + o;
      double* __restrict ph = phat.origin() + o;
#pragma omp simd
      for (int i = 0; i < len; ++i) ph[i] = d[i] * pr[i];
    });
  } else {
    for_scaled_chunks(minv, r, [&](auto d, std::ptrdiff_t o, int len) {
      const double* __restrict pr = r.origin() + o;
      const double* __restrict pv = v.origin() + o;
      double* __restrict ph = phat.origin() + o;
#pragma omp simd
      for (int i = 0; i < len; ++i) ph[i] = d[i] * (pr[i] - bo * pv[i]) + beta * ph[i];
    });
  }
  charge_streams(r, (first ? 2 : 4) + (minv.values != nullptr ? 1 : 0));
}

void bicgstab_direction_jacobi_ref(const Scaling& minv, double beta, double omega, bool first,
                                   const Field& r, const Field& v, Field& phat) noexcept {
  const auto d = [&](std::ptrdiff_t i) {
    return minv.values != nullptr ? minv.values->origin()[i] : minv.constant;
  };
  if (first) {
    for_points(r, [&](std::ptrdiff_t i) { phat.origin()[i] = d(i) * r.origin()[i]; });
  } else {
    for_points(r, [&](std::ptrdiff_t i) {
      phat.origin()[i] =
          beta * phat.origin()[i] + d(i) * (r.origin()[i] - beta * omega * v.origin()[i]);
    });
  }
  charge_streams(r, 4);
}

void bicgstab_half_step_jacobi(const Scaling& minv, double alpha, const Field& r, const Field& v,
                               Field& s, Field& shat) noexcept {
  for_scaled_chunks(minv, r, [&](auto d, std::ptrdiff_t o, int len) {
    const double* __restrict pr = r.origin() + o;
    const double* __restrict pv = v.origin() + o;
    double* __restrict ps = s.origin() + o;
    double* __restrict ph = shat.origin() + o;
#pragma omp simd
    for (int i = 0; i < len; ++i) {
      const double si = pr[i] - alpha * pv[i];
      ps[i] = si;
      ph[i] = d[i] * si;
    }
  });
  charge_streams(r, 4 + (minv.values != nullptr ? 1 : 0));
}

void bicgstab_half_step_jacobi_ref(const Scaling& minv, double alpha, const Field& r,
                                   const Field& v, Field& s, Field& shat) noexcept {
  for_points(r, [&](std::ptrdiff_t i) { s.origin()[i] = r.origin()[i] - alpha * v.origin()[i]; });
  for_points(r, [&](std::ptrdiff_t i) {
    shat.origin()[i] =
        (minv.values != nullptr ? minv.values->origin()[i] : minv.constant) * s.origin()[i];
  });
  charge_streams(r, 5);
}

namespace {

/// PipeBicgVectors' arrays at a chunk's offset, for the fused kernels below
/// (their loops are `omp simd`: no dependence between iterations assumed).
struct PipeBicgChunk {
  double* x;
  double* r;
  double* r2;
  double* r0;
  double* w;
  double* w2;
  double* t;
  double* p2;
  double* s;
  double* s2;
  double* z;
  double* z2;
  double* v;
  double* q;
  double* q2;
  double* y;
};

PipeBicgChunk chunk_of(const PipeBicgVectors& v, std::ptrdiff_t o) noexcept {
  return {v.x->origin() + o, v.r->origin() + o,  v.r2->origin() + o, v.r0->origin() + o,
          v.w->origin() + o, v.w2->origin() + o, v.t->origin() + o,  v.p2->origin() + o,
          v.s->origin() + o, v.s2->origin() + o, v.z->origin() + o,  v.z2->origin() + o,
          v.v->origin() + o, v.q->origin() + o,  v.q2->origin() + o, v.y->origin() + o};
}

}  // namespace

std::array<double, 3> pipebicgstab_directions(double alpha, double beta, double omega, bool first,
                                              const PipeBicgVectors& v) noexcept {
  double qy = 0.0;
  double yy = 0.0;
  double qq = 0.0;
  const double bo = beta * omega;
  const double b = first ? 0.0 : beta;
  const double c = first ? 0.0 : bo;
  for_chunks(*v.x, [&](std::ptrdiff_t o, int len) {
    const PipeBicgChunk ch = chunk_of(v, o);
#pragma omp simd reduction(+ : qy, yy, qq)
    for (int i = 0; i < len; ++i) {
      // first: b = c = 0, and the old values (never set) must not reach the result
      const double p2i = first ? ch.r2[i] : ch.r2[i] + b * ch.p2[i] - c * ch.s2[i];
      const double si = first ? ch.w[i] : ch.w[i] + b * ch.s[i] - c * ch.z[i];
      const double s2i = first ? ch.w2[i] : ch.w2[i] + b * ch.s2[i] - c * ch.z2[i];
      const double zi = first ? ch.t[i] : ch.t[i] + b * ch.z[i] - c * ch.v[i];
      const double qi = ch.r[i] - alpha * si;
      const double yi = ch.w[i] - alpha * zi;
      ch.p2[i] = p2i;
      ch.s[i] = si;
      ch.s2[i] = s2i;
      ch.z[i] = zi;
      ch.q[i] = qi;
      ch.q2[i] = ch.r2[i] - alpha * s2i;
      ch.y[i] = yi;
      qy += qi * yi;
      yy += yi * yi;
      qq += qi * qi;
    }
  });
  charge_streams(*v.x, 18);
  return {qy, yy, qq};
}

std::array<double, 3> pipebicgstab_directions_ref(double alpha, double beta, double omega,
                                                  bool first, const PipeBicgVectors& v) noexcept {
  const Field& f = *v.x;
  const auto at = [](Field* field, std::ptrdiff_t i) -> double& { return field->origin()[i]; };
  if (first) {
    for_points(f, [&](std::ptrdiff_t i) {
      at(v.p2, i) = at(v.r2, i);
      at(v.s, i) = at(v.w, i);
      at(v.s2, i) = at(v.w2, i);
      at(v.z, i) = at(v.t, i);
    });
  } else {
    const double bo = beta * omega;
    // p2 before s2 and s before z: each reads the other's old value
    for_points(f, [&](std::ptrdiff_t i) {
      at(v.p2, i) = at(v.r2, i) + beta * at(v.p2, i) - bo * at(v.s2, i);
    });
    for_points(f, [&](std::ptrdiff_t i) {
      at(v.s, i) = at(v.w, i) + beta * at(v.s, i) - bo * at(v.z, i);
    });
    for_points(f, [&](std::ptrdiff_t i) {
      at(v.s2, i) = at(v.w2, i) + beta * at(v.s2, i) - bo * at(v.z2, i);
    });
    for_points(f, [&](std::ptrdiff_t i) {
      at(v.z, i) = at(v.t, i) + beta * at(v.z, i) - bo * at(v.v, i);
    });
  }
  for_points(f, [&](std::ptrdiff_t i) { at(v.q, i) = at(v.r, i) - alpha * at(v.s, i); });
  for_points(f, [&](std::ptrdiff_t i) { at(v.q2, i) = at(v.r2, i) - alpha * at(v.s2, i); });
  for_points(f, [&](std::ptrdiff_t i) { at(v.y, i) = at(v.w, i) - alpha * at(v.z, i); });
  double qy = 0.0;
  double yy = 0.0;
  double qq = 0.0;
  for_points(f, [&](std::ptrdiff_t i) {
    qy += at(v.q, i) * at(v.y, i);
    yy += at(v.y, i) * at(v.y, i);
    qq += at(v.q, i) * at(v.q, i);
  });
  charge_streams(f, 18);
  return {qy, yy, qq};
}

std::array<double, 5> pipebicgstab_update(double alpha, double omega,
                                          const PipeBicgVectors& v) noexcept {
  double rr = 0.0;
  double rr0 = 0.0;
  double sr0 = 0.0;
  double wr0 = 0.0;
  double zr0 = 0.0;
  for_chunks(*v.x, [&](std::ptrdiff_t o, int len) {
    const PipeBicgChunk ch = chunk_of(v, o);
#pragma omp simd reduction(+ : rr, rr0, sr0, wr0, zr0)
    for (int i = 0; i < len; ++i) {
      ch.x[i] += alpha * ch.p2[i] + omega * ch.q2[i];
      const double ri = ch.q[i] - omega * ch.y[i];
      const double wi = ch.y[i] - omega * (ch.t[i] - alpha * ch.v[i]);
      ch.r[i] = ri;
      ch.r2[i] = ch.q2[i] - omega * (ch.w2[i] - alpha * ch.z2[i]);
      ch.w[i] = wi;
      rr += ri * ri;
      rr0 += ri * ch.r0[i];
      sr0 += ch.s[i] * ch.r0[i];
      wr0 += wi * ch.r0[i];
      zr0 += ch.z[i] * ch.r0[i];
    }
  });
  charge_streams(*v.x, 16);
  return {rr, rr0, sr0, wr0, zr0};
}

std::array<double, 5> pipebicgstab_update_ref(double alpha, double omega,
                                              const PipeBicgVectors& v) noexcept {
  const Field& f = *v.x;
  const auto at = [](Field* field, std::ptrdiff_t i) -> double& { return field->origin()[i]; };
  for_points(f, [&](std::ptrdiff_t i) { at(v.x, i) += alpha * at(v.p2, i) + omega * at(v.q2, i); });
  for_points(f, [&](std::ptrdiff_t i) { at(v.r, i) = at(v.q, i) - omega * at(v.y, i); });
  for_points(f, [&](std::ptrdiff_t i) {
    at(v.r2, i) = at(v.q2, i) - omega * (at(v.w2, i) - alpha * at(v.z2, i));
  });
  for_points(f, [&](std::ptrdiff_t i) {
    at(v.w, i) = at(v.y, i) - omega * (at(v.t, i) - alpha * at(v.v, i));
  });
  std::array<double, 5> out{};
  for_points(f, [&](std::ptrdiff_t i) {
    out[0] += at(v.r, i) * at(v.r, i);
    out[1] += at(v.r, i) * at(v.r0, i);
    out[2] += at(v.s, i) * at(v.r0, i);
    out[3] += at(v.w, i) * at(v.r0, i);
    out[4] += at(v.z, i) * at(v.r0, i);
  });
  charge_streams(f, 16);
  return out;
}

}  // namespace asyncsolve::ops
