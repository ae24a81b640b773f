#include "asyncsolve/solvers/jacobi.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/ops/stencil7.hpp"
#include "asyncsolve/solvers/jacobi_csr.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "jacobi_check.hpp"
#include "linear_operator.hpp"

namespace asyncsolve::solvers {
double rhs_norm(const grid::Problem& problem, const grid::Decomposition& decomposition,
                const grid::Field& shape, collectives::Allreduce& reduction) {
  grid::Field boundary_only(shape.interior(), shape.halo());
  grid::apply_boundary(problem, decomposition, boundary_only);
  const double norm = jacobi_residual_norm(boundary_only, &reduction);  // scaled: no under/overflow
  return norm > 0.0 ? norm : 1.0;
}

double relative_residual(const grid::Problem& problem, const grid::Decomposition& decomposition,
                         grid::Field& u, comm::HaloExchange& halo,
                         collectives::Allreduce& reduction) {
  const double b_norm = rhs_norm(problem, decomposition, u, reduction);
  halo.exchange(u);
  return jacobi_residual_norm(u, &reduction) / b_norm;
}

std::optional<double> error_inf(const grid::Problem& problem,
                                const grid::Decomposition& decomposition, const grid::Field& u,
                                collectives::Allreduce& reduction) {
  const grid::Int3& n = u.interior();
  const grid::Int3& off = decomposition.offset();
  const grid::Int3& global = decomposition.global();
  // Every rank must take part in the reduction, so the "is it known" answer
  // has to be the same everywhere: it depends on the problem only.
  if (!problem.exact_value({1, 1, 1}, global)) return std::nullopt;
  double err = 0.0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const double exact =
            *problem.exact_value({off[0] + i + 1, off[1] + j + 1, off[2] + k + 1}, global);
        err = std::max(err, error_term(u(i, j, k), exact));
      }
  return reduction.max(err);
}

