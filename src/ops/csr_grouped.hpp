#pragma once
// Internal to src/ops/csr.cpp (see csr_simd.hpp): the kernels of the
// grouped CSR layout (CsrBlock; built by csr_grouped.cpp): a row's sum in
// stored order, the sums of a group of rows with identical columns, and the
// traversals of a block and of the boundary rows that hand each row's
// (A x) to a step.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "asyncsolve/ops/csr.hpp"
#include "csr_simd.hpp"

namespace asyncsolve::ops {
namespace {

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

}  // namespace
}  // namespace asyncsolve::ops
