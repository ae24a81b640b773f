// The asynchronous iteration, written once (see async_iteration.hpp).
#include "async_iteration.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <thread>

#include "asyncsolve/core/timer.hpp"
#include "jacobi_check.hpp"

namespace asyncsolve::solvers::detail {
namespace {

/// How long one wait for news lasts before the reduction is progressed
/// again (as_channels_wait_any sleeps at most AS_WAIT_MAX_SLEEP_US at a time).
constexpr double idle_slice_s = 200e-6;

/// A rank whose update would repeat itself (stale_update_repeats) waits
/// for news up to this many times its last sweep's time, then sweeps
/// anyway: its iteration count still advances toward max_iters (no rank
/// waits forever where every rank has reached the same fixed point), at a
/// fifth of its pace or less.
constexpr double stale_wait_factor = 4.0;

/// A rank whose block stalled (its residual did not fall over a sweep
/// without news: the block is at its fixed point for the halos it has)
/// waits for news at least this long, as well as stale_wait_factor sweeps'
/// time, so that the wait sleeps (as_channels_wait_any) and gives the core
/// away: a neighbour sharing it can then send what this rank lacks.
constexpr double stall_wait_min_s = 100e-6;

/// One run of the loop: its state and its steps.
class AsyncIteration {
 public:
  AsyncIteration(AsyncLocalUpdate& update, comm::AsyncHalo& halo,
                 collectives::NonblockingAllreduce& convergence, const AsyncSettings& settings)
      : update_(update),
        halo_(halo),
        convergence_(convergence),
        options_(*settings.options),
        base_(settings.options->base),
        b_norm_(settings.b_norm),
        judged_start_(settings.judged_start),
        ranks_(convergence.comm().size()),
        // Below this part of ||b - A u||^2, a rank with nothing new idles.
        idle_r2_(std::pow(async_idle_fraction * base_.tol * b_norm_, 2) /
                 static_cast<double>(ranks_)),
        idle_on_(options_.idle && update.bounds_residual()),
        idle_growth_sq_(std::pow(std::max(1.0, update.growth()), 2)),
        idle_(idle_on_ && halo.neighbours() > 0),
        timed_(std::isfinite(base_.max_time_s)),
        t0_(std::isnan(settings.t0) ? core::now_s() : settings.t0),
        k0_(settings.first_iteration),
        k_(settings.first_iteration),
        repeats_(update.stale_update_repeats() && halo.neighbours() > 0),
        stalls_(!update.stale_update_repeats() && halo.neighbours() > 0),
        crowded_(convergence.comm().node_oversubscribed() && halo.neighbours() > 0) {
    // A growth above 1 would compound over updates that are not fused.
    assert(idle_growth_sq_ <= 1.0 || update.residual_is_free());
    result_.phases = core::PhaseTimers({"recv", "sweep", "send", "residual", "reduce", "idle"});
    result_.sweep_phase = async_sweep_phase;
  }

  SolveResult run();

 private:
  bool over_time() const { return timed_ && core::now_s() - t0_ >= base_.max_time_s; }
  void take_news();
  void start_round();
  bool round_stops();
  bool idle_wait(double max_s = std::numeric_limits<double>::infinity());
  void sweep();

