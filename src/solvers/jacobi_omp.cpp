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
  const JacobiOptions& base = options.base;
  SolveResult result;
  result.phases = omp_timers();

  // u_new starts as a full copy of u, so that its halo holds the Dirichlet data.
  Field u_new(u.interior(), u.halo());
  std::copy(u.storage().begin(), u.storage().end(), u_new.storage().begin());
  const double b_norm = local_rhs_norm(problem, decomposition, u);
  const double b_norm_sq = b_norm * b_norm;
  const bool timed = std::isfinite(base.max_time_s);
  // async/racy: below this part of ||b - A u||^2 a thread with nothing new
  // idles (the MPI solver's threshold: all threads there would put the
  // estimate below tol * async_idle_fraction).
  const double idle_r2 = std::pow(async_idle_fraction * base.tol, 2) * b_norm_sq / threads;

  std::vector<ThreadRecord> records(static_cast<std::size_t>(threads));
  BoundaryLocks locks(threads - 1);
  Mailboxes boxes(options.variant == OmpVariant::sync ? 0 : threads, u.interior()[0],
                  u.interior()[1]);
  // Shared state of the parallel region.
  double reduced_sq = 0.0;              // sync: the OpenMP reduction's target
  bool sync_over_time = false;          // sync: set in a single before each check
  OmpStop sync_stop = OmpStop::none;    // sync: why the threads stopped (thread 0 writes)
  std::atomic<double> running_sq{0.0};  // async/racy: the running global residual^2
  std::atomic<int> stop{0};             // async/racy: an OmpStop, set once per round
  std::atomic<int> at_max{0};           // async/racy: threads that made max_iters sweeps
  double stop_estimate = std::numeric_limits<double>::infinity();  // by the thread that set `stop`
  double sync_residual = std::numeric_limits<double>::infinity();  // sync: written by thread 0
  std::atomic<bool> wrong_team{false};
  double verify_sq = 0.0;           // async/racy: true residual^2 at a stop (under barriers)
  OmpStop verdict = OmpStop::none;  // async/racy: a round's outcome (in a single)
  long restarts = 0;                // async/racy: stops the true residual did not confirm

  const bool racy = options.variant == OmpVariant::racy;
  const double t0 = core::now_s();
  const auto over_time = [&] { return timed && core::now_s() - t0 >= base.max_time_s; };
  // The first reason wins; true if this call set it.
  const auto set_stop = [&](OmpStop why) {
    int none = static_cast<int>(OmpStop::none);
    return stop.compare_exchange_strong(none, static_cast<int>(why));
  };

