// cg: paper 001 Listing 2 (Hestenes-Stiefel conjugate gradients, no
// preconditioner) with its vector updates fused: q = A p together with
// p^T q, and x += alpha p, r -= alpha q together with r^T r. Both reductions
// are needed at once, so nothing overlaps them. (Listing 2 prints
// alpha = delta / gamma; the method needs alpha = gamma / delta.)
#include "asyncsolve/ops/vector.hpp"
#include "krylov_context.hpp"

namespace asyncsolve::solvers::detail {

void run_cg(KrylovContext& k) {
  grid::Field r = k.make_field();
  grid::Field p = k.make_field();
  grid::Field q = k.make_field();
  InnerProduct& delta_product = k.add_inner_product(1, sdotp_start_phase, sdotp_wait_phase);
  InnerProduct& gamma_product = k.add_inner_product(1, iprod_start_phase, iprod_wait_phase);

  // r = b - A x; gamma = r^T r
  double gamma = k.initial_residual(q, r, gamma_product);
  double gamma_old = gamma;
  check_finite("r^T r", gamma, 0);
  // p = r
  ops::copy(r, p);

  // Per iteration (one rank, per unknown of its block):
  //   messages:   one halo exchange, in the mat-vec (<= 6 face messages with
  //               7 points, <= 26 with 27), tested while the interior is computed
  //   reductions: 2 of one double (p^T A p, r^T r), each waited for at once
  //   memory:     96 B: p = r + beta p 24, q = A p 16 (p in, q out),
  //               x and r updated 48 (p, q, x, r in; x, r out), the history's
  //               local r^T r 8
  for (long it = 0;; ++it) {
    // stop when sqrt(gamma) / ||b|| < tol (or at max_iters)
    if (k.stop(it, gamma, ops::dot(r, r))) return;
    if (it > 0) {
      // p = r + beta p, beta = gamma / gamma_old
      k.timed(vector_scale_phase, [&] { ops::xpby(r, gamma / gamma_old, p); });
    }
    // q = A p; delta = p^T q
    const double delta = delta_product.reduce(k.matvec(p, q));
    check_positive("p^T A p", delta, it + 1);
    // alpha = gamma / delta
    const double alpha = gamma / delta;
    // x += alpha p; r -= alpha q; the local r^T r in the same pass
    const double rr_local =
        k.timed(axpy_phase, [&] { return ops::cg_update(alpha, p, q, k.x(), r); });
    gamma_old = gamma;
    // gamma = r^T r
    gamma = gamma_product.reduce(rr_local);
    check_finite("r^T r", gamma, it + 1);
  }
}

}  // namespace asyncsolve::solvers::detail