  AsyncLocalUpdate& update_;
  comm::AsyncHalo& halo_;
  collectives::NonblockingAllreduce& convergence_;
  const AsyncJacobiOptions& options_;
  const JacobiOptions& base_;
  const double b_norm_;
  double* const judged_start_;
  const int ranks_;
  const double idle_r2_;
  /// --idle on, where the update's residuals can bound its residual.
  const bool idle_on_;
  /// The square of how much the update after the last fused one may have
  /// raised this rank's residual (1 at most: AsyncLocalUpdate::growth).
  const double idle_growth_sq_;
  /// idle_on_ where news can come (a rank without neighbours never idles).
  const bool idle_;
  const bool timed_;
  SolveResult result_;
  const double t0_;  ///< the solve's start
  const long k0_;    ///< this rank's sweeps before this run of the loop
  double estimate_ = std::numeric_limits<double>::infinity();
  bool estimated_ = false;  // a reduction completed: estimate_ is an estimate
  // An upper bound of this block's ||b - A u||^2 with its current halos: the
  // fused sweep's value for the iterate it read (a sweep with fixed halos
  // does not increase it), plus the halos' change since.
  double local_r2_ = std::numeric_limits<double>::infinity();
  long k_;
  // Fused sweeps also refresh local_r2 (with idle on for the idle decision,
  // at the pace idle_refresh_gap sets; otherwise every idle_refresh_max
  // sweeps): the last refresh, and the next.
  double refreshed_r2_ = std::numeric_limits<double>::infinity();
  long refreshed_k_ = -1;
  long next_refresh_ = 0;
  long recorded_k_ = -1;  ///< the iteration of the last history point
  // stale_update_repeats: whether news arrived since the last sweep, and
  // whether this rank already waited for it since.
  const bool repeats_;
  /// An update that does not repeat itself exactly (Jacobi), where news can
  /// come: it may stall (stalled_).
  const bool stalls_;
  /// More ranks than cores on this node: a rank with no news yields its
  /// core before sweeping again (the neighbour it waits for may need it).
  const bool crowded_;
  bool news_ = true;
  bool stale_waited_ = false;
  /// stalls_, the last two sweeps were fused, no news came between them, and
  /// the residual did not fall. Another sweep with these halos only spins.
  bool stalled_ = false;
  double last_sweep_s_ = 0.0;
  AsyncCheckSums contribution_{};
  AsyncStandstill standstill_;
  AsyncCheckSums sum_{};
};

// The newest halo of every neighbour that sent one. local_r2 stays an upper
// bound of this block's ||b - A u||^2 with the halos it now has: the halos'
// change is added to its root (a halo value enters the residual with
// coefficient at most 1: AsyncLocalUpdate::bounds_residual).
void AsyncIteration::take_news() {
  const auto scope = result_.phases.time(async_recv_phase);
  const double change_sq = halo_.receive(result_.batch_sizes);
  if (change_sq > 0.0) {
    local_r2_ = std::pow(std::sqrt(local_r2_) + std::sqrt(change_sq), 2);
    news_ = true;
  }
}

// Starts a round with this rank's part: its residual, whether it made
// max_iters sweeps, whether it ran out of time.
void AsyncIteration::start_round() {
  contribution_ = async_contribution(base_, k_, t0_, local_r2_, standstill_);
  convergence_.start(contribution_);
}

// Tests the round in flight; true when it completed and stops the solve
// (the same decision on every rank: the sums are the same). The history
// keeps one point per iteration of this rank (an idle rank completes many
// rounds without sweeping) and the last one.
bool AsyncIteration::round_stops() {
  if (!convergence_.active() || !convergence_.test(sum_)) return false;
  estimate_ = std::sqrt(sum_[residual_sq_value]) / b_norm_;
  // A round before any rank swept sums their starting bounds, infinity: no
  // estimate yet.
  estimated_ = estimated_ || std::isfinite(estimate_);
  const bool stop = async_check_stops(result_, base_, k_, sum_, estimate_, ranks_, standstill_);
  if (k_ != recorded_k_ || stop) {
    recorded_k_ = k_;
    const HistoryPoint point{k_, core::now_s() - t0_, estimate_, std::sqrt(local_r2_) / b_norm_};
    result_.history.push_back(point);
    if (base_.monitor) base_.monitor(point);
  }
  return stop;
}

// Waits for news (at most max_s seconds), keeping sends and the reduction
// going; true when a round stops the solve meanwhile.
bool AsyncIteration::idle_wait(double max_s) {
  ++result_.idle_waits;
  const double start = core::now_s();
  bool stop = false;
  for (;;) {
    if (!convergence_.active()) start_round();  // restarted at once: nothing else to do
    if (round_stops()) {
      stop = true;
      break;
    }
    halo_.retry_unsent();
    if (halo_.wait_for_news(idle_slice_s)) break;
    if (core::now_s() - start >= max_s) break;
  }
  result_.phases.add(async_idle_phase, core::now_s() - start);
  return stop;
}

// x^{k+1} from x^k and the newest halo. The residual comes with the update
// (fused) when a round starts after it, and when this rank's residual is due
// a refresh: with idle on, for the bound the idle decision uses
// (idle_refresh_gap: every 4 to 64 sweeps, more often as it nears the
// threshold); otherwise every idle_refresh_max sweeps, so that a rank whose
// residual outgrew the double stops sweeping within that many while a round
// is in flight (run()). Other updates keep the bound: an update with fixed
// halos does not increase it.
void AsyncIteration::sweep() {
  const double ts = core::now_s();
  const bool round_next = !convergence_.active() && ((k_ + 1) % base_.check_every == 0 ||
                                                     k_ + 1 >= base_.max_iters || over_time());
  const bool fused = k_ == k0_ || round_next || k_ >= next_refresh_ || update_.residual_is_free();
  const int planes = options_.progress_planes;
  double r2 = 0.0;
  for (int p = 0; p < update_.pieces(planes); ++p) {
    r2 += update_.update(p, planes, fused);
    // poll:K: the channels progressed every K planes (messages move inside MPI calls)
    if (planes > 0) halo_.progress();
  }
  // (news_ still says whether news came since the previous sweep)
  stalled_ = stalls_ && fused && !news_ && refreshed_k_ == k_ - 1 && r2 >= refreshed_r2_;
  if (fused) {
    local_r2_ = r2;
    next_refresh_ = k_ + (idle_on_ ? idle_refresh_gap(refreshed_r2_, refreshed_k_, r2, k_, idle_r2_)
                                   : idle_refresh_max);
    refreshed_r2_ = r2;
    refreshed_k_ = k_;
  }
  if (base_.faults != nullptr) base_.faults->after_sweep(core::now_s() - ts);
  last_sweep_s_ = core::now_s() - ts;
  news_ = false;
  stale_waited_ = false;
  update_.advance();  // both carry the newest halos
  result_.phases.add(async_sweep_phase, core::now_s() - ts);
  if (base_.faults != nullptr) base_.faults->poll();
}

SolveResult AsyncIteration::run() {
  // Per iteration: at most one message per neighbour in each direction
  // (fewer when a channel is full or halo_every > 1), one update (for
  // Jacobi a fused sweep: 16 B/point on a stencil, 12 B per non-zero and
  // 32 B per row on CSR) that also yields this rank's residual when due,
  // one test of the reduction; every check_every iterations one started
  // reduction of async_convergence_values doubles.
  for (;;) {
    take_news();
    if (idle_ && k_ > k0_ && idle_growth_sq_ * local_r2_ < idle_r2_) {
      // This block is converged against its halos, and what arrived since
      // the last sweep (if anything) changes its residual too little to
      // matter: another sweep would only spin on (nearly) stale data.
      if (idle_wait()) break;
      continue;
    }
    if ((repeats_ || stalled_) && k_ > k0_ && !news_ && !stale_waited_ && k_ < base_.max_iters) {
      // The same halo as the last sweep's: sweeping now would reproduce the
      // iterate, or (stalled) not lower its residual. Wait for news, a few
      // sweeps' time at most (stalled: long enough to give the core away).
      // Without, a rank whose neighbour shares its core under MPICH (which
      // never yields inside MPI calls) swept 10^4 times per message, each
      // message an 8 ms turn of the scheduler, and ran out of --max-iters.
      stale_waited_ = true;
      const double most = stale_wait_factor * last_sweep_s_;
      if (idle_wait(stalled_ ? std::max(most, stall_wait_min_s) : most)) break;
      continue;
    }
    if (k_ > k0_ && !std::isfinite(local_r2_)) {
      // This block's residual outgrew the double (a diverging iteration, or
      // halos that did): another sweep cannot help. Wait for the round that
      // carries it, which stops every rank ("diverged" after a finite check,
      // async_check_stops), instead of sweeping on until that round completes.
      if (idle_wait()) break;
      continue;
    }
    if ((!idle_on_ || base_.max_iters == 0) && k_ >= base_.max_iters) {
      // Done with its sweeps: wait, taking news and keeping the reduction
      // going, until every rank is (or the solve ends otherwise). With idle
      // on, a rank past the limit sweeps on instead: the slowest rank may be
      // idling short of it, waiting for news only sweeps bring. With a limit
      // of 0 every rank is at it from the start, so none sweeps (x0 returned).
      if (idle_wait()) break;
      continue;
    }
    if (crowded_ && k_ > k0_ && !news_) std::this_thread::yield();
    sweep();
    ++k_;
    if (k_ % base_.halo_every == 0) {
      const auto scope = result_.phases.time(async_send_phase);
      result_.skipped_sends += halo_.send();
    }
    const auto scope = result_.phases.time(async_reduce_phase);
    if (!convergence_.active() &&
        (k_ % base_.check_every == 0 || k_ >= base_.max_iters || over_time())) {
      start_round();
    }
    if (round_stops()) break;
  }
  result_.time_s = core::now_s() - t0_;
  result_.iterations = k_;
  if (judged_start_ != nullptr) {
    *judged_start_ =
        standstill_.judged() ? standstill_.start() : std::numeric_limits<double>::quiet_NaN();
  }
  // A solve stopped before a reduction summed a swept residual (--max-iters
  // 0, a time limit) made no estimate: NaN, "none" in the summary, null in
  // the document (infinity, the value the stop tests start from, read "inf").
  result_.residual_estimate = estimated_ ? estimate_ : std::numeric_limits<double>::quiet_NaN();
  result_.messages_sent = halo_.messages_sent();
  result_.bytes_sent = halo_.bytes_sent();
  result_.sweep_bytes = update_.bytes() * static_cast<double>(k_ - k0_);
  if (base_.faults != nullptr) result_.injected_s = base_.faults->injected_s();
  return std::move(result_);
}

}  // namespace

SolveResult run_async(AsyncLocalUpdate& update, comm::AsyncHalo& halo,
                      collectives::NonblockingAllreduce& convergence,
                      const AsyncSettings& settings) {
  return AsyncIteration(update, halo, convergence, settings).run();
}

}  // namespace asyncsolve::solvers::detail
