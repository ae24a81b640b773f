#include "asyncsolve/ops/stencil.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

// The fast kernels are plain loops written so that the compiler vectorises
// them (`omp simd`, enabled by -fopenmp-simd without an OpenMP runtime):
// unit stride in x, the rows of the neighbouring planes reached through
// constant offsets, the inner product accumulated in the same pass.

namespace asyncsolve::ops {

using grid::Box;
using grid::Field;

namespace {

double apply7(double diagonal, const Field& p, Field& q, const Box& box) noexcept {
  const std::ptrdiff_t sy = p.stride_y();
  const std::ptrdiff_t sz = p.stride_z();
  const int len = box.hi[0] - box.lo[0];
  double dot = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const double* __restrict c = p.origin() + p.index(box.lo[0], j, k);
      double* __restrict out = q.origin() + q.index(box.lo[0], j, k);
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < len; ++i) {
        const double v =
            diagonal * c[i] - (c[i - 1] + c[i + 1] + c[i - sy] + c[i + sy] + c[i - sz] + c[i + sz]);
        out[i] = v;
        dot += c[i] * v;
      }
    }
  return dot;
}

/// 27 points as (diagonal + 1) c - (sum of the 3x3x3 block): per row, first
/// the sums over the 9 rows around it (x from -1 to len), then three of
/// those per point. 12 loads per point instead of 27.
double apply27(double diagonal, const Field& p, Field& q, const Box& box) noexcept {
  const std::ptrdiff_t sy = p.stride_y();
  const std::ptrdiff_t sz = p.stride_z();
  const int len = box.hi[0] - box.lo[0];
  thread_local std::vector<double> columns;
  if (columns.size() < static_cast<std::size_t>(len) + 2)
    columns.resize(static_cast<std::size_t>(len) + 2);
  double* __restrict col = columns.data() + 1;  // col[-1 .. len]
  const double centre = diagonal + 1.0;
  double dot = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const double* __restrict c = p.origin() + p.index(box.lo[0], j, k);
      double* __restrict out = q.origin() + q.index(box.lo[0], j, k);
      const double* __restrict r0 = c - sz - sy;
      const double* __restrict r1 = c - sz;
      const double* __restrict r2 = c - sz + sy;
      const double* __restrict r3 = c - sy;
      const double* __restrict r5 = c + sy;
      const double* __restrict r6 = c + sz - sy;
      const double* __restrict r7 = c + sz;
      const double* __restrict r8 = c + sz + sy;
#pragma omp simd
      for (int i = -1; i <= len; ++i) {
        col[i] = ((r0[i] + r1[i]) + (r2[i] + r3[i])) + ((c[i] + r5[i]) + (r6[i] + (r7[i] + r8[i])));
      }
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < len; ++i) {
        const double v = centre * c[i] - (col[i - 1] + col[i] + col[i + 1]);
        out[i] = v;
        dot += c[i] * v;
      }
    }
  return dot;
}

}  // namespace

double apply(const StencilOperator& a, const Field& p, Field& q, const Box& box) noexcept {
  if (box.size() <= 0) return 0.0;
  return a.stencil == Stencil::seven_point ? apply7(a.diagonal(), p, q, box)
                                           : apply27(a.diagonal(), p, q, box);
}

double apply_ref(const StencilOperator& a, const Field& p, Field& q, const Box& box) noexcept {
  const bool seven = a.stencil == Stencil::seven_point;
  double dot = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j)
      for (int i = box.lo[0]; i < box.hi[0]; ++i) {
        double neighbours = 0.0;
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const int distance = (dx != 0) + (dy != 0) + (dz != 0);
              if (distance == 0 || (seven && distance != 1)) continue;
              neighbours += p(i + dx, j + dy, k + dz);
            }
        const double v = a.diagonal() * p(i, j, k) - neighbours;
        q(i, j, k) = v;
        dot += p(i, j, k) * v;
      }
  return dot;
}

}  // namespace asyncsolve::ops
