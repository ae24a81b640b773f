#include "krylov_context.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "asyncsolve/ops/vector.hpp"
#include "asyncsolve/solvers/norm.hpp"

namespace asyncsolve::solvers::detail {

using grid::Field;

void check_finite(std::string_view what, double value, long iteration) {
  if (!std::isfinite(value)) {
    throw Breakdown{fmt::format("{} = {} at iteration {}", what, value, iteration)};
  }
}

void check_positive(std::string_view what, double value, long iteration) {
  check_finite(what, value, iteration);
  if (!(value > 0.0)) {
    throw Breakdown{fmt::format("{} = {:.6e} <= 0 at iteration {}", what, value, iteration)};
  }
}

// ---- InnerProduct -----------------------------------------------------------

InnerProduct::InnerProduct(const collectives::AllreduceAlgorithm& algorithm, const par::Comm& comm,
                           std::size_t size, core::PhaseTimers& timers, KrylovPhase start_phase,
                           KrylovPhase wait_phase, par::ProgressThread* progress, int* in_flight)
    : reduction_(collectives::make_nonblocking_allreduce(algorithm, comm, size)),
      timers_(timers),
      start_phase_(start_phase),
      wait_phase_(wait_phase),
      progress_(progress),
      in_flight_(in_flight),
      result_(size) {
  if (progress_ != nullptr) {
    registration_ = progress_->add([this] {
      if (reduction_->active() && reduction_->test(result_)) done_ = true;
    });
  }
}

InnerProduct::~InnerProduct() {
  if (progress_ != nullptr) progress_->remove(registration_);
}

void InnerProduct::start(std::span<const double> local) {
  const auto scope = timers_.time(start_phase_);
  const auto lock = guard();
  done_ = false;
  reduction_->start(local);
  if (in_flight_ != nullptr && !started_) ++*in_flight_;
  started_ = true;
}

void InnerProduct::wait(std::span<double> global) {
  const auto scope = timers_.time(wait_phase_);
  const auto lock = guard();
  if (!done_) reduction_->wait(result_);
  done_ = false;
  if (in_flight_ != nullptr && started_) --*in_flight_;
  started_ = false;
  std::copy(result_.begin(), result_.end(), global.begin());
}

void InnerProduct::drain() {
  const auto lock = guard();
  if (reduction_->active()) reduction_->wait(result_);
  done_ = false;
  if (in_flight_ != nullptr && started_) --*in_flight_;
  started_ = false;
}

void InnerProduct::free() {
  if (progress_ != nullptr) progress_->remove(registration_);
  progress_ = nullptr;
  reduction_->free();
}

std::unique_lock<std::mutex> InnerProduct::guard() {
  return progress_ != nullptr ? std::unique_lock(progress_->mutex())
                              : std::unique_lock<std::mutex>();
}

// ---- KrylovContext ----------------------------------------------------------

KrylovContext::KrylovContext(LinearOperator& a, grid::Field& x, const grid::Field& b,
                             const KrylovOptions& options)
    : a_(a),
      x_(x),
      b_(b),
      halo_(a.halo()),
      options_(options),
      comm_(a.comm()),
      setup_sum_(collectives::make_allreduce(collectives::AllreduceAlgorithm{}, a.comm())) {
  result_.phases = core::PhaseTimers(krylov_phase_names());
}

SolveResult KrylovContext::run(KrylovLoop loop) {
  // ||b||, scaled (no under/overflow): setup, not timed
  const double b_norm = field_norm(b_, setup_sum_.get());
  b_norm_ = b_norm > 0.0 ? b_norm : 1.0;
  comm_.barrier();
  t_start_ = core::now_s();
  bool broke = false;
  try {
    loop(*this);
  } catch (const Breakdown& b) {
    broke = true;
    result_.converged = false;
    result_.reason = StopReason::breakdown;
    result_.detail = b.detail;
    // Before the first estimate (r^T r of x0 not finite): there is none.
    if (result_.history.empty())
      result_.residual_estimate = std::numeric_limits<double>::quiet_NaN();
  }
  result_.time_s = core::now_s() - t_start_;
  drain_and_free();
  measure_true_residual();
  if (estimate_below_floor_ && result_.true_residual < options_.tol) {
    // The solve is exact (a true residual of 0, or below a --tol of 1e-300)
    result_.converged = true;
    result_.reason = StopReason::tolerance;
    result_.detail.clear();
    return std::move(result_);
  }
  if (broke) note_rounding_level(result_, options_.tol);
  confirm_convergence(result_, options_.tol);
  return std::move(result_);
}

InnerProduct& KrylovContext::add_inner_product(std::size_t size, KrylovPhase start,
                                               KrylovPhase wait) {
  products_.push_back(std::make_unique<InnerProduct>(options_.allreduce, comm_, size,
                                                     result_.phases, start, wait, options_.progress,
                                                     &in_flight_));
  return *products_.back();
}

double KrylovContext::matvec(Field& in, Field& out) {
  if (options_.hybrid != nullptr) return hybrid_matvec(in, out);
  core::PhaseTimers& t = result_.phases;
  double t0 = core::now_s();
  const double t_begin = t0;
  halo_.start(in);
  double t1 = core::now_s();
  t.add(halo_start_phase, t1 - t0);
  double dot = 0.0;
  const int step = options_.test_every;
  par::FaultInjector* faults = options_.faults;
  if (step > 0 && a_.has_boundary()) {
    bool done = false;
    const int pieces = a_.interior_pieces(step);
    for (int piece = 0; piece < pieces; ++piece) {
      dot += a_.apply_interior(in, out, piece, step);
      if (faults != nullptr) faults->poll();
      if (!done) done = halo_.test();
    }
  } else if (faults != nullptr && step > 0) {
    const int pieces = a_.interior_pieces(step);
    for (int piece = 0; piece < pieces; ++piece) {
      dot += a_.apply_interior(in, out, piece, step);
      faults->poll();
    }
  } else {
    dot += a_.apply_interior(in, out, 0, 0);
  }
  t0 = core::now_s();
  if (faults != nullptr) faults->after_sweep(t0 - t1);  // the straggler's slower mat-vec
  t0 = core::now_s();
  t.add(matvec_interior_phase, t0 - t1);
  halo_.finish(in);
  t1 = core::now_s();
  t.add(halo_wait_phase, t1 - t0);
  dot += a_.apply_boundary(in, out);
  const double t_end = core::now_s();
  t.add(matvec_boundary_phase, t_end - t1);
  ++result_.halo_exchanges;
  if (in_flight_ > 0) {
    // a reduction was in flight during the whole mat-vec: hidden behind it
    t.add(matvec_hidden_phase, t_end - t_begin);
    ++result_.matvecs_behind_reduction;
  }
  return dot;
}

/// out = A in with OpenMP threads in the scheme of options.hybrid: the same
/// points with the same arithmetic (the fused in . out is summed per thread,
/// then over threads in thread order).
double KrylovContext::hybrid_matvec(Field& in, Field& out) {
  comm::HybridTimes times;
  const double dot = a_.apply_hybrid(*options_.hybrid, in, out, times);
  par::FaultInjector* faults = options_.faults;
  if (faults != nullptr) {
    // The straggler's slower mat-vec: its delay counts as interior time.
    const double t0 = core::now_s();
    faults->after_sweep(times.interior + times.boundary);
    faults->poll();
    times.interior += core::now_s() - t0;
  }
  core::PhaseTimers& t = result_.phases;
  t.add(halo_start_phase, times.exchange_start);
  t.add(halo_wait_phase, times.exchange_wait);
  t.add(matvec_interior_phase, times.interior);
  t.add(matvec_boundary_phase, times.boundary);
  ++result_.halo_exchanges;
  return dot;
}

double KrylovContext::initial_residual(Field& ax, Field& r, InnerProduct& product) {
  matvec(x_, ax);
  return product.reduce(ops::residual(b_, ax, r));
}

namespace {

/// Iterations between two checks of KrylovOptions::max_time_s.
constexpr long max_time_check_every = 16;

}  // namespace

double KrylovContext::precondition(Field& r, Field& z) {
  apply_preconditioner(r, z);
  const double t0 = core::now_s();
  const double dot = ops::dot(r, z);
  const double elapsed = core::now_s() - t0;  // the inner product, timed as precond too
  result_.phases.add(precond_phase, elapsed);
  if (in_flight_ > 0) result_.phases.add(precond_hidden_phase, elapsed);
  return dot;
}

void KrylovContext::apply_preconditioner(Field& r, Field& z) {
  const double t0 = core::now_s();
  pc_->apply(r, z);
  const double elapsed = core::now_s() - t0;
  result_.phases.add(precond_phase, elapsed);
  if (in_flight_ > 0) {
    result_.phases.add(precond_hidden_phase, elapsed);
    ++result_.pc_applies_behind_reduction;
  }
}

void KrylovContext::add_time(KrylovPhase phase, double seconds) {
  result_.phases.add(phase, seconds);
  if (phase == precond_phase && in_flight_ > 0) {
    result_.phases.add(precond_hidden_phase, seconds);
    ++result_.pc_applies_behind_reduction;
  }
}

void KrylovContext::note_restart(long iteration, RestartReason reason, double true_rr,
                                 double estimate_rr) {
  RestartPoint p;
  p.iteration = iteration;
  p.reason = reason;
  p.true_residual = std::sqrt(std::max(true_rr, 0.0)) / b_norm_;
  p.estimate = std::sqrt(std::max(estimate_rr, 0.0)) / b_norm_;
  result_.restarts.push_back(p);
}

void KrylovContext::check_preconditioned(double gamma, double rr, long iteration) {
  check_finite("r^T M^-1 r", gamma, iteration);
  if (!(gamma > 0.0) && rr > 0.0) {
    throw Breakdown{fmt::format(
        "r^T M^-1 r = {:.6e} <= 0 at iteration {}: the preconditioner is not positive definite",
        gamma, iteration)};
  }
}

bool KrylovContext::stop(long iteration, double rr, double local_rr) {
  HistoryPoint p;
  p.iteration = iteration;
  p.time_s = core::now_s() - t_start_;
  p.residual = std::sqrt(std::max(rr, 0.0)) / b_norm_;
  p.local_residual = std::sqrt(std::max(local_rr, 0.0)) / b_norm_;
  if (comm_.is_root()) result_.history.push_back(p);
  if (options_.faults != nullptr) options_.faults->poll();
  if (options_.monitor) options_.monitor(p);
  result_.iterations = iteration;
  result_.residual_estimate = p.residual;
  check_finite("the residual", p.residual, iteration);
  if (p.residual < options_.tol) {
    result_.converged = true;
    result_.reason = StopReason::tolerance;
    return true;
  }
  // Every rank sees the same global residual, so every rank takes the same
  // verdict without a further reduction.
  if (first_residual_ < 0.0) {
    first_residual_ = p.residual;
    first_iteration_ = iteration;
  }
  if (first_residual_ > 0.0 && p.residual >= krylov_divergence_factor * first_residual_) {
    mark_diverged(result_, first_residual_, first_iteration_, p.residual, iteration,
                  krylov_divergence_factor);
    return true;
  }
  if (p.residual < krylov_estimate_floor) {
    // Below any true residual double precision reaches (save 0): the true
    // residual, measured after the loop, decides (run()).
    estimate_below_floor_ = true;
    throw Breakdown{fmt::format(
        "the residual estimate {:.3e} at iteration {} is below epsilon^2 ({:.1e}), where the "
        "recursively updated residual no longer follows the true one",
        p.residual, iteration, krylov_estimate_floor)};
  }
  if (iteration >= options_.max_iters) {
    result_.reason = StopReason::max_iters;
    return true;
  }
  // The wall-clock guard: every max_time_check_every iterations, one
  // blocking reduction of the longest time any rank has run (none without
  // --max-time), so every rank reaches the same verdict.
  if (std::isfinite(options_.max_time_s) && iteration % max_time_check_every == 0 &&
      setup_sum_->max(core::now_s() - t_start_) >= options_.max_time_s) {
    result_.reason = StopReason::max_time;
    return true;
  }
  return false;
}

void KrylovContext::drain_and_free() {
  for (auto& p : products_) p->drain();
  for (auto& p : products_) p->free();
  products_.clear();
}

/// The true residual and the traffic counts, after the solve and outside its
/// time.
void KrylovContext::measure_true_residual() {
  Field ax = make_field();
  Field r = make_field();
  halo_.exchange(x_);
  a_.apply_interior(x_, ax, 0, 0);
  a_.apply_boundary(x_, ax);
  (void)ops::residual(b_, ax, r);  // r = b - A x
  result_.true_residual = field_norm(r, setup_sum_.get()) / b_norm_;
  result_.halo_tests = halo_.tests();
  if (options_.faults != nullptr) result_.injected_s = options_.faults->injected_s();
  result_.messages_sent = result_.halo_exchanges * halo_.messages_per_exchange();
  result_.bytes_sent =
      static_cast<double>(result_.halo_exchanges) * static_cast<double>(halo_.bytes_per_exchange());
}

// ---- Pcg2State --------------------------------------------------------------

Pcg2State::Pcg2State(KrylovContext& k)
    : linv(k.inverse_sqrt_diagonal()),
      r(k.make_field()),
      t(k.make_field()),
      w(k.make_field()),
      p(k.make_field()),
      p_prev(k.make_field()),
      s(k.make_field()),
      sdotp_product(k.add_inner_product(1, sdotp_start_phase, sdotp_wait_phase)),
      gamma_product(k.add_inner_product(1, gamma_start_phase, gamma_wait_phase)),
      iprod_product(k.add_inner_product(1, iprod_start_phase, iprod_wait_phase)) {
  // r = b - A x; iprod = r^T r
  iprod = k.initial_residual(s, r, iprod_product);
  rr_local = ops::dot(r, r);
  check_finite("r^T r", iprod, 0);
  // t = L^-1 r; gamma = t^T t (general: w = M^-1 r; gamma = r^T w)
  const double gamma_local = precondition_start(k);
  gamma = gamma_product.reduce(gamma_local);
  gamma_old = gamma;
  if (k.has_preconditioner()) KrylovContext::check_preconditioned(gamma, iprod, 0);
  // w = L^-T t
  precondition_finish(k);
}

double Pcg2State::precondition_start(KrylovContext& k) {
  // w = M^-1 r; the local r^T w
  if (k.has_preconditioner()) return k.precondition(r, w);
  // t = L^-1 r; the local t^T t in the same pass
  return k.timed(precond_phase, [&] { return ops::scale_dot(linv, r, t); });
}

void Pcg2State::precondition_finish(KrylovContext& k) {
  if (k.has_preconditioner()) return;
  // w = L^-T t
  k.timed(precond_phase, [&] { ops::scale(linv, t, w); });
}

void Pcg2State::finish_x(KrylovContext& k) {
  if (!x_lags) return;
  // x += alpha p_prev
  k.timed(axpy_phase, [&] { ops::axpy(alpha, p_prev, k.x()); });
}

}  // namespace asyncsolve::solvers::detail
