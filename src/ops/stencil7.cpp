#include "asyncsolve/ops/stencil7.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <type_traits>

#include "asyncsolve/core/cost.hpp"
#include "stencil7_choice.hpp"
#include "stencil7_rows.hpp"

// The AVX-512 kernels use AVX-512F and, for fields in the cache, 256-bit
// vectors with AVX-512VL's masks.
#if defined(__AVX512F__) && defined(__AVX512VL__)
#define ASYNCSOLVE_STENCIL7_AVX512 1
#include "stencil7_avx512.hpp"
#else
#define ASYNCSOLVE_STENCIL7_AVX512 0
#endif
#include "stencil7_vec.hpp"

// The fast kernels come in variants (Stencil7Kernel): portable and stream
// (stencil7_vec.hpp) in every build with AVX, avx512 where AVX-512 is enabled
// at compile time (e.g. -march=native on a machine that has it).
// stencil7_choice.cpp picks one per field shape by measuring them.
// docs/PERFORMANCE.md ("How fast is a Jacobi sweep?") measures them against
// the memory bandwidth; bench/jacobi_sweep validates every variant against
// the `_ref` twins before it times one.

namespace asyncsolve::ops {

using grid::Field;

bool stencil7_uses_avx512() noexcept { return ASYNCSOLVE_STENCIL7_AVX512 != 0; }

namespace {

// The shared pieces of stencil7_rows.hpp, by their short names.
using namespace stencil7_detail;  // NOLINT(google-build-using-namespace): internal, one file

#if ASYNCSOLVE_STENCIL7_AVX512

/// One pass of the 7-point stencil over planes [k_begin, k_end) with
/// AVX-512: the Jacobi sweep u_new = (sum of the six neighbours of u)/6
/// (unless `S` is Store::none) and, with `Residual`, ||b - A u||^2 of the
/// iterate it read, returned (b - A u = sum - 6 u at every interior point).
/// For fields of at least 8 points a row (walkable()).
///
/// The rows of a block of a plane lie one after the other in memory, stride_y
/// apart, with the stride_y - nx halo cells of the x faces between two rows.
/// The pass walks each block of each plane as one line, from (0, j0, k) to
/// (nx - 1, j1 - 1, k), in 64-byte aligned vectors of 8 points: one masked
/// vector for the points before the first boundary and one for those after
/// the last (masked_points, on the first and the last row), aligned vectors
/// between. An aligned vector that holds halo cells (two in about 25 on a
/// 200-point row) stores u's own halo values there (a blend), so u_new's
/// x-face halos get u's; every caller keeps the two fields' halos equal or
/// overwrites u_new's before reading them. Its halo lanes add 0 to the
/// residual. So a row costs no masked head and tail of its own: only the
/// block's two ends are masked.
///
/// The sweep is bit-identical to jacobi_sweep_ref: every point adds its six
/// neighbours in the reference's order (west, east, south, north, bottom,
/// top), then multiplies by 1/6; vectors only change how many points are done
/// at once, blocking only the order of the rows. The residual is summed in
/// an order that depends on the field's shape only, not on `S`: four vector
/// accumulators across all blocks; the aligned vectors of a block go to them
/// in turn by runs of four, its leftover aligned vectors and its two masked
/// vectors to the first; the total is the sum of the lanes, in order, of
/// (acc0 + acc1) + (acc2 + acc3). (Four chains of FMAs overlap; one would
/// wait for its FMA every vector.) So the fused sweep returns the same bits
/// as the residual alone (Store::none), which residual_norm_sq is.
///
/// Streaming stores (u and u_new together exceed the last-level cache, so
/// u_new is evicted before the next sweep reads it anyway): a normal store
/// would first read its line from memory (write allocate), 8 bytes per point
/// more than the 16 the sweep needs. They need 64-byte aligned addresses,
/// which the aligned vectors of u give u_new as well when the two fields
/// have the same shape (the caller checks; otherwise Store::normal); the
/// masked vectors store point by point. An sfence at the end orders the streamed
/// stores before whatever follows.
template <Store S, bool Residual>
double pass_avx512(const Field& u, Field* u_new, int k_begin, int k_end) noexcept {
  const int nx = u.interior()[0];
  const std::ptrdiff_t sy = u.stride_y();
  const std::uintptr_t ahead = prefetch_distance(sy);
  const __m512d w = _mm512_set1_pd(sixth);
  const __m512d six = _mm512_set1_pd(6.0);
  Sums<512> acc;
  for_each_block_plane(
      u,
      [&](int j0, int j1, int k) {
        const Row first = row_at<S>(u, u_new, j0, k);
        const double* c = first.c;
        const double* t = first.t;
        double* out = first.out;
        // Points 0 .. length - 1 of the walk; q is where `at` lies in its
        // row (0 .. sy - 1: from nx on, the halo cells after the row).
        const std::ptrdiff_t length = (j1 - j0 - 1) * sy + nx;
        Sums<512> sums = acc;  // in registers for the block
        std::ptrdiff_t at = peel_count(c, nx);
        if (at > 0)
          sums.a0 =
              masked_points<512, S, Residual>(first, 0, static_cast<int>(at), w, six, sums.a0);
        std::ptrdiff_t q = at;
        // Lane 7 of `west_of` is c[at - 1]; `centre` is c[at .. at + 7].
        __m512d west_of = _mm512_set1_pd(c[at - 1]);
        __m512d centre = _mm512_load_pd(c + at);
        const auto vector = [&](__m512d& into) {
          prefetch_ahead(t + at, ahead);
          // c[at + 8 .. at + 15]: past the walk's end it lies in the halo or
          // the next row of the plane, inside the field.
          const __m512d east_of = _mm512_load_pd(c + at + 8);
          __m512d sum = _mm512_add_pd(shift_in(west_of, centre, std::integral_constant<int, 7>{}),
                                      shift_in(centre, east_of, std::integral_constant<int, 1>{}));
          sum = _mm512_add_pd(sum, _mm512_loadu_pd(first.s + at));
          sum = _mm512_add_pd(sum, _mm512_loadu_pd(first.n + at));
          sum = _mm512_add_pd(sum, _mm512_loadu_pd(first.b + at));
          sum = _mm512_add_pd(sum, _mm512_loadu_pd(t + at));
          __m512d next = _mm512_mul_pd(sum, w);
          __m512d r = _mm512_fnmadd_pd(six, centre, sum);  // sum - 6 c
          if (Residual || q + 8 > nx) {
            // Halo cells in the vector (q + 8 > nx: two vectors in about 25
            // on a 200-point row): u's values there, and 0 residual. The
            // residual passes mask every vector, which costs them less than a
            // branch that mispredicts at every row end (0.61 against 1.0 of
            // the triad, fused); the sweep alone is faster with the branch.
            const __mmask8 inner = interior_lanes(q, nx, sy);
            next = _mm512_mask_blend_pd(inner, centre, next);
            if constexpr (Residual) r = _mm512_maskz_mov_pd(inner, r);
          }
          if constexpr (S == Store::stream) _mm512_stream_pd(out + at, next);
          if constexpr (S == Store::normal) _mm512_storeu_pd(out + at, next);
          if constexpr (Residual) into = _mm512_fmadd_pd(r, r, into);
          q += 8;
          if (q >= sy) q -= sy;
          at += 8;
          west_of = centre;
          centre = east_of;
        };
        // vector() advances `at` (clang-tidy cannot see that through the
        // lambda's capture). Written as a for loop that passes `at`, the
        // fused pass ran 8% slower here.
        // NOLINTNEXTLINE(bugprone-infinite-loop)
        while (at + 32 <= length) {
          vector(sums.a0);
          vector(sums.a1);
          vector(sums.a2);
          vector(sums.a3);
        }
        while (at + 8 <= length) vector(sums.a0);  // NOLINT(bugprone-infinite-loop): as above
        if (at < length) {
          // The last points, all in the last row (fewer than 8 <= nx).
          const Row last = row_at<S>(u, u_new, j1 - 1, k);
          const auto lo = static_cast<int>(at - (j1 - 1 - j0) * sy);
          sums.a0 = masked_points<512, S, Residual>(last, lo, static_cast<int>(length - at), w, six,
                                                    sums.a0);
        }
        acc = sums;
      },
      k_begin, k_end);
  if constexpr (S == Store::stream) _mm_sfence();
  return Residual ? acc.total() : 0.0;
}

/// pass_avx512 for fields that stay in the cache: the same pass on 256-bit
/// vectors of 4 points (AVX-512VL's masked loads and stores), which run
/// faster there than 512-bit ones on CPUs that split those in two halves
/// (the EPYC of docs/PERFORMANCE.md: 0.30 ns per point for the sweep, 0.34
/// fused, against 0.31 and 0.45 with 512 bits, on a 50^3 block). West and
/// east are unaligned loads. The residual is summed as in pass_avx512 (an
/// order that depends on the field's shape only: four accumulators, runs of
/// four aligned vectors in turn, leftovers and the two masked vectors of a
/// row into the first; the lanes of (acc0 + acc1) + (acc2 + acc3) in order),
/// with 32-byte instead of 64-byte boundaries.
template <Store S, bool Residual>
double pass_avx512_ymm(const Field& u, Field* u_new, int k_begin, int k_end) noexcept {
  static_assert(S != Store::stream, "fields in the cache are not streamed");
  const int nx = u.interior()[0];
  const __m256d w = _mm256_set1_pd(sixth);
  const __m256d six = _mm256_set1_pd(6.0);
  Sums<256> acc;
  for_each_row_blocked(
      u,
      [&](int j, int k) {
        const Row row = row_at<S>(u, u_new, j, k);
        Sums<256> sums = acc;  // in registers for the row
        // Points lo .. lo + count - 1 (count <= 4), their squared residuals into a0.
        const auto masked = [&](int lo, int count) {
          sums.a0 = masked_points<256, S, Residual>(row, lo, count, w, six, sums.a0);
        };
        // Points at .. at + 3; squared residuals into `into`.
        const auto vector = [&](int at, __m256d& into) {
          __m256d sum =
              _mm256_add_pd(_mm256_loadu_pd(row.c + at - 1), _mm256_loadu_pd(row.c + at + 1));
          sum = _mm256_add_pd(sum, _mm256_loadu_pd(row.s + at));
          sum = _mm256_add_pd(sum, _mm256_loadu_pd(row.n + at));
          sum = _mm256_add_pd(sum, _mm256_loadu_pd(row.b + at));
          sum = _mm256_add_pd(sum, _mm256_loadu_pd(row.t + at));
          if constexpr (S != Store::none) _mm256_storeu_pd(row.out + at, _mm256_mul_pd(sum, w));
          if constexpr (Residual) {
            const __m256d r = _mm256_fnmadd_pd(six, _mm256_loadu_pd(row.c + at), sum);  // sum - 6 c
            into = _mm256_fmadd_pd(r, r, into);
          }
        };
        const std::uintptr_t misalign = reinterpret_cast<std::uintptr_t>(row.c) % 32;
        int i =
            misalign == 0 ? 0 : std::min(nx, static_cast<int>((32 - misalign) / sizeof(double)));
        if (i > 0) masked(0, i);
        for (; i + 16 <= nx; i += 16) {
          vector(i, sums.a0);
          vector(i + 4, sums.a1);
          vector(i + 8, sums.a2);
          vector(i + 12, sums.a3);
        }
        for (; i + 4 <= nx; i += 4) vector(i, sums.a0);
        if (i < nx) masked(i, nx - i);
        acc = sums;
      },
      k_begin, k_end);
  return Residual ? acc.total() : 0.0;
}

/// Whether pass_avx512 can walk u's blocks: rows of at least 8 points, so
/// that an aligned vector holds at most one run of halo cells and a block's
/// last masked points lie in its last row.
bool walkable(const Field& u) noexcept { return u.interior()[0] >= 8; }

#endif  // ASYNCSOLVE_STENCIL7_AVX512

/// Whether streaming stores can go to u_new: its rows must reach a 64-byte
/// boundary where u's do (true for two fields of the same shape).
bool can_stream(const Field& u, const Field& u_new) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(u.origin());
  const auto b = reinterpret_cast<std::uintptr_t>(u_new.origin());
  return u.stride_y() == u_new.stride_y() && u.stride_z() == u_new.stride_z() && a % 64 == b % 64;
}

/// The sweep as plain loops that the compiler vectorises, rows blocked as in
/// the AVX-512 path: for fields that fit in cache, and without AVX-512 (e.g.
/// a build without -march=native).
void jacobi_sweep_portable(const Field& u, Field& u_new, int k_begin, int k_end) noexcept {
  const int nx = u.interior()[0];
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  for_each_row_blocked(
      u,
      [&](int j, int k) {
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
      },
      k_begin, k_end);
}

/// The six neighbours of interior point (i, j, k) added in the order every
/// kernel uses: west, east, south, north, bottom, top.
inline double neighbour_sum(const Field& u, int i, int j, int k) noexcept {
  return u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k) + u(i, j, k - 1) +
         u(i, j, k + 1);
}

