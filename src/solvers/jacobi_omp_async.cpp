// OpenMP Jacobi's async and racy threads (see jacobi_omp.cpp for the
// design, jacobi_omp_parts.hpp for the pieces).
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/ops/stencil7.hpp"
#include "jacobi_check.hpp"
#include "jacobi_omp_parts.hpp"

namespace asyncsolve::solvers::omp_detail {
namespace {

/// Async and racy, thread t on planes [k0, k1). Per iteration, without
/// waiting for other threads: one fused sweep of the slab from this
/// thread's current array into its other one (16 B/point; planes [k0, k1)
/// of both arrays are private to the thread, which swaps its two views as
/// sync does), which also gives the slab's residual of the iterate read;
/// then its two boundary planes are published into the mailboxes its
/// neighbours read (2 planes, not the slab: no copy u = u_new), and the
/// mailboxes' drifts grown by their change. A plane next to a neighbour
/// reads that neighbour's plane from its mailbox: whole and from one
/// iteration, under the boundary's lock (async), or element by element with
/// relaxed atomic loads (racy; mailboxes are then written with relaxed
/// atomic stores). Every check_every iterations: one atomic add of the
/// change of the slab's residual^2 to the running global residual^2.
///
/// With options.idle, a thread whose slab's part of ||b - A u||^2 is below
/// idle_r2 even counting what its neighbours' planes moved since its last
/// sweep waits for news instead of sweeping (nearly) the same planes again.
/// Without, a thread that made max_iters sweeps waits for the others:
/// max_iters counts the slowest thread's sweeps.
class AsyncThread {
 public:
  AsyncThread(OmpShared& s, int t, int k0, int k1)
      : s_(s),
        me_(s.records[static_cast<std::size_t>(t)]),
        t_(t),
        k0_(k0),
        k1_(k1),
        parts_(split_slab(k0, k1, t, s.threads)),
        lower_(t > 0),
        upper_(t < s.threads - 1),
        from_below_(lower_ ? s.boxes.top(t - 1) : nullptr),
        from_above_(upper_ ? s.boxes.bottom(t + 1) : nullptr),
        drift_below_(lower_ ? &s.boxes.top_drift(t - 1) : nullptr),
        drift_above_(upper_ ? &s.boxes.bottom_drift(t + 1) : nullptr),
        lock_below_(!s.racy && lower_ ? s.locks.at(t - 1) : nullptr),
        lock_above_(!s.racy && upper_ ? s.locks.at(t) : nullptr) {}

  void run();

 private:
  void publish(const Field& f);
  std::array<double, 2> drifts() const;
  double slab_residual_sq() const;
  double sweep_slab(bool fused);
  double bound() const;
  void contribute();
  void judge_standstill();
  bool stale_standstill(double truth) const;
  bool converged_here() const {
    const double b = bound();
    return b * b < s_.idle_r2;
  }
  void asynchronous_phase();
  void wait_for_news();
  bool verified_stop();

