// The distributed CSR operator's kernels (see csr.hpp for the storage; the
// layouts are built by csr_layout.cpp and the files it names).
//
// Every fast kernel is one traversal of a block: for each run of rows, for
// each row, the sum of val[k] * x[col[k]] over its entries, handed to a
// per-row step (store y, or the Jacobi update, or the residual). The row
// loop has no branch; the entries are streamed once, in storage order. The
// traversals are the layouts' kernel headers (csr_grouped.hpp,
// csr_sell.hpp, csr_blocks.hpp); this file is the one translation unit that
// includes them, compiled with AVX-512 where the build has it (and once more
// without, by the portable CSR test).
#include "asyncsolve/ops/csr.hpp"

#include "asyncsolve/core/cost.hpp"

#include "csr_blocks.hpp"
#include "csr_grouped.hpp"
#include "csr_sell.hpp"
#include "csr_simd.hpp"

namespace asyncsolve::ops {
namespace {

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

/// Reports a pass over the interior rows at positions [begin, end) to the
/// simulation's cost meter (core::charge_bytes): their share of the stored
/// entries at 12 bytes (value and column) and `row_bytes` a row.
void charge_interior(const CsrOperator& a, int begin, int end, double row_bytes) noexcept {
  if (a.interior_rows() == 0 || end <= begin) return;
  const double rows = end - begin;
  core::charge_bytes(12.0 * static_cast<double>(a.interior_stored()) * rows / a.interior_rows() +
                     row_bytes * rows);
}

/// The same for the boundary rows, all of them.
void charge_boundary(const CsrOperator& a, double row_bytes) noexcept {
  const std::int64_t entries = a.nnz() - a.interior_nnz();
  core::charge_bytes(12.0 * static_cast<double>(entries) + row_bytes * a.boundary_rows());
}

}  // namespace

bool csr_kernels_avx512() noexcept { return ASYNCSOLVE_CSR_AVX512 != 0; }

std::string_view csr_sell_kernel() noexcept {
  if (ASYNCSOLVE_CSR_AVX512 != 0) return "avx512";
  return ASYNCSOLVE_CSR_AVX2 != 0 ? "avx2" : "portable";
}

double spmv_interior(const CsrOperator& a, const double* x, double* y, int begin,
                     int end) noexcept {
  charge_interior(a, begin, end, 16.0);  // x, y
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
  charge_boundary(a, 16.0);
  double dot = 0.0;
  traverse_boundary_rows(a, x, ghosts, [&](int row, double ax) {
    y[row] = ax;
    dot += x[row] * ax;
  });
  return dot;
}

double jacobi_interior(const CsrOperator& a, const double* b, const double* dinv, const double* u,
                       double* u_new, int begin, int end) noexcept {
  charge_interior(a, begin, end, 32.0);  // b, dinv, u, u_new
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
  charge_boundary(a, 32.0);
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
  charge_interior(a, 0, a.interior_rows(), 24.0);  // b, u, r
  charge_boundary(a, 24.0);
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

}  // namespace asyncsolve::ops
