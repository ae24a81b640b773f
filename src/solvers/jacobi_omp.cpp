#include "asyncsolve/solvers/jacobi_omp.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/ops/stencil7.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "jacobi_check.hpp"
#include "jacobi_omp_parts.hpp"

// OpenMP Jacobi (paper 000 §3.3). All threads work on one pair of fields
// covering the whole grid; thread t owns the z-planes [k0, k1) of both.
// sync: thread t reads plane k0 - 1 (its lower neighbour's top plane) and
// plane k1 (its upper neighbour's bottom plane) of the current field directly;
// barriers order the sweeps. async and racy: nobody reads another thread's
// planes of the fields. Each thread publishes its two boundary planes into
// mailboxes after every sweep, and its neighbours read them from there (under
// a lock, or with relaxed atomics). So the planes of the fields are private to
// their owner, who swaps its two views like sync, with no copy u = u_new.

namespace asyncsolve::solvers {

// The pieces of jacobi_omp_parts.hpp, by their short names.
using namespace omp_detail;  // NOLINT(google-build-using-namespace): internal, one file

int omp_plane_begin(int t, int threads, int planes) noexcept {
  const int base = planes / threads;
  const int extra = planes % threads;
  return t * base + std::min(t, extra);
}

namespace {

/// Sync, thread t on planes [k0, k1). Per iteration: one sweep of the slab
/// (16 B/point), one barrier; with copy (the paper's two loops) also
/// u = u_new (16 B/point) and a second barrier. Every check_every
/// iterations the sweep is the fused one, which returns the slab's residual
/// in the same pass, summed by an OpenMP reduction (whose barrier is the
/// sweep's).
void sync_thread(OmpShared& s, int t, int k0, int k1) {
  ThreadRecord& me = s.records[static_cast<std::size_t>(t)];
  core::PhaseTimers& timers = me.timers;
  const JacobiOptions& base = s.base;
  Field* cur = &s.u;
  Field* next = &s.u_new;
  long checks = 0;  // the checks made so far (the same count in every thread)
  // The global residuals, for the rules of synchronous Jacobi over MPI:
  // divergence, stagnation (every thread judges the same values alike).
  SolveResult watch;
  for (long k = 0;; ++k) {
    // The last iterate's residual is computed too (the estimate reported is
    // the final iterate's, and it may meet the tolerance).
    const bool check = k % base.check_every == 0 || k >= base.max_iters;
    if (check) {
      // The check's slot of the shared values: consecutive checks use the
      // two in turn, so a fast thread writing the next never meets a slow
      // one still reading this one (a barrier lies between two uses of one).
      const auto slot = static_cast<std::size_t>(checks++ % 2);
      double mine = 0.0;
      {
        const auto scope = timers.time(omp_sweep_phase);
#pragma omp single
        s.sync_over_time[slot] = s.over_time();  // one clock decides for all
        // u^{k+1} = (sum of neighbours of u^k)/6 and ||b - A u^k||^2 on the slab
        mine = ops::jacobi_sweep_residual_planes(*cur, *next, k0, k1);
        s.partial_sq[slot][static_cast<std::size_t>(t)] = mine;
#pragma omp barrier
      }
      // After the barrier u^{k+1} is written everywhere and every slab's
      // part is in; every thread adds them in thread order: the same sum.
      double reduced_sq = 0.0;
      for (const double part : s.partial_sq[slot]) reduced_sq += part;
      const double residual = std::sqrt(reduced_sq) / s.b_norm;
      const HistoryPoint point{k, core::now_s() - s.t0, residual, std::sqrt(mine) / s.b_norm, t};
      me.history.push_back(point);
      if (t == 0) {
        s.sync_residual = residual;
        if (base.monitor) base.monitor(point);
      }
      // Every thread read the same values: all decide alike, and the
      // iterate kept is u^k (in cur); the u^{k+1} just made is dropped.
      // A residual that is not finite stops at once: a breakdown.
      watch.history.push_back(point);
      const OmpStop why =
          breaks_down(residual) ? OmpStop::breakdown
          : residual < base.tol ? OmpStop::tolerance
          : check_divergence(watch, residual, k) || check_stagnation(watch, k, base.stagnation_span)
              ? OmpStop::judged
          : s.sync_over_time[slot] ? OmpStop::max_time
          : k >= base.max_iters    ? OmpStop::max_iters
                                   : OmpStop::none;
      if (why == OmpStop::judged && t == 0) {
        s.judged_reason = watch.reason;
        s.judged_detail = watch.detail;
      }
      if (why != OmpStop::none) {
        me.iterations = k;
        if (t == 0) s.sync_stop = why;
        break;
      }
    } else {
      {
        const auto scope = timers.time(omp_sweep_phase);
        // u^{k+1} = (sum of neighbours of u^k)/6
        ops::jacobi_sweep_planes(*cur, *next, k0, k1);
      }
      // Nobody reads u^{k+1} before all of it is written, and nobody
      // overwrites u^k (the next u_new) while another thread reads it.
      const auto scope = timers.time(omp_barrier_phase);
#pragma omp barrier
    }
    if (base.copy) {
      // Paper 000 Fig. 2's second parallel loop: u^k = u^{k+1} on the
      // slab (16 B/point more), then a second barrier before anyone
      // reads a neighbour's copied planes.
      {
        const auto scope = timers.time(omp_copy_phase);
        copy_planes(*next, *cur, k0, k1);
      }
      const auto scope = timers.time(omp_barrier_phase);
#pragma omp barrier
    } else {
      std::swap(cur, next);  // every thread swaps its own view: no barrier needed
    }
  }
}

/// After the parallel region (whose join orders everything the threads
/// wrote): the threads' counts, phases and histories gathered into the
/// result, and the outcome of the stop.
void gather(OmpShared& s, SolveResult& result) {
  long most = 0;
  for (const ThreadRecord& r : s.records) {
    result.thread_iterations.push_back(r.iterations);
    most = std::max(most, r.iterations);
    result.sweep_bytes += 16.0 * r.sweep_points * static_cast<double>(r.iterations);
    result.idle_waits += r.idle_waits;
    for (std::size_t i = 0; i < result.phases.size(); ++i) {
      // Each phase as the slowest thread saw it.
      result.phases.add(i, std::max(0.0, r.timers.seconds(i) - result.phases.seconds(i)));
    }
  }
  for (const ThreadRecord& r : s.records)
    result.history.insert(result.history.end(), r.history.begin(), r.history.end());
  result.iterations = most;

  const bool sync = s.options.variant == OmpVariant::sync;
  const OmpStop why = sync ? s.sync_stop : s.verdict;
  const double estimate = sync ? s.sync_residual : s.stop_estimate;
  if (sync && !s.base.copy && most % 2 == 1) {
    // The last iterate u^iterations is in u_new after an odd number of sweeps.
    s.u.swap(s.u_new);
  }
  result.residual_estimate = estimate;
  result.converged = why == OmpStop::tolerance;
  result.reason = why == OmpStop::tolerance   ? StopReason::tolerance
                  : why == OmpStop::max_time  ? StopReason::max_time
                  : why == OmpStop::breakdown ? StopReason::breakdown
                  : why == OmpStop::judged    ? s.judged_reason
                                              : StopReason::max_iters;
  if (!sync) result.unconfirmed_stops = s.restarts;
  if (why == OmpStop::breakdown) set_breakdown(result, estimate, most);
  if (why == OmpStop::judged) result.detail = s.judged_detail;
}

}  // namespace

SolveResult jacobi_omp(const grid::Problem& problem, const grid::Decomposition& decomposition,
                       grid::Field& u, const OmpJacobiOptions& options) {
  const int threads = options.threads;
  const int planes = u.interior()[2];
  if (decomposition.ranks() != 1) {
    throw std::invalid_argument("jacobi_omp: runs on one rank, got " +
                                std::to_string(decomposition.ranks()));
  }
  if (threads < 1 || threads > planes) {
    throw std::invalid_argument("jacobi_omp: threads must be 1 to " + std::to_string(planes) +
                                " (the z-planes), got " + std::to_string(threads));
  }
  SolveResult result;
  result.phases = omp_timers();
  result.sweep_phase = omp_sweep_phase;
  // u_new starts as a full copy of u, so that its halo holds the Dirichlet data.
  Field u_new(u.interior(), u.halo());
  std::copy(u.storage().begin(), u.storage().end(), u_new.storage().begin());
  OmpShared s(options, u, u_new, local_rhs_norm(problem, decomposition, u));
  s.t0 = core::now_s();

#pragma omp parallel num_threads(threads) default(shared)
  {
    const int t = omp_get_thread_num();
    if (omp_get_num_threads() != threads) {
      s.wrong_team.store(true);
    } else {
      const int k0 = omp_plane_begin(t, threads, planes);
      const int k1 = omp_plane_begin(t + 1, threads, planes);
      s.records[static_cast<std::size_t>(t)].sweep_points =
          static_cast<double>(u.interior()[0]) * u.interior()[1] * (k1 - k0);
      if (options.variant == OmpVariant::sync) {
        sync_thread(s, t, k0, k1);
      } else {
        async_thread(s, t, k0, k1);
      }
    }
  }  // the join orders everything the threads wrote before what follows
  if (s.wrong_team.load()) {
    throw core::RuntimeFailure("OpenMP gave fewer threads than the " + std::to_string(threads) +
                               " requested (OMP_THREAD_LIMIT or OMP_DYNAMIC?)");
  }
  result.time_s = core::now_s() - s.t0;
  gather(s, result);

  // The true residual of the returned iterate, measured by this thread alone;
  // async and racy: then the synchronous tail (jacobi_check.hpp).
  const auto true_residual = [&] { return jacobi_residual_norm(u, nullptr) / s.b_norm; };
  if (options.variant == OmpVariant::sync) {
    result.true_residual = true_residual();
    confirm_convergence(result, options.base.tol);
  } else {
    detail::finish_async(
        result, options.base.tol, options.final_sync, true_residual,
        [&](long n) {
          OmpJacobiOptions tail = options;
          tail.variant = OmpVariant::sync;
          tail.final_sync = 0;
          tail.base = detail::sync_tail_options(options.base, n);
          return jacobi_omp(problem, decomposition, u, tail);
        },
        u.storage());
  }
  auto reduction =
      collectives::make_allreduce(collectives::AllreduceAlgorithm{}, decomposition.comm());
  result.error_inf = error_inf(problem, decomposition, u, *reduction);
  return result;
}

}  // namespace asyncsolve::solvers
