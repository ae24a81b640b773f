#include "asyncsolve/ops/stencil7.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

// The fast kernels come in two builds: AVX-512 (chosen at compile time, e.g.
// with -march=native on a machine that has it), and portable loops that the
// compiler vectorises. docs/PERFORMANCE.md ("Jacobi sweep vs STREAM triad")
// measures them against the memory bandwidth; bench/jacobi_sweep validates
// them against the `_ref` twins before it times them.

namespace asyncsolve::ops {

using grid::Field;

namespace {

constexpr double sixth = 1.0 / 6.0;

/// Bytes of the largest data cache at `level` (2 or 3) that this process
/// sees: Linux's sysfs first (right inside virtual machines, where sysconf
/// may report the whole host's L3), then sysconf, then `fallback`.
std::size_t cache_bytes(int level, std::size_t fallback) noexcept {
  std::size_t best = 0;
  try {
    const std::string cpu0 = "/sys/devices/system/cpu/cpu0/cache/index";
    for (int index = 0; index < 16; ++index) {
      std::ifstream level_file(cpu0 + std::to_string(index) + "/level");
      if (!level_file) break;
      int found = 0;
      std::string type;
      level_file >> found;
      std::ifstream(cpu0 + std::to_string(index) + "/type") >> type;
      if (found != level || type == "Instruction") continue;
      std::size_t value = 0;
      char unit = 0;
      std::ifstream size_file(cpu0 + std::to_string(index) + "/size");
      if (!(size_file >> value)) continue;
      size_file >> unit;
      if (unit == 'K') value *= 1024;
      if (unit == 'M') value *= 1024 * 1024;
      if (value > best) best = value;
    }
  } catch (...) {
    best = 0;
  }
  if (best == 0) {
    const long bytes = ::sysconf(level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE);
    best = bytes > 0 ? static_cast<std::size_t>(bytes) : fallback;
  }
  return best;
}

/// Whether `bytes` of fields are too many to stay in the last-level cache
/// from one kernel call to the next. Conservative when ranks share the
/// cache: each rank compares its own fields with the whole cache.
[[maybe_unused]] bool out_of_cache(std::size_t bytes) noexcept {
  static const std::size_t l3 = cache_bytes(3, std::size_t{32} << 20);
  return bytes > l3;
}

/// Rows per block of the j loop (the loops run: blocks of rows, k, j). Each
/// value of u is read as the top neighbour of a row, then as the centre and
/// the north/south neighbours of rows one plane later, and as the bottom
/// neighbour two planes later: those reads hit the cache only while three
/// planes fit (the layer condition). Blocks of rows keep three planes of a
/// block within half of the L2 cache; a 200 x 200 plane does not fit whole
/// (3 x 202 x 202 x 8 bytes = 979 KiB against 1 MiB of L2 on the EPYC the
/// benchmark ran on). Blocks are balanced; two halo rows per block are read
/// twice (from cache, mostly).
int block_rows(std::ptrdiff_t stride_y, int ny) noexcept {
  static const std::size_t l2 = cache_bytes(2, std::size_t{512} << 10);
  const std::size_t row_bytes = static_cast<std::size_t>(stride_y) * sizeof(double);
  const std::size_t fit = l2 / 2 / (3 * row_bytes);
  const int most = fit > 3 ? static_cast<int>(std::min<std::size_t>(fit - 2, 1 << 20)) : 1;
  if (ny <= most) return ny > 0 ? ny : 1;
  const int blocks = (ny + most - 1) / most;
  return (ny + blocks - 1) / blocks;
}

/// Calls row(j, k) for every interior row of planes [k_begin, k_end) (all
/// planes by default), blocked as block_rows() says.
template <class Row>
void for_each_row_blocked(const Field& u, Row&& row, int k_begin = 0, int k_end = -1) {
  const int ny = u.interior()[1];
  const int nz = k_end < 0 ? u.interior()[2] : k_end;
  const int rows = block_rows(u.stride_y(), ny);
  for (int j0 = 0; j0 < ny; j0 += rows) {
    const int j1 = std::min(ny, j0 + rows);
    for (int k = k_begin; k < nz; ++k) {
      for (int j = j0; j < j1; ++j) row(j, k);
    }
  }
}

#if defined(__AVX512F__)

/// How far ahead the top plane u(., ., k+1) is prefetched: of the six
/// neighbours it is the one that comes from memory (the others were read as
/// the top neighbour of earlier rows and are still in cache), and the
/// hardware prefetcher alone leaves the core waiting for it. About five rows
/// ahead, within 8 to 16 KiB: the best distances measured on the EPYC of
/// docs/PERFORMANCE.md for rows of 128 to 1000 points.
std::uintptr_t prefetch_distance(std::ptrdiff_t stride_y) noexcept {
  const auto five_rows = static_cast<std::uintptr_t>(5 * stride_y) * sizeof(double);
  return std::clamp<std::uintptr_t>(five_rows, 8192, 16384);
}

/// Prefetches the line `bytes` past `p`. The address is formed as an integer,
/// so looking past the end of the field forms no out-of-bounds pointer.
inline void prefetch_ahead(const double* p, std::uintptr_t bytes) noexcept {
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

/// The Jacobi sweep with AVX-512 for fields that do not fit in the cache,
/// bit-identical to jacobi_sweep_ref: every point adds its six neighbours in
/// the reference's order (west, east, south, north, bottom, top), then
/// multiplies by 1/6; vectors only change how many points are done at once,
/// blocking only the order of the rows.
///
/// u and u_new together exceed the last-level cache, so u_new is evicted
/// before the next sweep reads it anyway: its stores stream past the cache
/// (vmovntpd). A normal store would first read its line from memory (write
/// allocate), 8 bytes per point more than the 16 the sweep needs. Streaming
/// stores must be 64-byte aligned, so each row starts with single points up
/// to the first 64-byte boundary of u_new, then vectors of 8, then single
/// points to the end. An sfence at the end orders the streamed stores before
/// whatever follows.
void jacobi_sweep_streaming(const Field& u, Field& u_new, int k_begin, int k_end) noexcept {
  const int nx = u.interior()[0];
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  const std::uintptr_t ahead = prefetch_distance(sy);
  const __m512d w = _mm512_set1_pd(sixth);
  for_each_row_blocked(
      u,
      [&](int j, int k) {
        const double* c = u.origin() + u.index(0, j, k);
        const double* s = c - sy;
        const double* n = c + sy;
        const double* b = c - sz;
        const double* t = c + sz;
        double* out = u_new.origin() + u_new.index(0, j, k);

        int i = 0;
        for (const int head = peel_count(out, nx); i < head; ++i) {
          out[i] = (c[i - 1] + c[i + 1] + s[i] + n[i] + b[i] + t[i]) * sixth;
        }
        if (i + 8 <= nx) {
          // Lane 7 of `west_of` is c[i - 1]; `centre` is c[i .. i + 7].
          __m512d west_of = _mm512_set1_pd(c[i - 1]);
          __m512d centre = _mm512_loadu_pd(c + i);
          for (; i + 8 <= nx; i += 8) {
            prefetch_ahead(t + i, ahead);
            // c[i + 8 .. i + 15]: only lane 0 (at most c[nx], in the halo) is
            // used; the rest lies in the next row or the halo, inside the field.
            const __m512d east_of = _mm512_loadu_pd(c + i + 8);
            __m512d sum =
                _mm512_add_pd(shift_in(west_of, centre, std::integral_constant<int, 7>{}),
                              shift_in(centre, east_of, std::integral_constant<int, 1>{}));
            sum = _mm512_add_pd(sum, _mm512_loadu_pd(s + i));
            sum = _mm512_add_pd(sum, _mm512_loadu_pd(n + i));
            sum = _mm512_add_pd(sum, _mm512_loadu_pd(b + i));
            sum = _mm512_add_pd(sum, _mm512_loadu_pd(t + i));
            _mm512_stream_pd(out + i, _mm512_mul_pd(sum, w));
            west_of = centre;
            centre = east_of;
          }
        }
        for (; i < nx; ++i) out[i] = (c[i - 1] + c[i + 1] + s[i] + n[i] + b[i] + t[i]) * sixth;
      },
      k_begin, k_end);
  _mm_sfence();
}

/// ||b - A u||^2 with AVX-512: one vector accumulator across all rows, the
/// points of row tails in a scalar one. Rounds differently from
/// residual_norm_sq_ref (another summation order).
double residual_norm_sq_avx512(const Field& u, int k_begin, int k_end) noexcept {
  const int nx = u.interior()[0];
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  const std::uintptr_t ahead = prefetch_distance(sy);
  const __m512d six = _mm512_set1_pd(6.0);
  __m512d acc = _mm512_setzero_pd();
  double single = 0.0;
  for_each_row_blocked(
      u,
      [&](int j, int k) {
        const double* c = u.origin() + u.index(0, j, k);
        const double* s = c - sy;
        const double* n = c + sy;
        const double* b = c - sz;
        const double* t = c + sz;

        int i = 0;
        if (i + 8 <= nx) {
          __m512d west_of = _mm512_set1_pd(c[i - 1]);
          __m512d centre = _mm512_loadu_pd(c + i);
          for (; i + 8 <= nx; i += 8) {
            prefetch_ahead(t + i, ahead);
            // As in the sweep: lane 0 is at most c[nx]; the rest is inside the field.
            const __m512d east_of = _mm512_loadu_pd(c + i + 8);
            __m512d sum =
                _mm512_add_pd(shift_in(west_of, centre, std::integral_constant<int, 7>{}),
                              shift_in(centre, east_of, std::integral_constant<int, 1>{}));
            sum = _mm512_add_pd(sum, _mm512_loadu_pd(s + i));
            sum = _mm512_add_pd(sum, _mm512_loadu_pd(n + i));
            sum = _mm512_add_pd(sum, _mm512_loadu_pd(b + i));
            sum = _mm512_add_pd(sum, _mm512_loadu_pd(t + i));
            const __m512d r = _mm512_fnmadd_pd(six, centre, sum);
            acc = _mm512_fmadd_pd(r, r, acc);
            west_of = centre;
            centre = east_of;
          }
        }
        for (; i < nx; ++i) {
          const double r = c[i - 1] + c[i + 1] + s[i] + n[i] + b[i] + t[i] - 6.0 * c[i];
          single += r * r;
        }
      },
      k_begin, k_end);
  // Lane by lane (_mm512_reduce_add_pd trips the same false g++ 12 warning).
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, acc);
  double total = single;
  for (const double lane : lanes) total += lane;
  return total;
}

#endif  // __AVX512F__

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

/// The residual as plain loops that the compiler vectorises.
[[maybe_unused]] double residual_norm_sq_portable(const Field& u, int k_begin, int k_end) noexcept {
  const int nx = u.interior()[0];
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  double sum = 0.0;
  for_each_row_blocked(
      u,
      [&](int j, int k) {
        const double* __restrict c = u.origin() + u.index(0, j, k);
        const double* __restrict s = c - sy;
        const double* __restrict n = c + sy;
        const double* __restrict b = c - sz;
        const double* __restrict t = c + sz;
#pragma omp simd reduction(+ : sum)
        for (int i = 0; i < nx; ++i) {
          const double r = c[i - 1] + c[i + 1] + s[i] + n[i] + b[i] + t[i] - 6.0 * c[i];
          sum += r * r;
        }
      },
      k_begin, k_end);
  return sum;
}

}  // namespace

void jacobi_sweep(const Field& u, Field& u_new) noexcept {
  jacobi_sweep_planes(u, u_new, 0, u.interior()[2]);
}

void jacobi_sweep_planes(const Field& u, Field& u_new, int k_begin, int k_end) noexcept {
  if (k_begin >= k_end) return;
#if defined(__AVX512F__)
  // Fields that stay in cache gain nothing from streaming stores (they would
  // push u_new out to memory); the compiler's loops are as fast there.
  if (out_of_cache(u.storage().size_bytes() + u_new.storage().size_bytes())) {
    jacobi_sweep_streaming(u, u_new, k_begin, k_end);
    return;
  }
#endif
  jacobi_sweep_portable(u, u_new, k_begin, k_end);
}

void jacobi_sweep_box(const Field& u, Field& u_new, const grid::Box& box) noexcept {
  if (box.size() <= 0) return;
  const grid::Int3& n = u.interior();
  if (box.lo[0] == 0 && box.lo[1] == 0 && box.hi[0] == n[0] && box.hi[1] == n[1]) {
    jacobi_sweep_planes(u, u_new, box.lo[2], box.hi[2]);
    return;
  }
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
      for (int i = 0; i < n[0]; ++i)
        u_new(i, j, k) = (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k) +
                          u(i, j, k - 1) + u(i, j, k + 1)) *
                         (1.0 / 6.0);
}

double residual_norm_sq(const Field& u) noexcept {
  return residual_norm_sq_planes(u, 0, u.interior()[2]);
}

double residual_norm_sq_planes(const Field& u, int k_begin, int k_end) noexcept {
  if (k_begin >= k_end) return 0.0;
#if defined(__AVX512F__)
  return residual_norm_sq_avx512(u, k_begin, k_end);
#else
  return residual_norm_sq_portable(u, k_begin, k_end);
#endif
}

double residual_norm_sq_ref(const Field& u) noexcept {
  const auto& n = u.interior();
  double sum = 0.0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const double r = u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k) +
                         u(i, j, k - 1) + u(i, j, k + 1) - 6.0 * u(i, j, k);
        sum += r * r;
      }
  return sum;
}

void copy_interior(const Field& src, Field& dst) noexcept {
  const auto& n = src.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      std::memcpy(dst.origin() + dst.index(0, j, k), src.origin() + src.index(0, j, k),
                  static_cast<std::size_t>(n[0]) * sizeof(double));
}

}  // namespace asyncsolve::ops
