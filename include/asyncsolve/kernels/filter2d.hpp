#pragma once
/// The (2r+1) x (2r+1) filter of the Stencil2D benchmark (paper 004) and its
/// serial reference over a periodic global domain.
///
/// out(i, j) = sum over l = -r..r, k = -r..r of w(k, l) * v(i + k, j + l),
/// summed in that order (l outer, k inner) by every caller, so a parallel
/// run and the serial reference produce the same bits. The weights are
/// positive, sum to 1, and are neither symmetric in x nor in y nor under
/// transposition, so a halo taken from a wrong or mirrored neighbour changes
/// the result.
#include <cstdint>
#include <vector>

namespace asyncsolve::kernels {

/// The filter of radius `radius` (>= 1). Cheap to copy.
class Filter2d {
 public:
  explicit Filter2d(int radius);

  int radius() const noexcept { return r_; }
  /// w(k, l) for -r <= k, l <= r.
  double weight(int k, int l) const noexcept { return w_[(l + r_) * (2 * r_ + 1) + (k + r_)]; }

  /// Writes out(i, j) for x0 <= i < x1, y0 <= j < y1. `v` points at element
  /// (0, 0) of a padded array with row stride `v_stride` whose elements
  /// v(i + k, j + l) for every |k|, |l| <= r exist; `out` points at element
  /// (0, 0) of an array with row stride `out_stride`. Rows are y.
  void apply(const double* v, long v_stride, double* out, long out_stride, int x0, int x1, int y0,
             int y1) const noexcept;

 private:
  int r_;
  std::vector<double> w_;
};

/// The deterministic initial value at global point (gx, gy), in [0, 1): a
/// hash of the coordinates, so every rank count starts from the same field.
double stencil2d_initial(std::int64_t gx, std::int64_t gy) noexcept;

/// The serial reference: `iterations` applications of `filter` to the
/// periodic gx x gy domain that starts from stencil2d_initial. Returns the
/// field, row-major (index gy * size_x + gx). Local (one process).
std::vector<double> filter2d_serial(const Filter2d& filter, int size_x, int size_y,
                                    long iterations);

}  // namespace asyncsolve::kernels
