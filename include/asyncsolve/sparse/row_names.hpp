#pragma once
/// How a message names a row of the user's matrix. A distributed matrix is
/// a permutation of what the user gave (partitioned, renumbered), so a row
/// is named in the user's numbering: a Matrix Market file's rows count
/// from 1, a caller's array's (the Python package's scipy matrix) from 0.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

namespace asyncsolve::sparse {

/// Where the user's numbering of the rows comes from.
enum class RowOrigin {
  distributed,  ///< none: the distributed numbering (an assembled problem)
  file,         ///< a Matrix Market file (1-based in messages)
  array,        ///< a caller's matrix (0-based in messages)
};

/// This rank's rows in the user's numbering, and how to name one.
struct RowNames {
  /// Each local row's row in the user's numbering (0-based); empty with
  /// RowOrigin::distributed. A view.
  std::span<const std::int64_t> rows;
  RowOrigin origin = RowOrigin::distributed;
  /// The power of two A's values were multiplied by before the solve
  /// (sparse::equilibrate); a message quotes an entry as given(v).
  int matrix_exponent = 0;

  /// An entry of the matrix being solved, as the user gave it.
  double given(double v) const { return std::ldexp(v, -matrix_exponent); }

  /// Whether rows have a user's numbering (a file or a caller's matrix).
  bool named() const { return origin != RowOrigin::distributed; }
  /// `row` (0-based, the user's numbering if named(), else the distributed
  /// one) as a message names it: "file row 8" (1-based), "row 7 of A",
  /// "global row 7".
  std::string name(std::int64_t row) const;
  /// Local row `local` in the numbering name() takes (first_row: the
  /// distributed numbering's first row on this rank, used when not named()).
  std::int64_t row_of(std::int64_t local, std::int64_t first_row) const {
    return named() ? rows[static_cast<std::size_t>(local)] : first_row + local;
  }
};

}  // namespace asyncsolve::sparse
