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
#include <cstdint>
#include <span>
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
  std::vector<RowRun> runs;
  std::vector<std::int32_t> ptr{0};
  std::vector<std::int32_t> col;
  std::vector<double> val;
  int rows() const noexcept { return static_cast<int>(ptr.size()) - 1; }
};

/// This rank's rows of a distributed matrix, split for the overlapped
/// mat-vec. Owns copies of the entries (12 bytes each); cheap to share by
/// reference, not copied by the solvers.
class CsrOperator {
 public:
  CsrOperator() = default;
  /// Local: splits the matrix's local rows into interior and boundary rows.
  explicit CsrOperator(const sparse::DistMatrix& matrix);

  int rows() const noexcept { return rows_; }
  int ghosts() const noexcept { return ghosts_; }
  int interior_rows() const noexcept { return interior_.rows(); }
  int boundary_rows() const noexcept { return boundary_local_.rows(); }
  std::int64_t nnz() const noexcept {
    return static_cast<std::int64_t>(interior_.val.size() + boundary_local_.val.size() +
                                     boundary_ghost_.val.size());
  }
  /// a_ii of every local row (0 where the row has no diagonal entry).
  const std::vector<double>& diagonal() const noexcept { return diagonal_; }

  const CsrBlock& interior() const noexcept { return interior_; }
  /// The boundary rows' owned columns (indices into x).
  const CsrBlock& boundary_local() const noexcept { return boundary_local_; }
  /// The boundary rows' ghost columns (indices into the ghost array), same rows and runs.
  const CsrBlock& boundary_ghost() const noexcept { return boundary_ghost_; }

 private:
  int rows_ = 0;
  int ghosts_ = 0;
  CsrBlock interior_;
  CsrBlock boundary_local_;
  CsrBlock boundary_ghost_;
  std::vector<double> diagonal_;
};

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
