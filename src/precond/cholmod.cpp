// cholmod: SuiteSparse's sparse Cholesky factorisation A = L L^T (CHOLMOD's
// default: AMD or METIS ordering, supernodal where it pays), once at setup.
// A's rows in CSR with columns j <= i are, read as compressed columns, the
// upper triangle of A (stype = 1), so no copy of the values is needed.
// A pivot that is not positive (CHOLMOD_NOT_POSDEF, with the column in
// L->minor; for CHOLMOD's simplicial LDL^T, which does not stop there, the
// first D entry that is not positive) or a reciprocal condition estimate
// below kSingularRcond (a pure Neumann block factorised at rounding level)
// is a FactorisationError.
//
// Per solve: b copied into CHOLMOD's dense vector, two triangular solves
// (cholmod_solve2 reuses its workspace), x copied out.
#include <cholmod.h>

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/timer.hpp"
#include "local_solver_impl.hpp"

namespace asyncsolve::precond {

bool suitesparse_available() { return true; }

namespace detail {
namespace {

class Cholmod final : public LocalSolver {
 public:
  explicit Cholmod(const sparse::LocalCsr& a) {
    const double t0 = core::now_s();
    report_.name = "cholmod";
    report_.exact = true;
    report_.nnz_a = a.nnz();
    cholmod_l_start(&c_);
    c_.print = 0;
    c_.error_handler = nullptr;
    const int n = a.rows();
    // The upper triangle as compressed columns: column i holds the j <= i of row i.
    std::vector<SuiteSparse_long> p(static_cast<std::size_t>(n) + 1, 0);
    std::vector<SuiteSparse_long> idx;
    std::vector<double> x;
    for (int i = 0; i < n; ++i) {
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        if (a.col[k] > i) continue;
        idx.push_back(a.col[k]);
        x.push_back(a.val[k]);
      }
      p[i + 1] = static_cast<SuiteSparse_long>(idx.size());
    }
    cholmod_sparse view{};
    view.nrow = static_cast<std::size_t>(n);
    view.ncol = static_cast<std::size_t>(n);
    view.nzmax = idx.size();
    view.p = p.data();
    view.i = idx.data();
    view.x = x.data();
    view.stype = 1;
    view.itype = CHOLMOD_LONG;
    view.xtype = CHOLMOD_REAL;
    view.dtype = CHOLMOD_DOUBLE;
    view.sorted = 1;
    view.packed = 1;
    factor_ = cholmod_l_analyze(&view, &c_);
    if (factor_ != nullptr) cholmod_l_factorize(&view, factor_, &c_);
    const long negative =
        factor_ != nullptr && c_.status == CHOLMOD_OK ? first_negative_pivot() : -1;
    if (factor_ == nullptr || c_.status == CHOLMOD_NOT_POSDEF || c_.status < CHOLMOD_OK ||
        negative >= 0) {
      const long minor =
          negative >= 0 ? negative : (factor_ != nullptr ? static_cast<long>(factor_->minor) : -1L);
      const int status = negative >= 0 ? CHOLMOD_NOT_POSDEF : c_.status;
      release();
      if (status == CHOLMOD_NOT_POSDEF) {
        throw FactorisationError(fmt::format(
            "cholmod: the matrix is not positive definite (pivot {} of {}, counted from 1 in the "
            "factorisation's order, is not positive; so A is not positive definite either: try "
            "--local-solver umfpack with --method schwarz, gmres, fgmres or bicgstab, since the "
            "CG methods need a positive definite A)",
            minor + 1, n));
      }
      throw FactorisationError(fmt::format("cholmod: factorisation failed (status {})", status));
    }
    const double rcond = cholmod_l_rcond(factor_, &c_);
    if (!(rcond >= kSingularRcond)) {
      release();
      throw FactorisationError(fmt::format(
          "cholmod: the matrix is singular to working precision (reciprocal condition estimate "
          "{:.3g} of {} rows; a block without Dirichlet rows?)",
          rcond, n));
    }
    report_.nnz_factor = static_cast<std::int64_t>(c_.lnz);
    report_.memory_bytes = static_cast<double>(c_.memory_inuse);
    b_ = cholmod_l_allocate_dense(static_cast<std::size_t>(n), 1, static_cast<std::size_t>(n),
                                  CHOLMOD_REAL, &c_);
    n_ = n;
    report_.factor_s = core::now_s() - t0;
  }
  Cholmod(const Cholmod&) = delete;
  Cholmod& operator=(const Cholmod&) = delete;
  ~Cholmod() override { release(); }

  // x = A^-1 b
  void solve(std::span<const double> b, std::span<double> x) override {
    std::memcpy(b_->x, b.data(), static_cast<std::size_t>(n_) * sizeof(double));
    cholmod_l_solve2(CHOLMOD_A, factor_, b_, nullptr, &x_, nullptr, &y_, &e_, &c_);
    std::memcpy(x.data(), x_->x, static_cast<std::size_t>(n_) * sizeof(double));
  }

  const LocalSolverReport& report() const override { return report_; }

 private:
  /// The first pivot (column of the permuted matrix) of a simplicial LDL^T
  /// factor whose D entry is not positive, or -1. CHOLMOD's LDL^T (what it
  /// picks for small or sparse factors) does not stop at a negative pivot,
  /// only its LL^T (supernodal) does.
  long first_negative_pivot() const {
    if (factor_->is_super || factor_->is_ll) return -1;
    const auto* p = static_cast<const SuiteSparse_long*>(factor_->p);
    const auto* x = static_cast<const double*>(factor_->x);
    for (std::size_t j = 0; j < factor_->n; ++j)
      if (!(x[p[j]] > 0.0)) return static_cast<long>(j);  // the diagonal comes first
    return -1;
  }

  void release() {
    for (cholmod_dense** d : {&b_, &x_, &y_, &e_})
      if (*d != nullptr) cholmod_l_free_dense(d, &c_);
    if (factor_ != nullptr) cholmod_l_free_factor(&factor_, &c_);
    if (started_) cholmod_l_finish(&c_);
    started_ = false;
  }

  cholmod_common c_{};
  bool started_ = true;
  cholmod_factor* factor_ = nullptr;
  cholmod_dense* b_ = nullptr;
  cholmod_dense* x_ = nullptr;
  cholmod_dense* y_ = nullptr;
  cholmod_dense* e_ = nullptr;
  int n_ = 0;
  LocalSolverReport report_;
};

}  // namespace

std::unique_ptr<LocalSolver> make_cholmod(const sparse::LocalCsr& a) {
  return std::make_unique<Cholmod>(a);
}

}  // namespace detail
}  // namespace asyncsolve::precond