/// The sweep on planes [k_begin, k_end) with `kernel` (not automatic).
void sweep_with(Stencil7Kernel kernel, const Field& u, Field& u_new, int k_begin,
                int k_end) noexcept {
#if ASYNCSOLVE_STENCIL7_AVX512
  // Fields that stay in cache gain nothing from streaming stores (they would
  // push u_new out to memory); the compiler's loops are as fast there.
  if (kernel == Stencil7Kernel::avx512 &&
      out_of_cache(u.storage().size_bytes() + u_new.storage().size_bytes()) &&
      can_stream(u, u_new) && walkable(u)) {
    pass_avx512<Store::stream, false>(u, &u_new, k_begin, k_end);
    return;
  }
#endif
  if (has_stream && kernel == Stencil7Kernel::stream && can_stream(u, u_new)) {
    pass_vec<Store::stream, false>(u, &u_new, k_begin, k_end);
    return;
  }
  jacobi_sweep_portable(u, u_new, k_begin, k_end);
}

}  // namespace

namespace stencil7_detail {

double sweep_residual_with(Stencil7Kernel kernel, const Field& u, Field& u_new, int k_begin,
                           int k_end) noexcept {
#if ASYNCSOLVE_STENCIL7_AVX512
  if (kernel == Stencil7Kernel::avx512) {
    // The kernel (and hence the summation order) is chosen by the size of
    // two fields of u's shape, as residual_with chooses it.
    if (!out_of_cache(2 * u.storage().size_bytes())) {
      return pass_avx512_ymm<Store::normal, true>(u, &u_new, k_begin, k_end);
    }
    if (!walkable(u)) return pass_vec<Store::normal, true>(u, &u_new, k_begin, k_end);
    if (can_stream(u, u_new)) return pass_avx512<Store::stream, true>(u, &u_new, k_begin, k_end);
    return pass_avx512<Store::normal, true>(u, &u_new, k_begin, k_end);
  }
#endif
  if (has_stream && kernel == Stencil7Kernel::stream && can_stream(u, u_new)) {
    return pass_vec<Store::stream, true>(u, &u_new, k_begin, k_end);
  }
  return pass_vec<Store::normal, true>(u, &u_new, k_begin, k_end);
}

Stencil7Kernel default_kernel() noexcept {
  if (ASYNCSOLVE_STENCIL7_AVX512 != 0) return Stencil7Kernel::avx512;
  return has_stream ? Stencil7Kernel::stream : Stencil7Kernel::portable;
}

bool kernel_built(Stencil7Kernel kernel) noexcept {
  switch (kernel) {
    case Stencil7Kernel::automatic:
    case Stencil7Kernel::portable:
      return true;
    case Stencil7Kernel::stream:
      return has_stream;
    case Stencil7Kernel::avx512:
      return ASYNCSOLVE_STENCIL7_AVX512 != 0;
  }
  return false;
}

}  // namespace stencil7_detail

