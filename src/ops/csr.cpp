// The distributed CSR operator's kernels (see csr.hpp for the storage).
//
// Every fast kernel is one traversal of a block: for each run of rows, for
// each row, the sum of val[k] * x[col[k]] over its entries, handed to a
// per-row step (store y, or the Jacobi update, or the residual). The row
// loop has no branch; the entries are streamed once, in storage order.
#include "asyncsolve/ops/csr.hpp"

#if defined(__AVX512F__) && defined(__AVX512VL__)
#include <immintrin.h>
#define ASYNCSOLVE_CSR_AVX512 1
#else
#define ASYNCSOLVE_CSR_AVX512 0
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

namespace asyncsolve::ops {
namespace {

/// Appends local row `row` of `m` to `block` (entries whose local column
/// satisfies `keep`, shifted by `shift`), extending the last run or starting one.
template <class Keep>
void append_row(CsrBlock& block, const sparse::DistMatrix& m, int row, Keep&& keep, int shift) {
  const auto& ptr = m.row_ptr();
  for (std::int64_t k = ptr[row]; k < ptr[row + 1]; ++k) {
    const std::int32_t c = m.col()[k];
    if (!keep(c)) continue;
    block.col.push_back(c - shift);
    block.val.push_back(m.val()[k]);
  }
  if (block.val.size() > static_cast<std::size_t>(INT32_MAX))
    throw std::length_error("CsrOperator: more than 2^31 - 1 entries on one rank");
  block.ptr.push_back(static_cast<std::int32_t>(block.col.size()));
  const int position = block.rows() - 1;
  if (!block.runs.empty() && block.runs.back().first + block.runs.back().count == row) {
    ++block.runs.back().count;
  } else {
    block.runs.push_back({row, 1, position});
  }
}

/// sum over k in [k0, k1) of val[k] * x[col[k]], in storage order. (Four
/// partial sums to shorten the chain of adds measured no faster: the
/// mat-vec is bound by memory, 12 bytes per non-zero.)
[[gnu::always_inline]] inline double row_sum(const std::int32_t* __restrict col,
                                             const double* __restrict val,
                                             const double* __restrict x, std::int32_t k0,
                                             std::int32_t k1) noexcept {
  double sum = 0.0;
  for (std::int32_t k = k0; k < k1; ++k) sum += val[k] * x[col[k]];
  return sum;
}

/// Whether the rows at positions p and q of `block` have the same columns.
bool same_columns(const CsrBlock& block, int p, int q) noexcept {
  return block.ptr[p + 1] - block.ptr[p] == block.ptr[q + 1] - block.ptr[q] &&
         std::equal(block.col.begin() + block.ptr[p], block.col.begin() + block.ptr[p + 1],
                    block.col.begin() + block.ptr[q]);
}

/// Groups `block`'s rows: consecutive rows of a run with the same columns
/// (in `also` as well, a block of the same rows, if given), up to
/// CsrBlock::max_group. Kept only where the groups average at least 1.5
/// rows (else the block stays ungrouped, multiplied row by row).
void group_rows(CsrBlock& block, const CsrBlock* also = nullptr) {
  std::vector<std::int32_t> groups{0};
  for (const RowRun& run : block.runs) {
    for (int p = run.position; p < run.position + run.count;) {
      int q = p + 1;
      while (q < run.position + run.count && q - p < CsrBlock::max_group &&
             same_columns(block, p, q) && (also == nullptr || same_columns(*also, p, q)))
        ++q;
      groups.push_back(q);
      p = q;
    }
  }
  const auto count = static_cast<std::int64_t>(groups.size()) - 1;
  if (count > 0 && 2 * static_cast<std::int64_t>(block.rows()) >= 3 * count)
    block.groups = std::move(groups);
}

#if ASYNCSOLVE_CSR_AVX512
/// The sums of the G rows of a group whose entries start at k0, len each:
/// 8 columns at a time, x gathered once for all G rows, one FMA per row;
/// the tail masked. Each row's sum is its 8 lanes' partial sums added, so
/// it differs from row_sum's to rounding.
template <int G>
[[gnu::always_inline]] inline void group_sums(const std::int32_t* __restrict col,
                                              const double* __restrict val, std::int32_t k0,
                                              std::int32_t len, const double* __restrict x,
                                              double* sums) noexcept {
  __m512d acc[G];
  for (__m512d& a : acc) a = _mm512_setzero_pd();
  std::int32_t j = 0;
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (; j + 8 <= len; j += 8) {
    const std::int32_t c = col[k0 + j];
    const __m256i at = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + k0 + j));
    // Consecutive columns (DG rows list whole elements): one load, no gather.
    const __m512d xs =
        _mm256_cmpeq_epi32_mask(at, _mm256_add_epi32(_mm256_set1_epi32(c), iota)) == 0xFF
            ? _mm512_loadu_pd(x + c)
            : _mm512_mask_i32gather_pd(_mm512_setzero_pd(), 0xFF, at, x, 8);
    for (int q = 0; q < G; ++q)
      acc[q] = _mm512_fmadd_pd(_mm512_loadu_pd(val + k0 + j + static_cast<std::ptrdiff_t>(q) * len),
                               xs, acc[q]);
  }
  if (j < len) {
    const auto m = static_cast<__mmask8>((1U << (len - j)) - 1U);
    const __m256i at = _mm256_maskz_loadu_epi32(m, col + k0 + j);
    const __m512d xs = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, at, x, 8);
    for (int q = 0; q < G; ++q)
      acc[q] = _mm512_mask3_fmadd_pd(
          _mm512_maskz_loadu_pd(m, val + k0 + j + static_cast<std::ptrdiff_t>(q) * len), xs, acc[q],
          m);
  }
  for (int q = 0; q < G; ++q) {
    // The 8 lanes added pairwise. (The unmasked shuffles, and so
    // _mm512_reduce_add_pd, pass GCC 12 an undefined operand it warns of.)
    __m512d v = _mm512_add_pd(acc[q], _mm512_maskz_shuffle_f64x2(0xFF, acc[q], acc[q], 0x4E));
    v = _mm512_add_pd(v, _mm512_maskz_shuffle_f64x2(0xFF, v, v, 0xB1));
    v = _mm512_add_pd(v, _mm512_maskz_permute_pd(0xFF, v, 0x55));
    sums[q] = _mm512_cvtsd_f64(v);
  }
}
#else
/// The sums of the G rows of a group whose entries start at k0, len each:
/// one pass over the columns, x read once for all G rows, each row summed
/// in stored order as row_sum does.
template <int G>
[[gnu::always_inline]] inline void group_sums(const std::int32_t* __restrict col,
                                              const double* __restrict val, std::int32_t k0,
                                              std::int32_t len, const double* __restrict x,
                                              double* sums) noexcept {
  double acc[G] = {};
  for (std::int32_t j = 0; j < len; ++j) {
    const double xj = x[col[k0 + j]];
    for (int q = 0; q < G; ++q) acc[q] += val[k0 + j + static_cast<std::ptrdiff_t>(q) * len] * xj;
  }
  for (int q = 0; q < G; ++q) sums[q] = acc[q];
}
#endif

