#pragma once
/// A strict reader and a writer of Matrix Market files (NIST's exchange
/// format, the format of the SuiteSparse collection).
///
/// Read: the `matrix` object in `coordinate` or `array` format, fields
/// `real`, `integer` and `pattern`, symmetries `general`, `symmetric` and
/// `skew-symmetric`; 1-based indices, `%` comment lines and blank lines
/// anywhere after the banner, LF or CRLF line ends, blanks and tabs between
/// values. Symmetric files hold the lower triangle (row >= column; skew:
/// row > column) and are expanded to both triangles; duplicate coordinate
/// entries are summed (as scipy and SuiteSparse's users expect), and the
/// count of summed duplicates is reported. Array files are stored column by
/// column; their zero values are not kept as entries. Anything else is
/// refused with core::InputError, "FILE:LINE: what was found; what was
/// expected": a bad banner, `complex` or `hermitian`, a size line that is
/// not two or three non-negative integers, fewer or more entries than the
/// size line declares, an index out of range, an entry above the diagonal
/// of a symmetric file or on the diagonal of a skew-symmetric one, a value
/// that is not a finite number (NaN, Inf, overflow) or not an integer in an
/// integer file, a line longer than 1 MiB.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/sparse/csr.hpp"

namespace asyncsolve::sparse {

enum class MmFormat { coordinate, array };
enum class MmField { real, integer, pattern };
enum class MmSymmetry { general, symmetric, skew_symmetric };

/// "coordinate", "real", "skew-symmetric", ... as the banner spells them.
std::string_view name(MmFormat format) noexcept;
std::string_view name(MmField field) noexcept;
std::string_view name(MmSymmetry symmetry) noexcept;

/// What a file declared, and what reading it did.
struct MatrixMarketInfo {
  MmFormat format = MmFormat::coordinate;
  MmField field = MmField::real;
  MmSymmetry symmetry = MmSymmetry::general;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t entries = 0;        ///< entries (coordinate) or values (array) the file holds
  std::int64_t duplicates = 0;     ///< coordinate entries summed into an earlier one
  std::int64_t mirrored = 0;       ///< entries added by expanding a symmetric file
  std::int64_t zeros_dropped = 0;  ///< array values equal to zero, not stored
};

/// Limits of the reader. Every limit is checked from the header, before the
/// entries are read, so an oversized file is refused at once.
struct ReadLimits {
  /// Memory the reader may use (bytes), as estimated by read_bytes_estimate.
  double max_bytes = std::numeric_limits<double>::infinity();
  /// Where max_bytes comes from, for the error message (e.g. "--matrix-memory").
  std::string max_bytes_source = "the reader's limit";
};

/// Bytes the reader needs at its peak for a file with this header: 16 per
/// entry while reading, 12 per entry of the expanded CSR matrix (twice the
/// entries of a symmetric file), 16 per row.
double read_bytes_estimate(const MatrixMarketInfo& info) noexcept;

/// A matrix read from a file, with what the file declared.
struct MatrixMarketFile {
  MatrixMarketInfo info;
  CsrMatrix matrix;
};

/// Local: reads the file at `path`. Throws core::InputError naming the file
/// (and the line) for a missing, unreadable or malformed file, a directory,
/// an empty file, or one over `limits`.
MatrixMarketFile read_matrix_market(const std::filesystem::path& path,
                                    const ReadLimits& limits = {});

/// Local: reads an open stream (not closed); `name` stands for the file in
/// error messages. What the fuzz target and the tests call.
MatrixMarketFile read_matrix_market(std::FILE* in, std::string_view name,
                                    const ReadLimits& limits = {});

/// Local: reads the text `text` (a file already in memory); `name` as above.
MatrixMarketFile parse_matrix_market(std::string_view text, std::string_view name,
                                     const ReadLimits& limits = {});

/// Local: the dense vector of `length` values a file holds: an N x 1 matrix,
/// `array` or `coordinate` (missing entries are 0), `general`, field real or
/// integer. Throws core::InputError naming `option`, the file and what was
/// wrong, including a vector of the wrong length.
std::vector<double> read_vector(const std::filesystem::path& path, std::int64_t length,
                                std::string_view option, const ReadLimits& limits = {});

/// Local: the text of `values` as an N x 1 `array real general` file, each
/// value with 17 significant digits (read back bit for bit).
std::string format_vector(std::span<const double> values);

/// Local: the text of `a` as a `coordinate real general` file (or `pattern`
/// when `pattern`), 17 significant digits.
std::string format_matrix(const CsrMatrix& a, bool pattern = false);

}  // namespace asyncsolve::sparse
