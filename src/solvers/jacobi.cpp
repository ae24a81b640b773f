#include "asyncsolve/solvers/jacobi.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/ops/stencil7.hpp"
#include "asyncsolve/solvers/norm.hpp"

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
        err = std::max(err, std::abs(u(i, j, k) - exact));
      }
  return reduction.max(err);
}

namespace {

/// One residual check of sync Jacobi at iterate k: sums `local` (this
/// block's ||b - A u^k||^2) and whether this rank ran out of time over the
/// ranks, records the residual in the history and tells the monitor. True,
/// with `result` marked converged (or stopped by max_time) at k, when the
/// solve ends here: the relative residual is below the tolerance, or a rank
/// has run options.max_time_s seconds (the same verdict on every rank).
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
    result.reason = "tolerance";
    result.iterations = k;
    return true;
  }
  if (sums[1] > 0.0) {
    result.reason = "max_time";
    result.iterations = k;
    return true;
  }
  return false;
}

/// After the loop: time, injected delay, estimate and the traffic counts.
void finish_counts(double t0, double residual, double points, const comm::HaloExchange& halo,
                   const JacobiOptions& options, SolveResult& result) {
  result.time_s = core::now_s() - t0;
  if (options.faults != nullptr) result.injected_s = options.faults->injected_s();
  result.residual_estimate = residual;
  result.messages_sent = result.halo_exchanges * halo.messages_per_exchange();
  result.bytes_sent =
      static_cast<double>(result.halo_exchanges) * static_cast<double>(halo.bytes_per_exchange());
  result.sweep_bytes = 16.0 * points * static_cast<double>(result.iterations);
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
    const bool check = k % options.check_every == 0;
    if (!check && k >= options.max_iters) {
      result.reason = "max_iters";
      result.iterations = k;
      break;
    }
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
      // A straggler's sweep takes longer: its delay counts as sweep time.
      if (options.faults != nullptr) options.faults->after_sweep(core::now_s() - ts - halo_s);
      timers.add(sweep_phase, core::now_s() - ts - halo_s);
      if (options.faults != nullptr) options.faults->poll();
    }
    if (check) {
      if (check_residual(k, local, t0, b_norm, reduction, options, result, residual)) break;
      if (k >= options.max_iters) {
        result.reason = "max_iters";
        result.iterations = k;
        break;
      }
    }
    if (options.copy) {
      const auto scope = timers.time(copy_phase);
      hybrid.compute(copy_part);  // u = u_new
    } else {
      if (options.halo_every > 1) grid::copy_face_halos(u, u_new);
      u.swap(u_new);
    }
  }
  finish_counts(t0, residual, points, halo, options, result);

  halo.exchange(u);
  result.true_residual = jacobi_residual_norm(u, &reduction) / b_norm;
  confirm_convergence(result, options.tol);
  result.error_inf = error_inf(problem, decomposition, u, reduction);
  return result;
}

}  // namespace

SolveResult jacobi_sync(const grid::Problem& problem, const grid::Decomposition& decomposition,
                        grid::Field& u, comm::HaloExchange& halo, collectives::Allreduce& reduction,
                        const JacobiOptions& options) {
  if (options.hybrid != nullptr) {
    return jacobi_sync_hybrid(problem, decomposition, u, halo, reduction, options);
  }
  SolveResult result;
  result.phases = core::PhaseTimers({"halo", "sweep", "copy", "residual", "reduce"});
  core::PhaseTimers& timers = result.phases;

  // u_new starts as a full copy of u so that its physical-boundary halo holds
  // the Dirichlet data when the two are swapped.
  grid::Field u_new(u.interior(), u.halo());
  std::copy(u.storage().begin(), u.storage().end(), u_new.storage().begin());
  const double b_norm = rhs_norm(problem, decomposition, u, reduction);
  const auto points = static_cast<double>(core::product(u.interior()));

  const double t0 = core::now_s();
  double residual = std::numeric_limits<double>::infinity();
  // Per iteration: one halo exchange (<= 6 face messages), one sweep (16 B/point).
  // Every check_every iterations the sweep also returns ||b - A u^k||^2 (the
  // fused kernel: no extra pass), then one allreduce of 2 doubles. A check
  // that stops the solve keeps u^k and drops the u^{k+1} its sweep made.
  for (long k = 0;; ++k) {
    const bool check = k % options.check_every == 0;
    if (check || k % options.halo_every == 0) {
      const auto scope = timers.time(halo_phase);
      halo.exchange(u);
      ++result.halo_exchanges;
    }
    if (!check && k >= options.max_iters) {
      result.reason = "max_iters";
      result.iterations = k;
      break;
    }
    {
      const double ts = core::now_s();
      double local = 0.0;
      if (check) {
        // u^{k+1} = (sum of neighbours of u^k) / 6; local = ||b - A u^k||^2 on this block
        local = ops::jacobi_sweep_residual(u, u_new);
      } else {
        ops::jacobi_sweep(u, u_new);  // u^{k+1} = (sum of neighbours of u^k) / 6
      }
      // A straggler's sweep takes longer: its delay counts as sweep time.
      if (options.faults != nullptr) options.faults->after_sweep(core::now_s() - ts);
      timers.add(sweep_phase, core::now_s() - ts);
      if (options.faults != nullptr) options.faults->poll();
      if (check) {
        if (check_residual(k, local, t0, b_norm, reduction, options, result, residual)) break;
        if (k >= options.max_iters) {
          result.reason = "max_iters";
          result.iterations = k;
          break;
        }
      }
    }
    if (options.copy) {
      const auto scope = timers.time(copy_phase);
      ops::copy_interior(u_new, u);  // u = u_new
    } else {
      // The next iteration may not exchange halos (--halo-every > 1): then u_new
      // must carry the halo u last received, as the copy loop would.
      if (options.halo_every > 1) grid::copy_face_halos(u, u_new);
      u.swap(u_new);
    }
  }
  finish_counts(t0, residual, points, halo, options, result);

  // The true residual of the returned iterate, measured synchronously.
  halo.exchange(u);
  result.true_residual = jacobi_residual_norm(u, &reduction) / b_norm;
  confirm_convergence(result, options.tol);
  result.error_inf = error_inf(problem, decomposition, u, reduction);
  return result;
}

}  // namespace asyncsolve::solvers
