#pragma once
/// The distributed CSR operator, split like the stencils so that the halo
/// exchange stays in flight during most of the mat-vec: interior rows (no
/// ghost column) need only this rank's entries of x; boundary rows also
/// read the ghost array the exchange fills.
///
/// A vector of the operator is this rank's local_rows() values in a plain
/// array (the solvers hold it in a one-row grid::Field without halo: every
/// vector kernel of ops/vector.hpp serves both operators); its ghosts are a
/// separate array of ghosts() values, in the order of the matrix's ghost
/// numbering (what comm's sparse halo exchanges fill).
///
/// Storage, chosen so that each kernel streams the values and column
/// indices once and has no per-row branch: the interior rows as runs of
/// consecutive local rows (one run, when the rows were ordered interior
/// first as sparse::load_system orders them) with 32-bit offsets and
/// columns; the boundary rows likewise, each row's owned columns and ghost
/// columns in two separate blocks. Per non-zero: 8 bytes of value, 4 of
/// column index, and the gathered x; per row 4 bytes of offset (8 on the
/// boundary) and the 8-byte write of y.
///
/// Where it pads little, the interior rows' entries are stored instead as sliced
/// ELLPACK with slices of 8 rows (SELL-8; Kreutzer et al.'s SELL-C-sigma
/// with C = 8 and no sorting, sigma = 1), so that one vector instruction
/// works on 8 rows at once instead of one row's short chain of FMAs (see
/// SellBlock: slices aligned on column offsets, x loaded rather than
/// gathered where a step's 8 columns are consecutive). Every row still sums
/// its entries in stored order, with one FMA each from +0 (the CSR loop
/// rounds as the compiler contracts it: GCC keeps a separate multiply and
/// add in such chains on AMD Zen, so the two layouts agree to rounding, not
/// bit for bit). Rows kept in CSR with identical columns are multiplied in
/// groups (CsrBlock::groups), which with AVX-512 also sums in another order.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::ops {

/// Local rows [first, first + count) stored at positions [position,
/// position + count) of a block.
struct RowRun {
  int first = 0;
  int count = 0;
  int position = 0;
};

/// Rows of one kind in CSR form: entries ptr[p] .. ptr[p+1] of col/val
/// belong to the row stored at position p.
struct CsrBlock {
  /// Most rows in a group.
  static constexpr int max_group = 8;
  std::vector<RowRun> runs;
  std::vector<std::int32_t> ptr{0};
  std::vector<std::int32_t> col;
  std::vector<double> val;
  /// Groups of rows with identical column lists (PETSc's "inodes"), or
  /// empty: group i is the rows at positions [groups[i], groups[i + 1]),
  /// at most max_group of them, in one run. The kernels multiply a group's
  /// rows together, reading its column indices and x once (with AVX-512:
  /// 8 columns at a time, x gathered once for the group, one FMA per row,
  /// each row's 8 partial sums added at the end, so to rounding of the
  /// row-by-row sum). Set where the groups average 1.5 rows or more: for
  /// the interior rows in the CSR layout, and for the boundary rows (in
  /// boundary_local, the groups' ghost columns being identical too).
  std::vector<std::int32_t> groups;
  int rows() const noexcept { return static_cast<int>(ptr.size()) - 1; }
};

/// One step of a SELL-8 slice: an entry (or padding) in each of its 8 lanes.
struct SellStep {
  std::uint8_t real = 0;         ///< bit l set: lane l holds an entry (else value 0, masked out)
  std::uint8_t consecutive = 0;  ///< 1: lane l's column is c + l, one index word c stored
  std::uint8_t uniform = 0;      ///< 1: every lane holding an entry has one value, stored once
};