namespace {

/// The residual on planes [k_begin, k_end) with `kernel` (not automatic).
double residual_with(Stencil7Kernel kernel, const Field& u, int k_begin, int k_end) noexcept {
#if ASYNCSOLVE_STENCIL7_AVX512
  // As sweep_residual_with would for u and a field of its shape.
  if (kernel == Stencil7Kernel::avx512) {
    if (!out_of_cache(2 * u.storage().size_bytes())) {
      return pass_avx512_ymm<Store::none, true>(u, nullptr, k_begin, k_end);
    }
    if (!walkable(u)) return pass_vec<Store::none, true>(u, nullptr, k_begin, k_end);
    return pass_avx512<Store::none, true>(u, nullptr, k_begin, k_end);
  }
#endif
  (void)kernel;  // portable and stream read the same way
  return pass_vec<Store::none, true>(u, nullptr, k_begin, k_end);
}

}  // namespace

void jacobi_sweep(const Field& u, Field& u_new) noexcept {
  jacobi_sweep_planes(u, u_new, 0, u.interior()[2]);
}

void jacobi_sweep_planes(const Field& u, Field& u_new, int k_begin, int k_end) noexcept {
  if (k_begin >= k_end) return;
  charge_planes(u, k_begin, k_end, 2);
  sweep_with(stencil7_kernel(u), u, u_new, k_begin, k_end);
}

