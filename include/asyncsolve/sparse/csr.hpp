#pragma once
/// A sparse matrix in compressed sparse row form, held whole by one process
/// (the matrix a file holds, before it is distributed).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace asyncsolve::sparse {

/// Rows in CSR form with 0-based indices: row i holds the entries
/// row_ptr[i] .. row_ptr[i+1] of `col` and `val`, columns strictly ascending
/// (no duplicates). Owns its arrays; plain aggregate.
struct CsrMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> row_ptr{0};  ///< rows + 1 offsets
  std::vector<std::int32_t> col;         ///< column of each entry
  std::vector<double> val;               ///< value of each entry

  /// Number of stored entries.
  std::int64_t nnz() const noexcept { return row_ptr.empty() ? 0 : row_ptr.back(); }
};

/// Rows in CSR form held by someone else (a CsrMatrix, or a caller's arrays:
/// the Python package's scipy matrices): the same layout, not owned. Within a
/// row, columns may come in any order and repeat (repeated columns are summed
/// where the rows are distributed); check_csr_view says whether the arrays
/// hold together.
struct CsrView {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::span<const std::int64_t> row_ptr;  ///< rows + 1 offsets
  std::span<const std::int32_t> col;      ///< column of each entry
  std::span<const double> val;            ///< value of each entry

  CsrView() = default;
  CsrView(std::int64_t rows_, std::int64_t cols_, std::span<const std::int64_t> row_ptr_,
          std::span<const std::int32_t> col_, std::span<const double> val_)
      : rows(rows_), cols(cols_), row_ptr(row_ptr_), col(col_), val(val_) {}
  /// A view of `a` (which must outlive it).
  CsrView(const CsrMatrix& a)  // NOLINT(google-explicit-constructor): a matrix is a view
      : rows(a.rows), cols(a.cols), row_ptr(a.row_ptr), col(a.col), val(a.val) {}

  /// Number of stored entries.
  std::int64_t nnz() const noexcept { return row_ptr.empty() ? 0 : row_ptr.back(); }
};

/// Local: an empty string when `a` holds together (rows + 1 offsets from 0,
/// ascending, ending at the length of col and val; every column in [0,
/// cols)), else one line saying what does not, naming the first bad row.
std::string check_csr_view(const CsrView& a);

/// Local: an empty string when every value of `v` is finite, else one line
/// naming `what`, the first entry that is not (0-based) and its value: a
/// caller's NaN or infinity is bad input, as it is in a Matrix Market file.
std::string check_finite(std::string_view what, std::span<const double> v);

/// Local: y = A x in plain loops (the serial reference of every distributed
/// mat-vec). x has a.cols values, y a.rows.
void multiply(const CsrMatrix& a, std::span<const double> x, std::span<double> y);

/// Local: the row index of the first row whose diagonal entry is missing or
/// zero, or -1 if every diagonal entry is non-zero (square matrices).
std::int64_t first_zero_diagonal(const CsrMatrix& a) noexcept;

/// Local: true if the sparsity pattern and the values are symmetric.
bool is_symmetric(const CsrMatrix& a);

}  // namespace asyncsolve::sparse
