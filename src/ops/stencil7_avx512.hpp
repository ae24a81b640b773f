#pragma once
// Internal to stencil7.cpp, included only where AVX-512F and AVX-512VL are
// enabled: the building blocks of its AVX-512 passes (prefetching, lane
// shifts, the masked row ends, the residual accumulators).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "stencil7_rows.hpp"

namespace asyncsolve::ops::stencil7_detail {

/// How far ahead the top plane u(., ., k+1) is prefetched: of the six
/// neighbours it is the one that comes from memory (the others were read as
/// the top neighbour of earlier rows and are still in cache), and the
/// hardware prefetcher alone leaves the core waiting for it. About five rows
/// ahead, within 8 to 16 KiB: the best distances measured on the EPYC of
/// docs/PERFORMANCE.md for rows of 128 to 1000 points.
inline std::uintptr_t prefetch_distance(std::ptrdiff_t stride_y) noexcept {
  const auto five_rows = static_cast<std::uintptr_t>(5 * stride_y) * sizeof(double);
  return std::clamp<std::uintptr_t>(five_rows, 8192, 16384);
}

/// Prefetches the line `bytes` past `p`. The address is formed as an integer,
/// so looking past the end of the field forms no out-of-bounds pointer.
inline void prefetch_ahead(const double* p, std::uintptr_t bytes) noexcept {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an integer on purpose, as said above
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + bytes),
               _MM_HINT_T0);
}

/// Lanes `Shift` .. 7 of `lo` followed by lanes 0 .. Shift - 1 of `hi`
/// (valignq): from the vectors c[i - 8 ..], c[i ..] and c[i + 8 ..] it makes
/// c[i - 1 ..] and c[i + 1 ..] without two more unaligned loads. The
/// all-lanes mask form sidesteps g++ 12's false -Wmaybe-uninitialized on
/// _mm512_alignr_epi64.
template <int Shift>
inline __m512d shift_in(__m512d lo, __m512d hi, std::integral_constant<int, Shift>) noexcept {
  return _mm512_castsi512_pd(_mm512_maskz_alignr_epi64(
      static_cast<__mmask8>(0xFF), _mm512_castpd_si512(hi), _mm512_castpd_si512(lo), Shift));
}

/// Points to handle one by one before `p` reaches a 64-byte boundary (rows
/// start at any alignment: the origin is offset by the halo), at most `nx`.
inline int peel_count(const double* p, int nx) noexcept {
  const std::uintptr_t misalign = reinterpret_cast<std::uintptr_t>(p) % 64;
  const int head = misalign == 0 ? 0 : static_cast<int>((64 - misalign) / sizeof(double));
  return head < nx ? head : nx;
}

/// The lanes of an aligned vector whose lane 0 lies q points into a row
/// (0 <= q < stride_y, the halo cells after the row from nx on) that are
/// interior points: those before the row's end and those from the next
/// row's start on. With nx >= 8 a vector holds at most one run of halo cells.
inline __mmask8 interior_lanes(std::ptrdiff_t q, int nx, std::ptrdiff_t stride_y) noexcept {
  // Lanes [0, before) end this row, lanes [from, 8) start the next one.
  const auto before = static_cast<unsigned>(std::clamp<std::ptrdiff_t>(nx - q, 0, 8));
  const auto from = static_cast<unsigned>(std::min<std::ptrdiff_t>(stride_y - q, 8));
  const unsigned lanes = ((1U << before) - 1U) | (0xFFU & ~((1U << from) - 1U));
  return static_cast<__mmask8>(lanes);
}

/// The AVX-512 operations both passes use, by vector width: 8 points in a
/// 512-bit vector (pass_avx512) or 4 in a 256-bit one (AVX-512VL,
/// pass_avx512_ymm); masks select lanes 0 .. count - 1. (+ and * are
/// GCC's and Clang's vector operators: vaddpd and vmulpd, lane by lane.)
template <int Bits>
struct Lanes;