/// Rows in SELL-8: the runs' rows in slices of `lanes` consecutive rows (a
/// slice never spans two runs; lanes past a run's end are empty). Slice s
/// holds entries [start[s], start[s + 1]), padding included, a step of 8
/// (one per lane) after another; step g (entries 8g .. 8g + 7) is described
/// by steps[g].
///
/// Values are compressed too (unless the operator was built without it): a
/// uniform step, whose lanes that hold an entry all hold the same value
/// (bit for bit), stores that value once, any other step stores 8 (0 in
/// the padding lanes). On a matrix of a constant-coefficient stencil every
/// step is uniform: the 7-point matrix's values take 1 byte per non-zero
/// instead of 8. Slice s's values start at val_start[s]. (Value compression
/// after Kourtis, Goumas and Koziris's CSR-VI, 2008, here per step.)
///
/// Column indices are compressed: a consecutive step stores one index word
/// c (its lanes read x[c], x[c + 1], ..., x[c + 7], one vector load), any
/// other step stores 8 (gathered). Slice s's words start at col_start[s].
///
/// A slice whose rows' column offsets (column - row) number no more than
/// its longest row's entries is stored *aligned*: step t holds every lane's
/// entry at the t-th of those offsets (a lane without one is padding), so
/// every step is consecutive: the 7-point matrix's rows on an x face, which
/// lack one neighbour, no longer shift their lanes out of line. Any other
/// slice stores lane l's j-th entry at step j. Either way a row's entries
/// are summed in their stored (column) order.
struct SellBlock {
  static constexpr int lanes = 8;
  std::vector<int> run_slice;              ///< first slice of each run of the CsrBlock
  std::vector<std::int32_t> start{0};      ///< per slice, and one past the last: first entry
  std::vector<std::int32_t> col_start{0};  ///< per slice, and one past the last: first index word
  std::vector<std::int32_t> val_start{0};  ///< per slice, and one past the last: first value
  std::vector<SellStep> steps;
  std::vector<std::int32_t> col;
  std::vector<double> val;
  int slices() const noexcept { return static_cast<int>(start.size()) - 1; }
};

/// Rows in row blocks: runs of up to `lanes` consecutive rows (a block
/// never spans two runs), each stored column by column over the union of
/// its rows' columns, a zero where a row lacks the column. Block b holds
/// the rows at positions [position[b], position[b + 1]), the first of them
/// local row row[b]; its columns are col[col_start[b] .. col_start[b + 1]),
/// ascending, and column j's values for lanes 0 .. 7 are
/// val[lanes * (col_start[b] + j) + l] (0 in a lane past the block's rows).
/// The kernel reads x[c] once per column and block, broadcasts it, and
/// makes one FMA for the block's rows: no gathers, and the 8 row sums come
/// out as one vector. The blocks are cut by dynamic programming, per run,
/// to store the fewest values. Rows whose neighbours share most of their
/// columns (the elements of a DG or high-order discretisation) pay little
/// padding: pyamg's DG matrix stores 1.4 values per non-zero, and its
/// mat-vec runs 2.3x faster than in grouped CSR (docs/PERFORMANCE.md).
/// The padding is multiplied, not masked: an infinite or NaN x[c] makes
/// the block's rows that lack column c NaN too.
struct RowBlocks {
  static constexpr int lanes = 8;
  std::vector<std::int32_t> position{0};   ///< per block, and one past the last: first row position
  std::vector<std::int32_t> row;           ///< per block: the local row of its first row
  std::vector<std::int32_t> col_start{0};  ///< per block, and one past the last: first column
  std::vector<std::int32_t> col;
  std::vector<double> val;
  int blocks() const noexcept { return static_cast<int>(row.size()); }
};

/// How the interior rows are stored (and multiplied).
enum class InteriorLayout {
  csr,    ///< CSR, row by row or in groups of rows with identical columns
  sell8,  ///< SELL-8 (SellBlock)
  blocks  ///< row blocks (RowBlocks)
};

/// How the boundary rows are stored: their owned and ghost columns in
/// grouped CSR (two CsrBlocks), or in row blocks (two RowBlocks of one cut).
enum class BoundaryLayout { csr, blocks };

/// The layouts' names (result documents, bench/spmv), in the enums' order.
inline constexpr std::array<std::string_view, 3> interior_layout_names{"csr", "sell8", "blocks"};
inline constexpr std::array<std::string_view, 2> boundary_layout_names{"csr", "blocks"};
std::string_view layout_name(InteriorLayout layout) noexcept;
std::string_view layout_name(BoundaryLayout layout) noexcept;

// ---- The layout policy: what CsrOperator takes unless told ------------------
//
// SELL-8 runs 8 rows per vector instruction but pads every slice to its
// longest row; row blocks gather nothing but store a zero wherever a row of a
// block lacks one of the block's columns; grouped CSR stores no padding and
// gathers x row by row. Where the thresholds come from (docs/PERFORMANCE.md,
// "SELL-8" and "Row blocks"): the 7-point 128^3 matrix pads SELL-8 by 0.2 %
// and runs it fastest; pyamg's DG matrix would pad it by 36 %, and its row
// blocks, storing 1.40 values per non-zero, run its mat-vec 2.3x faster than
// grouped CSR.

