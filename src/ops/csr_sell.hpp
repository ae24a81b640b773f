#pragma once
// Internal to src/ops/csr.cpp (see csr_simd.hpp): the kernels of the SELL-8
// layout (SellBlock; built by csr_sell.cpp): a slice's 8 row sums, as one
// vector with AVX-512 or lane by lane, and the traversal of the interior
// rows slice by slice.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "asyncsolve/ops/csr.hpp"
#include "csr_simd.hpp"

namespace asyncsolve::ops {
namespace {

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
#if ASYNCSOLVE_CSR_AVX2
/// The 4-lane mask (all bits of a lane set) of bits `first` .. `first` + 3
/// of a step's `real`.
[[gnu::always_inline]] inline __m256i half_mask(unsigned real, int first) noexcept {
  const __m256i bits = _mm256_set_epi64x(8, 4, 2, 1);
  const __m256i lanes = _mm256_set1_epi64x(static_cast<long long>((real >> first) & 0xFU));
  return _mm256_cmpeq_epi64(_mm256_and_si256(lanes, bits), bits);
}

/// slice_sums in two vectors of 4 lanes (AVX2 and FMA): per lane the same
/// fused multiply-adds in the same order as the AVX-512 kernel, so the sums
/// are those of the other kernels bit for bit. A full consecutive step loads
/// x as two vectors; any other step loads or gathers only the lanes that
/// hold an entry and leaves the others' sums as they were.
[[gnu::always_inline]] inline void slice_sums(const SellBlock& sell, int slice,
                                              const double* __restrict x,
                                              double (&sums)[SellBlock::lanes]) noexcept {
  constexpr int lanes = SellBlock::lanes;
  const std::int32_t* __restrict col = sell.col.data() + sell.col_start[slice];
  const double* __restrict v = sell.val.data() + sell.val_start[slice];
  const SellStep* __restrict steps = sell.steps.data();
  __m256d lo = _mm256_setzero_pd();
  __m256d hi = _mm256_setzero_pd();
  for (std::int32_t g = sell.start[slice] / lanes; g < sell.start[slice + 1] / lanes; ++g) {
    const SellStep step = steps[g];
    __m256d a_lo;
    __m256d a_hi;
    if (step.uniform != 0) {
      a_lo = a_hi = _mm256_broadcast_sd(v);
      v += 1;
    } else {
      a_lo = _mm256_loadu_pd(v);
      a_hi = _mm256_loadu_pd(v + 4);
      v += lanes;
    }
    if (step.real == 0xFF && step.consecutive != 0) {
      lo = _mm256_fmadd_pd(a_lo, _mm256_loadu_pd(x + *col), lo);
      hi = _mm256_fmadd_pd(a_hi, _mm256_loadu_pd(x + *col + 4), hi);
      col += 1;
      continue;
    }
    const __m256i m_lo = half_mask(step.real, 0);
    const __m256i m_hi = half_mask(step.real, 4);
    __m256d x_lo;
    __m256d x_hi;
    if (step.consecutive != 0) {
      // A half without entries forms no address (it may lie past x's end).
      x_lo = (step.real & 0xFU) != 0 ? _mm256_maskload_pd(x + *col, m_lo) : _mm256_setzero_pd();
      x_hi = (step.real >> 4) != 0 ? _mm256_maskload_pd(x + *col + 4, m_hi) : _mm256_setzero_pd();
      col += 1;
    } else {
      const __m128i at_lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(col));
      const __m128i at_hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + 4));
      x_lo = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), x, at_lo, _mm256_castsi256_pd(m_lo), 8);
      x_hi = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), x, at_hi, _mm256_castsi256_pd(m_hi), 8);
      col += lanes;
    }
    lo = _mm256_blendv_pd(lo, _mm256_fmadd_pd(a_lo, x_lo, lo), _mm256_castsi256_pd(m_lo));
    hi = _mm256_blendv_pd(hi, _mm256_fmadd_pd(a_hi, x_hi, hi), _mm256_castsi256_pd(m_hi));
  }
  _mm256_storeu_pd(sums, lo);
  _mm256_storeu_pd(sums + 4, hi);
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
#endif

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

}  // namespace
}  // namespace asyncsolve::ops