  OmpShared& s_;
  ThreadRecord& me_;
  const int t_;
  const int k0_;
  const int k1_;
  const std::vector<Part> parts_;
  const bool lower_;
  const bool upper_;
  const double* const from_below_;
  const double* const from_above_;
  std::atomic<double>* const drift_below_;
  std::atomic<double>* const drift_above_;
  omp_lock_t* const lock_below_;
  omp_lock_t* const lock_above_;
  Field* cur_ = nullptr;
  Field* next_ = nullptr;
  long k_ = 0;
  bool counted_max_ = false;
  double contributed_ = 0.0;      ///< this thread's part of the estimate (its slot)
  double last_r2_ = 0.0;          ///< of the iterate the last fused sweep read
  std::array<double, 2> seen_{};  ///< the drifts when the last fused sweep read the mailboxes
  double estimate_ = std::numeric_limits<double>::infinity();
  // Thread 0's: the asynchronous stagnation rule over every thread's sweeps
  // (the MPI ranks' rule, jacobi_check.hpp), and each thread's sweep count
  // when its current window started.
  detail::AsyncStandstill standstill_{"thread"};
  long windows_seen_ = 0;
  std::vector<long> window_start_;
};

// This thread's boundary planes of f into the mailboxes its neighbours
// read, and the drifts grown by their changes (this thread is the only
// writer of both).
void AsyncThread::publish(const Field& f) {
  const auto grow = [](std::atomic<double>& drift, double change_sq) {
    if (change_sq > 0.0) {
      drift.store(drift.load(std::memory_order_relaxed) + std::sqrt(change_sq),
                  std::memory_order_release);
    }
  };
  if (lower_) {
    const LockGuard guard(lock_below_);
    grow(s_.boxes.bottom_drift(t_), plane_to_box(f, k0_, s_.boxes.bottom(t_), s_.racy));
  }
  if (upper_) {
    const LockGuard guard(lock_above_);
    grow(s_.boxes.top_drift(t_), plane_to_box(f, k1_ - 1, s_.boxes.top(t_), s_.racy));
  }
}

// The drifts of the mailboxes this thread reads.
std::array<double, 2> AsyncThread::drifts() const {
  return {drift_below_ != nullptr ? drift_below_->load(std::memory_order_acquire) : 0.0,
          drift_above_ != nullptr ? drift_above_->load(std::memory_order_acquire) : 0.0};
}

// ||b - A cur||^2 on the slab. Locks in ascending order (below = t - 1
// before above = t): no deadlock.
double AsyncThread::slab_residual_sq() const {
  double sum = 0.0;
  for (const Part& p : parts_) {
    if (!p.below && !p.above) {
      sum += ops::residual_norm_sq_planes(*cur_, p.begin, p.end);
    } else {
      const LockGuard lo(p.below ? lock_below_ : nullptr);
      const LockGuard hi(p.above ? lock_above_ : nullptr);
      sum += residual_plane_boxed(*cur_, p.begin, p.below ? from_below_ : nullptr,
                                  p.above ? from_above_ : nullptr, s_.racy);
    }
  }
  return sum;
}

// next = (sum of neighbours of cur)/6 on the slab; with `fused`, returns
// the slab's ||b - A cur||^2 with the planes read (the boundary planes
// always compute it: one plane each).
double AsyncThread::sweep_slab(bool fused) {
  double sum = 0.0;
  for (const Part& p : parts_) {
    if (!p.below && !p.above) {
      if (fused) {
        sum += ops::jacobi_sweep_residual_planes(*cur_, *next_, p.begin, p.end);
      } else {
        ops::jacobi_sweep_planes(*cur_, *next_, p.begin, p.end);
      }
    } else {
      const LockGuard lo(p.below ? lock_below_ : nullptr);
      const LockGuard hi(p.above ? lock_above_ : nullptr);
      sum += sweep_plane_boxed(*cur_, *next_, p.begin, p.below ? from_below_ : nullptr,
                               p.above ? from_above_ : nullptr, s_.racy);
    }
  }
  return sum;
}

// An upper bound of the slab's ||b - A u|| with the planes the mailboxes
// hold now: the last fused sweep's value for the iterate it read (sweeps
// with fixed planes do not increase it) plus how far those planes moved
// since (each enters one plane's residual with coefficient 1).
double AsyncThread::bound() const {
  const std::array<double, 2> now = drifts();
  return std::sqrt(last_r2_) + (now[0] - seen_[0]) + (now[1] - seen_[1]);
}

// The running estimate with this thread's part brought up to date; below
// tol it stops everyone (the first reason set wins).
void AsyncThread::contribute() {
  contributed_ = last_r2_;
  s_.part_sq[static_cast<std::size_t>(t_)].value.store(last_r2_, std::memory_order_relaxed);
  estimate_ = std::sqrt(s_.sum_sq() / s_.b_norm_sq);
  if (breaks_down(estimate_)) {  // stops everyone at once
    if (s_.set_stop(OmpStop::breakdown)) s_.stop_estimate = estimate_;
  } else if (estimate_ < s_.base.tol && s_.set_stop(OmpStop::tolerance)) {
    s_.stop_estimate = estimate_;
  } else if (t_ == 0) {
    judge_standstill();
  }
}

// Thread 0: the asynchronous stagnation rule (detail::AsyncStandstill) on
// the estimate just summed, with every thread's sweeps since the window
// started (the counts are relaxed: a count read late only delays the
// verdict, the stop's compare-exchange publishes the detail).
void AsyncThread::judge_standstill() {
  const auto threads = static_cast<std::size_t>(s_.threads);
  if (window_start_.size() != threads) window_start_.assign(threads, 0);
  const long span = standstill_.span_for(s_.base.stagnation_span);
  detail::AsyncCheckSums sums{};
  for (std::size_t i = 0; i < threads; ++i) {
    if (s_.part_sq[i].sweeps.load(std::memory_order_relaxed) - window_start_[i] >= span) {
      sums[detail::swept_span_value] += 1.0;
    }
  }
  SolveResult verdict;
  if (standstill_.stops(verdict, estimate_, sums, k_, s_.base.stagnation_span, s_.threads)) {
    s_.judged_reason = verdict.reason;
    s_.judged_detail = verdict.detail;
    s_.judged_start = standstill_.start();
    if (s_.set_stop(OmpStop::judged)) s_.stop_estimate = estimate_;
  } else if (standstill_.windows() != windows_seen_) {
    windows_seen_ = standstill_.windows();
    for (std::size_t i = 0; i < threads; ++i) {
      window_start_[i] = s_.part_sq[i].sweeps.load(std::memory_order_relaxed);
    }
  }
}

// Waits for news (idle off: for the stop), keeping this thread's part of
// the estimate current.
void AsyncThread::wait_for_news() {
  ++me_.idle_waits;
  const auto scope = me_.timers.time(omp_idle_phase);
  Backoff backoff;
  while (s_.stop.load(std::memory_order_acquire) == 0 && (!s_.options.idle || converged_here())) {
    contribute();
    if (s_.over_time() && s_.set_stop(OmpStop::max_time)) s_.stop_estimate = estimate_;
    backoff.pause();
  }
}

// Sweeps until a thread stops the round: estimate below tol, every thread
// at max_iters, or out of time.
void AsyncThread::asynchronous_phase() {
  const JacobiOptions& base = s_.base;
  for (;;) {
    if (!counted_max_ && k_ >= base.max_iters) {
      counted_max_ = true;
      if (s_.at_max.fetch_add(1) + 1 == s_.threads && s_.set_stop(OmpStop::max_iters)) {
        s_.stop_estimate = estimate_;
      }
    }
    if (s_.over_time() && s_.set_stop(OmpStop::max_time)) s_.stop_estimate = estimate_;
    if (s_.stop.load(std::memory_order_acquire) != 0) return;
    // Idle on: this slab converged against the planes it has, and its
    // neighbours' planes moved too little since to matter (a thread
    // without neighbours never gets news: it goes on). Idle off: done
    // with its sweeps.
    const bool wait =
        s_.options.idle ? s_.threads > 1 && k_ > 0 && converged_here() : k_ >= base.max_iters;
    if (wait) {
      wait_for_news();
      continue;
    }
    // The residual comes with the sweep (fused) at checks and, with idle
    // on, every 4 sweeps (the bound); otherwise the bound stays (a sweep
    // with fixed planes does not increase it).
    const bool check = k_ % base.check_every == 0;
    const bool fused = check || (s_.options.idle && k_ % 4 == 0);
    const std::array<double, 2> reading = drifts();
    {
      const auto scope = me_.timers.time(omp_sweep_phase);
      // next = (sum of neighbours of cur)/6; (fused) ||b - A cur||^2 on the slab
      const double r2 = sweep_slab(fused);
      if (fused) {
        last_r2_ = r2;
        seen_ = reading;
      }
    }
    if (check) {
      {
        const auto scope = me_.timers.time(omp_residual_phase);
        contribute();
      }
      const HistoryPoint point{k_, core::now_s() - s_.t0, estimate_,
                               std::sqrt(contributed_) / s_.b_norm, t_};
      me_.history.push_back(point);
      if (t_ == 0 && base.monitor) base.monitor(point);
      // Stopped here (by this estimate or another thread): the iterate is
      // cur = u^k; the next one just made is dropped.
      if (s_.stop.load(std::memory_order_acquire) != 0) return;
    }
    {
      const auto scope = me_.timers.time(omp_copy_phase);
      publish(*next_);
    }
    std::swap(cur_, next_);
    ++k_;
    s_.part_sq[static_cast<std::size_t>(t_)].sweeps.store(k_, std::memory_order_relaxed);
  }
}

// A stagnation verdict on an estimate the true residual shows was stale
// (stale_verdict_factor, jacobi_check.hpp): the threads' parts, of different
// ages, summed to a value far below the iterate's (a slab swept against old
// neighbour planes has a small residual for those planes). A true residual
// that is not a number refutes it too.
bool AsyncThread::stale_standstill(double truth) const {
  return !(truth <= detail::stale_verdict_factor * s_.judged_start);
}

// Every thread has left the asynchronous phase: the true residual is summed
// over the quiescent grid and one verdict is taken for all (in a single):
// the stop stands unless it was the estimate's (below tol, or a stagnation
// verdict: stale_standstill) and the true residual
// refutes it with time and sweeps left; then the estimate restarts from
// the fresh parts. True when the solve ends.
bool AsyncThread::verified_stop() {
  // This thread's iterate goes to u (its own planes: nobody else reads them).
  if (cur_ != &s_.u) {
    const auto scope = me_.timers.time(omp_copy_phase);
    copy_planes(*cur_, s_.u, k0_, k1_);
    cur_ = &s_.u;
    next_ = &s_.u_new;
  }
  {
    const auto scope = me_.timers.time(omp_barrier_phase);
#pragma omp barrier
  }
#pragma omp single
  s_.verify_sq = 0.0;  // (the single's implicit barrier publishes it)
  const double fresh = ops::residual_norm_sq_planes(s_.u, k0_, k1_);
  double& verify_sq = s_.verify_sq;
#pragma omp atomic
  verify_sq += fresh;
#pragma omp barrier
#pragma omp single
  {
    const auto why = static_cast<OmpStop>(s_.stop.load());
    const double truth = std::sqrt(s_.verify_sq) / s_.b_norm;
    const bool refuted = (why == OmpStop::tolerance && !(truth < s_.base.tol)) ||
                         (why == OmpStop::judged && stale_standstill(truth));
    if (!refuted) {
      s_.verdict = why;
    } else if (s_.over_time()) {
      s_.verdict = OmpStop::max_time;
    } else if (s_.at_max.load() == s_.threads) {
      s_.verdict = OmpStop::max_iters;
    } else {
      s_.verdict = OmpStop::none;  // go on: restart the round
      s_.stop.store(static_cast<int>(OmpStop::none));
      s_.stop_estimate = std::numeric_limits<double>::infinity();
      ++s_.restarts;
    }
  }  // (implicit barrier: everyone sees the verdict and the reset)
  if (s_.verdict != OmpStop::none) return true;
  if (t_ == 0) standstill_.restart();
  // The mailboxes hold every thread's planes of u already.
  contributed_ = fresh;
  last_r2_ = fresh;
  s_.part_sq[static_cast<std::size_t>(t_)].value.store(fresh, std::memory_order_relaxed);
#pragma omp barrier
  return false;
}

// Rounds: an asynchronous phase until a thread stops it, then a checked
// stop (verified_stop). A stop is therefore only reported converged when
// the iterate really is.
void AsyncThread::run() {
  cur_ = &s_.u;
  next_ = &s_.u_new;
  // Every thread publishes its first planes, then takes its part of the
  // initial residual, before anyone sweeps.
  publish(*cur_);
#pragma omp barrier
  contributed_ = slab_residual_sq();
  last_r2_ = contributed_;
  s_.part_sq[static_cast<std::size_t>(t_)].value.store(contributed_, std::memory_order_relaxed);
#pragma omp barrier
  do {
    asynchronous_phase();
  } while (!verified_stop());
  me_.iterations = k_;
}

}  // namespace

void async_thread(OmpShared& s, int t, int k0, int k1) { AsyncThread(s, t, k0, k1).run(); }

}  // namespace asyncsolve::solvers::omp_detail
