#pragma once
// Internal to the CSR operator's kernels: whether the translation unit that
// includes it (src/ops/csr.cpp, which CMake compiles with the AVX-512
// options where the build has them, and the portable CSR test compiles again
// without) has AVX-512, and the vector helpers the layouts' kernels share.
// Like the layouts' kernel headers (csr_grouped.hpp, csr_sell.hpp,
// csr_blocks.hpp), included by csr.cpp only: everything in it has internal
// linkage, so the two compilations of the kernels never meet.
#if defined(__AVX512F__) && defined(__AVX512VL__)
#include <immintrin.h>
#define ASYNCSOLVE_CSR_AVX512 1
#else
#define ASYNCSOLVE_CSR_AVX512 0
#endif
// Without AVX-512, the SELL-8 slice sums in two AVX2 vectors of 4 lanes
// where the build has AVX2 and FMA (csr_sell.hpp); the portable CSR test
// compiles the lane-by-lane loop instead, so both stay tested.
#if !ASYNCSOLVE_CSR_AVX512 && defined(__AVX2__) && defined(__FMA__) && \
    !defined(ASYNCSOLVE_TEST_PORTABLE_CSR)
#include <immintrin.h>
#define ASYNCSOLVE_CSR_AVX2 1
#else
#define ASYNCSOLVE_CSR_AVX2 0
#endif

namespace asyncsolve::ops {
namespace {

#if ASYNCSOLVE_CSR_AVX512
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
#endif

}  // namespace
}  // namespace asyncsolve::ops
