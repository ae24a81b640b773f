#pragma once
/// A 3D scalar field on one rank's block, surrounded by a halo.
#include <cstddef>
#include <memory>
#include <span>

#include "asyncsolve/core/triple.hpp"
#include "asyncsolve/grid/decomposition.hpp"

namespace asyncsolve::grid {

/// A half-open box of local indices [lo, hi) in each dimension. Local index 0
/// is the first interior point; halo points have negative indices or indices
/// >= the interior size.
struct Box {
  Int3 lo{};
  Int3 hi{};
  long long size() const noexcept {
    return static_cast<long long>(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
  }
};

/// Values of one rank's interior points plus a halo of width `halo` on every
/// side, including edges and corners (27-point stencils need them). Storage is
/// contiguous, x fastest, 64-byte aligned. Owns its memory; move-only.
class Field {
 public:
  Field() = default;
  explicit Field(const Int3& interior, int halo = 1);
  Field(const Field&) = delete;
  Field& operator=(const Field&) = delete;
  Field(Field&&) noexcept = default;
  Field& operator=(Field&&) noexcept = default;

  const Int3& interior() const noexcept { return n_; }
  int halo() const noexcept { return halo_; }
  /// Distance in elements between neighbours along y and along z.
  std::ptrdiff_t stride_y() const noexcept { return sy_; }
  std::ptrdiff_t stride_z() const noexcept { return sz_; }
  /// Number of stored values, halo included.
  std::size_t storage_size() const noexcept { return size_; }

  /// Offset of local point (i, j, k) from the first interior point.
  std::ptrdiff_t index(int i, int j, int k) const noexcept { return i + j * sy_ + k * sz_; }
  double& operator()(int i, int j, int k) noexcept { return origin_[index(i, j, k)]; }
  double operator()(int i, int j, int k) const noexcept { return origin_[index(i, j, k)]; }

  /// Pointer to interior point (0, 0, 0); valid offsets are index(i, j, k).
  double* origin() noexcept { return origin_; }
  const double* origin() const noexcept { return origin_; }
  /// The whole storage, halo included.
  std::span<double> storage() noexcept { return {data_.get(), size_}; }
  std::span<const double> storage() const noexcept { return {data_.get(), size_}; }

  /// Sets every value, halo included.
  void fill(double value) noexcept;
  /// Sets every interior value.
  void fill_interior(double value) noexcept;
  /// Exchanges storage with `other` (same shape required): the pointer swap
  /// of Jacobi's u and u_new.
  void swap(Field& other) noexcept;

  /// The interior.
  Box interior_box() const noexcept { return Box{{0, 0, 0}, n_}; }
  /// The `halo` layers just inside the interior across `face`: what a
  /// neighbour across that face needs.
  Box send_box(Face face) const noexcept;
  /// The halo layers outside `face`: what the neighbour across it sends.
  Box recv_box(Face face) const noexcept;
  /// General neighbour regions for direction `dir` in {-1,0,1}^3 (faces,
  /// edges, corners): the interior slab to send, and the halo slab to fill.
  Box send_box(const Int3& dir) const noexcept;
  Box recv_box(const Int3& dir) const noexcept;

 private:
  struct FreeAligned {
    void operator()(double* p) const noexcept;
  };
  Int3 n_{};
  int halo_ = 0;
  std::ptrdiff_t sy_ = 0;
  std::ptrdiff_t sz_ = 0;
  std::size_t size_ = 0;
  std::unique_ptr<double[], FreeAligned> data_;
  double* origin_ = nullptr;
};

/// Copies the six face layers of the halo of `src` into `dst` (same shape).
/// Keeps the last received halo when Jacobi swaps u and u_new between
/// exchanges (--halo-every N > 1).
void copy_face_halos(const Field& src, Field& dst) noexcept;

/// Copies the values of `box` into `out` (x fastest); returns the count.
std::size_t pack(const Field& field, const Box& box, double* out) noexcept;
/// Copies `in` into the values of `box` (x fastest); returns the count.
std::size_t unpack(Field& field, const Box& box, const double* in) noexcept;

}  // namespace asyncsolve::grid