/// group_sums<g> for a group of g = 2 .. CsrBlock::max_group rows.
template <int... G>
inline void group_sums_of(std::integer_sequence<int, G...> /*sizes*/, int g,
                          const std::int32_t* __restrict col, const double* __restrict val,
                          std::int32_t k0, std::int32_t len, const double* __restrict x,
                          double* sums) noexcept {
  ((g == G + 2 ? group_sums<G + 2>(col, val, k0, len, x, sums) : void()), ...);
}

/// sums[q] = (A x) of the row at position lo + q of `block`, for the rows
/// at [lo, hi) (rows of one group: the same columns).
inline void block_sums(const CsrBlock& block, const double* __restrict x, int lo, int hi,
                       double* sums) noexcept {
  const std::int32_t* ptr = block.ptr.data();
  if (hi - lo == 1) {
    // A lone row of a grouped block: as a group of one where it has a full
    // 8 columns (pyamg's DG matrix: 130 of its 966 rows, 36.6 entries
    // long; 6.7 -> 6.3 us per mat-vec), else row_sum.
    if (ptr[lo + 1] - ptr[lo] >= 8) {
      group_sums<1>(block.col.data(), block.val.data(), ptr[lo], ptr[lo + 1] - ptr[lo], x, sums);
      return;
    }
    sums[0] = row_sum(block.col.data(), block.val.data(), x, ptr[lo], ptr[lo + 1]);
    return;
  }
  group_sums_of(std::make_integer_sequence<int, CsrBlock::max_group - 1>{}, hi - lo,
                block.col.data(), block.val.data(), ptr[lo], ptr[lo + 1] - ptr[lo], x, sums);
}

/// Calls step(row, (A x)_row) for the rows stored at positions [begin, end)
/// of `block`, x indexed by the block's columns: group by group where the
/// block is grouped, else row by row.
template <class Step>
inline void traverse(const CsrBlock& block, const double* __restrict x, int begin, int end,
                     Step&& step) {
  const std::int32_t* __restrict ptr = block.ptr.data();
  const std::int32_t* __restrict col = block.col.data();
  const double* __restrict val = block.val.data();
  auto run = std::upper_bound(block.runs.begin(), block.runs.end(), begin,
                              [](int p, const RowRun& r) { return p < r.position + r.count; });
  if (!block.groups.empty()) {
    const std::vector<std::int32_t>& groups = block.groups;
    // The group holding position begin (groups[0] == 0 <= begin).
    auto group = std::upper_bound(groups.begin(), groups.end(), begin) - 1;
    for (; group + 1 != groups.end() && *group < end; ++group) {
      const int lo = std::max(begin, *group);
      const int hi = std::min(end, *(group + 1));
      while (run->position + run->count <= lo) ++run;
      const int row = run->first + (lo - run->position);
      double sums[CsrBlock::max_group] = {};
      block_sums(block, x, lo, hi, sums);
      for (int q = 0; q < hi - lo; ++q) step(row + q, sums[q]);
    }
    return;
  }
  for (; run != block.runs.end() && run->position < end; ++run) {
    const int lo = std::max(begin, run->position);
    const int hi = std::min(end, run->position + run->count);
    int row = run->first + (lo - run->position);
    for (int p = lo; p < hi; ++p, ++row) step(row, row_sum(col, val, x, ptr[p], ptr[p + 1]));
  }
}

/// The same for the boundary rows: owned columns from x, then ghost
/// columns from `ghosts`.
template <class Step>
inline void traverse_boundary(const CsrOperator& a, const double* __restrict x,
                              const double* __restrict ghosts, Step&& step) {
  const CsrBlock& lb = a.boundary_local();
  const CsrBlock& gb = a.boundary_ghost();
  const std::int32_t* __restrict lptr = lb.ptr.data();
  const std::int32_t* __restrict lcol = lb.col.data();
  const double* __restrict lval = lb.val.data();
  const std::int32_t* __restrict gptr = gb.ptr.data();
  const std::int32_t* __restrict gcol = gb.col.data();
  const double* __restrict gval = gb.val.data();
  if (!lb.groups.empty()) {
    auto run = lb.runs.begin();
    for (std::size_t g = 0; g + 1 < lb.groups.size(); ++g) {
      const int lo = lb.groups[g];
      const int hi = lb.groups[g + 1];
      while (run->position + run->count <= lo) ++run;
      const int row = run->first + (lo - run->position);
      double owned[CsrBlock::max_group] = {};
      double ghost[CsrBlock::max_group] = {};
      block_sums(lb, x, lo, hi, owned);
      block_sums(gb, ghosts, lo, hi, ghost);
      for (int q = 0; q < hi - lo; ++q) step(row + q, owned[q] + ghost[q]);
    }
    return;
  }
  for (const RowRun& run : lb.runs) {
    int row = run.first;
    for (int p = run.position; p < run.position + run.count; ++p, ++row) {
      step(row, row_sum(lcol, lval, x, lptr[p], lptr[p + 1]) +
                    row_sum(gcol, gval, ghosts, gptr[p], gptr[p + 1]));
    }
  }
}

