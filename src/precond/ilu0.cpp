// ilu0: block-Jacobi ILU(0). Each rank factorises its own diagonal block
// (its owned rows, the columns of other ranks dropped) incompletely, keeping
// the block's sparsity pattern: L U ~ A_rr with L unit lower and U upper
// triangular (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed.,
// Algorithm 10.4, the IKJ variant). An apply solves L U z = r on the owned
// rows: a forward and a backward substitution, no communication, so the
// preconditioner's quality falls as ranks (blocks) are added. For a
// symmetric matrix the factors satisfy U = D L^T, so M is symmetric and the
// CG family may use it too. A zero pivot (a missing or cancelled diagonal)
// is refused at setup on every rank.
//
// Setup: the block comes straight from the distributed CSR's local columns
// (PcOperator::diagonal_block; from assemble() on the stencils), then one
// pass factorises it in place and one lays the factors out for the
// substitutions. Per apply: one pass over the factors (12 B per stored
// entry, like the matrix) and three vectors; with a structured field, the
// owned values are gathered into row order first and scattered back after.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/check.hpp"
#include "precond_impl.hpp"

namespace asyncsolve::precond::detail {

namespace {

class Ilu0 final : public Preconditioner {
 public:
  Ilu0(PcOperator& op, const sparse::RowNames& names) : op_(op) {
    const double t0 = core::now_s();
    report_.name = "ilu0";
    // Out of memory on this rank (only where assemble() has no collective
    // inside, so that this rank may leave it) joins the verdict below.
    const bool local = op.assembles_locally();
    DiagonalBlock b;
    std::int64_t first_row = 0;
    std::int64_t global_rows = 0;
    int bad = -1;
    bool no_memory = false;
    try {
      b = op.diagonal_block();
      first_row = b.first_row;
      global_rows = b.global_rows;
      n_ = b.rows();
      values_.resize(static_cast<std::size_t>(n_));
      bad = factorise(b);
      factor_entries_ = static_cast<double>(b.val.size());
      if (bad < 0) arrange_for_solves(b);
    } catch (const std::bad_alloc&) {
      if (!local) throw;
      no_memory = true;
      b = DiagonalBlock{};
    }
    // the verdict of every rank: the lowest rank out of memory, else the
    // lowest with a zero pivot, names it (MAXLOC takes the lowest of equals)
    struct {
      int bad;
      int rank;
    } mine{no_memory ? 2 : bad >= 0 ? 1 : 0, op.comm().rank()}, worst{0, 0};
    par::check_mpi(MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, op.comm().get()),
                   "MPI_Allreduce");
    if (worst.bad == 2) {
      throw core::CollectiveFailure(fmt::format(
          "rank {}: out of memory while it factorised its rows for --pc ilu0 (its block and "
          "factor hold about as much as its part of the matrix): try more ranks, or ranks where "
          "more memory is free",
          worst.rank));
    }
    if (worst.bad != 0) {
      // The row as the user knows it (a file's, a caller's array's, else
      // the distributed numbering); and whether A's own diagonal is zero
      // there (then no diagonal preconditioner helps).
      std::int64_t where[2] = {0, bad_diagonal_is_zero_ ? 1 : 0};
      if (bad >= 0) where[0] = names.row_of(bad, first_row);
      par::check_mpi(MPI_Bcast(where, 2, MPI_INT64_T, worst.rank, op.comm().get()), "MPI_Bcast");
      throw core::InputError(
          fmt::format("--pc ilu0: {} {}, so its ILU(0) does not exist; expected a matrix whose "
                      "diagonal is non-zero and stays non-zero in the factorisation ({})",
                      names.name(where[0]),
                      where[1] != 0 ? "has a_ii = 0" : "has a zero pivot (its diagonal cancelled)",
                      where[1] != 0 ? "try --pc none or asm" : "try --pc jacobi, asm or none"));
    }
    report_.numbers = {{"global_rows", static_cast<double>(global_rows)},
                       {"factor_entries", factor_entries_}};
    report_.settings = {{"blocks", "one per rank (block Jacobi)"}, {"fill", "0"}};
    report_.setup_s = core::now_s() - t0;
  }

  // z = U^-1 L^-1 r on the owned rows.
  void apply(grid::Field& r, grid::Field& z) override {
    // a CSR vector is its rows in order already; a structured field is gathered
    const bool direct = r.halo() == 0 && r.interior()[1] == 1 && r.interior()[2] == 1;
    const double* in = r.origin();
    double* out = z.origin();
    if (!direct) {
      op_.gather(r, values_);
      in = values_.data();
      out = values_.data();
    }
    solve(in, out);
    if (!direct) op_.scatter(values_, z);
    ++report_.applies;
  }

  const PcReport& report() const override { return report_; }