#pragma omp parallel num_threads(threads) default(shared)
  {
    const int t = omp_get_thread_num();
    if (omp_get_num_threads() != threads) {
      wrong_team.store(true);
    } else {
      ThreadRecord& me = records[static_cast<std::size_t>(t)];
      core::PhaseTimers& timers = me.timers;
      const int k0 = omp_plane_begin(t, threads, planes);
      const int k1 = omp_plane_begin(t + 1, threads, planes);
      me.sweep_points = static_cast<double>(u.interior()[0]) * u.interior()[1] * (k1 - k0);

      if (options.variant == OmpVariant::sync) {
        // Per iteration: one sweep of the slab (16 B/point), one barrier;
        // with copy (the paper's two loops) also u = u_new (16 B/point) and
        // a second barrier. Every check_every iterations the sweep is the
        // fused one, which returns the slab's residual in the same pass,
        // summed by an OpenMP reduction (whose barrier is the sweep's).
        Field* cur = &u;
        Field* next = &u_new;
        for (long k = 0;; ++k) {
          const bool check = k % base.check_every == 0;
          if (!check && k >= base.max_iters) {
            me.iterations = k;
            if (t == 0) sync_stop = OmpStop::max_iters;
            break;
          }
          if (check) {
            double mine = 0.0;
            {
              const auto scope = timers.time(omp_sweep_phase);
#pragma omp single
              {
                reduced_sq = 0.0;
                sync_over_time = over_time();  // one clock decides for all
              }
#pragma omp for schedule(static, 1) reduction(+ : reduced_sq)
              for (int i = 0; i < threads; ++i) {
                // u^{k+1} = (sum of neighbours of u^k)/6 and ||b - A u^k||^2 on the slab
                mine = ops::jacobi_sweep_residual_planes(*cur, *next, k0, k1);
                reduced_sq += mine;
              }
            }
            // The for's barrier: u^{k+1} is written everywhere, the sum complete.
            const double residual = std::sqrt(reduced_sq) / b_norm;
            const HistoryPoint point{k, core::now_s() - t0, residual, std::sqrt(mine) / b_norm, t};
            me.history.push_back(point);
            if (t == 0) {
              sync_residual = residual;
              if (base.monitor) base.monitor(point);
            }
            // Every thread read the same values: all decide alike, and the
            // iterate kept is u^k (in cur); the u^{k+1} just made is dropped.
            // A residual that is not finite stops at once: a breakdown.
            const OmpStop why = breaks_down(residual) ? OmpStop::breakdown
                                : residual < base.tol ? OmpStop::tolerance
                                : sync_over_time      ? OmpStop::max_time
                                : k >= base.max_iters ? OmpStop::max_iters
                                                      : OmpStop::none;
            if (why != OmpStop::none) {
              me.iterations = k;
              if (t == 0) sync_stop = why;
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
      } else {
        // Per iteration, without waiting for other threads: one fused sweep
        // of the slab from this thread's current array into its other one
        // (16 B/point; planes [k0, k1) of both arrays are private to the
        // thread, which swaps its two views as sync does), which also gives
        // the slab's residual of the iterate read; then its two boundary
        // planes are published into the mailboxes its neighbours read (2
        // planes, not the slab: no copy u = u_new), and the mailboxes'
        // drifts grown by their change. A plane next to a neighbour reads
        // that neighbour's plane from its mailbox: whole and from one
        // iteration, under the boundary's lock (async), or element by element
        // with relaxed atomic loads (racy; mailboxes are then written with
        // relaxed atomic stores). Every check_every iterations: one atomic add of the change
        // of the slab's residual^2 to the running global residual^2.
        //
        // With options.idle, a thread whose slab's part of ||b - A u||^2 is
        // below idle_r2 even counting what its neighbours' planes moved since
        // its last sweep waits for news instead of sweeping (nearly) the same
        // planes again. Without, a thread that made max_iters sweeps waits
        // for the others: max_iters counts the slowest thread's sweeps.
        const std::vector<Part> parts = split_slab(k0, k1, t, threads);
        Field* cur = &u;
        Field* next = &u_new;
        const bool lower = t > 0;
        const bool upper = t < threads - 1;
        const double* const from_below = lower ? boxes.top(t - 1) : nullptr;
        const double* const from_above = upper ? boxes.bottom(t + 1) : nullptr;
        std::atomic<double>* const drift_below = lower ? &boxes.top_drift(t - 1) : nullptr;
        std::atomic<double>* const drift_above = upper ? &boxes.bottom_drift(t + 1) : nullptr;
        omp_lock_t* const lock_below = !racy && lower ? locks.at(t - 1) : nullptr;
        omp_lock_t* const lock_above = !racy && upper ? locks.at(t) : nullptr;
        // This thread's boundary planes of f into the mailboxes its
        // neighbours read, and the drifts grown by their changes (this
        // thread is the only writer of both).
        const auto grow = [](std::atomic<double>& drift, double change_sq) {
          if (change_sq > 0.0) {
            drift.store(drift.load(std::memory_order_relaxed) + std::sqrt(change_sq),
                        std::memory_order_release);
          }
        };
        const auto publish = [&](const Field& f) {
          if (lower) {
            const LockGuard guard(lock_below);
            grow(boxes.bottom_drift(t), plane_to_box(f, k0, boxes.bottom(t), racy));
          }
          if (upper) {
            const LockGuard guard(lock_above);
            grow(boxes.top_drift(t), plane_to_box(f, k1 - 1, boxes.top(t), racy));
          }
        };
        // The drifts of the mailboxes this thread reads.
        const auto drifts = [&] {
          return std::array<double, 2>{
              drift_below != nullptr ? drift_below->load(std::memory_order_acquire) : 0.0,
              drift_above != nullptr ? drift_above->load(std::memory_order_acquire) : 0.0};
        };
        // Locks in ascending order (below = t - 1 before above = t): no deadlock.
        const auto slab_residual_sq = [&] {
          double sum = 0.0;
          for (const Part& p : parts) {
            if (!p.below && !p.above) {
              sum += ops::residual_norm_sq_planes(*cur, p.begin, p.end);
            } else {
              const LockGuard lo(p.below ? lock_below : nullptr);
              const LockGuard hi(p.above ? lock_above : nullptr);
              sum += residual_plane_boxed(*cur, p.begin, p.below ? from_below : nullptr,
                                          p.above ? from_above : nullptr, racy);
            }
          }
          return sum;
        };
        // next = (sum of neighbours of cur)/6 on the slab; with `fused`,
        // returns the slab's ||b - A cur||^2 with the planes read (the
        // boundary planes always compute it: one plane each).
        const auto sweep_slab = [&](bool fused) {
          double sum = 0.0;
          for (const Part& p : parts) {
            if (!p.below && !p.above) {
              if (fused) {
                sum += ops::jacobi_sweep_residual_planes(*cur, *next, p.begin, p.end);
              } else {
                ops::jacobi_sweep_planes(*cur, *next, p.begin, p.end);
              }
            } else {
              const LockGuard lo(p.below ? lock_below : nullptr);
              const LockGuard hi(p.above ? lock_above : nullptr);
              sum += sweep_plane_boxed(*cur, *next, p.begin, p.below ? from_below : nullptr,
                                       p.above ? from_above : nullptr, racy);
            }
          }
          return sum;
        };

        // Every thread publishes its first planes, then takes its part of the
        // initial residual, before anyone sweeps.
        publish(*cur);
#pragma omp barrier
        double contributed = slab_residual_sq();
        double last_r2 = contributed;  // of the iterate the last sweep read
        running_sq.fetch_add(contributed);
#pragma omp barrier
        long k = 0;
        bool counted_max = false;
        std::array<double, 2> seen{};  // the drifts when the last fused sweep read the mailboxes
        // An upper bound of the slab's ||b - A u|| with the planes the
        // mailboxes hold now: the last fused sweep's value for the iterate it
        // read (sweeps with fixed planes do not increase it) plus how far
        // those planes moved since (each enters one plane's residual with
        // coefficient 1).
        const auto bound = [&] {
          const std::array<double, 2> now = drifts();
          return std::sqrt(last_r2) + (now[0] - seen[0]) + (now[1] - seen[1]);
        };
        double estimate = std::numeric_limits<double>::infinity();
        // The running estimate with this thread's part brought up to date;
        // below tol it stops everyone (the first reason set wins).
        const auto contribute = [&] {
          const double delta = last_r2 - contributed;  // change since the last contribution
          contributed = last_r2;
          const double global_sq =
              delta != 0.0 ? running_sq.fetch_add(delta) + delta : running_sq.load();
          // Rounding in the running sum can leave it slightly below zero.
          estimate = std::sqrt(std::max(global_sq, 0.0) / b_norm_sq);
          if (breaks_down(estimate)) {  // stops everyone at once
            if (set_stop(OmpStop::breakdown)) stop_estimate = estimate;
          } else if (estimate < base.tol && set_stop(OmpStop::tolerance)) {
            stop_estimate = estimate;
          }
        };
        // Rounds: an asynchronous phase until a thread stops it (estimate
        // below tol, every thread at max_iters, or out of time); then every
        // thread stops at a barrier and the true residual is summed over the
        // quiescent grid. If the stop was the estimate's and the true
        // residual is not below tol (the estimate mixed parts measured at
        // different times), the running sum restarts from those fresh parts
        // and the asynchronous phase goes on. A stop is therefore only
        // reported converged when the iterate really is. The decision to
        // go on is made once (in a single) from shared values, so that every
        // thread takes it.
        for (;;) {
          for (;;) {
            if (!counted_max && k >= base.max_iters) {
              counted_max = true;
              if (at_max.fetch_add(1) + 1 == threads && set_stop(OmpStop::max_iters)) {
                stop_estimate = estimate;
              }
            }
            if (over_time() && set_stop(OmpStop::max_time)) stop_estimate = estimate;
            if (stop.load(std::memory_order_acquire) != 0) break;
            // Idle on: this slab converged against the planes it has, and
            // its neighbours' planes moved too little since to matter (a
            // thread without neighbours never gets news: it goes on). Idle
            // off: done with its sweeps.
            const auto converged_here = [&] {
              const double b = bound();
              return b * b < idle_r2;
            };
            const bool wait =
                options.idle ? threads > 1 && k > 0 && converged_here() : k >= base.max_iters;
            if (wait) {
              // Wait for news (idle off: for the stop), keeping this
              // thread's part of the estimate current.
              ++me.idle_waits;
              const auto scope = timers.time(omp_idle_phase);
              Backoff backoff;
              while (stop.load(std::memory_order_acquire) == 0 &&
                     (!options.idle || converged_here())) {
                contribute();
                if (over_time() && set_stop(OmpStop::max_time)) stop_estimate = estimate;
                backoff.pause();
              }
              continue;
            }
            // The residual comes with the sweep (fused) at checks and, with
            // idle on, every 4 sweeps (the bound); otherwise the bound stays
            // (a sweep with fixed planes does not increase it).
            const bool check = k % base.check_every == 0;
            const bool fused = check || (options.idle && k % 4 == 0);
            const std::array<double, 2> reading = drifts();
            {
              const auto scope = timers.time(omp_sweep_phase);
              // next = (sum of neighbours of cur)/6; (fused) ||b - A cur||^2 on the slab
              const double r2 = sweep_slab(fused);
              if (fused) {
                last_r2 = r2;
                seen = reading;
              }
            }
            if (check) {
              {
                const auto scope = timers.time(omp_residual_phase);
                contribute();
              }
              const HistoryPoint point{k, core::now_s() - t0, estimate,
                                       std::sqrt(contributed) / b_norm, t};
              me.history.push_back(point);
              if (t == 0 && base.monitor) base.monitor(point);
              // Stopped here (by this estimate or another thread): the
              // iterate is cur = u^k; the next one just made is dropped.
              if (stop.load(std::memory_order_acquire) != 0) break;
            }
            {
              const auto scope = timers.time(omp_copy_phase);
              publish(*next);
            }
            std::swap(cur, next);
            ++k;
          }
          // Every thread has left the asynchronous phase: its iterate goes to u
          // (its own planes: nobody else reads them), then the grid is quiescent.
          if (cur != &u) {
            const auto scope = timers.time(omp_copy_phase);
            copy_planes(*cur, u, k0, k1);
            cur = &u;
            next = &u_new;
          }
          {
            const auto scope = timers.time(omp_barrier_phase);
#pragma omp barrier
          }
#pragma omp single
          verify_sq = 0.0;  // (the single's implicit barrier publishes it)
          const double fresh = ops::residual_norm_sq_planes(u, k0, k1);
#pragma omp atomic
          verify_sq += fresh;
#pragma omp barrier
#pragma omp single
          {
            // One verdict for all: the stop stands unless it was the
            // estimate's and the true residual refutes it with time and
            // sweeps left.
            const auto why = static_cast<OmpStop>(stop.load());
            const bool refuted =
                why == OmpStop::tolerance && !(std::sqrt(verify_sq) / b_norm < base.tol);
            if (!refuted) {
              verdict = why;
            } else if (over_time()) {
              verdict = OmpStop::max_time;
            } else if (at_max.load() == threads) {
              verdict = OmpStop::max_iters;
            } else {
              verdict = OmpStop::none;  // go on: restart the round
              running_sq.store(0.0);
              stop.store(static_cast<int>(OmpStop::none));
              stop_estimate = std::numeric_limits<double>::infinity();
              ++restarts;
            }
          }  // (implicit barrier: everyone sees the verdict and the reset)
          if (verdict != OmpStop::none) break;
          // The mailboxes hold every thread's planes of u already.
          contributed = fresh;
          last_r2 = fresh;
          running_sq.fetch_add(fresh);
#pragma omp barrier
        }
        me.iterations = k;
      }
    }
  }  // the join orders everything the threads wrote before what follows
  if (wrong_team.load()) {
    throw core::RuntimeFailure("OpenMP gave fewer threads than the " + std::to_string(threads) +
                               " requested (OMP_THREAD_LIMIT or OMP_DYNAMIC?)");
  }
  result.time_s = core::now_s() - t0;

  long most = 0;
  for (const ThreadRecord& r : records) {
    result.thread_iterations.push_back(r.iterations);
    most = std::max(most, r.iterations);
    result.sweep_bytes += 16.0 * r.sweep_points * static_cast<double>(r.iterations);
    result.idle_waits += r.idle_waits;
    for (std::size_t i = 0; i < result.phases.size(); ++i) {
      // Each phase as the slowest thread saw it.
      result.phases.add(i, std::max(0.0, r.timers.seconds(i) - result.phases.seconds(i)));
    }
  }
  for (const ThreadRecord& r : records)
    result.history.insert(result.history.end(), r.history.begin(), r.history.end());
  result.iterations = most;

  const auto reason = [](OmpStop why) {
    return why == OmpStop::tolerance   ? "tolerance"
           : why == OmpStop::max_time  ? "max_time"
           : why == OmpStop::breakdown ? "breakdown"
                                       : "max_iters";
  };
  if (options.variant == OmpVariant::sync) {
    // The last iterate u^iterations is in u_new after an odd number of sweeps.
    if (!base.copy && most % 2 == 1) u.swap(u_new);
    result.residual_estimate = sync_residual;
    result.converged = sync_stop == OmpStop::tolerance;
    result.reason = reason(sync_stop);
    if (sync_stop == OmpStop::breakdown) set_breakdown(result, sync_residual, most);
  } else {
    result.residual_estimate = stop_estimate;
    result.converged = verdict == OmpStop::tolerance;
    result.reason = reason(verdict);
    result.unconfirmed_stops = restarts;
    if (verdict == OmpStop::breakdown) set_breakdown(result, stop_estimate, most);
  }

  // The true residual of the returned iterate, measured by this thread alone.
  result.true_residual = jacobi_residual_norm(u, nullptr) / b_norm;
  const long tail_iterations =
      options.variant == OmpVariant::sync
          ? 0
          : detail::final_sync_iterations(result, base.tol, options.final_sync);
  if (tail_iterations > 0) {
    OmpJacobiOptions tail_options = options;
    tail_options.variant = OmpVariant::sync;
    tail_options.final_sync = 0;
    tail_options.base.max_iters = tail_iterations;
    tail_options.base.check_every = 1;
    tail_options.base.monitor = nullptr;
    tail_options.base.max_time_s = std::numeric_limits<double>::infinity();
    const SolveResult tail = jacobi_omp(problem, decomposition, u, tail_options);
    result.final_sync_iterations = tail.iterations;
    // The stop decision is now the synchronous phase's.
    result.residual_estimate = tail.residual_estimate;
    result.converged = tail.converged;
    result.reason = tail.converged ? "tolerance" : "final_sync";
    result.true_residual = tail.true_residual;
    result.time_s += tail.time_s;
    result.sweep_bytes += tail.sweep_bytes;
  }
  confirm_convergence(result, base.tol);
  auto reduction = collectives::make_allreduce("mpi", decomposition.comm());
  result.error_inf = error_inf(problem, decomposition, u, *reduction);
  return result;
}

}  // namespace asyncsolve::solvers
