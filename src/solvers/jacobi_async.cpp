// Asynchronous and racy Jacobi (paper 000 §3.1.2-3.1.3), on the structured
// stencils and on CSR alike, and any other stationary sweep (stationary.hpp:
// Schwarz): the sweep as the local update (SweepUpdate), run by the asynchronous iteration
// (async_iteration.hpp) with the operator's asynchronous halo, then the shared end
// (jacobi_check.hpp: true residual and synchronous tail).
#include "asyncsolve/solvers/jacobi_async.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "async_iteration.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/solvers/jacobi_csr.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "jacobi_check.hpp"
#include "linear_operator.hpp"

namespace asyncsolve::solvers {
namespace {

/// A stationary sweep's local update: u_new = u + M^-1 (b - A u) on this
/// rank's rows with the newest halo (Jacobi: M = D, in the operator's pieces).
class SweepUpdate final : public detail::AsyncLocalUpdate {
 public:
  SweepUpdate(detail::StationarySweep& a, const grid::Field* b, grid::Field& u, grid::Field& u_new)
      : a_(a), b_(b), u_(u), u_new_(u_new) {}
  int pieces(int progress_planes) const override { return a_.sweep_pieces(progress_planes); }
  double update(int piece, int progress_planes, bool fused) override {
    // u^{k+1} = u^k + D^-1 (b - A u^k) on the piece; (fused) ||b - A u^k||^2 there
    return a_.sweep(b_, u_, u_new_, piece, progress_planes, fused);
  }
  void advance() override { u_.swap(u_new_); }
  bool bounds_residual() const override { return a_.bounds_residual(); }
  double growth() const override { return a_.sweep_growth(); }
  bool stale_update_repeats() const override { return a_.stale_sweep_repeats(); }
  bool residual_is_free() const override { return a_.residual_is_free(); }
  double bytes() const override { return a_.sweep_bytes(); }

