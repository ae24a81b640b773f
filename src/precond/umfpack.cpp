// umfpack: SuiteSparse's sparse LU factorisation P A Q = L U, once at setup.
// UMFPACK takes compressed columns; A's CSR rows are the columns of A^T, so
// A^T is factorised and each solve asks for the transposed system
// (UMFPACK_At), which is A x = b. A singular matrix (UMFPACK's warning, or
// a reciprocal condition estimate below kSingularRcond) is a
// FactorisationError.
//
// Per solve: one umfpack_di_solve (two triangular solves, with UMFPACK's
// default iterative refinement steps).
#include <umfpack.h>

#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/timer.hpp"
#include "local_solver_impl.hpp"

namespace asyncsolve::precond::detail {
namespace {

class Umfpack final : public LocalSolver {
 public:
  explicit Umfpack(const sparse::LocalCsr& a) {
    const double t0 = core::now_s();
    report_.name = "umfpack";
    report_.exact = true;
    report_.nnz_a = a.nnz();
    n_ = a.rows();
    p_.assign(a.row_ptr.begin(), a.row_ptr.end());
    i_.assign(a.col.begin(), a.col.end());
    x_ = a.val;
    umfpack_di_defaults(control_);
    double info[UMFPACK_INFO];
    void* symbolic = nullptr;
    int status =
        umfpack_di_symbolic(n_, n_, p_.data(), i_.data(), x_.data(), &symbolic, control_, info);
    if (status == UMFPACK_OK)
      status =
          umfpack_di_numeric(p_.data(), i_.data(), x_.data(), symbolic, &numeric_, control_, info);
    if (symbolic != nullptr) umfpack_di_free_symbolic(&symbolic);
    if (status != UMFPACK_OK) {
      if (numeric_ != nullptr) umfpack_di_free_numeric(&numeric_);
      if (status == UMFPACK_WARNING_singular_matrix) {
        throw FactorisationError(fmt::format(
            "umfpack: the matrix of {} rows is singular (a zero pivot; a block without Dirichlet "
            "rows?)",
            n_));
      }
      throw FactorisationError(fmt::format("umfpack: factorisation failed (status {})", status));
    }
    const double rcond = info[UMFPACK_RCOND];
    if (!(rcond >= kSingularRcond)) {
      umfpack_di_free_numeric(&numeric_);
      throw FactorisationError(fmt::format(
          "umfpack: the matrix is singular to working precision (reciprocal condition estimate "
          "{:.3g} of {} rows, the smallest over the largest pivot: a block without Dirichlet "
          "rows, or rows scaled many orders of magnitude apart?)",
          rcond, n_));
    }
    report_.nnz_factor = static_cast<std::int64_t>(info[UMFPACK_LNZ] + info[UMFPACK_UNZ]);
    report_.memory_bytes = info[UMFPACK_NUMERIC_SIZE] * info[UMFPACK_SIZE_OF_UNIT];
    report_.factor_s = core::now_s() - t0;
  }
  Umfpack(const Umfpack&) = delete;
  Umfpack& operator=(const Umfpack&) = delete;
  ~Umfpack() override {
    if (numeric_ != nullptr) umfpack_di_free_numeric(&numeric_);
  }

  // x = A^-1 b, i.e. (A^T)^T x = b on the factorised A^T
  void solve(std::span<const double> b, std::span<double> x) override {
    double info[UMFPACK_INFO];
    umfpack_di_solve(UMFPACK_At, p_.data(), i_.data(), x_.data(), x.data(), b.data(), numeric_,
                     control_, info);
  }

  const LocalSolverReport& report() const override { return report_; }

 private:
  int n_ = 0;
  std::vector<int> p_;
  std::vector<int> i_;
  std::vector<double> x_;
  double control_[UMFPACK_CONTROL];
  void* numeric_ = nullptr;
  LocalSolverReport report_;
};

}  // namespace

std::unique_ptr<LocalSolver> make_umfpack(const sparse::LocalCsr& a) {
  return std::make_unique<Umfpack>(a);
}

}  // namespace asyncsolve::precond::detail
