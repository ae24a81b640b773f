#include "asyncsolve/sparse/csr.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <fmt/format.h>

namespace asyncsolve::sparse {

std::string check_csr_view(const CsrView& a) {
  if (a.rows < 0 || a.cols < 0) return fmt::format("a {} x {} matrix", a.rows, a.cols);
  if (static_cast<std::int64_t>(a.row_ptr.size()) != a.rows + 1) {
    return fmt::format("{} row offsets for {} rows: expected rows + 1", a.row_ptr.size(), a.rows);
  }
  if (a.row_ptr[0] != 0)
    return fmt::format("the row offsets start at {}: expected 0", a.row_ptr[0]);
  if (a.col.size() != a.val.size() || a.nnz() != static_cast<std::int64_t>(a.col.size())) {
    return fmt::format("{} column indices and {} values for {} entries: expected as many of each",
                       a.col.size(), a.val.size(), a.nnz());
  }
  // Every offset first: ascending from 0 to nnz (the last), so that no row
  // below reads past the column indices (a row's end offset can be far out
  // of range while a later one is smaller).
  for (std::int64_t i = 0; i < a.rows; ++i) {
    if (a.row_ptr[i + 1] < a.row_ptr[i]) {
      return fmt::format("row {}: its offsets {} > {}: expected ascending row offsets", i,
                         a.row_ptr[i], a.row_ptr[i + 1]);
    }
  }
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      if (a.col[k] < 0 || a.col[k] >= a.cols) {
        return fmt::format("row {}: column {}: expected a column from 0 to {}", i, a.col[k],
                           a.cols - 1);
      }
      if (!std::isfinite(a.val[k])) {
        return fmt::format("row {}, column {}: the value {}: expected finite numbers", i, a.col[k],
                           a.val[k]);
      }
    }
  }
  return {};
}

std::string check_finite(std::string_view what, std::span<const double> v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      return fmt::format("{}: entry {} is {}: expected finite numbers", what, i, v[i]);
    }
  }
  return {};
}

void multiply(const CsrMatrix& a, std::span<const double> x, std::span<double> y) {
  assert(static_cast<std::int64_t>(x.size()) == a.cols);
  assert(static_cast<std::int64_t>(y.size()) == a.rows);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double sum = 0.0;
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) sum += a.val[k] * x[a.col[k]];
    y[i] = sum;
  }
}

std::int64_t first_zero_diagonal(const CsrMatrix& a) noexcept {
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const auto first = a.col.begin() + a.row_ptr[i];
    const auto last = a.col.begin() + a.row_ptr[i + 1];
    const auto it = std::lower_bound(first, last, static_cast<std::int32_t>(i));
    if (it == last || *it != i || a.val[it - a.col.begin()] == 0.0) return i;
  }
  return -1;
}

bool is_symmetric(const CsrMatrix& a) {
  if (a.rows != a.cols) return false;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t j = a.col[k];
      const auto first = a.col.begin() + a.row_ptr[j];
      const auto last = a.col.begin() + a.row_ptr[j + 1];
      const auto it = std::lower_bound(first, last, static_cast<std::int32_t>(i));
      if (it == last || *it != i || a.val[it - a.col.begin()] != a.val[k]) return false;
    }
  }
  return true;
}

}  // namespace asyncsolve::sparse
