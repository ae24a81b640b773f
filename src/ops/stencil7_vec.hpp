#pragma once
// Internal to stencil7.cpp: its portable pass (the compiler's vectors, GCC's
// and Clang's vector extension; AVX's streaming stores and FMA where the
// build has them), which the portable and stream variants run.
#if defined(__AVX__) || defined(__FMA__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "stencil7_rows.hpp"

namespace asyncsolve::ops::stencil7_detail {

/// Four doubles as one value (GCC's and Clang's vector extension): the
/// compiler maps it to the vectors the target has (two SSE2 registers, one
/// AVX register), and every lane keeps its own order of operations.
using Double4 = double __attribute__((vector_size(32)));

/// v = p[0 .. 3] (an out-parameter: a vector returned by value would change
/// the calling convention between builds with and without AVX).
inline void load4(Double4& v, const double* p) noexcept { std::memcpy(&v, p, sizeof v); }

/// Whether this build has the streaming variant of the portable passes
/// (AVX's 256-bit streaming store).
#if defined(__AVX__)
constexpr bool has_stream = true;
#else
constexpr bool has_stream = false;
#endif

/// p[0 .. 3] = v; with Store::stream a streaming store, p 32-byte aligned.
template <Store S>
inline void store4(double* p, const Double4& v) noexcept {
#if defined(__AVX__)
  if constexpr (S == Store::stream) {
    _mm256_stream_pd(p, (__m256d)v);  // NOLINT(google-readability-casting): a vector cast
    return;
  }
#endif
  std::memcpy(p, &v, sizeof v);
}

/// Points before `p` reaches a 32-byte boundary (rows start at any
/// alignment: the origin is offset by the halo), at most `nx`.
inline int peel32(const double* p, int nx) noexcept {
  const std::uintptr_t misalign = reinterpret_cast<std::uintptr_t>(p) % 32;
  const int head = misalign == 0 ? 0 : static_cast<int>((32 - misalign) / sizeof(double));
  return std::min(head, nx);
}

/// r = sum - 6 c and acc + r * r, each with one rounding where the target
/// has FMA and two where it has not, written out so that the compiler has
/// nothing left to contract: GCC contracts a * b + c by default, but not
/// the same way in every instantiation of a pass, which gave the fused sweep
/// and the residual alone different last bits.
inline double residual_at(double sum, double c) noexcept {
#if defined(__FMA__)
  return std::fma(-6.0, c, sum);
#else
  return sum - 6.0 * c;
#endif
}
inline double add_square(double acc, double r) noexcept {
#if defined(__FMA__)
  return std::fma(r, r, acc);
#else
  return acc + r * r;
#endif
}
// The vector forms take out-parameters, as load4 does.
inline void residual_at(Double4& r, const Double4& sum, const Double4& c) noexcept {
#if defined(__FMA__)
  // NOLINTNEXTLINE(google-readability-casting): vector casts keep the bits
  r = (Double4)_mm256_fnmadd_pd(_mm256_set1_pd(6.0), (__m256d)c, (__m256d)sum);
#else
  r = sum - 6.0 * c;
#endif
}
inline void add_square(Double4& acc, const Double4& r) noexcept {
#if defined(__FMA__)
  // NOLINTNEXTLINE(google-readability-casting): vector casts keep the bits
  acc = (Double4)_mm256_fmadd_pd((__m256d)r, (__m256d)r, (__m256d)acc);
#else
  acc = acc + r * r;
#endif
}

/// Four 64-bit integers, for lane masks of Double4 (-1: keep, 0: drop).
using Long4 = long long __attribute__((vector_size(32)));

/// Prefetches the line `bytes` past `p` into the cache (formed as an
/// integer: past the end of the field no out-of-bounds pointer is formed).
inline void prefetch_past(const double* p, std::uintptr_t bytes) noexcept {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an integer on purpose, as said above
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) + bytes));
}