/// Lays out the slice whose lane l is the row at position p[l] (-1: none)
/// and local row row0 + l, `width` steps long: entry[t * lanes + l] is the
/// CSR entry at step t of lane l, or -1 for padding. Aligned on the rows'
/// column offsets if there are no more than `width` of them, else entry j
/// of a lane at step j. `offsets` is scratch space, reused across slices.
void slice_entries(const CsrBlock& csr, const std::array<int, SellBlock::lanes>& p, int row0,
                   std::int32_t width, std::vector<std::int64_t>& offsets,
                   std::vector<std::int32_t>& entry) {
  constexpr int lanes = SellBlock::lanes;
  const auto offset = [&](int l, std::int32_t k) {
    return static_cast<std::int64_t>(csr.col[k]) - (row0 + l);
  };
  offsets.clear();
  for (int l = 0; l < lanes; ++l) {
    if (p[l] < 0) continue;
    for (std::int32_t k = csr.ptr[p[l]]; k < csr.ptr[p[l] + 1]; ++k)
      offsets.push_back(offset(l, k));
  }
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  const bool aligned = offsets.size() <= static_cast<std::size_t>(width);
  entry.assign(static_cast<std::size_t>(width) * lanes, -1);
  for (int l = 0; l < lanes; ++l) {
    if (p[l] < 0) continue;
    for (std::int32_t k = csr.ptr[p[l]], j = 0; k < csr.ptr[p[l] + 1]; ++k, ++j) {
      const auto t =
          aligned ? std::lower_bound(offsets.begin(), offsets.end(), offset(l, k)) - offsets.begin()
                  : j;
      entry[static_cast<std::size_t>(t) * lanes + l] = k;
    }
  }
}

/// Whether a and b are the same bits (-0.0 and 0.0 differ, a NaN equals
/// its own bits).
bool same_bits(double a, double b) noexcept {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

/// The interior block `csr` in SELL-8, or nothing if that would exceed
/// 32-bit offsets or (unless `any_padding`) pad by more than a quarter of
/// its non-zeros. With `compress_values`, a uniform step stores one value.
std::optional<SellBlock> to_sell(const CsrBlock& csr, bool any_padding, bool compress_values) {
  constexpr int lanes = SellBlock::lanes;
  SellBlock sell;
  std::vector<std::int32_t> widths;
  std::int64_t stored = 0;
  for (const RowRun& run : csr.runs) {
    for (int lane0 = 0; lane0 < run.count; lane0 += lanes) {
      std::int32_t width = 0;
      for (int l = 0; l < lanes && lane0 + l < run.count; ++l) {
        const int p = run.position + lane0 + l;
        width = std::max(width, csr.ptr[p + 1] - csr.ptr[p]);
      }
      widths.push_back(width);
      stored += static_cast<std::int64_t>(width) * lanes;
      if (stored > INT32_MAX) return std::nullopt;
    }
  }
  if (!any_padding && 4 * stored > 5 * static_cast<std::int64_t>(csr.val.size()))
    return std::nullopt;
  sell.val.reserve(static_cast<std::size_t>(stored));
  sell.steps.reserve(static_cast<std::size_t>(stored / lanes));
  std::vector<std::int64_t> offsets;
  std::vector<std::int32_t> entry;
  std::size_t slice = 0;
  for (const RowRun& run : csr.runs) {
    sell.run_slice.push_back(static_cast<int>(slice));
    for (int lane0 = 0; lane0 < run.count; lane0 += lanes, ++slice) {
      const std::int32_t width = widths[slice];
      const int row0 = run.first + lane0;
      std::array<int, lanes> p{};
      for (int l = 0; l < lanes; ++l) p[l] = lane0 + l < run.count ? run.position + lane0 + l : -1;
      slice_entries(csr, p, row0, width, offsets, entry);
      for (std::int32_t t = 0; t < width; ++t) {
        const std::int32_t* e = entry.data() + static_cast<std::ptrdiff_t>(t) * lanes;
        SellStep step;
        std::int64_t base = -1;  // the c of a consecutive step
        bool consecutive = true;
        std::int32_t first = -1;  // the first lane's entry
        bool uniform = compress_values;
        for (int l = 0; l < lanes; ++l) {
          if (e[l] < 0) continue;
          step.real = static_cast<std::uint8_t>(step.real | (1U << l));
          const std::int64_t c = static_cast<std::int64_t>(csr.col[e[l]]) - l;
          consecutive = consecutive && (base < 0 || c == base) && c >= 0;
          base = c;
          if (first < 0) first = e[l];
          uniform = uniform && same_bits(csr.val[e[l]], csr.val[first]);
        }
        step.consecutive = consecutive ? 1 : 0;
        step.uniform = uniform && first >= 0 ? 1 : 0;
        if (step.uniform != 0) {
          sell.val.push_back(csr.val[first]);
        } else {
          for (int l = 0; l < lanes; ++l) sell.val.push_back(e[l] < 0 ? 0.0 : csr.val[e[l]]);
        }
        if (consecutive) {
          sell.col.push_back(static_cast<std::int32_t>(base));
        } else {
          for (int l = 0; l < lanes; ++l) sell.col.push_back(e[l] < 0 ? 0 : csr.col[e[l]]);
        }
        sell.steps.push_back(step);
      }
      sell.start.push_back(sell.start.back() + width * lanes);
      sell.col_start.push_back(static_cast<std::int32_t>(sell.col.size()));
      sell.val_start.push_back(static_cast<std::int32_t>(sell.val.size()));
    }
  }
  return sell;
}

/// Calls step(slice, row0, lo, hi) for every slice of `sell` that holds
/// interior positions in [begin, end): its lane 0 is local row row0 and its
/// lanes lo .. hi - 1 lie in the range (and in the run).
template <class Step>
inline void for_each_slice(const CsrBlock& csr, const SellBlock& sell, int begin, int end,
                           Step&& step) {
  constexpr int lanes = SellBlock::lanes;
  for (std::size_t r = 0; r < csr.runs.size(); ++r) {
    const RowRun& run = csr.runs[r];
    const int lo = std::max(begin, run.position) - run.position;
    const int hi = std::min(end, run.position + run.count) - run.position;
    for (int lane0 = lo - lo % lanes; lane0 < hi; lane0 += lanes) {
      step(sell.run_slice[r] + lane0 / lanes, run.first + lane0, std::max(lo - lane0, 0),
           std::min(hi - lane0, lanes));
    }
  }
}

#if ASYNCSOLVE_CSR_AVX512
/// How far ahead of the kernel the values and column indices are
/// prefetched, in entries (4 KiB of values): with x's three streams and y's
/// besides, the hardware prefetcher alone leaves the SELL-8 mat-vec of the
/// 7-point 128^3 matrix 1.3x slower on the EPYC of docs/PERFORMANCE.md
/// (256 to 1024 entries ahead measured alike there).
constexpr std::uintptr_t prefetch_entries = 512;

/// Prefetches the line `bytes` past `p`. The address is formed as an
/// integer: looking past the end of an array forms no out-of-bounds pointer.
/// Always inlined: as a function of its own GCC 12 finds it free of side
/// effects (a void, noexcept call of __builtin_prefetch) and deletes every
/// call, which the mat-vec's 1.3x shows (measured, docs/PERFORMANCE.md).
[[gnu::always_inline]] inline void prefetch_ahead(const void* p, std::uintptr_t bytes) noexcept {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an integer on purpose, as said above
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + bytes),
               _MM_HINT_T0);
}