namespace {

/// One residual check of sync Jacobi at iterate k: sums `local` (this
/// block's ||b - A u^k||^2) and whether this rank ran out of time over the
/// ranks, records the residual in the history and tells the monitor. True,
/// with `result` marked converged (or stopped) at k, when the solve ends
/// here: the relative residual is below the tolerance, has grown to
/// divergence_factor times its smallest (diverged), or a rank has run
/// options.max_time_s seconds (the same verdict on every rank).
bool check_residual(long k, double local, double t0, double b_norm,
                    collectives::Allreduce& reduction, const JacobiOptions& options,
                    SolveResult& result, double& residual) {
  // [||b - A u^k||^2, ranks over time]: one reduction for both.
  std::array<double, 2> sums{local, core::now_s() - t0 >= options.max_time_s ? 1.0 : 0.0};
  {
    const auto scope = result.phases.time(reduce_phase);
    reduction.reduce(sums, collectives::ReduceOp::sum);
  }
  residual = std::sqrt(sums[0]) / b_norm;
  const HistoryPoint point{k, core::now_s() - t0, residual, std::sqrt(local) / b_norm};
  result.history.push_back(point);
  if (options.monitor) options.monitor(point);
  if (breaks_down(residual)) {  // the same reduced value on every rank: all stop
    set_breakdown(result, residual, k);
    result.iterations = k;
    return true;
  }
  if (residual < options.tol) {
    result.converged = true;
    result.reason = StopReason::tolerance;
    result.iterations = k;
    return true;
  }
  if (check_divergence(result, residual, k)) {  // grown far above its best: no use going on
    result.iterations = k;
    return true;
  }
  if (check_stagnation(result, k, options.stagnation_span)) {  // a fixed point, not the solution
    result.iterations = k;
    return true;
  }
  if (sums[1] > 0.0) {
    result.reason = StopReason::max_time;
    result.iterations = k;
    return true;
  }
  return false;
}

/// After a sweep that started at `since` (core::now_s): a straggler's
/// delay (it counts as sweep time), the sweep phase, pending noise.
void account_sweep(const JacobiOptions& options, core::PhaseTimers& timers, double since) {
  if (options.faults != nullptr) options.faults->after_sweep(core::now_s() - since);
  timers.add(sweep_phase, core::now_s() - since);
  if (options.faults != nullptr) options.faults->poll();
}

/// The end of check iteration k: true, with the outcome in `result`, when
/// the solve stops there (check_residual's verdict, or max_iters reached).
bool check_stops(long k, double local, double t0, double b_norm, collectives::Allreduce& reduction,
                 const JacobiOptions& options, SolveResult& result, double& residual) {
  if (check_residual(k, local, t0, b_norm, reduction, options, result, residual)) return true;
  if (k < options.max_iters) return false;
  result.reason = StopReason::max_iters;
  result.iterations = k;
  return true;
}

/// After the loop: time, injected delay, estimate and the traffic counts
/// (`sweep_bytes` streamed per sweep).
void finish_counts(double t0, double residual, double sweep_bytes, const comm::HaloExchange& halo,
                   const JacobiOptions& options, SolveResult& result) {
  result.time_s = core::now_s() - t0;
  if (options.faults != nullptr) result.injected_s = options.faults->injected_s();
  result.residual_estimate = residual;
  result.messages_sent = result.halo_exchanges * halo.messages_per_exchange();
  result.bytes_sent =
      static_cast<double>(result.halo_exchanges) * static_cast<double>(halo.bytes_per_exchange());
  result.sweep_bytes = sweep_bytes * static_cast<double>(result.iterations);
}

/// jacobi_sync with OpenMP threads per rank in one of paper 002's schemes
/// (options.hybrid): the same iterates; see jacobi.hpp for the order of the
/// residual check.
SolveResult jacobi_sync_hybrid(const grid::Problem& problem,
                               const grid::Decomposition& decomposition, grid::Field& u,
                               comm::HaloExchange& halo, collectives::Allreduce& reduction,
                               const JacobiOptions& options) {
  comm::HybridStencil& hybrid = *options.hybrid;
  SolveResult result;
  result.phases = core::PhaseTimers({"halo", "sweep", "copy", "residual", "reduce"});
  result.sweep_phase = sweep_phase;
  core::PhaseTimers& timers = result.phases;

  grid::Field u_new(u.interior(), u.halo());
  std::copy(u.storage().begin(), u.storage().end(), u_new.storage().begin());
  const double b_norm = rhs_norm(problem, decomposition, u, reduction);
  const auto points = static_cast<double>(core::product(u.interior()));

  // A thread's share of the sweep u_new = (sum of neighbours of u)/6, of the
  // residual of u and of the copy u = u_new. The lambdas hold references to
  // the two fields, whose storage u.swap(u_new) exchanges.
  const comm::HybridStencil::Kernel sweep = [&](const grid::Box& box) {
    ops::jacobi_sweep_box(u, u_new, box);
    return 0.0;
  };
  // The sweep of a check iteration, which also returns the box's ||b - A u||^2.
  const comm::HybridStencil::Kernel sweep_residual = [&](const grid::Box& box) {
    return ops::jacobi_sweep_residual_box(u, u_new, box);
  };
  const comm::HybridStencil::Kernel residual_part = [&](const grid::Box& slab) {
    return ops::residual_norm_sq_planes(u, slab.lo[2], slab.hi[2]);
  };
  const comm::HybridStencil::Kernel copy_part = [&](const grid::Box& slab) {
    const grid::Int3& n = u.interior();
    for (int k = slab.lo[2]; k < slab.hi[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        std::memcpy(u.origin() + u.index(0, j, k), u_new.origin() + u_new.index(0, j, k),
                    static_cast<std::size_t>(n[0]) * sizeof(double));
    return 0.0;
  };

  const double t0 = core::now_s();
  double residual = std::numeric_limits<double>::infinity();
  // Per iteration: one halo exchange (<= 6 face messages; by the master, by
  // thread 0 beside the interior, or by all threads), one sweep (16 B/point)
  // shared by the threads. Every check_every iterations the sweep also
  // returns the residual (fused: no extra pass) and the master makes one
  // allreduce of 2 doubles.
  for (long k = 0;; ++k) {
    // The last iterate's residual is computed too (the estimate reported is
    // the final iterate's, and it may meet the tolerance).
    const bool check = k % options.check_every == 0 || k >= options.max_iters;
    double local = 0.0;  // check iterations: ||b - A u^k||^2 on this block
    {
      // u^{k+1} = (sum of neighbours of u^k) / 6, exchanging u^k's halo first.
      const double ts = core::now_s();
      double halo_s = 0.0;  // the master's part in the exchange
      if (check || k % options.halo_every == 0) {
        comm::HybridTimes times;
        local = hybrid.apply(u, check ? sweep_residual : sweep, times);
        ++result.halo_exchanges;
        halo_s = times.exchange_start + times.exchange_wait;
        timers.add(halo_phase, halo_s);
      } else {
        hybrid.compute(sweep);
      }
      account_sweep(options, timers, ts + halo_s);
    }
    if (check && check_stops(k, local, t0, b_norm, reduction, options, result, residual)) break;
    if (options.copy) {
      const auto scope = timers.time(copy_phase);
      hybrid.compute(copy_part);  // u = u_new
    } else {
      if (options.halo_every > 1) grid::copy_face_halos(u, u_new);
      u.swap(u_new);
    }
  }
  finish_counts(t0, residual, 16.0 * points, halo, options, result);

  halo.exchange(u);
  result.true_residual = jacobi_residual_norm(u, &reduction) / b_norm;
  confirm_convergence(result, options.tol);
  result.error_inf = error_inf(problem, decomposition, u, reduction);
  return result;
}

}  // namespace

namespace detail {

// The loop of both public jacobi_sync and of sync Schwarz.
SolveResult run_stationary_sync(StationarySweep& a, grid::Field& u, const grid::Field* b,
                                double b_norm, collectives::Allreduce& reduction,
                                const JacobiOptions& options) {
  SolveResult result;
  result.phases = core::PhaseTimers({"halo", "sweep", "copy", "residual", "reduce"});
  result.sweep_phase = sweep_phase;
  core::PhaseTimers& timers = result.phases;
  comm::HaloExchange& halo = a.sweep_halo();
  // u_new starts as a full copy of u so that its physical-boundary halo holds
  // the Dirichlet data when the two are swapped.
  grid::Field u_new(u.interior(), u.halo());
  std::copy(u.storage().begin(), u.storage().end(), u_new.storage().begin());
  const int pieces = a.sweep_pieces(0);
  const int halo_free = a.halo_free_pieces(0);

  const double t0 = core::now_s();
  double residual = std::numeric_limits<double>::infinity();
  // Per iteration: one halo exchange (stencil: <= 6 face messages; CSR: the
  // plan's, in flight while the interior rows are swept), one sweep
  // (stencil: 16 B/point; CSR: 12 B per non-zero, 32 B per row). Every
  // check_every iterations the sweep also returns ||b - A u^k||^2 (fused:
  // no extra pass), then one allreduce of 2 doubles. A check that stops
  // the solve keeps u^k and drops the u^{k+1} its sweep made.
  for (long k = 0;; ++k) {
    // The last iterate's residual is computed too (the estimate reported is
    // the final iterate's, and it may meet the tolerance).
    const bool check = k % options.check_every == 0 || k >= options.max_iters;
    const bool exchange = check || k % options.halo_every == 0;
    const double ts = core::now_s();
    double halo_s = 0.0;
    const auto timed = [&](auto&& step) {
      const double t = core::now_s();
      step();
      halo_s += core::now_s() - t;
    };
    if (exchange) timed([&] { halo.start(u); });
    // u^{k+1} = u^k + D^-1 (b - A u^k): first what reads no halo, then the rest
    double local = 0.0;  // check iterations: ||b - A u^k||^2 on this rank
    for (int p = 0; p < halo_free; ++p) local += a.sweep(b, u, u_new, p, 0, check);
    if (exchange) {
      timed([&] { halo.finish(u); });
      ++result.halo_exchanges;
    }
    for (int p = halo_free; p < pieces; ++p) local += a.sweep(b, u, u_new, p, 0, check);
    timers.add(halo_phase, halo_s);
    account_sweep(options, timers, ts + halo_s);
    if (check && check_stops(k, local, t0, b_norm, reduction, options, result, residual)) break;
    if (options.copy) {
      const auto scope = timers.time(copy_phase);
      ops::copy_interior(u_new, u);  // u = u_new
    } else {
      // The next iteration may not exchange halos (--halo-every > 1): then u_new
      // must carry the halo u last received, as the copy loop would.
      if (options.halo_every > 1) a.keep_halo(u, u_new);
      u.swap(u_new);
    }
  }
  finish_counts(t0, residual, a.sweep_bytes(), halo, options, result);
  return result;
}

}  // namespace detail

SolveResult jacobi_sync(const grid::Problem& problem, const grid::Decomposition& decomposition,
                        grid::Field& u, comm::HaloExchange& halo, collectives::Allreduce& reduction,
                        const JacobiOptions& options) {
  if (options.hybrid != nullptr) {
    return jacobi_sync_hybrid(problem, decomposition, u, halo, reduction, options);
  }
  const ops::StencilOperator seven_point;  // 6 on the diagonal, -1 for each neighbour
  detail::StencilLinearOperator a(seven_point, decomposition, u, halo);
  const double b_norm = rhs_norm(problem, decomposition, u, reduction);
  SolveResult result = detail::run_stationary_sync(a, u, nullptr, b_norm, reduction, options);
  // The true residual of the returned iterate, measured synchronously.
  result.true_residual = a.residual_norm(nullptr, u, reduction) / b_norm;
  confirm_convergence(result, options.tol);
  result.error_inf = error_inf(problem, decomposition, u, reduction);
  return result;
}

double rhs_norm(const CsrSystem& system, collectives::Allreduce& reduction) {
  const double norm = field_norm(system.b, &reduction);  // scaled: no under/overflow
  return norm > 0.0 ? norm : 1.0;
}

SolveResult jacobi_sync(CsrSystem& system, const sparse::DistMatrix& matrix,
                        comm::SparseHaloExchange& halo, collectives::Allreduce& reduction,
                        const JacobiOptions& options) {
  if (options.hybrid != nullptr || options.copy)
    throw std::invalid_argument("jacobi_sync on a CSR matrix: no hybrid scheme, no copy loop");
  detail::CsrLinearOperator a(system.op, matrix, halo);
  const double b_norm = rhs_norm(system, reduction);
  SolveResult result =
      detail::run_stationary_sync(a, system.x, &system.b, b_norm, reduction, options);
  result.true_residual = a.residual_norm(&system.b, system.x, reduction) / b_norm;
  confirm_convergence(result, options.tol);
  return result;
}

}  // namespace asyncsolve::solvers
