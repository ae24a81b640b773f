#pragma once
// Internal to src/ops/csr.cpp (see csr_simd.hpp): the kernels of the row
// blocks (RowBlocks; cut and filled by csr_blocks.cpp): a block's 8 row
// sums, as one vector with AVX-512 or lane by lane, and the traversal of
// the interior rows block by block.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "asyncsolve/ops/csr.hpp"
#include "csr_simd.hpp"

namespace asyncsolve::ops {
namespace {

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

}  // namespace
}  // namespace asyncsolve::ops
