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
// ||r|| grows far above ||b|| before it falls.
//
// Breakdown, as bicgstab.cpp: rho = (r, r0) or (q, y) below 1e-14 of the
// norms they are made of, or a zero denominator of alpha, restarts the
// method from the true residual (r0 = r; after an omega breakdown the half
// step x += alpha p2 is kept first); a breakdown right after a restart ends
// the solve with reason "breakdown" (exit code 3).
#include <cmath>

#include <fmt/format.h>

#include "asyncsolve/ops/multi_vector.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "gmres_common.hpp"

namespace asyncsolve::solvers::detail {

namespace {

/// Iterations between residual replacements, and the last iteration that has one.
constexpr long replace_every = 100;
constexpr long replace_until = 1000;

}  // namespace

void run_pipebicgstab(KrylovContext& k) {
  RightPreconditioner pc(k);
  std::vector<grid::Field> f;
  for (int i = 0; i < 15; ++i) f.push_back(k.make_field());
  const ops::PipeBicgVectors vec{&k.x(), &f[0], &f[1], &f[2],  &f[3],  &f[4],  &f[5],  &f[6],
                                 &f[7],  &f[8], &f[9], &f[10], &f[11], &f[12], &f[13], &f[14]};
  grid::Field &r = *vec.r, &r2 = *vec.r2, &r0 = *vec.r0, &w = *vec.w, &w2 = *vec.w2;
  grid::Field &t = *vec.t, &p2 = *vec.p2, &s = *vec.s, &s2 = *vec.s2, &z = *vec.z;
  grid::Field &z2 = *vec.z2, &v = *vec.v, &q = *vec.q;
  InnerProduct& first_product = k.add_inner_product(3, reduce_start_phase, reduce_wait_phase);
  InnerProduct& second_product = k.add_inner_product(5, reduce_start_phase, reduce_wait_phase);
  InnerProduct& start_product = k.add_inner_product(1, reduce_start_phase, reduce_wait_phase);
  // out = M^-1 in (none: a copy; the fused passes need distinct vectors)
  const auto precondition = [&](grid::Field& in, grid::Field& out) {
    grid::Field& applied = pc.apply(in, out);
    if (&applied != &out) k.timed(precond_phase, [&] { ops::copy(in, out); });
  };

  long it = 0;
  double rr = 0.0, rho = 0.0, rho_old = 1.0, r0r0 = 0.0;
  double alpha = 0.0, beta = 0.0, omega = 0.0;
  bool first = true;
  long restarted_at = -1;
  // r = b - A x (q holds A x meanwhile), r0 = r; r2 = M^-1 r, w = A r2
  // behind rho = (r, r0); w2 = M^-1 w, t = A w2 behind (w, r0); alpha.
  // Returns true when the solve stops on the true residual.
  const auto start = [&](const char* reason, double estimate_rr) {
    rr = k.initial_residual(q, r, start_product);
    check_finite("r^T r", rr, it);
    if (reason != nullptr) k.note_restart(it, reason, rr, estimate_rr);
    if (k.stop(it, rr, ops::dot(r, r))) return true;
    ops::copy(r, r0);
    rho = rr;
    r0r0 = rr;
    precondition(r, r2);
    k.matvec(r2, w);
    // (w, r0) behind w2 = M^-1 w, t = A w2
    start_product.start(ops::dot(w, r0));
    precondition(w, w2);
    k.matvec(w2, t);
    const double wr0 = start_product.wait();
    check_finite("(w, r0)", wr0, it);
    if (wr0 == 0.0) {
      throw Breakdown{fmt::format(
          "(A M^-1 r, r0) = 0 at iteration {} (from the true residual): BiCGStab cannot proceed",
          it)};
    }
    alpha = rho / wr0;
    beta = 0.0;
    first = true;
    return false;
  };
  const auto breakdown = [&](const char* what, const char* quantity, double value,
                             double estimate_rr) {
    if (restarted_at == it) {
      throw Breakdown{
          fmt::format("{} = {:.6e} ~ 0 at iteration {}, right after a restart for the same cause: "
                      "pipelined BiCGStab cannot proceed",
                      quantity, value, it)};
    }
    restarted_at = it;
    return start(what, estimate_rr);
  };
  if (start(nullptr, 0.0)) return;

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
    const std::array<double, 3> local1 = k.timed(
        axpy_phase, [&] { return ops::pipebicgstab_directions(alpha, beta, omega, first, vec); });
    first = false;
    first_product.start(local1);
    // z2 = M^-1 z, v = A z2, behind the reduction
    precondition(z, z2);
    k.matvec(z2, v);
    std::array<double, 3> qy{};
    first_product.wait(qy);
    check_finite("(q, y)", qy[0], it + 1);
    check_finite("(y, y)", qy[1], it + 1);
    if (qy[1] == 0.0 || is_breakdown(qy[0], qy[1], qy[2])) {
      // omega ~ 0: keep the half step x += alpha p2 (its residual is q), restart
      k.timed(axpy_phase, [&] { ops::axpy(alpha, p2, k.x()); });
      ++it;
      if (k.stop(it, qy[2], ops::dot(q, q))) return;
      if (breakdown("omega", "(q, y)", qy[0], qy[2])) return;
      continue;
    }
    omega = qy[0] / qy[1];
    // x += alpha p2 + omega q2, r = q - omega y, r2 = q2 - omega (w2 - alpha z2),
    // w = y - omega (t - alpha v); the local ||r||^2, (r, r0), (s, r0), (w, r0), (z, r0)
    const std::array<double, 5> local2 =
        k.timed(axpy_phase, [&] { return ops::pipebicgstab_update(alpha, omega, vec); });
    second_product.start(local2);
    // w2 = M^-1 w, t = A w2, behind the reduction
    precondition(w, w2);
    k.matvec(w2, t);
    std::array<double, 5> g{};
    second_product.wait(g);
    ++it;
    rr = g[0];
    check_finite("r^T r", rr, it);
    // the recurrences drift from b - A x (most where ||r|| grew far above
    // ||b|| on the way): an estimate below the tolerance is confirmed with the
    // true residual, from which the method restarts if it is not below it
    if (std::sqrt(rr) < k.options().tol * k.b_norm()) {
      if (start("confirm", rr)) return;
      continue;
    }
    // stop at max_iters or max_time
    if (k.stop(it, rr, local2[0])) return;
    rho_old = rho;
    rho = g[1];
    check_finite("(r, r0)", rho, it);
    if (is_breakdown(rho, rr, r0r0)) {
      if (breakdown("rho", "(r, r0)", rho, rr)) return;
      continue;
    }
    // beta = (rho / rho_old) (alpha / omega); alpha = rho / ((w, r0) + beta (s, r0) - beta omega
    // (z, r0))
    beta = (rho / rho_old) * (alpha / omega);
    const double denominator = g[3] + beta * g[2] - beta * omega * g[4];
    check_finite("the denominator of alpha", denominator, it);
    if (denominator == 0.0) {
      if (breakdown("sigma", "(A M^-1 p, r0)", denominator, rr)) return;
      continue;
    }
    alpha = rho / denominator;
    if (it % replace_every == 0 && it <= replace_until) {
      // residual replacement: r = b - A x, r2 = M^-1 r, w = A r2, w2 = M^-1 w,
      // t = A w2, s = A p2, s2 = M^-1 s, z = A s2, z2 = M^-1 z, v = A z2
      const double replaced = k.initial_residual(q, r, start_product);
      k.note_restart(it, "replacement", replaced, rr);
      precondition(r, r2);
      k.matvec(r2, w);
      precondition(w, w2);
      k.matvec(w2, t);
      k.matvec(p2, s);
      precondition(s, s2);
      k.matvec(s2, z);
      precondition(z, z2);
      k.matvec(z2, v);
    }
  }
}

}  // namespace asyncsolve::solvers::detail
