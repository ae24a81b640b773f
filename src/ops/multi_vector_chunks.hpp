#pragma once
/// The chunked loops shared by the multi-vector kernels (multi_vector.cpp,
/// multi_vector_dcgs2.cpp); internal to the ops layer.
#include <algorithm>
#include <cstddef>

#include "asyncsolve/core/cost.hpp"
#include "asyncsolve/ops/multi_vector.hpp"

// The fast kernels walk the interior in chunks of at most `chunk` points
// (whole rows of a structured field are shorter; a CSR vector is one long
// row) and, within a chunk, take the basis four vectors at a time: the
// chunk of w (or of the vectors it updates) stays in cache while the basis
// streams past it, four long runs at a time (one vector at a time, in short
// runs, ran at a quarter of the memory bandwidth on this machine's AMD EPYC:
// too many streams, too short for the prefetchers). Each vector crosses memory
// once per call. The `_ref` twins make one plain loop per operation. Both
// report the streamed bytes of the fast kernel to the cost meter (the
// simulation build's model).

namespace asyncsolve::ops::chunked {

/// Points per chunk: 32 KiB of a vector.
inline constexpr int chunk = 4096;

/// Calls body(offset, length) for every chunk of the interior of fields
/// shaped like `f`.
template <class Body>
inline void for_chunks(const Field& f, Body&& body) {
  const auto& n = f.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j) {
      const std::ptrdiff_t row = f.index(0, j, k);
      for (int i = 0; i < n[0]; i += chunk) body(row + i, std::min(chunk, n[0] - i));
    }
}

/// Calls body(i) for every interior point (its offset) of fields shaped like `f`.
template <class Body>
inline void for_points(const Field& f, Body&& body) {
  for_chunks(f, [&](std::ptrdiff_t o, int len) {
    for (int i = 0; i < len; ++i) body(o + i);
  });
}

inline void charge_streams(const Field& f, std::size_t streams) noexcept {
  const auto& n = f.interior();
  core::charge_bytes(8.0 * static_cast<double>(streams) * n[0] * n[1] * n[2]);
}

/// out[q] += v[q] . w over one chunk (w's chunk at pw), for every q.
inline void dots_chunk(FieldList v, const double* __restrict pw, std::ptrdiff_t o, int len,
                       std::span<double> out) {
  const std::size_t n = v.size();
  std::size_t q = 0;
  for (; q + 4 <= n; q += 4) {
    const double* __restrict a = v[q]->origin() + o;
    const double* __restrict b = v[q + 1]->origin() + o;
    const double* __restrict c = v[q + 2]->origin() + o;
    const double* __restrict d = v[q + 3]->origin() + o;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (int i = 0; i < len; ++i) {
      s0 += a[i] * pw[i];
      s1 += b[i] * pw[i];
      s2 += c[i] * pw[i];
      s3 += d[i] * pw[i];
    }
    out[q] += s0;
    out[q + 1] += s1;
    out[q + 2] += s2;
    out[q + 3] += s3;
  }
  for (; q < n; ++q) {
    const double* __restrict a = v[q]->origin() + o;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < len; ++i) s += a[i] * pw[i];
    out[q] += s;
  }
}

/// w += sign sum_q c[q] v[q] over one chunk (w's chunk at pw; sign 1 or -1).
inline void axpys_chunk(FieldList v, std::span<const double> c, double* __restrict pw,
                        std::ptrdiff_t o, int len, double sign = 1.0) {
  const std::size_t n = v.size();
  std::size_t q = 0;
  for (; q + 4 <= n; q += 4) {
    const double* __restrict a = v[q]->origin() + o;
    const double* __restrict b = v[q + 1]->origin() + o;
    const double* __restrict e = v[q + 2]->origin() + o;
    const double* __restrict d = v[q + 3]->origin() + o;
    const double ca = sign * c[q], cb = sign * c[q + 1], ce = sign * c[q + 2], cd = sign * c[q + 3];
#pragma omp simd
    for (int i = 0; i < len; ++i) pw[i] += ca * a[i] + cb * b[i] + ce * e[i] + cd * d[i];
  }
  for (; q < n; ++q) {
    const double* __restrict a = v[q]->origin() + o;
    const double ca = sign * c[q];
#pragma omp simd
    for (int i = 0; i < len; ++i) pw[i] += ca * a[i];
  }
}

/// Local w . w over one chunk.
inline double norm_chunk(const double* __restrict pw, int len) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int i = 0; i < len; ++i) s += pw[i] * pw[i];
  return s;
}

}  // namespace asyncsolve::ops::chunked
