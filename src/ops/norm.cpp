#include "asyncsolve/ops/norm.hpp"

#include <algorithm>
#include <cmath>

namespace asyncsolve::ops {
namespace {

/// r at (i, j, k): the six neighbours' sum less 6 u.
double jacobi_r(const grid::Field& u, int i, int j, int k) noexcept {
  return u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k) + u(i, j, k - 1) +
         u(i, j, k + 1) - 6.0 * u(i, j, k);
}

/// `f(value)` at every interior point of planes [k_begin, k_end).
template <class F>
void each(const grid::Field& x, int k_begin, int k_end, F&& f) {
  const grid::Int3& n = x.interior();
  for (int k = k_begin; k < k_end; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) f(i, j, k);
}

/// max(m, |v|), NaN winning (a NaN anywhere must show).
double max_with(double m, double v) noexcept {
  const double a = std::abs(v);
  return std::isnan(a) || a > m ? a : m;
}

}  // namespace

double max_abs(const grid::Field& x) noexcept {
  double m = 0.0;
  each(x, 0, x.interior()[2], [&](int i, int j, int k) { m = max_with(m, x(i, j, k)); });
  return m;
}

double sum_sq_scaled(const grid::Field& x, int exponent) noexcept {
  double sum = 0.0;
  each(x, 0, x.interior()[2], [&](int i, int j, int k) {
    const double s = std::ldexp(x(i, j, k), -exponent);
    sum += s * s;
  });
  return sum;
}

double jacobi_residual_max_abs(const grid::Field& u, int k_begin, int k_end) noexcept {
  double m = 0.0;
  each(u, k_begin, k_end, [&](int i, int j, int k) { m = max_with(m, jacobi_r(u, i, j, k)); });
  return m;
}

double jacobi_residual_sum_sq_scaled(const grid::Field& u, int exponent, int k_begin,
                                     int k_end) noexcept {
  double sum = 0.0;
  each(u, k_begin, k_end, [&](int i, int j, int k) {
    const double s = std::ldexp(jacobi_r(u, i, j, k), -exponent);
    sum += s * s;
  });
  return sum;
}

}  // namespace asyncsolve::ops
