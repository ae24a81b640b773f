#include "asyncsolve/grid/split.hpp"

#include <algorithm>

namespace asyncsolve::grid {

OverlapSplit split_for_overlap(const Decomposition& decomposition) {
  const Int3& n = decomposition.local();
  Box inner{{0, 0, 0}, n};
  for (const Face face : all_faces) {
    if (decomposition.is_physical_boundary(face)) continue;
    const int a = axis(face);
    if (is_high(face)) {
      inner.hi[a] = std::max(inner.lo[a], inner.hi[a] - 1);
    } else {
      inner.lo[a] = std::min(inner.hi[a], inner.lo[a] + 1);
    }
  }
  OverlapSplit split;
  split.interior = inner;
  // Peel z slabs over the whole xy extent, then y slabs within the inner z
  // range, then x slabs within the inner y and z ranges.
  const auto push = [&](const Box& b) {
    if (b.size() > 0) split.boundary.push_back(b);
  };
  push(Box{{0, 0, 0}, {n[0], n[1], inner.lo[2]}});
  push(Box{{0, 0, inner.hi[2]}, {n[0], n[1], n[2]}});
  push(Box{{0, 0, inner.lo[2]}, {n[0], inner.lo[1], inner.hi[2]}});
  push(Box{{0, inner.hi[1], inner.lo[2]}, {n[0], n[1], inner.hi[2]}});
  push(Box{{0, inner.lo[1], inner.lo[2]}, {inner.lo[0], inner.hi[1], inner.hi[2]}});
  push(Box{{inner.hi[0], inner.lo[1], inner.lo[2]}, {n[0], inner.hi[1], inner.hi[2]}});
  if (inner.size() <= 0) split.interior = Box{};
  return split;
}

Box planes(const Box& box, int k_begin, int k_end) noexcept {
  Box b = box;
  b.lo[2] = std::clamp(k_begin, box.lo[2], box.hi[2]);
  b.hi[2] = std::clamp(k_end, b.lo[2], box.hi[2]);
  return b;
}

}  // namespace asyncsolve::grid
