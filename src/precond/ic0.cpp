// ic0: incomplete Cholesky with no fill, A ~ L L^T where L keeps the pattern
// of A's lower triangle (diagonal included). Row by row (the "left-looking"
// row form): for row i and each stored column j < i,
//   l_ij = (a_ij - sum_{m < j} l_im l_jm) / l_jj,
//   l_ii = sqrt(a_ii - sum_{m < i} l_im^2),
// the sums over the columns rows i and j both store (a merge of two sorted
// rows). A pivot a_ii - sum l_im^2 that is not positive (not small compared
// with a_ii: kSingularRcond) stops the factorisation with the row and value.
//
// Per solve: one forward and one backward substitution, 2 nnz(L) multiply-adds.
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/timer.hpp"
#include "local_solver_impl.hpp"

namespace asyncsolve::precond::detail {
namespace {

class Ic0 final : public LocalSolver {
 public:
  explicit Ic0(const sparse::LocalCsr& a) {
    const double t0 = core::now_s();
    n_ = a.rows();
    report_.name = "ic0";
    report_.nnz_a = a.nnz();
    // L's pattern: the lower triangle, diagonal last in each row.
    ptr_.assign(static_cast<std::size_t>(n_) + 1, 0);
    for (int i = 0; i < n_; ++i) {
      bool diagonal = false;
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        if (a.col[k] < i) {
          col_.push_back(a.col[k]);
          val_.push_back(a.val[k]);
        } else if (a.col[k] == i) {
          diagonal = true;
          diag_value_ = a.val[k];
        }
      }
      col_.push_back(i);
      val_.push_back(diagonal ? diag_value_ : 0.0);
      ptr_[i + 1] = static_cast<std::int64_t>(col_.size());
      factor_row(i);
    }
    report_.nnz_factor = static_cast<std::int64_t>(val_.size());
    report_.memory_bytes = static_cast<double>(val_.size()) * 12.0 + (n_ + 1) * 8.0;
    report_.factor_s = core::now_s() - t0;
  }

  // x = (L L^T)^-1 b: L y = b, then L^T x = y.
  void solve(std::span<const double> b, std::span<double> x) override {
    for (int i = 0; i < n_; ++i) {
      double s = b[i];
      const std::int64_t d = ptr_[i + 1] - 1;
      for (std::int64_t k = ptr_[i]; k < d; ++k) s -= val_[k] * x[col_[k]];
      x[i] = s / val_[d];
    }
    for (int i = n_ - 1; i >= 0; --i) {
      const std::int64_t d = ptr_[i + 1] - 1;
      const double xi = x[i] / val_[d];
      x[i] = xi;
      for (std::int64_t k = ptr_[i]; k < d; ++k) x[col_[k]] -= val_[k] * xi;
    }
  }

  const LocalSolverReport& report() const override { return report_; }

 private:
  /// Overwrites row i of L (its a-values) with the factor's.
  void factor_row(int i) {
    const std::int64_t di = ptr_[i + 1] - 1;
    const double a_ii = val_[di];
    for (std::int64_t k = ptr_[i]; k < di; ++k) {
      const int j = col_[k];
      // s = sum over m < j stored in rows i and j of l_im l_jm
      double s = 0.0;
      std::int64_t p = ptr_[i];
      std::int64_t q = ptr_[j];
      const std::int64_t q_end = ptr_[j + 1] - 1;
      while (p < k && q < q_end) {
        if (col_[p] == col_[q]) {
          s += val_[p++] * val_[q++];
        } else if (col_[p] < col_[q]) {
          ++p;
        } else {
          ++q;
        }
      }
      val_[k] = (val_[k] - s) / val_[q_end];
    }
    double pivot = a_ii;
    for (std::int64_t k = ptr_[i]; k < di; ++k) pivot -= val_[k] * val_[k];
    if (!(pivot > kSingularRcond * std::abs(a_ii)) || !std::isfinite(pivot)) {
      throw FactorisationError(fmt::format(
          "ic0: pivot {:.3g} at its row {} of {} (diagonal {:.3g}): the incomplete Cholesky "
          "factorisation needs positive pivots (try --local-solver cholmod where the subdomain "
          "is positive definite, whose complete factorisation avoids this breakdown, or "
          "umfpack, whose LU needs no definiteness)",
          pivot, i + 1, n_, a_ii));
    }
    val_[di] = std::sqrt(pivot);
  }

  int n_ = 0;
  double diag_value_ = 0;
  std::vector<std::int64_t> ptr_;
  std::vector<std::int32_t> col_;
  std::vector<double> val_;
  LocalSolverReport report_;
};

}  // namespace

std::unique_ptr<LocalSolver> make_ic0(const sparse::LocalCsr& a) {
  return std::make_unique<Ic0>(a);
}

}  // namespace asyncsolve::precond::detail