/// The 8 values of the step described by `step` at `v`: one broadcast for
/// a uniform step. Advances v past them.
[[gnu::always_inline]] inline __m512d step_values(SellStep step,
                                                  const double* __restrict& v) noexcept {
  if (step.uniform != 0) {
    const __m512d a = _mm512_set1_pd(*v);
    v += 1;
    return a;
  }
  const __m512d a = _mm512_loadu_pd(v);
  v += SellBlock::lanes;
  return a;
}

/// slice_sums as one vector, with one masked FMA per step: a consecutive
/// step loads its 8 x values as one vector, any other gathers them (both
/// masked to the lanes that hold an entry; the others keep their sum).
[[gnu::always_inline]] inline __m512d slice_sums_avx512(const SellBlock& sell, int slice,
                                                        const double* __restrict x) noexcept {
  constexpr int lanes = SellBlock::lanes;
  const std::int32_t* __restrict col = sell.col.data() + sell.col_start[slice];
  const double* __restrict v = sell.val.data() + sell.val_start[slice];
  const SellStep* __restrict steps = sell.steps.data();
  __m512d sum = _mm512_setzero_pd();
  for (std::int32_t g = sell.start[slice] / lanes; g < sell.start[slice + 1] / lanes; ++g) {
    prefetch_ahead(v, 8 * prefetch_entries);
    const SellStep step = steps[g];
    const __mmask8 real = step.real;
    const __m512d a = step_values(step, v);
    if (step.real == 0xFF && step.consecutive != 0) {
      // Unmasked: with the mask read from memory, the masked load and FMA
      // made the 7-point 128^3 mat-vec 5.9 against 4.6 ms on the EPYC of
      // docs/PERFORMANCE.md (bench/sell_model models it: 1.14-1.17x).
      sum = _mm512_fmadd_pd(a, _mm512_loadu_pd(x + *col), sum);
      col += 1;
      continue;
    }
    __m512d xs;
    if (step.consecutive != 0) {
      xs = _mm512_maskz_loadu_pd(real, x + *col);
      col += 1;
    } else {
      const __m256i at = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col));
      xs = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), real, at, x, 8);
      col += lanes;
    }
    sum = _mm512_mask3_fmadd_pd(a, xs, sum, real);
  }
  return sum;
}

/// Lanes lo .. hi - 1 of a vector.
inline __mmask8 lane_mask(int lo, int hi) noexcept {
  return static_cast<__mmask8>(((1U << hi) - 1U) & ~((1U << lo) - 1U));
}

