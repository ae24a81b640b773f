#pragma once
/// Vector kernels of the Krylov solvers over the interior of fields (halos
/// untouched). Every field passed to one call must have the same shape. The
/// fused kernels do several vector operations, and the local part of an inner
/// product, in one pass over memory; the returned sums are this rank's parts,
/// still to be reduced over ranks.
#include <array>

#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::ops {

using grid::Field;

/// Local a . b.
double dot(const Field& a, const Field& b) noexcept;
/// y = x (interior).
void copy(const Field& x, Field& y) noexcept;
/// y += alpha x.
void axpy(double alpha, const Field& x, Field& y) noexcept;
/// y = x + beta y.
void xpby(const Field& x, double beta, Field& y) noexcept;
/// z = x + beta y.
void waxpby(const Field& x, double beta, const Field& y, Field& z) noexcept;
/// y = c x, returns local y . y (DiagInvScale with a constant L^-1 = c, and
/// the gamma of PCG-Algorithm2).
double scale_dot(double c, const Field& x, Field& y) noexcept;
/// y = c x.
void scale(double c, const Field& x, Field& y) noexcept;
/// y = c y (in place).
void scal(double c, Field& y) noexcept;
/// y = x / d: hypre's DiagScale (a division per point) with a constant
/// diagonal d.
void diag_scale(const Field& x, double d, Field& y) noexcept;
/// y = x / d, returns local x . y (DiagScale and the gamma of
/// PCG-Algorithm1 in one pass).
double diag_scale_dot(const Field& x, double d, Field& y) noexcept;
/// r = b - ax, returns local r . r.
double residual(const Field& b, const Field& ax, Field& r) noexcept;
/// x += alpha p, r -= alpha q; returns local r . r (CG, fused).
double cg_update(double alpha, const Field& p, const Field& q, Field& x, Field& r) noexcept;
/// r -= alpha s; returns local r . r.
double axpy_dot(double alpha, const Field& s, Field& r) noexcept;

/// The vectors of pipelined CG (Ghysels and Vanroose 2014, Algorithm 4).
struct PipeVectors {
  Field* x;
  Field* r;
  Field* u;  ///< M^-1 r
  Field* w;  ///< A u
  Field* m;  ///< M^-1 w
  Field* n;  ///< A m
  Field* z;
  Field* q;
  Field* s;
  Field* p;
};
/// One fused pass of pipelined CG: z = n + beta z, q = m + beta q,
/// s = w + beta s, p = u + beta p, x += alpha p, r -= alpha s, u -= alpha q,
/// w -= alpha z, then m = minv w. Returns the local parts of
/// {r . u, w . u, r . r} for the next iteration.
std::array<double, 3> pipecg_update(double alpha, double beta, double minv,
                                    const PipeVectors& v) noexcept;
/// Local {r . u, w . u, r . r} and m = minv w (the first iteration).
std::array<double, 3> pipecg_dots(double minv, const PipeVectors& v) noexcept;

/// The vectors of pipelined CG when M^-1 = c I (no preconditioner, c = 1, or
/// Jacobi on a constant diagonal): u = c r, m = c w and q = c s follow from
/// r, w and s, so they are never stored, and aw holds A w (n = A m = c aw).
struct PipeScalarVectors {
  Field* x;
  Field* r;
  Field* w;   ///< A u
  Field* aw;  ///< A w
  Field* z;
  Field* s;
  Field* p;
};
/// pipecg_update for M^-1 = c I in one pass over 7 vectors instead of 10:
/// z = c aw + beta z, s = w + beta s, p = c r + beta p, x += alpha p,
/// r -= alpha s, w -= alpha z. Returns the local parts of
/// {r . u, w . u, r . r} = {c r . r, c w . r, r . r}.
std::array<double, 3> pipecg_update_scalar(double alpha, double beta, double c,
                                           const PipeScalarVectors& v) noexcept;
/// The first iteration: w = c w (w held A r; now A u = A (c r)), returns
/// the local {c r . r, c w . r, r . r}.
std::array<double, 3> pipecg_dots_scalar(double c, const PipeScalarVectors& v) noexcept;

// Per-point diagonals (the Jacobi preconditioner of a general matrix): `c`,
// `d` and `minv` are fields shaped like the vectors, read on the interior.

/// y = c x point by point, returns local y . y.
double scale_dot(const Field& c, const Field& x, Field& y) noexcept;
/// y = c x point by point.
void scale(const Field& c, const Field& x, Field& y) noexcept;
/// y = x / d point by point, returns local x . y.
double diag_scale_dot(const Field& x, const Field& d, Field& y) noexcept;
/// pipecg_update with m = minv w point by point.
std::array<double, 3> pipecg_update(double alpha, double beta, const Field& minv,
                                    const PipeVectors& v) noexcept;
/// pipecg_dots with m = minv w point by point.
std::array<double, 3> pipecg_dots(const Field& minv, const PipeVectors& v) noexcept;

/// A diagonal matrix: `constant` I (the stencils' constant diagonal), or,
/// when `values` is set, the per-point values of that field (a general
/// matrix's). Borrows the field. The kernels below pick the constant or the
/// per-point kernel once per call, so the stencils' arithmetic is unchanged.
struct Scaling {
  double constant = 1.0;
  const Field* values = nullptr;
};

/// y = c x, returns local y . y.
inline double scale_dot(const Scaling& c, const Field& x, Field& y) noexcept {
  return c.values != nullptr ? scale_dot(*c.values, x, y) : scale_dot(c.constant, x, y);
}
/// y = c x.
inline void scale(const Scaling& c, const Field& x, Field& y) noexcept {
  if (c.values != nullptr) {
    scale(*c.values, x, y);
  } else {
    scale(c.constant, x, y);
  }
}
/// y = x / d, returns local x . y.
inline double diag_scale_dot(const Field& x, const Scaling& d, Field& y) noexcept {
  return d.values != nullptr ? diag_scale_dot(x, *d.values, y) : diag_scale_dot(x, d.constant, y);
}
/// pipecg_update with M^-1 = minv.
inline std::array<double, 3> pipecg_update(double alpha, double beta, const Scaling& minv,
                                           const PipeVectors& v) noexcept {
  return minv.values != nullptr ? pipecg_update(alpha, beta, *minv.values, v)
                                : pipecg_update(alpha, beta, minv.constant, v);
}
/// pipecg_dots with M^-1 = minv.
inline std::array<double, 3> pipecg_dots(const Scaling& minv, const PipeVectors& v) noexcept {
  return minv.values != nullptr ? pipecg_dots(*minv.values, v) : pipecg_dots(minv.constant, v);
}

}  // namespace asyncsolve::ops
