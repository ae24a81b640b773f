// Matrix Market beside the reader: a right-hand side or initial guess read
// as an n x 1 vector, and the writers of --write-solution and the tests
// (see matrix_market.hpp).
#include <iterator>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"

namespace asyncsolve::sparse {

std::vector<double> read_vector(const std::filesystem::path& path, std::int64_t length,
                                std::string_view option, const ReadLimits& limits) {
  MatrixMarketFile file;
  try {
    file = read_matrix_market(path, limits);
  } catch (const core::InputError& e) {
    throw core::InputError(fmt::format("{} {}", option, e.what()));
  }
  const MatrixMarketInfo& info = file.info;
  const std::string name = path.string();
  if (info.cols != 1 || info.symmetry != MmSymmetry::general || info.field == MmField::pattern) {
    throw core::InputError(fmt::format(
        "{} {}: a {} x {} {} {} {} matrix: expected a vector ({} x 1, real or integer, general)",
        option, name, info.rows, info.cols, ::asyncsolve::sparse::name(info.format),
        ::asyncsolve::sparse::name(info.field), ::asyncsolve::sparse::name(info.symmetry), length));
  }
  if (info.rows != length) {
    throw core::InputError(
        fmt::format("{} {}: a vector of {} values: expected {} (the matrix's rows)", option, name,
                    info.rows, length));
  }
  std::vector<double> out(static_cast<std::size_t>(length), 0.0);
  const CsrMatrix& a = file.matrix;
  for (std::int64_t i = 0; i < a.rows; ++i)
    if (a.row_ptr[i + 1] > a.row_ptr[i]) out[i] = a.val[a.row_ptr[i]];
  return out;
}

std::string format_vector(std::span<const double> values) {
  std::string out = "%%MatrixMarket matrix array real general\n% written by asyncsolve\n";
  out += fmt::format("{} 1\n", values.size());
  out.reserve(out.size() + values.size() * 25);
  for (const double v : values) fmt::format_to(std::back_inserter(out), "{:.17g}\n", v);
  return out;
}

std::string format_matrix(const CsrMatrix& a, bool pattern) {
  std::string out = fmt::format(
      "%%MatrixMarket matrix coordinate {} general\n% written by "
      "asyncsolve\n{} {} {}\n",
      pattern ? "pattern" : "real", a.rows, a.cols, a.nnz());
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      if (pattern) {
        fmt::format_to(std::back_inserter(out), "{} {}\n", i + 1, a.col[k] + 1);
      } else {
        fmt::format_to(std::back_inserter(out), "{} {} {:.17g}\n", i + 1, a.col[k] + 1, a.val[k]);
      }
    }
  }
  return out;
}

}  // namespace asyncsolve::sparse