/// SELL-8 is taken where its padding is at most this fraction of the rows'
/// non-zeros (stored entries <= (1 + sell_max_padding) non-zeros).
inline constexpr double sell_max_padding = 0.25;

/// Row blocks are taken (where SELL-8 pads more, and for the boundary rows)
/// where they store at most this many values per non-zero.
inline constexpr double blocks_max_values_per_nonzero = 1.5;

/// The interior rows' layout: sell8 when `sell_stored` (the entries SELL-8
/// stores for `nonzeros` non-zeros, padding included; nothing beyond 32-bit
/// offsets) is within sell_max_padding; else blocks when `blocks_stored()`
/// (the values row blocks store; asked only then, since it cuts the blocks)
/// is within blocks_max_values_per_nonzero; else csr. Local, pure.
InteriorLayout choose_interior_layout(
    std::int64_t nonzeros, std::optional<std::int64_t> sell_stored,
    const std::function<std::optional<std::int64_t>()>& blocks_stored);

/// The boundary rows' layout: blocks when `blocks_stored` (the values one
/// cut of their owned and ghost columns stores; nothing beyond 32-bit
/// offsets) is within blocks_max_values_per_nonzero of their `nonzeros`,
/// else csr. Local, pure.
BoundaryLayout choose_boundary_layout(std::int64_t nonzeros,
                                      std::optional<std::int64_t> blocks_stored) noexcept;

/// This rank's rows of a distributed matrix, split for the overlapped
/// mat-vec. Owns copies of the entries (12 bytes each at most); cheap to share by
/// reference, not copied by the solvers.
class CsrOperator {
 public:
  CsrOperator() = default;
  /// Local: splits the matrix's local rows into interior and boundary rows,
  /// storing the interior ones in `layout` (by default the one
  /// choose_interior_layout picks: interior_layout()) and the boundary ones
  /// as choose_boundary_layout picks (boundary_layout()); with SELL-8, a
  /// uniform step's value once unless `compress_values` is false (the
  /// plain layout, for comparison: bench/spmv --values). Throws
  /// std::length_error where a layout asked for needs more than 32-bit
  /// offsets.
  explicit CsrOperator(const sparse::DistMatrix& matrix,
                       std::optional<InteriorLayout> layout = std::nullopt,
                       bool compress_values = true);

  int rows() const noexcept { return rows_; }
  int ghosts() const noexcept { return ghosts_; }
  int interior_rows() const noexcept { return interior_.rows(); }
  int boundary_rows() const noexcept { return boundary_local_.rows(); }
  std::int64_t nnz() const noexcept {
    return interior_nnz_ +
           static_cast<std::int64_t>(boundary_local_.val.size() + boundary_ghost_.val.size());
  }
  /// Non-zeros of the interior rows (no padding).
  std::int64_t interior_nnz() const noexcept { return interior_nnz_; }
  /// How the interior rows are stored (see the constructor).
  InteriorLayout interior_layout() const noexcept { return layout_; }
  /// Entries stored for the interior rows, padding included (their
  /// non-zeros in the CSR layout).
  std::int64_t interior_stored() const noexcept {
    switch (layout_) {
      case InteriorLayout::sell8:
        return sell_.start.back();
      case InteriorLayout::blocks:
        return static_cast<std::int64_t>(blocks_.val.size());
      case InteriorLayout::csr:
        break;
    }
    return interior_nnz_;
  }
  /// Values stored for the interior rows: interior_stored() less what
  /// SELL-8's uniform steps save.
  std::int64_t interior_values() const noexcept {
    return layout_ == InteriorLayout::sell8 ? static_cast<std::int64_t>(sell_.val.size())
                                            : interior_stored();
  }
  /// a_ii of every local row (0 where the row has no diagonal entry).
  const std::vector<double>& diagonal() const noexcept { return diagonal_; }

