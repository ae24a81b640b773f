#include "asyncsolve/grid/field.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace asyncsolve::grid {

void Field::FreeAligned::operator()(double* p) const noexcept { std::free(p); }

Field::Field(const Int3& interior, int halo) : n_(interior), halo_(halo) {
  const std::size_t ex = static_cast<std::size_t>(n_[0] + 2 * halo);
  const std::size_t ey = static_cast<std::size_t>(n_[1] + 2 * halo);
  const std::size_t ez = static_cast<std::size_t>(n_[2] + 2 * halo);
  sy_ = static_cast<std::ptrdiff_t>(ex);
  sz_ = static_cast<std::ptrdiff_t>(ex * ey);
  size_ = ex * ey * ez;
  constexpr std::size_t alignment = 64;
  const std::size_t bytes = (size_ * sizeof(double) + alignment - 1) / alignment * alignment;
  auto* p = static_cast<double*>(std::aligned_alloc(alignment, bytes));
  if (p == nullptr) throw std::bad_alloc();
  data_.reset(p);
  std::fill(p, p + size_, 0.0);
  origin_ =
      p + halo + static_cast<std::ptrdiff_t>(halo) * sy_ + static_cast<std::ptrdiff_t>(halo) * sz_;
}

void Field::fill(double value) noexcept { std::fill(data_.get(), data_.get() + size_, value); }

void Field::fill_interior(double value) noexcept {
  for (int k = 0; k < n_[2]; ++k)
    for (int j = 0; j < n_[1]; ++j) std::fill_n(origin_ + index(0, j, k), n_[0], value);
}

void Field::swap(Field& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(origin_, other.origin_);
}

Box Field::send_box(Face face) const noexcept {
  Int3 dir{0, 0, 0};
  dir[axis(face)] = is_high(face) ? 1 : -1;
  return send_box(dir);
}

Box Field::recv_box(Face face) const noexcept {
  Int3 dir{0, 0, 0};
  dir[axis(face)] = is_high(face) ? 1 : -1;
  return recv_box(dir);
}

Box Field::send_box(const Int3& dir) const noexcept {
  Box b;
  for (int a = 0; a < 3; ++a) {
    if (dir[a] < 0) {
      b.lo[a] = 0;
      b.hi[a] = halo_;
    } else if (dir[a] > 0) {
      b.lo[a] = n_[a] - halo_;
      b.hi[a] = n_[a];
    } else {
      b.lo[a] = 0;
      b.hi[a] = n_[a];
    }
  }
  return b;
}

Box Field::recv_box(const Int3& dir) const noexcept {
  Box b;
  for (int a = 0; a < 3; ++a) {
    if (dir[a] < 0) {
      b.lo[a] = -halo_;
      b.hi[a] = 0;
    } else if (dir[a] > 0) {
      b.lo[a] = n_[a];
      b.hi[a] = n_[a] + halo_;
    } else {
      b.lo[a] = 0;
      b.hi[a] = n_[a];
    }
  }
  return b;
}

void copy_face_halos(const Field& src, Field& dst) noexcept {
  for (const Face face : all_faces) {
    const Box box = src.recv_box(face);
    const std::size_t nx = static_cast<std::size_t>(box.hi[0] - box.lo[0]);
    for (int k = box.lo[2]; k < box.hi[2]; ++k)
      for (int j = box.lo[1]; j < box.hi[1]; ++j)
        std::memcpy(dst.origin() + dst.index(box.lo[0], j, k),
                    src.origin() + src.index(box.lo[0], j, k), nx * sizeof(double));
  }
}

std::size_t pack(const Field& field, const Box& box, double* out) noexcept {
  const std::size_t nx = static_cast<std::size_t>(box.hi[0] - box.lo[0]);
  std::size_t n = 0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      std::memcpy(out + n, field.origin() + field.index(box.lo[0], j, k), nx * sizeof(double));
      n += nx;
    }
  return n;
}

std::size_t unpack(Field& field, const Box& box, const double* in) noexcept {
  const std::size_t nx = static_cast<std::size_t>(box.hi[0] - box.lo[0]);
  std::size_t n = 0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      std::memcpy(field.origin() + field.index(box.lo[0], j, k), in + n, nx * sizeof(double));
      n += nx;
    }
  return n;
}

}  // namespace asyncsolve::grid
