// pcg-overlap: paper 003 Figure 7 ("PCG-Overlap"). The paper describes it in
// words only: PCG-Algorithm2 (pcg2.cpp, Figure 6) with "each of the three
// inner-products [overlapped] with either the DiagInvScale routine or the
// X_Axpy operation". Each reduction is started non-blocking and waited for
// after independent work:
//
//   sdotp = p^T A p   in flight during x += alpha p_prev (X_Axpy)
//   iprod = r^T r     in flight during t = L^-1 r (DiagInvScale)
//   gamma = t^T t     in flight during w = L^-T t (DiagInvScale)
//
// iprod and gamma are in flight together for a moment, each on its own
// communicator. Same vectors, same start (Pcg2State) and the same arithmetic
// in the same order as pcg2: with --allreduce mpi (blocking inside start) it
// computes exactly what pcg2 does.
#include <utility>

#include "asyncsolve/ops/vector.hpp"
#include "krylov_context.hpp"

namespace asyncsolve::solvers::detail {

void run_pcg_overlap(KrylovContext& k) {
  // r = b - A x, iprod = r^T r, t = L^-1 r, gamma = t^T t, w = L^-T t
  Pcg2State v(k);

  // Per iteration (one rank, per unknown of its block):
  //   messages:   one halo exchange, in the mat-vec (<= 6 face messages with
  //               7 points, <= 26 with 27), tested while the interior is computed
  //   reductions: 3 of one double (sdotp, iprod, gamma), each started
  //               non-blocking and overlapped with one vector operation
  //   memory:     120 B: p = w + beta p_prev 24, s = A p 16, x += alpha p_prev 24,
  //               r -= alpha s 24, t = L^-1 r 16, w = L^-T t 16
  for (long it = 0;; ++it) {
    // stop when sqrt(iprod) / ||b|| < tol (or at max_iters)
    if (k.stop(it, v.iprod, v.rr_local)) break;
    v.x_lags = true;
    // p = w + beta p_prev, beta = gamma / gamma_old (0 at first)
    const double beta = it == 0 ? 0.0 : v.gamma / v.gamma_old;
    k.timed(vector_scale_phase, [&] { ops::waxpby(v.w, beta, v.p_prev, v.p); });
    // s = A p; start sdotp = p^T s
    v.sdotp_product.start(k.matvec(v.p, v.s));
    // x += alpha p_prev: the previous iteration's X_Axpy, behind sdotp
    if (it > 0) k.timed(axpy_phase, [&] { ops::axpy(v.alpha, v.p_prev, k.x()); });
    const double sdotp = v.sdotp_product.wait();
    check_positive("p^T A p", sdotp, it + 1);
    // alpha = gamma / sdotp
    v.alpha = v.gamma / sdotp;
    // r -= alpha s; the local r^T r in the same pass; start iprod = r^T r
    v.rr_local = k.timed(axpy_phase, [&] { return ops::axpy_dot(v.alpha, v.s, v.r); });
    v.iprod_product.start(v.rr_local);
    // t = L^-1 r, behind iprod; the local t^T t in the same pass (general:
    // w = M^-1 r and the local r^T w, behind iprod)
    const double gamma_local = v.precondition_start(k);
    v.gamma_old = v.gamma;
    // start gamma = t^T t; wait for iprod (the next stop test needs it)
    v.gamma_product.start(gamma_local);
    v.iprod = v.iprod_product.wait();
    check_finite("r^T r", v.iprod, it + 1);
    std::swap(v.p, v.p_prev);  // p_prev: this iteration's direction
    // w = L^-T t, behind gamma (w does not depend on it; general: nothing)
    v.precondition_finish(k);
    v.gamma = v.gamma_product.wait();
    check_finite("t^T t", v.gamma, it + 1);
    if (k.has_preconditioner()) KrylovContext::check_preconditioned(v.gamma, v.iprod, it + 1);
  }
  // x += alpha p_prev: the last X_Axpy
  v.finish_x(k);
}

}  // namespace asyncsolve::solvers::detail