  /// The interior rows' runs and offsets; their entries too in the CSR
  /// layout (in the others col and val are empty: see interior_sell() and
  /// interior_blocks()).
  const CsrBlock& interior() const noexcept { return interior_; }
  const SellBlock& interior_sell() const noexcept { return sell_; }
  const RowBlocks& interior_blocks() const noexcept { return blocks_; }
  /// The boundary rows' owned columns (indices into x).
  const CsrBlock& boundary_local() const noexcept { return boundary_local_; }
  /// The boundary rows' ghost columns (indices into the ghost array), same rows and runs.
  const CsrBlock& boundary_ghost() const noexcept { return boundary_ghost_; }
  /// How the boundary rows are stored (see the constructor).
  BoundaryLayout boundary_layout() const noexcept { return boundary_layout_; }
  /// Whether the kernels take the boundary rows in row blocks (one cut for
  /// their owned and their ghost columns; else the CSR blocks above, grouped).
  bool boundary_in_blocks() const noexcept { return boundary_layout_ == BoundaryLayout::blocks; }
  const RowBlocks& boundary_local_blocks() const noexcept { return boundary_local_blocks_; }
  const RowBlocks& boundary_ghost_blocks() const noexcept { return boundary_ghost_blocks_; }

 private:
  /// The boundary rows in their layout (the constructor's second step).
  void lay_out_boundary();
  /// The interior rows in `layout` (nothing: the policy's), the last step.
  void lay_out_interior(std::optional<InteriorLayout> layout, bool compress_values);

  int rows_ = 0;
  int ghosts_ = 0;
  std::int64_t interior_nnz_ = 0;
  InteriorLayout layout_ = InteriorLayout::csr;
  CsrBlock interior_;
  SellBlock sell_;
  RowBlocks blocks_;
  CsrBlock boundary_local_;
  CsrBlock boundary_ghost_;
  BoundaryLayout boundary_layout_ = BoundaryLayout::csr;
  RowBlocks boundary_local_blocks_;
  RowBlocks boundary_ghost_blocks_;
  std::vector<double> diagonal_;
};

/// Whether this build's SELL-8 and row-block kernels are the AVX-512 ones
/// (else the row blocks' loops are lane by lane; csr_sell_kernel says
/// which form the SELL-8 kernels take).
bool csr_kernels_avx512() noexcept;
/// The SELL-8 slice sums this build's kernels use: "avx512" (one vector of
/// 8 lanes), "avx2" (two of 4, where the build has AVX2 and FMA but not
/// AVX-512) or "portable" (lane by lane).
std::string_view csr_sell_kernel() noexcept;

/// y = A x on the interior rows stored at positions [begin, end) (0 ..
/// interior_rows()); returns the local sum of x_i y_i over those rows (the
/// p^T A p of CG, fused). Reads only x.
double spmv_interior(const CsrOperator& a, const double* x, double* y, int begin, int end) noexcept;
/// y = A x on the boundary rows, reading the ghosts; returns the local sum
/// of x_i y_i over them.
double spmv_boundary(const CsrOperator& a, const double* x, const double* ghosts,
                     double* y) noexcept;

/// One Jacobi step on interior rows [begin, end): u_new = u + D^-1 (b - A u)
/// with `dinv` = 1 / diag(A); returns the local ||b - A u||^2 over those rows
/// (the residual of the input iterate, fused).
double jacobi_interior(const CsrOperator& a, const double* b, const double* dinv, const double* u,
                       double* u_new, int begin, int end) noexcept;
/// The same on the boundary rows.
double jacobi_boundary(const CsrOperator& a, const double* b, const double* dinv, const double* u,
                       const double* ghosts, double* u_new) noexcept;

/// r = b - A u on every local row (u's ghosts current); returns the local
/// ||r||^2. r may be null (only the norm).
double residual(const CsrOperator& a, const double* b, const double* u, const double* ghosts,
                double* r) noexcept;

/// The references: plain loops over the matrix's own local CSR (columns
/// ascending by global index, one branch per entry for owned or ghost).
/// y = A x; returns the local x . y.
double spmv_ref(const sparse::DistMatrix& m, const double* x, const double* ghosts,
                double* y) noexcept;
/// u_new = u + D^-1 (b - A u); returns the local ||b - A u||^2.
double jacobi_ref(const sparse::DistMatrix& m, const double* b, const double* u,
                  const double* ghosts, double* u_new) noexcept;
/// r = b - A u (r may be null); returns the local ||r||^2.
double residual_ref(const sparse::DistMatrix& m, const double* b, const double* u,
                    const double* ghosts, double* r) noexcept;

}  // namespace asyncsolve::ops
