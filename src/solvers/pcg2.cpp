// pcg2: paper 003 Figure 6 ("PCG-Algorithm2", Demmel, Heath and van der
// Vorst's variant) with DiagInvScale, t = L^-1 r and w = L^-T t, L^-1 being
// 1/sqrt(diag A) (a multiplication). X_Axpy uses the previous iteration's
// alpha and p, so the method keeps p and p_prev and makes the last update of
// x after the loop. Every reduction is waited for at once: this is the
// variant that could overlap them, and pcg_overlap.cpp is the one that does
// (with the same vectors and start, Pcg2State).
#include <utility>

#include "asyncsolve/ops/vector.hpp"
#include "krylov_context.hpp"

namespace asyncsolve::solvers::detail {

void run_pcg2(KrylovContext& k) {
  // r = b - A x, iprod = r^T r, t = L^-1 r, gamma = t^T t, w = L^-T t
  Pcg2State v(k);

  // Per iteration (one rank, per unknown of its block):
  //   messages:   one halo exchange, in the mat-vec (<= 6 face messages with
  //               7 points, <= 26 with 27), tested while the interior is computed
  //   reductions: 3 of one double (sdotp, iprod, gamma), each waited for at once
  //   memory:     120 B: p = w + beta p_prev 24, s = A p 16, x += alpha p_prev 24,
  //               r -= alpha s 24, t = L^-1 r 16, w = L^-T t 16
  for (long it = 0;; ++it) {
    // stop when sqrt(iprod) / ||b|| < tol (or at max_iters)
    if (k.stop(it, v.iprod, v.rr_local)) break;
    v.x_lags = true;
    // p = w + beta p_prev, beta = gamma / gamma_old (0 at first)
    const double beta = it == 0 ? 0.0 : v.gamma / v.gamma_old;
    k.timed(vector_scale_phase, [&] { ops::waxpby(v.w, beta, v.p_prev, v.p); });
    // s = A p; sdotp = p^T s
    const double sdotp = v.sdotp_product.reduce(k.matvec(v.p, v.s));
    // x += alpha p_prev: the previous iteration's X_Axpy
    if (it > 0) k.timed(axpy_phase, [&] { ops::axpy(v.alpha, v.p_prev, k.x()); });
    check_positive("p^T A p", sdotp, it + 1);
    // alpha = gamma / sdotp
    v.alpha = v.gamma / sdotp;
    // r -= alpha s; the local r^T r in the same pass
    v.rr_local = k.timed(axpy_phase, [&] { return ops::axpy_dot(v.alpha, v.s, v.r); });
    // iprod = r^T r
    v.iprod = v.iprod_product.reduce(v.rr_local);
    // t = L^-1 r; the local t^T t in the same pass (general: w = M^-1 r, r^T w)
    const double gamma_local = v.precondition_start(k);
    v.gamma_old = v.gamma;
    // gamma = t^T t
    v.gamma = v.gamma_product.reduce(gamma_local);
    check_finite("r^T r", v.iprod, it + 1);
    std::swap(v.p, v.p_prev);  // p_prev: this iteration's direction
    // w = L^-T t (general: made above)
    v.precondition_finish(k);
    check_finite("t^T t", v.gamma, it + 1);
    if (k.has_preconditioner()) KrylovContext::check_preconditioned(v.gamma, v.iprod, it + 1);
  }
  // x += alpha p_prev: the last X_Axpy
  v.finish_x(k);
}

}  // namespace asyncsolve::solvers::detail