void jacobi_sweep_box(const Field& u, Field& u_new, const grid::Box& box) noexcept {
  if (box.size() <= 0) return;
  const grid::Int3& n = u.interior();
  if (box.lo[0] == 0 && box.lo[1] == 0 && box.hi[0] == n[0] && box.hi[1] == n[1]) {
    jacobi_sweep_planes(u, u_new, box.lo[2], box.hi[2]);
    return;
  }
  core::charge_bytes(16.0 * static_cast<double>(box.size()));
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  const int len = box.hi[0] - box.lo[0];
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const double* __restrict c = u.origin() + u.index(box.lo[0], j, k);
      const double* __restrict s = c - sy;
      const double* __restrict nn = c + sy;
      const double* __restrict b = c - sz;
      const double* __restrict t = c + sz;
      double* __restrict out = u_new.origin() + u_new.index(box.lo[0], j, k);
#pragma omp simd
      for (int i = 0; i < len; ++i) {
        out[i] = (c[i - 1] + c[i + 1] + s[i] + nn[i] + b[i] + t[i]) * sixth;
      }
    }
}

void jacobi_sweep_ref(const Field& u, Field& u_new) noexcept {
  const auto& n = u.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) u_new(i, j, k) = neighbour_sum(u, i, j, k) * (1.0 / 6.0);
}