 private:
  detail::StationarySweep& a_;
  const grid::Field* b_;
  grid::Field& u_;
  grid::Field& u_new_;
};

/// `into` followed by `part`, a resumed run of the loop (its iterations,
/// time and history already count from the solve's start): counts and phases
/// added, the outcome part's.
void append_run(SolveResult& into, SolveResult&& part) {
  for (std::size_t p = 0; p < into.phases.size(); ++p) into.phases.add(p, part.phases.seconds(p));
  into.history.insert(into.history.end(), part.history.begin(), part.history.end());
  if (part.batch_sizes.size() > into.batch_sizes.size()) {
    into.batch_sizes.resize(part.batch_sizes.size(), 0);
  }
  for (std::size_t n = 0; n < part.batch_sizes.size(); ++n)
    into.batch_sizes[n] += part.batch_sizes[n];
  into.messages_sent += part.messages_sent;
  into.bytes_sent += part.bytes_sent;
  into.sweep_bytes += part.sweep_bytes;
  into.skipped_sends += part.skipped_sends;
  into.idle_waits += part.idle_waits;
  if (part.best_residual < into.best_residual) {
    into.best_residual = part.best_residual;
    into.best_iteration = part.best_iteration;
  }
  into.converged = part.converged;
  into.reason = part.reason;
  into.detail = std::move(part.detail);
  into.iterations = part.iterations;
  into.time_s = part.time_s;
  into.residual_estimate = part.residual_estimate;
  into.injected_s = part.injected_s;  // the fault injector's total
}

}  // namespace

namespace detail {

SolveResult run_stationary_async(StationarySweep& a, grid::Field& u, const grid::Field* b,
                                 double b_norm, collectives::Allreduce& reduction,
                                 collectives::NonblockingAllreduce& convergence,
                                 const AsyncJacobiOptions& options,
                                 const std::function<SolveResult(long)>& sync_tail) {
  if (convergence.size() != async_convergence_values) {
    throw std::invalid_argument("jacobi_async: the convergence reduction must carry " +
                                std::to_string(async_convergence_values) + " doubles");
  }
  const double t0 = core::now_s();
  const comm::ChannelSettings settings{options.transport, options.racy, options.max_in_flight, 0};
  const auto true_residual = [&] { return a.residual_norm(b, u, reduction) / b_norm; };
  SolveResult result;
  // The true residual of the iterate the last run stopped at, where a
  // verdict was checked (finish_async measures it otherwise).
  std::optional<double> checked;
  long refuted_tolerance = 0;
  for (long run = 0;; ++run) {
    // u_new starts as a full copy of u: its halo holds the Dirichlet data.
    grid::Field u_new(u.interior(), u.halo());
    std::copy(u.storage().begin(), u.storage().end(), u_new.storage().begin());
    const std::unique_ptr<comm::AsyncHalo> halo = a.make_async_halo(u, u_new, settings);
    SweepUpdate update(a, b, u, u_new);
    double judged_start = 0.0;
    SolveResult part = detail::run_async(update, *halo, convergence,
                                         {.options = &options,
                                          .b_norm = b_norm,
                                          .judged_start = &judged_start,
                                          .first_iteration = result.iterations,
                                          .t0 = t0});
    // Nothing may stay in flight: complete every message in both directions.
    halo->destroy();
    if (run == 0) {
      result = std::move(part);
    } else {
      append_run(result, std::move(part));
    }
    // A verdict the quiescent iterate's true residual refutes: a stagnation
    // verdict (stale_verdict), or a stop on the estimate below tol (its parts
    // were measured against halos older than the neighbours' iterates: a
    // rank descheduled while its neighbour converged against its old values
    // contributed a residual that predates everything sent since). The same
    // on every rank (reduced values): the asynchronous iteration goes on from
    // that iterate with new channels, as over OpenMP threads. After
    // max_resumed_stops refuted stops on the estimate, the next is left to
    // finish_async's synchronous confirmation.
    const bool judged = !std::isnan(judged_start);
    const bool on_estimate =
        result.reason == StopReason::tolerance && refuted_tolerance < max_resumed_stops;
    if (!judged && !on_estimate) break;
    checked = true_residual();
    if (judged ? !stale_verdict(*checked, judged_start) : *checked < options.base.tol) break;
    if (!judged) ++refuted_tolerance;
    checked.reset();
    ++result.unconfirmed_stops;
    result.reason = StopReason::none;
    result.converged = false;
    result.detail.clear();
  }
  // The true residual of this rank's last iterate together with the others'.
  detail::finish_async(
      result, options.base.tol, options.final_sync,
      [&] { return checked ? *checked : true_residual(); }, sync_tail, u.storage());
  return result;
}

}  // namespace detail

SolveResult jacobi_async(const grid::Problem& problem, const grid::Decomposition& decomposition,
                         grid::Field& u, comm::HaloExchange& sync_halo,
                         collectives::Allreduce& reduction,
                         collectives::NonblockingAllreduce& convergence,
                         const AsyncJacobiOptions& options) {
  const ops::StencilOperator seven_point;
  detail::StencilLinearOperator a(seven_point, decomposition, u, sync_halo);
  const double b_norm = rhs_norm(problem, decomposition, u, reduction);
  SolveResult result = detail::run_stationary_async(
      a, u, nullptr, b_norm, reduction, convergence, options, [&](long n) {
        return jacobi_sync(problem, decomposition, u, sync_halo, reduction,
                           detail::sync_tail_options(options.base, n));
      });
  result.error_inf = error_inf(problem, decomposition, u, reduction);
  return result;
}

SolveResult jacobi_async(CsrSystem& system, const sparse::DistMatrix& matrix,
                         comm::SparseHaloExchange& sync_halo, collectives::Allreduce& reduction,
                         collectives::NonblockingAllreduce& convergence,
                         const AsyncJacobiOptions& options) {
  detail::CsrLinearOperator a(system.op, matrix, sync_halo);
  const double b_norm = rhs_norm(system, reduction);
  // The ghosts start from x0 (one synchronous exchange), then come from the
  // channels, into the same array.
  sync_halo.exchange(system.x);
  return detail::run_stationary_async(
      a, system.x, &system.b, b_norm, reduction, convergence, options, [&](long n) {
        return jacobi_sync(system, matrix, sync_halo, reduction,
                           detail::sync_tail_options(options.base, n));
      });
}

}  // namespace asyncsolve::solvers