/// The lanes of `v` added in order.
inline double lane_total(__m512d v) noexcept {
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, v);
  double sum = 0.0;
  for (const double lane : lanes) sum += lane;
  return sum;
}
/// The SELL interior rows at positions [begin, end) of `a`: calls
/// step(row0, mask, ax) with the vector of 8 row sums whose lane 0 is local
/// row row0 and whose rows in the range are the lanes set in `mask`.
template <class Step>
inline void traverse_sell(const CsrOperator& a, const double* __restrict x, int begin, int end,
                          Step&& step) {
  for_each_slice(a.interior(), a.interior_sell(), begin, end,
                 [&](int slice, int row0, int lo, int hi) {
                   step(row0, lane_mask(lo, hi), slice_sums_avx512(a.interior_sell(), slice, x));
                 });
}
#else
/// The 8 row sums of slice `slice`, lane by lane: sum over the lane's
/// entries, in stored order, of val * x[col] (the CSR kernel's loop).
[[gnu::always_inline]] inline void slice_sums(const SellBlock& sell, int slice,
                                              const double* __restrict x,
                                              double (&sums)[SellBlock::lanes]) noexcept {
  constexpr int lanes = SellBlock::lanes;
  const double* __restrict v = sell.val.data() + sell.val_start[slice];
  for (double& sum : sums) sum = 0.0;
  const std::int32_t* __restrict col = sell.col.data() + sell.col_start[slice];
  for (std::int32_t g = sell.start[slice] / lanes; g < sell.start[slice + 1] / lanes; ++g) {
    const SellStep step = sell.steps[g];
    for (int l = 0; l < lanes; ++l) {
      if ((step.real >> l & 1U) == 0) continue;
      sums[l] += v[step.uniform != 0 ? 0 : l] * x[step.consecutive != 0 ? col[0] + l : col[l]];
    }
    col += step.consecutive != 0 ? 1 : lanes;
    v += step.uniform != 0 ? 1 : lanes;
  }
}

/// The SELL interior rows at positions [begin, end) of `a`: calls
/// step(row, ax) for each, as traverse does for the CSR layout.
template <class Step>
inline void traverse_sell(const CsrOperator& a, const double* __restrict x, int begin, int end,
                          Step&& step) {
  for_each_slice(a.interior(), a.interior_sell(), begin, end,
                 [&](int slice, int row0, int lo, int hi) {
                   double sums[SellBlock::lanes];
                   slice_sums(a.interior_sell(), slice, x, sums);
                   for (int l = lo; l < hi; ++l) step(row0 + l, sums[l]);
                 });
}
#endif

/// Where the row blocks of `csr` end (positions, in order), and the values
/// they store: with `also` (a block of the same rows and runs: the
/// boundary rows' ghost columns), its columns counted as well, the same
/// cut serving both. The blocks are cut per run by dynamic programming:
/// the cut ending at position q minimises the values stored up to q, a
/// block of rows [p, q) costing lanes * (its columns' union + 1), the 1 a
/// column's worth of each block's own work (so a few columns more buy
/// fewer, fuller blocks).
struct BlockCut {
  std::vector<std::int32_t> ends;
  std::int64_t stored = 0;
};