double jacobi_sweep_residual(const Field& u, Field& u_new) noexcept {
  return jacobi_sweep_residual_planes(u, u_new, 0, u.interior()[2]);
}

double jacobi_sweep_residual_planes(const Field& u, Field& u_new, int k_begin, int k_end) noexcept {
  if (k_begin >= k_end) return 0.0;
  charge_planes(u, k_begin, k_end, 2);  // one pass: u read, u_new written
  return sweep_residual_with(stencil7_kernel(u), u, u_new, k_begin, k_end);
}

double jacobi_sweep_residual_box(const Field& u, Field& u_new, const grid::Box& box) noexcept {
  if (box.size() <= 0) return 0.0;
  const grid::Int3& n = u.interior();
  if (box.lo[0] == 0 && box.lo[1] == 0 && box.hi[0] == n[0] && box.hi[1] == n[1]) {
    return jacobi_sweep_residual_planes(u, u_new, box.lo[2], box.hi[2]);
  }
  core::charge_bytes(16.0 * static_cast<double>(box.size()));
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  const int len = box.hi[0] - box.lo[0];
  double total = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const double* __restrict c = u.origin() + u.index(box.lo[0], j, k);
      const double* __restrict s = c - sy;
      const double* __restrict nn = c + sy;
      const double* __restrict b = c - sz;
      const double* __restrict t = c + sz;
      double* __restrict out = u_new.origin() + u_new.index(box.lo[0], j, k);
#pragma omp simd reduction(+ : total)
      for (int i = 0; i < len; ++i) {
        const double sum = c[i - 1] + c[i + 1] + s[i] + nn[i] + b[i] + t[i];
        out[i] = sum * sixth;
        const double r = sum - 6.0 * c[i];
        total += r * r;
      }
    }
  return total;
}

double jacobi_sweep_residual_ref(const Field& u, Field& u_new) noexcept {
  const auto& n = u.interior();
  double total = 0.0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const double sum = neighbour_sum(u, i, j, k);
        u_new(i, j, k) = sum * (1.0 / 6.0);
        const double r = sum - 6.0 * u(i, j, k);
        total += r * r;
      }
  return total;
}

double residual_norm_sq(const Field& u) noexcept {
  return residual_norm_sq_planes(u, 0, u.interior()[2]);
}

double residual_norm_sq_planes(const Field& u, int k_begin, int k_end) noexcept {
  if (k_begin >= k_end) return 0.0;
  charge_planes(u, k_begin, k_end, 1);
  return residual_with(stencil7_kernel(u), u, k_begin, k_end);
}

double residual_norm_sq_ref(const Field& u) noexcept {
  const auto& n = u.interior();
  double total = 0.0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const double r = neighbour_sum(u, i, j, k) - 6.0 * u(i, j, k);
        total += r * r;
      }
  return total;
}

void copy_interior(const Field& src, Field& dst) noexcept {
  const auto& n = src.interior();
  charge_planes(src, 0, n[2], 2);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      std::memcpy(dst.origin() + dst.index(0, j, k), src.origin() + src.index(0, j, k),
                  static_cast<std::size_t>(n[0]) * sizeof(double));
}

}  // namespace asyncsolve::ops
