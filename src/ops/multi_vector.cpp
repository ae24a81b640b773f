#include "asyncsolve/ops/multi_vector.hpp"

#include <algorithm>
#include <cassert>
#include <cstddef>

#include "asyncsolve/core/cost.hpp"

// The fast kernels walk the interior in chunks of at most `chunk` points
// (whole rows of a structured field are shorter; a CSR vector is one long
// row) and, within a chunk, take the basis four vectors at a time: the
// chunk of w (or of the vectors it updates) stays in cache while the basis
// streams past it, four long runs at a time (one vector at a time, in short
// runs, ran at a quarter of the memory bandwidth on this machine's AMD EPYC:
// too many streams, too short for the prefetchers). Each vector crosses memory
// once per call. The `_ref` twins make one plain loop per operation. Both
// report the streamed bytes of the fast kernel to the cost meter (the
// simulation build's model).

namespace asyncsolve::ops {
namespace {

/// Points per chunk: 32 KiB of a vector.
constexpr int chunk = 4096;

/// Calls body(offset, length) for every chunk of the interior of fields
/// shaped like `f`.
template <class Body>
inline void for_chunks(const Field& f, Body&& body) {
  const auto& n = f.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j) {
      const std::ptrdiff_t row = f.index(0, j, k);
      for (int i = 0; i < n[0]; i += chunk) body(row + i, std::min(chunk, n[0] - i));
    }
}

/// Calls body(i) for every interior point (its offset) of fields shaped like `f`.
template <class Body>
inline void for_points(const Field& f, Body&& body) {
  for_chunks(f, [&](std::ptrdiff_t o, int len) {
    for (int i = 0; i < len; ++i) body(o + i);
  });
}

void charge_streams(const Field& f, std::size_t streams) noexcept {
  const auto& n = f.interior();
  core::charge_bytes(8.0 * static_cast<double>(streams) * n[0] * n[1] * n[2]);
}

/// out[q] += v[q] . w over one chunk (w's chunk at pw), for every q.
inline void dots_chunk(FieldList v, const double* __restrict pw, std::ptrdiff_t o, int len,
                       std::span<double> out) {
  const std::size_t n = v.size();
  std::size_t q = 0;
  for (; q + 4 <= n; q += 4) {
    const double* __restrict a = v[q]->origin() + o;
    const double* __restrict b = v[q + 1]->origin() + o;
    const double* __restrict c = v[q + 2]->origin() + o;
    const double* __restrict d = v[q + 3]->origin() + o;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (int i = 0; i < len; ++i) {
      s0 += a[i] * pw[i];
      s1 += b[i] * pw[i];
      s2 += c[i] * pw[i];
      s3 += d[i] * pw[i];
    }
    out[q] += s0;
    out[q + 1] += s1;
    out[q + 2] += s2;
    out[q + 3] += s3;
  }
  for (; q < n; ++q) {
    const double* __restrict a = v[q]->origin() + o;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < len; ++i) s += a[i] * pw[i];
    out[q] += s;
  }
}

/// w += sign sum_q c[q] v[q] over one chunk (w's chunk at pw; sign 1 or -1).
inline void axpys_chunk(FieldList v, std::span<const double> c, double* __restrict pw,
                        std::ptrdiff_t o, int len, double sign = 1.0) {
  const std::size_t n = v.size();
  std::size_t q = 0;
  for (; q + 4 <= n; q += 4) {
    const double* __restrict a = v[q]->origin() + o;
    const double* __restrict b = v[q + 1]->origin() + o;
    const double* __restrict e = v[q + 2]->origin() + o;
    const double* __restrict d = v[q + 3]->origin() + o;
    const double ca = sign * c[q], cb = sign * c[q + 1], ce = sign * c[q + 2], cd = sign * c[q + 3];
#pragma omp simd
    for (int i = 0; i < len; ++i) pw[i] += ca * a[i] + cb * b[i] + ce * e[i] + cd * d[i];
  }
  for (; q < n; ++q) {
    const double* __restrict a = v[q]->origin() + o;
    const double ca = sign * c[q];
#pragma omp simd
    for (int i = 0; i < len; ++i) pw[i] += ca * a[i];
  }
}

/// Local w . w over one chunk.
inline double norm_chunk(const double* __restrict pw, int len) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int i = 0; i < len; ++i) s += pw[i] * pw[i];
  return s;
}

}  // namespace

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