 private:
  /// In place: b becomes L (strictly lower, unit diagonal implied) and U;
  /// diag_ the position of each diagonal entry, dinv_ its inverse. Returns
  /// the first row with a zero pivot, or -1 (bad_diagonal_is_zero_: whether
  /// A's own diagonal is zero on that row).
  int factorise(DiagonalBlock& b) {
    diag_.assign(static_cast<std::size_t>(n_), -1);
    dinv_.assign(static_cast<std::size_t>(n_), 0.0);
    std::vector<std::int64_t> where(static_cast<std::size_t>(n_), -1);
    for (int i = 0; i < n_; ++i) {
      const std::int64_t begin = b.row_ptr[i];
      const std::int64_t end = b.row_ptr[i + 1];
      const auto a_ii = std::lower_bound(b.col.begin() + begin, b.col.begin() + end, i);
      bad_diagonal_is_zero_ =
          a_ii == b.col.begin() + end || *a_ii != i || b.val[a_ii - b.col.begin()] == 0.0;
      for (std::int64_t e = begin; e < end; ++e) where[b.col[e]] = e;
      for (std::int64_t e = begin; e < end && b.col[e] < i; ++e) {
        // l_ik = a_ik / u_kk; a_ij -= l_ik u_kj for j > k in row i's pattern
        const int kk = b.col[e];
        b.val[e] *= dinv_[kk];
        const double lik = b.val[e];
        for (std::int64_t f = diag_[kk] + 1; f < b.row_ptr[kk + 1]; ++f) {
          const std::int64_t at = where[b.col[f]];
          if (at >= 0) b.val[at] -= lik * b.val[f];
        }
      }
      for (std::int64_t e = begin; e < end; ++e) where[b.col[e]] = -1;
      const auto diagonal = std::lower_bound(b.col.begin() + begin, b.col.begin() + end, i);
      if (diagonal == b.col.begin() + end || *diagonal != i) return i;
      const std::int64_t d = diagonal - b.col.begin();
      if (b.val[d] == 0.0) return i;
      diag_[i] = d;
      dinv_[i] = 1.0 / b.val[d];
    }
    return -1;
  }

  /// The factors in the order the substitutions read them: each row's
  /// entries beside the diagonal (column i - 1 of L, i + 1 of U) apart, in
  /// a dense array, so that the row-to-row dependence of a substitution
  /// stays in a register (one multiply-add a row) instead of a store and a
  /// load; the other ("far") entries in CSR; U's rows scaled by 1 / u_ii.
  struct Triangle {
    std::vector<std::int64_t> ptr{0};
    std::vector<int> col;
    std::vector<double> val;
    std::vector<double> next;  ///< l_i,i-1 (L) or u_i,i+1 / u_ii (U); 0 where not stored

    /// Row `row` from b's entries [begin, end), times `scale`: column
    /// `neighbour` into next, the others into the CSR part.
    void add_row(const DiagonalBlock& b, std::int64_t begin, std::int64_t end, int row,
                 int neighbour, double scale) {
      if (next.empty()) next.resize(b.row_ptr.size() - 1, 0.0);
      for (std::int64_t e = begin; e < end; ++e) {
        if (b.col[e] == neighbour) {
          next[static_cast<std::size_t>(row)] = b.val[e] * scale;
        } else {
          col.push_back(b.col[e]);
          val.push_back(b.val[e] * scale);
        }
      }
      ptr.push_back(static_cast<std::int64_t>(col.size()));
    }
  };

  /// The factors of b (in place) into lower_ and upper_; b and diag_ freed.
  void arrange_for_solves(DiagonalBlock& b) {
    std::int64_t below = 0;  // entries of L
    for (int i = 0; i < n_; ++i) below += diag_[static_cast<std::size_t>(i)] - b.row_ptr[i];
    const std::int64_t above = b.row_ptr[n_] - below - n_;
    for (auto [t, entries] : {std::pair{&lower_, below}, std::pair{&upper_, above}}) {
      t->ptr.reserve(static_cast<std::size_t>(n_) + 1);
      t->col.reserve(static_cast<std::size_t>(entries));
      t->val.reserve(static_cast<std::size_t>(entries));
    }
    for (int i = 0; i < n_; ++i) {
      const auto row = static_cast<std::size_t>(i);
      lower_.add_row(b, b.row_ptr[i], diag_[row], i, i - 1, 1.0);
      upper_.add_row(b, diag_[row] + 1, b.row_ptr[i + 1], i, i + 1, dinv_[row]);
    }
    b = DiagonalBlock{};  // the factors live on in lower_, upper_ and dinv_
    std::vector<std::int64_t>().swap(diag_);
  }

  /// out = U^-1 L^-1 in (in and out may be the same).
  void solve(const double* in, double* out) const {
    // L y = in (unit diagonal)
    {
      const std::int64_t* ptr = lower_.ptr.data();
      const int* col = lower_.col.data();
      const double* val = lower_.val.data();
      const double* next = lower_.next.data();
      double previous = 0.0;
      for (int i = 0; i < n_; ++i) {
        double sum = in[i];
        for (std::int64_t e = ptr[i]; e < ptr[i + 1]; ++e) sum -= val[e] * out[col[e]];
        previous = sum - next[i] * previous;
        out[i] = previous;
      }
    }
    // U z = y, as z_i = y_i / u_ii - sum_j (u_ij / u_ii) z_j
    const std::int64_t* ptr = upper_.ptr.data();
    const int* col = upper_.col.data();
    const double* val = upper_.val.data();
    const double* next = upper_.next.data();
    double previous = 0.0;
    for (int i = n_ - 1; i >= 0; --i) {
      double sum = out[i] * dinv_[i];
      for (std::int64_t e = ptr[i]; e < ptr[i + 1]; ++e) sum -= val[e] * out[col[e]];
      previous = sum - next[i] * previous;
      out[i] = previous;
    }
  }

  PcOperator& op_;
  int n_ = 0;
  bool bad_diagonal_is_zero_ = false;
  double factor_entries_ = 0.0;
  Triangle lower_;
  Triangle upper_;
  std::vector<std::int64_t> diag_;
  std::vector<double> dinv_;
  std::vector<double> values_;
  PcReport report_;
};

}  // namespace

std::unique_ptr<Preconditioner> make_ilu0(const PcSettings& settings, PcOperator& op) {
  return std::make_unique<Ilu0>(op, settings.row_names);
}

}  // namespace asyncsolve::precond::detail
