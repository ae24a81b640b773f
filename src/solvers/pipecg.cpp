// pipecg: pipelined CG (Ghysels and Vanroose 2014, Algorithm 4) with M = I or
// the Jacobi preconditioner (options.pc.kind jacobi). One reduction of three values,
// {r^T u, w^T u, r^T r}, per iteration, in flight while m = M^-1 w (already
// computed by the previous fused pass) is known and the whole mat-vec n = A m
// is computed. One fused pass updates the eight vectors and computes m and
// the next local inner products. The residual test sees r_i after the
// mat-vec of iteration i has been made, so n iterations take n + 3 mat-vecs:
// A x0 and A u0 to start, then one per pass of the loop, the last of which
// finds the residual small.
//
// Where M^-1 = c I (no preconditioner, or Jacobi on the stencils' constant
// diagonal), u = c r, m = c w and q = c s are multiples of vectors the method
// keeps anyway: that loop (run_pipecg_scalar) stores 7 vectors instead of 10
// and its fused pass streams 13 instead of 19.
#include <array>

#include "asyncsolve/ops/vector.hpp"
#include "krylov_context.hpp"

namespace asyncsolve::solvers::detail {
namespace {

/// What one iteration carries to the next.
struct PipeState {
  double gamma_old = 0.0;
  double alpha_old = 0.0;
};

/// After the reduction of iteration `it`: checks the reduced {gamma, delta,
/// r^T r}, decides whether to stop, and otherwise sets alpha and beta.
/// Returns true when the solve stops here.
bool pipe_step(KrylovContext& k, long it, const std::array<double, 3>& global,
               const std::array<double, 3>& local, bool general, PipeState& state, double& alpha,
               double& beta) {
  const auto [gamma, delta, rr] = global;
  check_finite("r^T r", rr, it);
  // stop when sqrt(r^T r) / ||b|| < tol (or at max_iters)
  if (k.stop(it, rr, local[2])) return true;
  check_finite("r^T M^-1 r", gamma, it);
  check_finite("w^T u", delta, it);
  if (general) KrylovContext::check_preconditioned(gamma, rr, it);
  if (it == 0) {
    // alpha = gamma / delta
    check_positive("p^T A p", delta, it + 1);
    beta = 0.0;
    alpha = gamma / delta;
  } else {
    // beta = gamma / gamma_old; alpha = gamma / (delta - beta gamma / alpha_old)
    beta = gamma / state.gamma_old;
    const double pap = delta - beta * gamma / state.alpha_old;
    check_positive("p^T A p", pap, it + 1);
    alpha = gamma / pap;
  }
  state.gamma_old = gamma;
  state.alpha_old = alpha;
  return false;
}

/// M^-1 = c I: the vectors u, m and q are c r, c w and c s, never stored.
void run_pipecg_scalar(KrylovContext& k, double c) {
  grid::Field r = k.make_field();
  grid::Field w = k.make_field();
  grid::Field aw = k.make_field();
  grid::Field z = k.make_field();
  grid::Field s = k.make_field();
  grid::Field p = k.make_field();
  InnerProduct& dots_product = k.add_inner_product(3, dots_start_phase, dots_wait_phase);
  const ops::PipeScalarVectors v{&k.x(), &r, &w, &aw, &z, &s, &p};

  // r = b - A x (aw holds A x)
  k.matvec(k.x(), aw);
  ops::residual(k.b(), aw, r);
  // w = A u = c A r; the local r^T u, w^T u, r^T r
  k.matvec(r, w);
  std::array<double, 3> local = ops::pipecg_dots_scalar(c, v);
  std::array<double, 3> global{};
  PipeState state;

  // Per iteration (one rank, per unknown of its block):
  //   messages:   one halo exchange, in the mat-vec (<= 6 face messages with
  //               7 points, <= 26 with 27), tested while the interior is computed
  //   reductions: 1 of three doubles (gamma, delta, r^T r), overlapped with
  //               the mat-vec
  //   memory:     120 B: A w 16, the fused update 104 (aw, z, s, p, x, r, w
  //               in; z, s, p, x, r, w out)
  for (long it = 0;; ++it) {
    // start {gamma, delta, r^T r} = {c r^T r, c w^T r, r^T r}
    dots_product.start(local);
    // aw = A w (n = A m = c aw), behind the reduction
    k.matvec(w, aw);
    dots_product.wait(global);
    double alpha = 0.0;
    double beta = 0.0;
    if (pipe_step(k, it, global, local, false, state, alpha, beta)) return;
    // z = c aw + beta z, s = w + beta s, p = c r + beta p, x += alpha p,
    // r -= alpha s, w -= alpha z; the next local inner products in the same pass
    local = k.timed(axpy_phase, [&] { return ops::pipecg_update_scalar(alpha, beta, c, v); });
  }
}

/// A per-point diagonal or a general preconditioner: all ten vectors.
void run_pipecg_general(KrylovContext& k) {
  // With a general preconditioner (chebyshev, boomeramg) the fused passes
  // make m = w, and m = M^-1 w is applied at the top of the loop, behind
  // the reduction.
  const bool general = k.has_preconditioner();
  const ops::Scaling minv = k.options().pc.kind == precond::PcKind::jacobi && !general
                                ? k.inverse_diagonal()
                                : ops::Scaling{1.0, nullptr};
  grid::Field r = k.make_field();
  grid::Field u = k.make_field();
  grid::Field w = k.make_field();
  grid::Field m = k.make_field();
  grid::Field n = k.make_field();
  grid::Field z = k.make_field();
  grid::Field q = k.make_field();
  grid::Field s = k.make_field();
  grid::Field p = k.make_field();
  InnerProduct& dots_product = k.add_inner_product(3, dots_start_phase, dots_wait_phase);
  const ops::PipeVectors v{&k.x(), &r, &u, &w, &m, &n, &z, &q, &s, &p};

  // r = b - A x (n holds A x)
  k.matvec(k.x(), n);
  ops::residual(k.b(), n, r);
  // u = M^-1 r
  if (general) {
    (void)k.precondition(r, u);
  } else {
    k.timed(precond_phase, [&] { ops::scale(minv, r, u); });
  }
  // w = A u
  k.matvec(u, w);
  // m = M^-1 w; the local r^T u, w^T u, r^T r
  std::array<double, 3> local = ops::pipecg_dots(minv, v);
  std::array<double, 3> global{};
  PipeState state;

  // Per iteration (one rank, per unknown of its block):
  //   messages:   one halo exchange, in the mat-vec (<= 6 face messages with
  //               7 points, <= 26 with 27), tested while the interior is computed
  //   reductions: 1 of three doubles (gamma, delta, r^T r), overlapped with
  //               the mat-vec
  //   memory:     168 B: n = A m 16, the fused update 152 (z, q, s, p, x, r,
  //               u, w, m, n in; z, q, s, p, x, r, u, w, m out)
  for (long it = 0;; ++it) {
    // start {gamma, delta, r^T r} = {r^T u, w^T u, r^T r}
    dots_product.start(local);
    // general: m = M^-1 w, behind the reduction
    if (general) (void)k.precondition(w, m);
    // n = A m, behind the reduction
    k.matvec(m, n);
    dots_product.wait(global);
    double alpha = 0.0;
    double beta = 0.0;
    if (pipe_step(k, it, global, local, general, state, alpha, beta)) return;
    // z = n + beta z, q = m + beta q, s = w + beta s, p = u + beta p,
    // x += alpha p, r -= alpha s, u -= alpha q, w -= alpha z, m = M^-1 w;
    // the next local r^T u, w^T u, r^T r in the same pass
    local = k.timed(axpy_phase, [&] { return ops::pipecg_update(alpha, beta, minv, v); });
  }
}

}  // namespace

void run_pipecg(KrylovContext& k) {
  if (!k.has_preconditioner()) {
    const ops::Scaling minv = k.options().pc.kind == precond::PcKind::jacobi
                                  ? k.inverse_diagonal()
                                  : ops::Scaling{1.0, nullptr};
    if (minv.values == nullptr) {
      run_pipecg_scalar(k, minv.constant);
      return;
    }
  }
  run_pipecg_general(k);
}

}  // namespace asyncsolve::solvers::detail