template <>
struct Lanes<512> {
  using V = __m512d;
  static V load(__mmask8 m, const double* p) noexcept { return _mm512_maskz_loadu_pd(m, p); }
  static V zero() noexcept { return _mm512_setzero_pd(); }
  static void store_aligned(double* p, V v) noexcept { _mm512_store_pd(p, v); }
  static V fnmadd(V a, V b, V c) noexcept { return _mm512_fnmadd_pd(a, b, c); }
  static V fmadd(V a, V b, V c) noexcept { return _mm512_fmadd_pd(a, b, c); }
};

template <>
struct Lanes<256> {
  using V = __m256d;
  static V load(__mmask8 m, const double* p) noexcept { return _mm256_maskz_loadu_pd(m, p); }
  static V zero() noexcept { return _mm256_setzero_pd(); }
  static void store_aligned(double* p, V v) noexcept { _mm256_store_pd(p, v); }
  static V fnmadd(V a, V b, V c) noexcept { return _mm256_fnmadd_pd(a, b, c); }
  static V fmadd(V a, V b, V c) noexcept { return _mm256_fmadd_pd(a, b, c); }
};

/// One row of a pass: its centre c = u(0, j, k), the rows south (j - 1),
/// north (j + 1), bottom (k - 1) and top (k + 1), and u_new's row (null
/// for Store::none).
struct Row {
  const double* c;
  const double* s;
  const double* n;
  const double* b;
  const double* t;
  double* out;
};

template <Store S>
Row row_at(const Field& u, Field* u_new, int j, int k) noexcept {
  const double* c = u.origin() + u.index(0, j, k);
  double* out = nullptr;
  if constexpr (S != Store::none) out = u_new->origin() + u_new->index(0, j, k);
  return {c, c - u.stride_y(), c + u.stride_y(), c - u.stride_z(), c + u.stride_z(), out};
}

/// Points lo .. lo + count - 1 of `row` (count at most the vector's lanes)
/// as one masked vector: u_new unless Store::none, and with `Residual` the
/// squared residuals added to `acc` (returned). Masked loads neither fault nor read what
/// they leave out; only lanes lo .. lo + count - 1 are stored, and left-out
/// lanes add exactly 0.
template <int Bits, Store S, bool Residual, class V = typename Lanes<Bits>::V>
[[nodiscard]] V masked_points(const Row& row, int lo, int count, V w, V six, V acc) noexcept {
  using L = Lanes<Bits>;
  const auto m = static_cast<__mmask8>((1U << count) - 1U);
  V sum = L::load(m, row.c + lo - 1) + L::load(m, row.c + lo + 1);
  sum = sum + L::load(m, row.s + lo);
  sum = sum + L::load(m, row.n + lo);
  sum = sum + L::load(m, row.b + lo);
  sum = sum + L::load(m, row.t + lo);
  if constexpr (S != Store::none) {
    // Through an aligned buffer and plain stores: on the Zen 5 of
    // docs/PERFORMANCE.md, AVX-512 masked stores at the two ends of every
    // row cost the 200^3 sweep 8% of its bandwidth (0.79 against 0.86 of
    // the triad). The values are the vector's lanes, bit for bit.
    alignas(64) double lanes[8];
    L::store_aligned(lanes, sum * w);
    std::copy_n(lanes, count, row.out + lo);
  }
  if constexpr (Residual) {
    const V r = L::fnmadd(six, L::load(m, row.c + lo), sum);  // sum - 6 c
    acc = L::fmadd(r, r, acc);
  }
  return acc;
}

/// The four vector accumulators of the squared residuals (the order is
/// pass_avx512's). A pass copies them into a local for each row: captured
/// by reference, they would be stored back after every FMA.
template <int Bits>
struct Sums {
  using L = Lanes<Bits>;
  typename L::V a0 = L::zero();
  typename L::V a1 = L::zero();
  typename L::V a2 = L::zero();
  typename L::V a3 = L::zero();

  /// The lanes of (a0 + a1) + (a2 + a3), added in order (lane by lane:
  /// _mm512_reduce_add_pd trips a false g++ 12 warning).
  [[nodiscard]] double total() const noexcept {
    alignas(64) double lanes[8];
    L::store_aligned(lanes, (a0 + a1) + (a2 + a3));
    double sum = 0.0;
    for (int lane = 0; lane < Bits / 64; ++lane) sum += lanes[lane];
    return sum;
  }
};

}  // namespace asyncsolve::ops::stencil7_detail