BlockCut cut_blocks(const CsrBlock& csr, const CsrBlock* also) {
  constexpr int lanes = RowBlocks::lanes;
  const int rows = csr.rows();
  std::int32_t columns = 0;  // csr's; also's come after them
  for (const std::int32_t c : csr.col) columns = std::max(columns, c + 1);
  std::int32_t also_columns = 0;
  if (also != nullptr)
    for (const std::int32_t c : also->col) also_columns = std::max(also_columns, c + 1);
  // unions[p]: how many columns rows p .. q - 1 hold together, for the
  // blocks [p, q) that may end at q; last[c]: the last row before q that
  // holds column c (-1: none). Adding row q - 1 adds column c to the
  // unions starting after last[c]: one update a non-zero, not one per
  // block that may hold it.
  std::vector<std::int64_t> unions(static_cast<std::size_t>(rows), 0);
  std::vector<std::int32_t> last(static_cast<std::size_t>(columns) + also_columns, -1);
  std::vector<std::int64_t> best(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<std::int32_t> cut(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<std::int32_t> width(static_cast<std::size_t>(rows) + 1, 0);
  for (const RowRun& run : csr.runs) {
    for (int q = run.position + 1; q <= run.position + run.count; ++q) {
      const int r = q - 1;
      const int first = std::max(run.position, q - lanes);  // the earliest start
      std::array<std::int64_t, lanes + 1> gained{};  // gained[t]: new from start first + t on
      const auto add = [&](std::int32_t c) {
        std::int32_t& l = last[c];
        ++gained[std::min(std::max(l + 1, first) - first, lanes)];  // (l == r: a repeat, ignored)
        l = r;
      };
      for (std::int32_t k = csr.ptr[r]; k < csr.ptr[r + 1]; ++k) add(csr.col[k]);
      if (also != nullptr)
        for (std::int32_t k = also->ptr[r]; k < also->ptr[r + 1]; ++k) add(columns + also->col[k]);
      unions[r] = 0;
      std::int64_t added = 0;
      best[q] = std::numeric_limits<std::int64_t>::max();
      for (int p = first; p < q; ++p) {
        added += gained[p - first];
        unions[p] += added;
        const std::int64_t cost = best[p] + lanes * (unions[p] + 1);
        if (cost < best[q]) {
          best[q] = cost;
          cut[q] = p;
          width[q] = static_cast<std::int32_t>(unions[p]);
        }
      }
    }
  }
  BlockCut out;
  for (int q = rows; q > 0; q = cut[q]) {
    out.ends.push_back(q);
    out.stored += static_cast<std::int64_t>(lanes) * width[q];
  }
  std::reverse(out.ends.begin(), out.ends.end());
  return out;
}

/// `csr`'s rows in the row blocks ending at `ends` (cut_blocks): the
/// blocks' columns first, then the values, allocated once.
RowBlocks fill_blocks(const CsrBlock& csr, const std::vector<std::int32_t>& ends) {
  constexpr int lanes = RowBlocks::lanes;
  std::int32_t columns = 0;
  for (const std::int32_t c : csr.col) columns = std::max(columns, c + 1);
  RowBlocks out;
  out.row.reserve(ends.size());
  out.position.reserve(ends.size() + 1);
  out.col_start.reserve(ends.size() + 1);
  std::vector<std::int32_t> mark(static_cast<std::size_t>(columns),
                                 -1);  // mark[c] == p: c in block p's
  std::vector<std::int32_t> scratch;
  auto run = csr.runs.begin();
  int p = 0;
  for (const int q : ends) {
    while (run->position + run->count <= p) ++run;
    scratch.resize(static_cast<std::size_t>(csr.ptr[q] - csr.ptr[p]) + 1);
    std::int32_t* u = scratch.data();
    for (std::int32_t k = csr.ptr[p]; k < csr.ptr[q]; ++k) {
      std::int32_t& m = mark[csr.col[k]];
      *u = csr.col[k];  // kept (u advances) only if new: branch-free
      u += m != p ? 1 : 0;
      m = p;
    }
    std::sort(scratch.data(), u);
    out.col.insert(out.col.end(), scratch.data(), u);
    out.row.push_back(run->first + (p - run->position));
    out.position.push_back(q);
    out.col_start.push_back(static_cast<std::int32_t>(out.col.size()));
    p = q;
  }
  out.val.assign(static_cast<std::size_t>(lanes) * out.col.size(), 0.0);
  std::vector<std::int32_t>& where = mark;  // column -> place in the block's union
  for (int b = 0; b < out.blocks(); ++b) {
    for (std::int32_t j = out.col_start[b]; j < out.col_start[b + 1]; ++j) where[out.col[j]] = j;
    for (int r = out.position[b]; r < out.position[b + 1]; ++r) {
      for (std::int32_t k = csr.ptr[r]; k < csr.ptr[r + 1]; ++k)
        out.val[static_cast<std::size_t>(lanes) * where[csr.col[k]] + (r - out.position[b])] =
            csr.val[k];
    }
  }
  return out;
}

/// Whether row blocks of `cut` are kept for rows with `entries` non-zeros:
/// 32-bit offsets, and (unless `any_padding`) no more than 1.5 values a
/// non-zero.
bool keep_blocks(const BlockCut& cut, std::int64_t entries, bool any_padding) noexcept {
  return cut.stored <= INT32_MAX && (any_padding || 2 * cut.stored <= 3 * entries);
}

/// Calls step(block, row0, lo, hi) for every row block holding interior
/// positions in [begin, end): its lane 0 is local row row0 and its lanes
/// lo .. hi - 1 lie in the range.
template <class Step>
inline void for_each_block(const RowBlocks& rb, int begin, int end, Step&& step) {
  // The block holding position begin (position[0] == 0 <= begin).
  int b = static_cast<int>(std::upper_bound(rb.position.begin(), rb.position.end(), begin) -
                           rb.position.begin()) -
          1;
  for (; b < rb.blocks() && rb.position[b] < end; ++b) {
    const int p0 = rb.position[b];
    step(b, rb.row[b], std::max(begin - p0, 0), std::min(end, rb.position[b + 1]) - p0);
  }
}

#if ASYNCSOLVE_CSR_AVX512
/// Block b's 8 row sums: x[c] broadcast for each of its columns c, one FMA
/// for the 8 lanes, four sums interleaved over the columns (one would wait
/// on the FMA's latency) and added at the end.
[[gnu::always_inline]] inline __m512d block_sums_avx512(const RowBlocks& rb, int b,
                                                        const double* __restrict x) noexcept {
  constexpr std::ptrdiff_t lanes = RowBlocks::lanes;  // a pointer offset
  const std::int32_t* __restrict col = rb.col.data();
  std::int32_t j = rb.col_start[b];
  const std::int32_t end = rb.col_start[b + 1];
  const double* __restrict v = rb.val.data() + lanes * j;
  __m512d s0 = _mm512_setzero_pd();
  __m512d s1 = s0;
  __m512d s2 = s0;
  __m512d s3 = s0;
  for (; j + 4 <= end; j += 4, v += 4 * lanes) {
    s0 = _mm512_fmadd_pd(_mm512_loadu_pd(v), _mm512_set1_pd(x[col[j]]), s0);
    s1 = _mm512_fmadd_pd(_mm512_loadu_pd(v + lanes), _mm512_set1_pd(x[col[j + 1]]), s1);
    s2 = _mm512_fmadd_pd(_mm512_loadu_pd(v + 2 * lanes), _mm512_set1_pd(x[col[j + 2]]), s2);
    s3 = _mm512_fmadd_pd(_mm512_loadu_pd(v + 3 * lanes), _mm512_set1_pd(x[col[j + 3]]), s3);
  }
  for (; j < end; ++j, v += lanes)
    s0 = _mm512_fmadd_pd(_mm512_loadu_pd(v), _mm512_set1_pd(x[col[j]]), s0);
  return _mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3));
}

/// The row-block interior rows at positions [begin, end) of `a`: calls
/// step(row0, mask, ax) as traverse_sell does.
template <class Step>
inline void traverse_blocks(const CsrOperator& a, const double* __restrict x, int begin, int end,
                            Step&& step) {
  for_each_block(a.interior_blocks(), begin, end, [&](int b, int row0, int lo, int hi) {
    step(row0, lane_mask(lo, hi), block_sums_avx512(a.interior_blocks(), b, x));
  });
}
#else
/// Block b's 8 row sums, lane by lane (each row's sum in column order).
inline void block_sums(const RowBlocks& rb, int b, const double* __restrict x,
                       double (&sums)[RowBlocks::lanes]) noexcept {
  constexpr int lanes = RowBlocks::lanes;
  for (double& sum : sums) sum = 0.0;
  for (std::int32_t j = rb.col_start[b]; j < rb.col_start[b + 1]; ++j) {
    const double xj = x[rb.col[j]];
    const double* v = rb.val.data() + static_cast<std::ptrdiff_t>(lanes) * j;
    for (int l = 0; l < lanes; ++l) sums[l] += v[l] * xj;
  }
}

