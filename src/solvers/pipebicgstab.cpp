// pipebicgstab: pipelined BiCGStab of Cools and Vanroose (Parallel
// Computing 2017), right preconditioned, in the order of PETSc's
// KSPPIPEBCGS: two reductions per iteration, each started after a fused
// vector pass and in flight while a preconditioner and a mat-vec are made
// (z2 = M^-1 z, v = A z2 behind (q, y), (y, y); w2 = M^-1 w, t = A w2
// behind ||r||^2, (r, r0), (s, r0), (w, r0), (z, r0)). The recurrences
// carry A M^-1 of every direction, so the vectors drift from what they
// stand for; as in PETSc (and the paper's residual replacement), every 100
// iterations up to 1000 they are recomputed from x (5 mat-vecs), recorded
// as a restart with reason "replacement".
//
// An estimate below the tolerance is checked against the true residual
// b - A x (one mat-vec), and the method stops only when that is below it
// too; otherwise it restarts from it (either way a restart, reason "confirm"): the pipelined
// recurrences drift further from the residual than BiCGStab's, most where
// ||r|| grows far above ||b|| before it falls. Ten restarts in a row (refusals
// or breakdowns) that do not lower the true residual end the solve
// (RestartProgress).
//
// Breakdown, as bicgstab.cpp: rho = (r, r0) or (q, y) below 1e-14 of the
// norms they are made of, or a zero denominator of alpha, restarts the
// method from the true residual (r0 = r; after an omega breakdown the half
// step x += alpha p2 is kept first); a breakdown right after a restart ends
// the solve with reason "breakdown" (exit code 3).
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "asyncsolve/ops/multi_vector.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "gmres_common.hpp"

namespace asyncsolve::solvers::detail {

namespace {

/// Iterations between residual replacements, and the last iteration that has one.
constexpr long replace_every = 100;
constexpr long replace_until = 1000;

/// The state of one solve: the 15 vectors, the three reductions, the scalars.
class PipeBicgstab {
 public:
  explicit PipeBicgstab(KrylovContext& k)
      : k_(k),
        pc_(k),
        f_(make_fields(k)),
        v_{&k.x(), &f_[0], &f_[1], &f_[2],  &f_[3],  &f_[4],  &f_[5],  &f_[6],
           &f_[7], &f_[8], &f_[9], &f_[10], &f_[11], &f_[12], &f_[13], &f_[14]},
        first_product_(k.add_inner_product(3, reduce_start_phase, reduce_wait_phase)),
        second_product_(k.add_inner_product(5, reduce_start_phase, reduce_wait_phase)),
        start_product_(k.add_inner_product(1, reduce_start_phase, reduce_wait_phase)) {}

  void run();

 private:
  static std::vector<grid::Field> make_fields(KrylovContext& k) {
    std::vector<grid::Field> f;
    f.reserve(15);
    for (int i = 0; i < 15; ++i) f.push_back(k.make_field());
    return f;
  }

  /// out = M^-1 in (none: a copy; the fused passes need distinct vectors).
  void precondition(grid::Field& in, grid::Field& out) {
    grid::Field& applied = pc_.apply(in, out);
    if (&applied != &out) k_.timed(precond_phase, [&] { ops::copy(in, out); });
  }
  bool start(std::optional<RestartReason> reason, double estimate_rr);
  bool breakdown(RestartReason what, const char* quantity, double value, double estimate_rr);
  void replace_residual();

