#include "asyncsolve/ops/stencil7.hpp"

#include <cstring>

namespace asyncsolve::ops {

using grid::Field;

void jacobi_sweep(const Field& u, Field& u_new) noexcept {
  const int nx = u.interior()[0];
  const int ny = u.interior()[1];
  const int nz = u.interior()[2];
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  constexpr double sixth = 1.0 / 6.0;
  for (int k = 0; k < nz; ++k) {
    for (int j = 0; j < ny; ++j) {
      const double* __restrict c = u.origin() + u.index(0, j, k);
      const double* __restrict s = c - sy;
      const double* __restrict n = c + sy;
      const double* __restrict b = c - sz;
      const double* __restrict t = c + sz;
      double* __restrict out = u_new.origin() + u_new.index(0, j, k);
#pragma omp simd
      for (int i = 0; i < nx; ++i) {
        out[i] = (c[i - 1] + c[i + 1] + s[i] + n[i] + b[i] + t[i]) * sixth;
      }
    }
  }
}

void jacobi_sweep_ref(const Field& u, Field& u_new) noexcept {
  const auto& n = u.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i)
        u_new(i, j, k) = (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k) +
                          u(i, j, k - 1) + u(i, j, k + 1)) *
                         (1.0 / 6.0);
}

double residual_norm_sq(const Field& u) noexcept {
  const int nx = u.interior()[0];
  const int ny = u.interior()[1];
  const int nz = u.interior()[2];
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  double sum = 0.0;
  for (int k = 0; k < nz; ++k) {
    for (int j = 0; j < ny; ++j) {
      const double* __restrict c = u.origin() + u.index(0, j, k);
      const double* __restrict s = c - sy;
      const double* __restrict n = c + sy;
      const double* __restrict b = c - sz;
      const double* __restrict t = c + sz;
#pragma omp simd reduction(+ : sum)
      for (int i = 0; i < nx; ++i) {
        const double r = c[i - 1] + c[i + 1] + s[i] + n[i] + b[i] + t[i] - 6.0 * c[i];
        sum += r * r;
      }
    }
  }
  return sum;
}

double residual_norm_sq_ref(const Field& u) noexcept {
  const auto& n = u.interior();
  double sum = 0.0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const double r = u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k) +
                         u(i, j, k - 1) + u(i, j, k + 1) - 6.0 * u(i, j, k);
        sum += r * r;
      }
  return sum;
}

void copy_interior(const Field& src, Field& dst) noexcept {
  const auto& n = src.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      std::memcpy(dst.origin() + dst.index(0, j, k), src.origin() + src.index(0, j, k),
                  static_cast<std::size_t>(n[0]) * sizeof(double));
}

}  // namespace asyncsolve::ops