/// The row-block interior rows at positions [begin, end) of `a`: calls
/// step(row, ax) for each, lane by lane.
template <class Step>
inline void traverse_blocks(const CsrOperator& a, const double* __restrict x, int begin, int end,
                            Step&& step) {
  const RowBlocks& rb = a.interior_blocks();
  for_each_block(rb, begin, end, [&](int b, int row0, int lo, int hi) {
    double sums[RowBlocks::lanes];
    block_sums(rb, b, x, sums);
    for (int l = lo; l < hi; ++l) step(row0 + l, sums[l]);
  });
}
#endif

/// The boundary rows: calls step(row, (A x)_row) for each, owned columns
/// from x and ghost columns from `ghosts` (their sums added), block by
/// block where they are in row blocks, else as traverse_boundary.
template <class Step>
inline void traverse_boundary_rows(const CsrOperator& a, const double* __restrict x,
                                   const double* __restrict ghosts, Step&& step) {
  if (!a.boundary_in_blocks()) {
    traverse_boundary(a, x, ghosts, step);
    return;
  }
  constexpr int lanes = RowBlocks::lanes;
  const RowBlocks& owned = a.boundary_local_blocks();
  const RowBlocks& ghost = a.boundary_ghost_blocks();
  for (int b = 0; b < owned.blocks(); ++b) {
    double sums[lanes];
#if ASYNCSOLVE_CSR_AVX512
    _mm512_storeu_pd(
        sums, _mm512_add_pd(block_sums_avx512(owned, b, x), block_sums_avx512(ghost, b, ghosts)));
#else
    double from_ghosts[lanes];
    block_sums(owned, b, x, sums);
    block_sums(ghost, b, ghosts, from_ghosts);
    for (int l = 0; l < lanes; ++l) sums[l] += from_ghosts[l];
#endif
    for (int l = 0; l < owned.position[b + 1] - owned.position[b]; ++l)
      step(owned.row[b] + l, sums[l]);
  }
}

/// The interior rows at positions [begin, end) of `a` in SELL-8 or row
/// blocks, whichever `a` has: step as traverse_sell's.
template <class Step>
inline void traverse_lanes(const CsrOperator& a, const double* __restrict x, int begin, int end,
                           Step&& step) {
  if (a.interior_layout() == InteriorLayout::blocks) {
    traverse_blocks(a, x, begin, end, step);
  } else {
    traverse_sell(a, x, begin, end, step);
  }
}

/// The diagonal entry of local row i of m, 0 if there is none.
double diagonal_of(const sparse::DistMatrix& m, int i) noexcept {
  const auto& ptr = m.row_ptr();
  for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k)
    if (m.col()[k] == i) return m.val()[k];
  return 0.0;
}

}  // namespace

CsrOperator::CsrOperator(const sparse::DistMatrix& m, std::optional<InteriorLayout> layout,
                         bool compress_values)
    : rows_(m.local_rows()), ghosts_(m.plan().ghosts) {
  const int n = rows_;
  diagonal_.resize(static_cast<std::size_t>(n));
  const auto owned = [n](std::int32_t c) { return c < n; };
  const auto ghost = [n](std::int32_t c) { return c >= n; };
  interior_.col.reserve(m.col().size());
  interior_.val.reserve(m.val().size());
  interior_.ptr.reserve(static_cast<std::size_t>(n) + 1);
  for (int i = 0; i < n; ++i) {
    diagonal_[i] = diagonal_of(m, i);
    bool interior = true;
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
      interior = interior && m.col()[k] < n;
    if (interior) {
      append_row(interior_, m, i, owned, 0);
    } else {
      append_row(boundary_local_, m, i, owned, 0);
      append_row(boundary_ghost_, m, i, ghost, n);
    }
  }
  interior_nnz_ = static_cast<std::int64_t>(interior_.val.size());
  // The boundary rows in row blocks where they store no more than 1.5
  // values a non-zero (owned and ghost columns together), else grouped.
  const BlockCut edge = cut_blocks(boundary_local_, &boundary_ghost_);
  if (boundary_local_.rows() > 0 &&
      keep_blocks(
          edge, static_cast<std::int64_t>(boundary_local_.val.size() + boundary_ghost_.val.size()),
          false)) {
    boundary_local_blocks_ = fill_blocks(boundary_local_, edge.ends);
    boundary_ghost_blocks_ = fill_blocks(boundary_ghost_, edge.ends);
    boundary_in_blocks_ = true;
  } else {
    group_rows(boundary_local_, &boundary_ghost_);
  }
  if (layout == InteriorLayout::csr) {
    group_rows(interior_);
    return;
  }
  if (layout != InteriorLayout::blocks) {
    std::optional<SellBlock> sell =
        to_sell(interior_, layout == InteriorLayout::sell8, compress_values);
    if (sell) {
      sell_ = std::move(*sell);
      layout_ = InteriorLayout::sell8;
      interior_.col = {};  // the entries live in sell_ now
      interior_.val = {};
      return;
    }
    if (layout == InteriorLayout::sell8)
      throw std::length_error("CsrOperator: SELL-8 needs more than 2^31 - 1 entries on one rank");
  }
  const BlockCut cut = cut_blocks(interior_, nullptr);
  if (keep_blocks(cut, interior_nnz_, layout == InteriorLayout::blocks)) {
    blocks_ = fill_blocks(interior_, cut.ends);
    layout_ = InteriorLayout::blocks;
    interior_.col = {};  // the entries live in blocks_ now
    interior_.val = {};
    return;
  }
  if (layout == InteriorLayout::blocks)
    throw std::length_error("CsrOperator: row blocks need more than 2^31 - 1 values on one rank");
  group_rows(interior_);
}

bool csr_kernels_avx512() noexcept { return ASYNCSOLVE_CSR_AVX512 != 0; }