/// The portable pass over planes [k_begin, k_end), without AVX-512
/// intrinsics: the Jacobi sweep into u_new (unless `S` is Store::none) and,
/// with `Residual`, ||b - A u||^2 of the iterate read, returned.
///
/// Like pass_avx512 it walks each block of rows of a plane as one line, from
/// (0, j0, k) to (nx - 1, j1 - 1, k) (rows of at least 4 points; narrower
/// fields go point by point): up to three points one by one until the line
/// reaches a 32-byte boundary, then aligned 4-point vectors, then the last
/// points (fewer than 4, in the last row) one by one. A vector that holds
/// x-face halo cells adds 0 to the residual and stores there the values
/// u_new has (plain stores) or u's (streaming stores).
/// With Store::stream the vectors go to u_new with streaming stores (aligned
/// there too when the fields have the same shape: can_stream): whole lines
/// of u_new are streamed, halo cells included, so no line is written half
/// from the write-combining buffers (written per row, without the halo
/// cells, streaming ran at 0.42 of the triad against 0.58 with plain stores
/// on a Zen 3 EPYC). The top plane, the one neighbour that comes from
/// memory, is prefetched 2 KiB ahead.
///
/// The residual has a fixed order that depends on the field's shape and
/// alignment only, not on `S`: four accumulators of four lanes across all
/// blocks, the runs of four vectors of a block in turn, leftover vectors
/// into the first, the points done one by one into a scalar sum; the total
/// is the lanes of (acc0 + acc1) + (acc2 + acc3) in order, plus the scalar
/// sum. So the fused sweep returns the residual's bits whichever store it
/// uses.
template <Store S, bool Residual>
double pass_vec(const Field& u, Field* u_new, int k_begin, int k_end) noexcept {
  const int nx = u.interior()[0];
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  // 2 KiB ahead: the best of 0, 2, 4, 8, 16, 32 and 64 KiB at 200^3 on the
  // Zen 3 EPYC of docs/PERFORMANCE.md (the residual 0.48 of the triad
  // without, 0.64 with 2 KiB, 0.56 with 16 KiB).
  constexpr std::uintptr_t ahead = 2048;
  Double4 acc[4] = {};
  double rest = 0.0;
  for_each_block_plane(
      u,
      [&](int j0, int j1, int k) {
        const double* c = u.origin() + u.index(0, j0, k);
        const double* s = c - sy;
        const double* n = c + sy;
        const double* b = c - sz;
        const double* t = c + sz;
        double* out = nullptr;
        if constexpr (S != Store::none) out = u_new->origin() + u_new->index(0, j0, k);
        // In registers for the block (captured by reference, the compiler
        // would store them back after every add).
        Double4 a0 = acc[0];
        Double4 a1 = acc[1];
        Double4 a2 = acc[2];
        Double4 a3 = acc[3];
        double scalar = rest;
        // The interior point `at` points into the line.
        const auto point = [&](std::ptrdiff_t at) {
          const double sum = c[at - 1] + c[at + 1] + s[at] + n[at] + b[at] + t[at];
          if constexpr (S != Store::none) out[at] = sum * sixth;
          if constexpr (Residual) scalar = add_square(scalar, residual_at(sum, c[at]));
        };
        const std::ptrdiff_t length = (j1 - j0 - 1) * sy + nx;
        std::ptrdiff_t at = 0;
        std::ptrdiff_t q = 0;  // where `at` lies in its row (from nx on: the halo after it)
        // Points at .. at + 3; the squared residuals into `into`.
        const auto vector = [&](Double4& into) {
          prefetch_past(t + at, ahead);
          Double4 west;
          Double4 east;
          Double4 south;
          Double4 north;
          Double4 bottom;
          Double4 top;
          load4(west, c + at - 1);
          load4(east, c + at + 1);
          load4(south, s + at);
          load4(north, n + at);
          load4(bottom, b + at);
          load4(top, t + at);
          const Double4 sum = west + east + south + north + bottom + top;
          Double4 next = sum * sixth;
          Double4 r{};
          if constexpr (Residual) {
            Double4 centre;
            load4(centre, c + at);
            residual_at(r, sum, centre);
          }
          if (q + 4 > nx) {
            // Halo lanes (nx <= q + lane < sy): 0 residual, and u_new's own
            // values there (plain stores) or u's (streaming: reading u_new
            // would cost what streaming saves).
            Double4 keep;
            if constexpr (S == Store::normal) load4(keep, out + at);
            if constexpr (S != Store::normal) load4(keep, c + at);
            const Long4 lane = q + Long4{0, 1, 2, 3};
            const Long4 inner = (lane < nx) | (lane >= sy);
            // NOLINTBEGIN(google-readability-casting): vector casts keep the bits
            next = (Double4)(((Long4)next & inner) | ((Long4)keep & ~inner));
            r = (Double4)((Long4)r & inner);
            // NOLINTEND(google-readability-casting)
          }
          if constexpr (S != Store::none) store4<S>(out + at, next);
          if constexpr (Residual) add_square(into, r);
          at += 4;
          q += 4;
          if (q >= sy) q -= sy;
        };
        if (nx < 4) {
          for (int j = 0; j < j1 - j0; ++j)
            for (int i = 0; i < nx; ++i) point(j * sy + i);
        } else {
          for (const int head = peel32(c, nx); at < head; ++at) point(at);
          q = at;
          // vector() advances `at`. NOLINTNEXTLINE(bugprone-infinite-loop)
          while (at + 16 <= length) {
            vector(a0);
            vector(a1);
            vector(a2);
            vector(a3);
          }
          while (at + 4 <= length) vector(a0);  // NOLINT(bugprone-infinite-loop): as above
          for (; at < length; ++at) point(at);
        }
        acc[0] = a0;
        acc[1] = a1;
        acc[2] = a2;
        acc[3] = a3;
        rest = scalar;
      },
      k_begin, k_end);
#if defined(__AVX__)
  if constexpr (S == Store::stream) _mm_sfence();  // the streamed stores before any read
#endif
  if constexpr (!Residual) return 0.0;
  const Double4 all = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  return all[0] + all[1] + all[2] + all[3] + rest;
}

}  // namespace asyncsolve::ops::stencil7_detail
