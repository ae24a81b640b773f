// Restricted additive Schwarz as a stationary iteration (schwarz_iteration.hpp):
// its sweep (SchwarzSweep) over stationary.hpp's two loops.
//
// Per sweep on rank i, with x = [u_owned; h] (h: the extended halo, the
// neighbours' newest values of the overlap rows and of the columns the
// subdomain's rows reach outside it):
//   r_i = b_i - A_(i,:) x     the subdomain's whole rows (its owned rows'
//                             part is this rank's residual, summed for the
//                             convergence check: fused)
//   y_i = A_i^-1 r_i          the kept factor (one forward and one back solve)
//   u_new = u + y_i           on the owned rows only (restricted)
// Two levels (sync) insert, before the local solve:
//   w = Z E^+ Z^T r           one MPI_Allgather (CoarseSpace::apply_add)
//   r_i -= A_(i,:) [w; w_h]   w's extended halo by one more exchange
// and add w to the owned rows.
#include "asyncsolve/solvers/schwarz_iteration.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/cost.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/precond/schwarz.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/jacobi_csr.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "jacobi_check.hpp"
#include "linear_operator.hpp"
#include "stationary.hpp"

namespace asyncsolve::solvers {
namespace {

/// Row i of the subdomain's whole rows times [v; v_h] (extended numbering:
/// the first n columns owned, the rest the extended halo).
double row_times(const sparse::LocalCsr& a, int i, int n, const double* v, const double* v_h) {
  double s = 0.0;
  for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    const std::int32_t c = a.col[k];
    s += a.val[k] * (c < n ? v[c] : v_h[c - n]);
  }
  return s;
}

class SchwarzSweep final : public detail::StationarySweep {
 public:
  /// Collective: the subdomains, their factors, b on them, the extended
  /// halo's exchange. `a` is the matrix's operator (the true residual).
  SchwarzSweep(const sparse::DistMatrix& matrix, detail::CsrLinearOperator& a, const grid::Field& b,
               const SchwarzIterationOptions& options)
      : a_(a),
        schwarz_(matrix, options.schwarz, options.near_null, options.strategy),
        sub_(schwarz_.subdomain()) {
    const int rows = sub_.rows_count();
    b_sub_.assign(static_cast<std::size_t>(rows), 0.0);
    rs_.assign(b_sub_.size(), 0.0);
    ys_.assign(b_sub_.size(), 0.0);
    // b_i = R_i b: the overlap rows' entries of b, fetched once.
    schwarz_.restrict_to_subdomain({b.origin(), static_cast<std::size_t>(sub_.owned)}, b_sub_);
    // Sync over rma or shmem: through channels, as sync Jacobi's exchange.
    const int transport = options.async.transport;
    const auto make_exchange = [&] {
      return !options.asynchronous && transport != AS_TRANSPORT_MPI
                 ? comm::make_sparse_channel_halo_exchange(sub_.halo_plan, matrix.comm(), transport)
                 : comm::make_sparse_halo_exchange(options.strategy, sub_.halo_plan, matrix.comm());
    };
    halo_ = make_exchange();
    exact_ = schwarz_.report().local.exact;
    if (schwarz_.coarse() != nullptr) {
      coarse_halo_ = make_exchange();
      w_ = grid::Field({sub_.owned, 1, 1}, 0);
      w_.fill(0.0);
    }
  }
  SchwarzSweep(const SchwarzSweep&) = delete;
  SchwarzSweep& operator=(const SchwarzSweep&) = delete;
  ~SchwarzSweep() override { close(); }

  comm::HaloExchange& sweep_halo() override { return *halo_; }
  int sweep_pieces(int) const override { return 1; }
  int halo_free_pieces(int) const override { return 0; }

  double sweep(const grid::Field*, const grid::Field& u, grid::Field& u_new, int, int,
               bool) override {
    const int n = sub_.owned;
    const int rows = sub_.rows_count();
    const double* x = u.origin();
    const double* h = halo_->ghosts().data();
    // r_i = b_i - A_(i,:) [u; h]; ||r||^2 on the owned rows
    double owned_sq = 0.0;
    for (int i = 0; i < rows; ++i) {
      const auto at = static_cast<std::size_t>(i);
      rs_[at] = b_sub_[at] - row_times(sub_.rows, i, n, x, h);
      if (i < n) owned_sq += rs_[at] * rs_[at];
    }
    precond::CoarseSpace* coarse = schwarz_.coarse();
    if (coarse != nullptr) correct_coarse(*coarse);
    // y_i = A_i^-1 r_i; u_new = u + R~_i^T y_i (+ w)
    schwarz_.solve_local(rs_, ys_);
    double* out = u_new.origin();
    for (int i = 0; i < n; ++i) out[i] = x[i] + ys_[static_cast<std::size_t>(i)];
    if (coarse != nullptr) {
      const double* w = w_.origin();
      for (int i = 0; i < n; ++i) out[i] += w[i];
    }
    // what the sweep streamed, for the simulation build's clock (a straggler
    // is slowed by a multiple of it)
    core::charge_bytes(sweep_bytes());
    return owned_sq;
  }

  /// Collective (two levels): w = Z E^+ Z^T r on the owned rows, its
  /// extended halo exchanged, and r_i -= A_(i,:) [w; w_h].
  void correct_coarse(precond::CoarseSpace& coarse) {
    const int n = sub_.owned;
    double* w = w_.origin();
    std::fill(w, w + n, 0.0);
    coarse.apply_add(a_.comm(), {rs_.data(), static_cast<std::size_t>(n)},
                     {w, static_cast<std::size_t>(n)});
    coarse_halo_->exchange(w_);
    const double* wh = coarse_halo_->ghosts().data();
    for (int i = 0; i < sub_.rows_count(); ++i)
      rs_[static_cast<std::size_t>(i)] -= row_times(sub_.rows, i, n, w, wh);
  }