double spmv_interior(const CsrOperator& a, const double* x, double* y, int begin,
                     int end) noexcept {
  const auto step = [&](int row, double ax, double& dot) {
    y[row] = ax;
    dot += x[row] * ax;
  };
  double dot = 0.0;
  if (a.interior_layout() != InteriorLayout::csr) {
#if ASYNCSOLVE_CSR_AVX512
    __m512d dots = _mm512_setzero_pd();
    traverse_lanes(a, x, begin, end, [&](int row0, __mmask8 m, __m512d ax) {
      _mm512_mask_storeu_pd(y + row0, m, ax);
      dots = _mm512_mask3_fmadd_pd(_mm512_maskz_loadu_pd(m, x + row0), ax, dots, m);
    });
    return lane_total(dots);
#else
    traverse_lanes(a, x, begin, end, [&](int row, double ax) { step(row, ax, dot); });
    return dot;
#endif
  }
  traverse(a.interior(), x, begin, end, [&](int row, double ax) { step(row, ax, dot); });
  return dot;
}

double spmv_boundary(const CsrOperator& a, const double* x, const double* ghosts,
                     double* y) noexcept {
  double dot = 0.0;
  traverse_boundary_rows(a, x, ghosts, [&](int row, double ax) {
    y[row] = ax;
    dot += x[row] * ax;
  });
  return dot;
}

double jacobi_interior(const CsrOperator& a, const double* b, const double* dinv, const double* u,
                       double* u_new, int begin, int end) noexcept {
  const auto step = [&](int row, double au, double& rr) {
    const double r = b[row] - au;
    u_new[row] = u[row] + dinv[row] * r;
    rr += r * r;
  };
  double rr = 0.0;
  if (a.interior_layout() != InteriorLayout::csr) {
#if ASYNCSOLVE_CSR_AVX512
    __m512d rrs = _mm512_setzero_pd();
    traverse_lanes(a, u, begin, end, [&](int row0, __mmask8 m, __m512d au) {
      const __m512d r = _mm512_sub_pd(_mm512_maskz_loadu_pd(m, b + row0), au);
      const __m512d next = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, dinv + row0), r,
                                           _mm512_maskz_loadu_pd(m, u + row0));
      _mm512_mask_storeu_pd(u_new + row0, m, next);
      rrs = _mm512_mask3_fmadd_pd(r, r, rrs, m);
    });
    return lane_total(rrs);
#else
    traverse_lanes(a, u, begin, end, [&](int row, double au) { step(row, au, rr); });
    return rr;
#endif
  }
  traverse(a.interior(), u, begin, end, [&](int row, double au) { step(row, au, rr); });
  return rr;
}

double jacobi_boundary(const CsrOperator& a, const double* b, const double* dinv, const double* u,
                       const double* ghosts, double* u_new) noexcept {
  double rr = 0.0;
  traverse_boundary_rows(a, u, ghosts, [&](int row, double au) {
    const double r = b[row] - au;
    u_new[row] = u[row] + dinv[row] * r;
    rr += r * r;
  });
  return rr;
}

double residual(const CsrOperator& a, const double* b, const double* u, const double* ghosts,
                double* r) noexcept {
  double rr = 0.0;
  const auto step = [&](int row, double au) {
    const double ri = b[row] - au;
    if (r != nullptr) r[row] = ri;
    rr += ri * ri;
  };
  if (a.interior_layout() != InteriorLayout::csr) {
#if ASYNCSOLVE_CSR_AVX512
    __m512d rrs = _mm512_setzero_pd();
    traverse_lanes(a, u, 0, a.interior_rows(), [&](int row0, __mmask8 m, __m512d au) {
      const __m512d ri = _mm512_sub_pd(_mm512_maskz_loadu_pd(m, b + row0), au);
      if (r != nullptr) _mm512_mask_storeu_pd(r + row0, m, ri);
      rrs = _mm512_mask3_fmadd_pd(ri, ri, rrs, m);
    });
    rr = lane_total(rrs);
#else
    traverse_lanes(a, u, 0, a.interior_rows(), step);
#endif
  } else {
    traverse(a.interior(), u, 0, a.interior_rows(), step);
  }
  traverse_boundary_rows(a, u, ghosts, step);
  return rr;
}

namespace {

/// Row i of the plain reference product: sum over the row's non-zeros in
/// stored order, owned columns from x and ghost columns from ghosts.
double row_ref(const sparse::DistMatrix& m, int i, const double* x, const double* ghosts) noexcept {
  const int n = m.local_rows();
  double sum = 0.0;
  for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
    const std::int32_t c = m.col()[k];
    sum += m.val()[k] * (c < n ? x[c] : ghosts[c - n]);
  }
  return sum;
}

}  // namespace

double spmv_ref(const sparse::DistMatrix& m, const double* x, const double* ghosts,
                double* y) noexcept {
  double dot = 0.0;
  for (int i = 0; i < m.local_rows(); ++i) {
    const double sum = row_ref(m, i, x, ghosts);
    y[i] = sum;
    dot += x[i] * sum;
  }
  return dot;
}

double jacobi_ref(const sparse::DistMatrix& m, const double* b, const double* u,
                  const double* ghosts, double* u_new) noexcept {
  double rr = 0.0;
  for (int i = 0; i < m.local_rows(); ++i) {
    const double r = b[i] - row_ref(m, i, u, ghosts);
    u_new[i] = u[i] + r / diagonal_of(m, i);
    rr += r * r;
  }
  return rr;
}

double residual_ref(const sparse::DistMatrix& m, const double* b, const double* u,
                    const double* ghosts, double* r) noexcept {
  double rr = 0.0;
  for (int i = 0; i < m.local_rows(); ++i) {
    const double ri = b[i] - row_ref(m, i, u, ghosts);
    if (r != nullptr) r[i] = ri;
    rr += ri * ri;
  }
  return rr;
}

}  // namespace asyncsolve::ops
