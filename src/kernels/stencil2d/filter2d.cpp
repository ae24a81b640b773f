#include "asyncsolve/kernels/filter2d.hpp"

#include <algorithm>
#include <stdexcept>

namespace asyncsolve::kernels {

namespace {
/// Below this many points per row, apply() sums point by point.
constexpr int narrow_width = 16;
}  // namespace

Filter2d::Filter2d(int radius) : r_(radius) {
  if (radius < 1) throw std::invalid_argument("Filter2d: radius must be >= 1");
  const int side = 2 * r_ + 1;
  w_.resize(static_cast<std::size_t>(side) * side);
  // 1 + (3a + 7b) mod 13 at a = k + r, b = l + r: positive, and no mirror
  // image or transpose of a position carries the same weight for r <= 3
  // except by coincidence of a few entries; normalised to sum to 1.
  double sum = 0.0;
  for (int b = 0; b < side; ++b) {
    for (int a = 0; a < side; ++a) {
      const double raw = 1.0 + static_cast<double>((3 * a + 7 * b) % 13);
      w_[static_cast<std::size_t>(b) * side + a] = raw;
      sum += raw;
    }
  }
  for (double& w : w_) w /= sum;
}

void Filter2d::apply(const double* v, long v_stride, double* out, long out_stride, int x0, int x1,
                     int y0, int y1) const noexcept {
  if (x0 >= x1) return;
  const int side = 2 * r_ + 1;
  if (x1 - x0 < narrow_width) {
    // Narrow strips (the east and west border columns): point by point, the
    // same sum in the same order, without (2r+1)^2 short vector loops per row.
    for (int j = y0; j < y1; ++j) {
      for (int i = x0; i < x1; ++i) {
        double sum = 0.0;
        for (int l = -r_; l <= r_; ++l) {
          const double* row = v + (j + l) * v_stride + i;
          const double* w = w_.data() + static_cast<std::size_t>(l + r_) * side + r_;
          for (int k = -r_; k <= r_; ++k) sum += w[k] * row[k];
        }
        out[j * out_stride + i] = sum;
      }
    }
    return;
  }
  for (int j = y0; j < y1; ++j) {
    double* o = out + j * out_stride;
    for (int i = x0; i < x1; ++i) o[i] = 0.0;
    for (int l = -r_; l <= r_; ++l) {
      const double* row = v + (j + l) * v_stride;
      const double* w = w_.data() + static_cast<std::size_t>(l + r_) * side + r_;
      for (int k = -r_; k <= r_; ++k) {
        const double wk = w[k];
        const double* src = row + k;
        // out(i, j) += w(k, l) v(i + k, j + l)
#pragma omp simd
        for (int i = x0; i < x1; ++i) o[i] += wk * src[i];
      }
    }
  }
}

double stencil2d_initial(std::int64_t gx, std::int64_t gy) noexcept {
  // splitmix64 of the packed coordinates; the top 53 bits as a fraction.
  std::uint64_t z = (static_cast<std::uint64_t>(gy) << 32) ^ static_cast<std::uint64_t>(gx);
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

std::vector<double> filter2d_serial(const Filter2d& filter, int size_x, int size_y,
                                    long iterations) {
  const int r = filter.radius();
  const long stride = size_x + 2L * r;
  const long rows = size_y + 2L * r;
  std::vector<double> padded(static_cast<std::size_t>(stride * rows), 0.0);
  std::vector<double> field(static_cast<std::size_t>(size_x) * size_y);
  for (int y = 0; y < size_y; ++y)
    for (int x = 0; x < size_x; ++x)
      field[static_cast<std::size_t>(y) * size_x + x] = stencil2d_initial(x, y);
  const auto wrap = [](long i, long n) { return ((i % n) + n) % n; };
  double* origin = padded.data() + r * stride + r;
  for (long it = 0; it < iterations; ++it) {
    // The padded copy with periodic halos of width r.
    for (long y = -r; y < size_y + r; ++y) {
      const double* src = field.data() + wrap(y, size_y) * size_x;
      double* dst = origin + y * stride;
      for (long x = -r; x < size_x + r; ++x) dst[x] = src[wrap(x, size_x)];
    }
    filter.apply(origin, stride, field.data(), size_x, 0, size_x, 0, size_y);
  }
  return field;
}

}  // namespace asyncsolve::kernels
