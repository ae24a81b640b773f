#pragma once
// Internal to the CSR operator (src/ops/csr*.cpp): building its layouts.
// One file per layout: grouped CSR (csr_grouped.cpp), SELL-8
// (csr_sell.cpp), row blocks (csr_blocks.cpp); the choice among them and the
// operator's constructor in csr_layout.cpp; the kernels in csr.cpp (over the
// kernel headers csr_grouped.hpp, csr_sell.hpp, csr_blocks.hpp).
#include <cstdint>
#include <vector>

#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::ops::detail {

/// The diagonal entry of local row i of m, 0 if there is none.
double diagonal_of(const sparse::DistMatrix& m, int i) noexcept;

// ---- grouped CSR --------------------------------------------------------------

/// Groups `block`'s rows: consecutive rows of a run with the same columns
/// (in `also` as well, a block of the same rows, if given), up to
/// CsrBlock::max_group. Kept only where the groups average at least 1.5
/// rows (else the block stays ungrouped, multiplied row by row).
void group_rows(CsrBlock& block, const CsrBlock* also = nullptr);

// ---- SELL-8 ---------------------------------------------------------------------

/// The steps of every slice of a block in SELL-8 (its longest row's
/// entries), and the entries all slices store, padding included.
struct SellShape {
  std::vector<std::int32_t> widths;
  std::int64_t stored = 0;
};

/// The SELL-8 shape of `csr`'s rows.
SellShape sell_shape(const CsrBlock& csr);

/// `csr` in SELL-8 with the slices of `shape` (sell_shape(csr)); with
/// `compress_values`, a uniform step stores one value. Throws
/// std::length_error beyond 32-bit offsets.
SellBlock to_sell(const CsrBlock& csr, const SellShape& shape, bool compress_values);

// ---- row blocks -----------------------------------------------------------------

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

/// The cut of `csr`'s rows (with `also`'s columns, if given) into row blocks.
BlockCut cut_blocks(const CsrBlock& csr, const CsrBlock* also);

/// `csr`'s rows in the row blocks ending at `ends` (cut_blocks): the
/// blocks' columns first, then the values, allocated once.
RowBlocks fill_blocks(const CsrBlock& csr, const std::vector<std::int32_t>& ends);

}  // namespace asyncsolve::ops::detail