  double residual_norm(const grid::Field* b, grid::Field& u,
                       collectives::Allreduce& reduction) override {
    return a_.residual_norm(b, u, reduction);
  }

  double sweep_bytes() const override {
    // The subdomain's rows (12 B per non-zero, b_i, r_i, y_i and x per row;
    // two levels: once more for A w) and the factor read twice (forward and
    // back substitution).
    const double rows =
        12.0 * static_cast<double>(sub_.rows.nnz()) + 32.0 * static_cast<double>(sub_.rows_count());
    return (coarse_halo_ ? 2.0 : 1.0) * rows + 2.0 * schwarz_.report().local.memory_bytes;
  }

  void keep_halo(const grid::Field&, grid::Field&) const override {}

  std::unique_ptr<comm::AsyncHalo> make_async_halo(grid::Field& u, grid::Field&,
                                                   const comm::ChannelSettings& settings) override {
    // The channels land in the synchronous exchange's ghosts, which the sweep reads.
    return comm::make_async_sparse_halo(sub_.halo_plan, a_.comm(), u, halo_->ghosts(), settings);
  }

  /// ||I - A M^-1|| may exceed 1: a rank never idles on its residual.
  bool bounds_residual() const override { return false; }
  /// With an exact local solver, u_own <- [A_i^-1 (b_i - A_(i,out) u_out)]_own
  /// depends only on the values outside the subdomain: a sweep without news
  /// repeats the last one (one level; two levels are synchronous).
  bool stale_sweep_repeats() const override { return exact_; }
  /// The owned rows' residual is the start of every sweep.
  bool residual_is_free() const override { return true; }

  const precond::Schwarz& schwarz() const noexcept { return schwarz_; }

  /// Collective: closes the exchanges (once).
  void close() {
    if (closed_) return;
    closed_ = true;
    halo_->close();
    if (coarse_halo_) coarse_halo_->close();
    schwarz_.close();
  }

 private:
  detail::CsrLinearOperator& a_;
  precond::Schwarz schwarz_;
  const sparse::Subdomain& sub_;
  std::vector<double> b_sub_;
  std::vector<double> rs_;
  std::vector<double> ys_;
  std::unique_ptr<comm::SparseHaloExchange> halo_;
  /// Two levels: w's exchange over the extended halo, and w on the owned rows.
  std::unique_ptr<comm::SparseHaloExchange> coarse_halo_;
  grid::Field w_;
  bool exact_ = false;  ///< the local solver is a factorisation (not ic0, ilu0)
  bool closed_ = false;
};

}  // namespace

SolveResult schwarz_solve(CsrSystem& system, const sparse::DistMatrix& matrix,
                          comm::SparseHaloExchange& sync_halo, collectives::Allreduce& reduction,
                          collectives::NonblockingAllreduce* convergence,
                          const SchwarzIterationOptions& options) {
  if (options.schwarz.type != precond::SchwarzType::restricted) {
    throw core::InputError(
        "--method schwarz: the iteration is restricted additive Schwarz (RAS); the basic "
        "(symmetric) type is a preconditioner only, expected --pc asm with a pcg method");
  }
  if (options.schwarz.coarse != precond::CoarseKind::none && options.asynchronous) {
    throw core::InputError(fmt::format(
        "--coarse {} with --method schwarz --variant {}: the two-level iteration is "
        "synchronous (its coarse correction is one MPI_Allgather a sweep), expected --variant "
        "sync or --coarse none",
        precond::coarse_name(options.schwarz.coarse), options.async.racy ? "racy" : "async"));
  }
  if (options.asynchronous && convergence == nullptr)
    throw std::invalid_argument(
        "schwarz_solve: the asynchronous variants need a convergence reduction");
  const double t0 = core::now_s();
  detail::CsrLinearOperator a(system.op, matrix, sync_halo);
  const double b_norm = rhs_norm(system, reduction);
  SchwarzSweep sweep(matrix, a, system.b, options);
  const double setup_s = core::now_s() - t0;
  SolveResult result;
  if (options.asynchronous) {
    // The extended halo starts from x0 (one synchronous exchange), then
    // comes from the channels, into the same array.
    sweep.sweep_halo().exchange(system.x);
    result = detail::run_stationary_async(
        sweep, system.x, &system.b, b_norm, reduction, *convergence, options.async, [&](long n) {
          SolveResult tail =
              detail::run_stationary_sync(sweep, system.x, &system.b, b_norm, reduction,
                                          detail::sync_tail_options(options.async.base, n));
          tail.true_residual = sweep.residual_norm(&system.b, system.x, reduction) / b_norm;
          confirm_convergence(tail, options.async.base.tol);
          return tail;
        });
  } else {
    result = detail::run_stationary_sync(sweep, system.x, &system.b, b_norm, reduction,
                                         options.async.base);
    result.true_residual = sweep.residual_norm(&system.b, system.x, reduction) / b_norm;
    confirm_convergence(result, options.async.base.tol);
  }
  result.pc.name = "schwarz";
  sweep.schwarz().describe(result.pc,
                           options.near_null != nullptr ? options.near_null->block_size : 1);
  result.pc.setup_s = setup_s;
  sweep.close();
  return result;
}

}  // namespace asyncsolve::solvers
