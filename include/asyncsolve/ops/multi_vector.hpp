#pragma once
/// Vector kernels of the nonsymmetric Krylov methods over the interior of
/// fields (halos untouched): the block operations of GMRES's Gram-Schmidt
/// (several inner products, or several updates, in one pass over memory),
/// p(1)-GMRES's fused correction pass, and BiCGStab's fused updates. Every
/// field passed to one call must have the same shape; the returned sums are
/// this rank's parts, still to be reduced over ranks. Each fast kernel has a
/// plain `_ref` twin (one loop per operation) that the unit tests hold it to.
#include <array>
#include <span>

#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/vector.hpp"

namespace asyncsolve::ops {

using grid::Field;

/// Borrowed fields of one basis, in order.
using FieldList = std::span<Field* const>;

/// out[k] = v[k] . w (local) for every k < v.size(): w is read once, each
/// v[k] once (the vectors are taken in cache-sized chunks).
void mdot(FieldList v, const Field& w, std::span<double> out) noexcept;
void mdot_ref(FieldList v, const Field& w, std::span<double> out) noexcept;

/// w += sum_k c[k] v[k]; returns the local w . w of the result. One pass.
double maxpy_norm(FieldList v, std::span<const double> c, Field& w) noexcept;
double maxpy_norm_ref(FieldList v, std::span<const double> c, Field& w) noexcept;

/// w += sum_k c[k] v[k], then out[k] = v[k] . w (the new w) for every k and
/// out[v.size()] = w . w: classical Gram-Schmidt's update fused with the
/// inner products of its second pass, whether that pass is needed or not.
/// One pass over memory (a chunk of each v[k] is read twice, the second time
/// from cache); `out` holds v.size() + 1 values.
void maxpy_mdot_norm(FieldList v, std::span<const double> c, Field& w,
                     std::span<double> out) noexcept;
void maxpy_mdot_norm_ref(FieldList v, std::span<const double> c, Field& w,
                         std::span<double> out) noexcept;

/// The reduction of one step of delayed classical Gram-Schmidt (DCGS2):
/// out[k] = q[k] . u and out[n + k] = q[k] . w for k < n = q.size(), then
/// out[2n] = u . u, out[2n + 1] = u . w and out[2n + 2] = w . w. One pass
/// over the n + 2 vectors (the basis is read once for both). `out` holds
/// 2n + 3 values.
void mdot_pair(FieldList q, const Field& u, const Field& w, std::span<double> out) noexcept;
void mdot_pair_ref(FieldList q, const Field& u, const Field& w, std::span<double> out) noexcept;

/// The update of one DCGS2 step, both vectors in one pass over the basis:
///   u' = su (u - sum_k a[k] q[k]),   w' = sw (w - sum_k e[k] q[k] - d u)
/// (the old u in w's update): the last vector reorthogonalised and
/// normalised, the new one projected once and scaled.
void dcgs2_update(FieldList q, std::span<const double> a, std::span<const double> e, double d,
                  double su, double sw, Field& u, Field& w) noexcept;
void dcgs2_update_ref(FieldList q, std::span<const double> a, std::span<const double> e, double d,
                      double su, double sw, Field& u, Field& w) noexcept;

/// out = sum_k c[k] v[k] (out overwritten; the correction of GMRES's
/// solution). One pass.
void combine(FieldList v, std::span<const double> c, Field& out) noexcept;
void combine_ref(FieldList v, std::span<const double> c, Field& out) noexcept;

/// p(1)-GMRES's pass once the reduction of the previous iteration is in
/// (v holds V_0 .. V_{n-1}, n >= 1; zcur the unorthogonalised A M^-1 V_{n-1},
/// znext A M^-1 zcur). With s = `scale` applied first to v[n-1], zcur and
/// znext (the deferred normalisation; v[n-1] is written back scaled):
///   znext -= sum_q a[q] v[q] + hh zcur;   zcur -= sum_q c[q] v[q]
/// (the old zcur in znext's update), then the local
///   out[q] = v[q] . znext (q < n), out[n] = zcur . znext,
///   out[n+1] = zcur . zcur (after), out[n+2] = zcur . zcur (before the
///   projection, after the scaling).
/// `out` holds n + 3 values. One pass over the n + 2 vectors.
void pgmres_pass(FieldList v, Field& zcur, Field& znext, double scale, std::span<const double> a,
                 double hh, std::span<const double> c, std::span<double> out) noexcept;
void pgmres_pass_ref(FieldList v, Field& zcur, Field& znext, double scale,
                     std::span<const double> a, double hh, std::span<const double> c,
                     std::span<double> out) noexcept;

/// z = a x + b y + c z.
void lincomb3(double a, const Field& x, double b, const Field& y, double c, Field& z) noexcept;
/// Local {a . b, a . c}.
std::array<double, 2> dots2(const Field& a, const Field& b, const Field& c) noexcept;
/// Local {t . s, t . t, s . s} (BiCGStab's omega and its breakdown test).
std::array<double, 3> dots3(const Field& t, const Field& s) noexcept;

/// BiCGStab's end of iteration in one pass: x += alpha phat + omega shat,
/// r = s - omega t; returns the local {r . r, r . r0}.
std::array<double, 2> bicgstab_update(double alpha, double omega, const Field& phat,
                                      const Field& shat, const Field& s, const Field& t,
                                      const Field& r0, Field& x, Field& r) noexcept;
std::array<double, 2> bicgstab_update_ref(double alpha, double omega, const Field& phat,
                                          const Field& shat, const Field& s, const Field& t,
                                          const Field& r0, Field& x, Field& r) noexcept;

/// BiCGStab's direction with Jacobi folded in, p kept as phat = D^-1 p only:
///   phat = minv (r - beta omega v) + beta phat   (first: phat = minv r).
/// One pass (24 B a point fewer than the update of p and its scaling).
void bicgstab_direction_jacobi(const Scaling& minv, double beta, double omega, bool first,
                               const Field& r, const Field& v, Field& phat) noexcept;
void bicgstab_direction_jacobi_ref(const Scaling& minv, double beta, double omega, bool first,
                                   const Field& r, const Field& v, Field& phat) noexcept;

/// BiCGStab's half step with Jacobi folded in: s = r - alpha v, shat = minv s.
/// One pass.
void bicgstab_half_step_jacobi(const Scaling& minv, double alpha, const Field& r, const Field& v,
                               Field& s, Field& shat) noexcept;
void bicgstab_half_step_jacobi_ref(const Scaling& minv, double alpha, const Field& r,
                                   const Field& v, Field& s, Field& shat) noexcept;

/// The vectors of pipelined BiCGStab (Cools and Vanroose 2017, the
/// preconditioned algorithm; "2" marks a preconditioned vector M^-1 .).
struct PipeBicgVectors {
  Field* x;
  Field* r;
  Field* r2;  ///< M^-1 r
  Field* r0;  ///< the shadow residual
  Field* w;   ///< A r2
  Field* w2;  ///< M^-1 w
  Field* t;   ///< A w2
  Field* p2;
  Field* s;   ///< A p2
  Field* s2;  ///< M^-1 s
  Field* z;   ///< A s2
  Field* z2;  ///< M^-1 z
  Field* v;   ///< A z2
  Field* q;
  Field* q2;
  Field* y;
};

/// The first pass of an iteration: with b = beta, bo = beta omega,
///   p2 = r2 + b p2 - bo s2,  s = w + b s - bo z,  s2 = w2 + b s2 - bo z2,
///   z = t + b z - bo v,  q = r - alpha s,  q2 = r2 - alpha s2,  y = w - alpha z
/// (first = true: p2 = r2, s = w, s2 = w2, z = t); returns the local
/// {q . y, y . y, q . q}.
std::array<double, 3> pipebicgstab_directions(double alpha, double beta, double omega, bool first,
                                              const PipeBicgVectors& v) noexcept;
std::array<double, 3> pipebicgstab_directions_ref(double alpha, double beta, double omega,
                                                  bool first, const PipeBicgVectors& v) noexcept;

/// The second pass: x += alpha p2 + omega q2, r = q - omega y,
/// r2 = q2 - omega (w2 - alpha z2), w = y - omega (t - alpha v); returns the
/// local {r . r, r . r0, s . r0, w . r0, z . r0}.
std::array<double, 5> pipebicgstab_update(double alpha, double omega,
                                          const PipeBicgVectors& v) noexcept;
std::array<double, 5> pipebicgstab_update_ref(double alpha, double omega,
                                              const PipeBicgVectors& v) noexcept;

}  // namespace asyncsolve::ops
