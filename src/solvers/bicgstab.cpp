// bicgstab: BiCGStab (van der Vorst 1992), right preconditioned (the
// residual it tests is b - A x itself), in PETSc's KSPBCGS order: rho =
// (r, r0) and ||r|| come from one reduction at the end of the previous
// iteration, sigma = (v, r0) from a second, and (t, s), (t, t) from a third
// (PETSc makes four). An iteration is the pair of mat-vecs and counts as one,
// as in PETSc.
//
// Breakdown. When rho = (r, r0), sigma = (A M^-1 p, r0) or (t, s) falls
// below 1e-14 of the norms it is made of (a near-zero cosine), the method
// restarts: r = b - A x (the true residual), the shadow residual r0 = r,
// p = r. After an omega breakdown the half step x += alpha M^-1 p is kept
// first (it is BiCG's step). A breakdown right after a restart, before any
// iteration, means the method cannot proceed: the solve ends with reason
// "breakdown" (exit code 3) naming the quantity and the iteration.
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "asyncsolve/ops/multi_vector.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "gmres_common.hpp"

namespace asyncsolve::solvers::detail {

void run_bicgstab(KrylovContext& k) {
  RightPreconditioner pc(k);
  grid::Field r = k.make_field();
  grid::Field r0 = k.make_field();
  grid::Field p = pc.jacobi() != nullptr ? grid::Field() : k.make_field();  // Jacobi: phat only
  grid::Field v = k.make_field();
  grid::Field s = k.make_field();
  grid::Field t = k.make_field();
  grid::Field phat_store = pc.is_identity() ? grid::Field() : k.make_field();
  grid::Field shat_store = pc.is_identity() ? grid::Field() : k.make_field();
  InnerProduct& sigma_product = k.add_inner_product(2, reduce_start_phase, reduce_wait_phase);
  InnerProduct& omega_product = k.add_inner_product(3, reduce_start_phase, reduce_wait_phase);
  InnerProduct& rho_product = k.add_inner_product(2, reduce_start_phase, reduce_wait_phase);
  InnerProduct& norm_product = k.add_inner_product(1, reduce_start_phase, reduce_wait_phase);

  long it = 0;
  double rr = 0.0;    // ||r||^2
  double rho = 0.0;   // (r, r0)
  double r0r0 = 0.0;  // ||r0||^2
  double rho_old = 1.0;
  double alpha = 1.0;
  double omega = 1.0;
  bool fresh = true;  // p = r next (the start, or after a restart)
  BreakdownRestarts restarts("BiCGStab");
  // r = b - A x (v holds A x meanwhile); r0 = r; rho = (r, r0) = ||r||^2.
  // Returns true when the solve stops on it.
  const auto start_from_true_residual = [&](std::optional<RestartReason> reason,
                                            double estimate_rr) {
    rr = k.initial_residual(v, r, norm_product);
    check_finite("r^T r", rr, it);
    if (reason) k.note_restart(it, *reason, rr, estimate_rr);
    const bool stop = k.stop(it, rr, ops::dot(r, r));
    ops::copy(r, r0);
    rho = rr;
    r0r0 = rr;
    fresh = true;
    return stop;
  };
  // A breakdown of `what` (value, at iteration it): restart, unless nothing
  // was done since the last one. Returns true when the solve stops.
  const auto breakdown = [&](RestartReason what, const char* quantity, double value,
                             double estimate_rr) {
    restarts.check(quantity, value, it);
    return start_from_true_residual(what, estimate_rr);
  };
  if (start_from_true_residual(std::nullopt, 0.0)) return;

  // Per iteration (one rank, per unknown of its block):
  //   messages:   two halo exchanges, one per mat-vec, each tested while the
  //               interior is computed
  //   reductions: 3 blocking, of 2, 3 and 2 doubles: (v, r0) and ||v||^2;
  //               (t, s), (t, t), (s, s); ||r||^2 and the next rho (r, r0)
  //   memory:     168 B besides the mat-vecs and the preconditioner:
  //               p 32, (v, r0) and ||v||^2 16, s 24, (t, s) 16, x and r 64
  //               (x, phat, shat, s, t, r0 in; x, r out), the local ||r||^2
  //               in the last. Jacobi folded in: 176 B in all, where the
  //               update of p, its scaling, s and its scaling would take 208:
  //               p is kept only as phat = D^-1 p (40 B with D^-1) and s is
  //               scaled as it is made (40 B)
  const ops::Scaling* jacobi = pc.jacobi();
  for (;;) {
    // p = r + beta (p - omega v), beta = (rho / rho_old) (alpha / omega);
    // p = r when fresh
    const double beta = fresh ? 0.0 : (rho / rho_old) * (alpha / omega);
    grid::Field* phat = &phat_store;
    if (jacobi != nullptr) {
      // phat = D^-1 p in the same pass (vector_scale)
      k.timed(vector_scale_phase, [&] {
        ops::bicgstab_direction_jacobi(*jacobi, beta, omega, fresh, r, v, phat_store);
      });
    } else {
      if (fresh) {
        k.timed(vector_scale_phase, [&] { ops::copy(r, p); });
      } else {
        k.timed(vector_scale_phase, [&] { ops::lincomb3(1.0, r, -beta * omega, v, beta, p); });
      }
      // phat = M^-1 p
      phat = &pc.apply(p, phat_store);
    }
    fresh = false;
    // v = A phat
    k.matvec(*phat, v);
    // sigma = (v, r0), with ||v||^2 for the breakdown test
    std::array<double, 2> sv{};
    sigma_product.start(ops::dots2(v, r0, v));
    sigma_product.wait(sv);
    const auto [sigma, vv] = sv;
    check_finite("(A M^-1 p, r0)", sigma, it + 1);
    // The breakdown test's norm too: an overflowed one would call any sigma ~ 0.
    check_finite("(A M^-1 p, A M^-1 p)", vv, it + 1);
    if (is_breakdown(sigma, vv, r0r0)) {
      if (breakdown(RestartReason::sigma, "(A M^-1 p, r0)", sigma, rr)) return;
      continue;
    }
    // alpha = rho / sigma; s = r - alpha v; shat = M^-1 s; t = A shat
    alpha = rho / sigma;
    grid::Field* shat = &shat_store;
    if (jacobi != nullptr) {
      k.timed(axpy_phase,
              [&] { ops::bicgstab_half_step_jacobi(*jacobi, alpha, r, v, s, shat_store); });
    } else {
      k.timed(axpy_phase, [&] { ops::waxpby(r, -alpha, v, s); });
      shat = &pc.apply(s, shat_store);
    }
    k.matvec(*shat, t);
    // (t, s), (t, t), (s, s)
    std::array<double, 3> ts{};
    omega_product.start(ops::dots3(t, s));
    omega_product.wait(ts);
    check_finite("(t, s)", ts[0], it + 1);
    check_finite("(t, t)", ts[1], it + 1);
    check_finite("(s, s)", ts[2], it + 1);
    if (ts[1] == 0.0 || is_breakdown(ts[0], ts[1], ts[2])) {
      // omega ~ 0: keep BiCG's half step x += alpha phat (its residual is s), restart
      k.timed(axpy_phase, [&] { ops::axpy(alpha, *phat, k.x()); });
      ++it;
      if (k.stop(it, ts[2], ops::dot(s, s))) return;
      if (breakdown(RestartReason::omega, "(t, s)", ts[0], ts[2])) return;
      continue;
    }
    omega = ts[0] / ts[1];
    // x += alpha phat + omega shat; r = s - omega t; the local ||r||^2, (r, r0)
    std::array<double, 2> local{};
    local = k.timed(axpy_phase, [&] {
      return ops::bicgstab_update(alpha, omega, *phat, *shat, s, t, r0, k.x(), r);
    });
    std::array<double, 2> global{};
    rho_product.start(local);
    rho_product.wait(global);
    ++it;
    rr = global[0];
    check_finite("r^T r", rr, it);
    // stop when ||r|| / ||b|| < tol (or at max_iters, max_time)
    if (k.stop(it, rr, local[0])) return;
    rho_old = rho;
    rho = global[1];
    check_finite("(r, r0)", rho, it);
    if (is_breakdown(rho, rr, r0r0)) {
      if (breakdown(RestartReason::rho, "(r, r0)", rho, rr)) return;
    }
  }
}

}  // namespace asyncsolve::solvers::detail