  KrylovContext& k_;
  RightPreconditioner pc_;
  std::vector<grid::Field> f_;
  ops::PipeBicgVectors v_;
  InnerProduct& first_product_;
  InnerProduct& second_product_;
  InnerProduct& start_product_;
  long it_ = 0;
  double rr_ = 0.0, rho_ = 0.0, rho_old_ = 1.0, r0r0_ = 0.0;
  double alpha_ = 0.0, beta_ = 0.0, omega_ = 0.0;
  bool first_ = true;
  BreakdownRestarts restarts_{"pipelined BiCGStab"};
  RestartProgress progress_{"pipelined BiCGStab"};
};

/// r = b - A x (q holds A x meanwhile), r0 = r; r2 = M^-1 r, w = A r2;
/// w2 = M^-1 w, t = A w2 behind (w, r0); alpha = (r, r0) / (w, r0).
/// Returns true when the solve stops on the true residual.
bool PipeBicgstab::start(std::optional<RestartReason> reason, double estimate_rr) {
  grid::Field &r = *v_.r, &r0 = *v_.r0, &w = *v_.w;
  rr_ = k_.initial_residual(*v_.q, r, start_product_);
  check_finite("r^T r", rr_, it_);
  if (reason) k_.note_restart(it_, *reason, rr_, estimate_rr);
  if (k_.stop(it_, rr_, ops::dot(r, r))) return true;
  if (reason) {
    progress_.restarted(std::sqrt(rr_), it_, k_.b_norm(), reason == RestartReason::confirm);
  }
  ops::copy(r, r0);
  rho_ = rr_;
  r0r0_ = rr_;
  precondition(r, *v_.r2);
  k_.matvec(*v_.r2, w);
  // (w, r0) behind w2 = M^-1 w, t = A w2
  start_product_.start(ops::dot(w, r0));
  precondition(w, *v_.w2);
  k_.matvec(*v_.w2, *v_.t);
  const double wr0 = start_product_.wait();
  check_finite("(w, r0)", wr0, it_);
  if (wr0 == 0.0) {
    throw Breakdown{fmt::format(
        "(A M^-1 r, r0) = 0 at iteration {} (from the true residual): BiCGStab cannot proceed",
        it_)};
  }
  alpha_ = rho_ / wr0;
  beta_ = 0.0;
  first_ = true;
  return false;
}

/// A breakdown of `quantity` (`value`): a restart, unless nothing was done
/// since the last one. Returns true when the solve stops.
bool PipeBicgstab::breakdown(RestartReason what, const char* quantity, double value,
                             double estimate_rr) {
  restarts_.check(quantity, value, it_);
  return start(what, estimate_rr);
}

/// Residual replacement: r = b - A x, r2 = M^-1 r, w = A r2, w2 = M^-1 w,
/// t = A w2, s = A p2, s2 = M^-1 s, z = A s2, z2 = M^-1 z, v = A z2.
void PipeBicgstab::replace_residual() {
  const double replaced = k_.initial_residual(*v_.q, *v_.r, start_product_);
  k_.note_restart(it_, RestartReason::replacement, replaced, rr_);
  precondition(*v_.r, *v_.r2);
  k_.matvec(*v_.r2, *v_.w);
  precondition(*v_.w, *v_.w2);
  k_.matvec(*v_.w2, *v_.t);
  k_.matvec(*v_.p2, *v_.s);
  precondition(*v_.s, *v_.s2);
  k_.matvec(*v_.s2, *v_.z);
  precondition(*v_.z, *v_.z2);
  k_.matvec(*v_.z2, *v_.v);
}

void PipeBicgstab::run() {
  if (start(std::nullopt, 0.0)) return;

  // Per iteration (one rank, per unknown of its block):
  //   messages:   two halo exchanges, one per mat-vec, tested while the
  //               interior is computed
  //   reductions: 2 non-blocking, of 3 and 5 doubles, each in flight through
  //               one preconditioner apply and one mat-vec
  //   memory:     272 B besides the mat-vecs and the preconditioners: the
  //               directions pass 144 (11 in, 7 out), the update pass 128
  //               (12 in, 4 out); with none, 2 copies (32 B each)
  for (;;) {
    // p2, s, s2, z updated with beta and omega (first: p2 = r2, s = w,
    // s2 = w2, z = t); q = r - alpha s, q2 = r2 - alpha s2, y = w - alpha z;
    // the local (q, y), (y, y), (q, q)
    const std::array<double, 3> local1 = k_.timed(axpy_phase, [&] {
      return ops::pipebicgstab_directions(alpha_, beta_, omega_, first_, v_);
    });
    first_ = false;
    first_product_.start(local1);
    // z2 = M^-1 z, v = A z2, behind the reduction
    precondition(*v_.z, *v_.z2);
    k_.matvec(*v_.z2, *v_.v);
    std::array<double, 3> qy{};
    first_product_.wait(qy);
    check_finite("(q, y)", qy[0], it_ + 1);
    check_finite("(y, y)", qy[1], it_ + 1);
    check_finite("(q, q)", qy[2], it_ + 1);
    if (qy[1] == 0.0 || is_breakdown(qy[0], qy[1], qy[2])) {
      // omega ~ 0: keep the half step x += alpha p2 (its residual is q), restart
      k_.timed(axpy_phase, [&] { ops::axpy(alpha_, *v_.p2, k_.x()); });
      ++it_;
      if (k_.stop(it_, qy[2], ops::dot(*v_.q, *v_.q))) return;
      if (breakdown(RestartReason::omega, "(q, y)", qy[0], qy[2])) return;
      continue;
    }
    omega_ = qy[0] / qy[1];
    // x += alpha p2 + omega q2, r = q - omega y, r2 = q2 - omega (w2 - alpha z2),
    // w = y - omega (t - alpha v); the local ||r||^2, (r, r0), (s, r0), (w, r0), (z, r0)
    const std::array<double, 5> local2 =
        k_.timed(axpy_phase, [&] { return ops::pipebicgstab_update(alpha_, omega_, v_); });
    second_product_.start(local2);
    // w2 = M^-1 w, t = A w2, behind the reduction
    precondition(*v_.w, *v_.w2);
    k_.matvec(*v_.w2, *v_.t);
    std::array<double, 5> g{};
    second_product_.wait(g);
    ++it_;
    rr_ = g[0];
    check_finite("r^T r", rr_, it_);
    // the recurrences drift from b - A x (most where ||r|| grew far above
    // ||b|| on the way): an estimate below the tolerance is confirmed with the
    // true residual, from which the method restarts if it is not below it
    if (std::sqrt(rr_) < k_.options().tol * k_.b_norm()) {
      if (start(RestartReason::confirm, rr_)) return;
      continue;
    }
    // stop at max_iters or max_time
    if (k_.stop(it_, rr_, local2[0])) return;
    rho_old_ = rho_;
    rho_ = g[1];
    check_finite("(r, r0)", rho_, it_);
    if (is_breakdown(rho_, rr_, r0r0_)) {
      if (breakdown(RestartReason::rho, "(r, r0)", rho_, rr_)) return;
      continue;
    }
    // beta = (rho / rho_old) (alpha / omega);
    // alpha = rho / ((w, r0) + beta (s, r0) - beta omega (z, r0))
    beta_ = (rho_ / rho_old_) * (alpha_ / omega_);
    const double denominator = g[3] + beta_ * g[2] - beta_ * omega_ * g[4];
    check_finite("the denominator of alpha", denominator, it_);
    if (denominator == 0.0) {
      if (breakdown(RestartReason::sigma, "(A M^-1 p, r0)", denominator, rr_)) return;
      continue;
    }
    alpha_ = rho_ / denominator;
    if (it_ % replace_every == 0 && it_ <= replace_until) replace_residual();
  }
}

}  // namespace

void run_pipebicgstab(KrylovContext& k) { PipeBicgstab(k).run(); }

}  // namespace asyncsolve::solvers::detail
