// pcg1: paper 003 Figure 3 ("PCG-Algorithm1", hypre's hypre_PCGSolve) with
// DiagScale, s = r / diag(A) (a division per point, as hypre's). Three
// reductions per iteration (sdotp, gamma, iprod), each needed at once and
// kept separate as in hypre; their local parts are fused into the vector
// kernels before them.
#include "asyncsolve/ops/vector.hpp"
#include "krylov_context.hpp"

namespace asyncsolve::solvers::detail {

void run_pcg1(KrylovContext& k) {
  const ops::Scaling d = k.diagonal();
  grid::Field r = k.make_field();
  grid::Field p = k.make_field();
  grid::Field s = k.make_field();
  InnerProduct& sdotp_product = k.add_inner_product(1, sdotp_start_phase, sdotp_wait_phase);
  InnerProduct& gamma_product = k.add_inner_product(1, gamma_start_phase, gamma_wait_phase);
  InnerProduct& iprod_product = k.add_inner_product(1, iprod_start_phase, iprod_wait_phase);

  // r = b - A x; iprod = r^T r
  double iprod = k.initial_residual(s, r, iprod_product);
  double rr_local = ops::dot(r, r);
  check_finite("r^T r", iprod, 0);
  // p = C^-1 r = r / d; gamma = r^T p (a general preconditioner: p = M^-1 r)
  const bool general = k.has_preconditioner();
  const double gamma_local0 =
      general ? k.precondition(r, p)
              : k.timed(precond_phase, [&] { return ops::diag_scale_dot(r, d, p); });
  double gamma = gamma_product.reduce(gamma_local0);
  if (general) KrylovContext::check_preconditioned(gamma, iprod, 0);

  // Per iteration (one rank, per unknown of its block):
  //   messages:   one halo exchange, in the mat-vec (<= 6 face messages with
  //               7 points, <= 26 with 27), tested while the interior is computed
  //   reductions: 3 of one double (sdotp, gamma, iprod), each waited for at once
  //   memory:     104 B: s = A p 16, x and r updated 48 (p, s, x, r in; x, r
  //               out), s = r / d 16, p = s + beta p 24
  for (long it = 0;; ++it) {
    // stop when sqrt(iprod) / ||b|| < tol (or at max_iters)
    if (k.stop(it, iprod, rr_local)) return;
    // s = A p; sdotp = p^T s
    const double sdotp = sdotp_product.reduce(k.matvec(p, s));
    check_positive("p^T A p", sdotp, it + 1);
    // alpha = gamma / sdotp
    const double alpha = gamma / sdotp;
    const double gamma_old = gamma;
    // x += alpha p; r -= alpha s; the local r^T r in the same pass
    rr_local = k.timed(axpy_phase, [&] { return ops::cg_update(alpha, p, s, k.x(), r); });
    // s = C^-1 r = r / d; the local r^T s in the same pass (general: s = M^-1 r)
    const double gamma_local =
        general ? k.precondition(r, s)
                : k.timed(precond_phase, [&] { return ops::diag_scale_dot(r, d, s); });
    // gamma = r^T s
    gamma = gamma_product.reduce(gamma_local);
    // iprod = r^T r
    iprod = iprod_product.reduce(rr_local);
    check_finite("r^T C^-1 r", gamma, it + 1);
    check_finite("r^T r", iprod, it + 1);
    if (general) KrylovContext::check_preconditioned(gamma, iprod, it + 1);
    // p = s + beta p, beta = gamma / gamma_old
    const double beta = gamma / gamma_old;
    k.timed(vector_scale_phase, [&] { ops::xpby(s, beta, p); });
  }
}

}  // namespace asyncsolve::solvers::detail
