// pgmres: p(1)-GMRES of Ghysels, Ashby, Meerbergen and Vanroose (SIAM J.
// Sci. Comput. 2013), right preconditioned, restarted every m iterations as
// gmres is, with PETSc's KSPPGMRES arrangement: iteration i applies the
// preconditioner and the matrix to the newest, not yet orthogonalised
// vector z_i while the one reduction of the previous iteration (the inner
// products of z_i with the basis, and ||v_{i-1}||^2) is in flight; when it
// completes, v_{i-1} is normalised, z_i orthogonalised into v_i, and the new
// vector A M^-1 z_i corrected into A M^-1 v_i with the Hessenberg entries
// (the Arnoldi relation), all in one fused pass that also computes the next
// reduction's local parts (ops::pgmres_pass). A column of H completes one
// iteration later than in gmres, so a cycle of m iterations makes m + 1
// mat-vecs.
//
// The safeguard. The paper's p(l) form takes ||v_i||^2 = ||z_i||^2 - sum h^2
// and restarts when that is not positive (the square-root breakdown); this
// file computes ||v_i||^2 explicitly in the same reduction (as PETSc does),
// which cannot go negative, and watches the cancellation instead: when the
// orthogonalised vector is shorter than sqrt(eps) ~ 1.5e-8 of z_i (one
// classical Gram-Schmidt pass then leaves it far from orthogonal and no
// second pass is possible without a blocking reduction), and the estimate
// has not met the tolerance, the cycle ends there, x takes the completed
// columns, and the method restarts from the true residual. Two such restarts
// in a row without the true residual decreasing end the solve with a
// breakdown ("loss of orthogonality"): the method cannot proceed.
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "asyncsolve/ops/vector.hpp"
#include "gmres_common.hpp"

namespace asyncsolve::solvers::detail {

namespace {

/// ||v_i|| / ||z_i|| below which orthogonality counts as lost: sqrt(eps).
const double lost_orthogonality = std::sqrt(std::numeric_limits<double>::epsilon());

}  // namespace

void run_pgmres(KrylovContext& k) {
  RightPreconditioner pc(k);
  const int m = k.options().restart;
  Basis basis(k, m + 2);  // V[0..m+1]: V[i] is z_i until it is orthogonalised
  std::vector<grid::Field>& v = basis.v;
  ArnoldiLsq lsq(m);
  grid::Field z = pc.is_identity() ? grid::Field() : k.make_field();
  grid::Field tmp = pc.is_identity() ? grid::Field() : k.make_field();
  const auto size = static_cast<std::size_t>(m) + 4;
  InnerProduct& pipe = k.add_inner_product(size, reduce_start_phase, reduce_wait_phase);
  InnerProduct& norm = k.add_inner_product(1, reduce_start_phase, reduce_wait_phase);
  std::vector<double> local(size), global(size), a(size), c(size);
  long its = 0;
  const auto at = [](int i) { return static_cast<std::size_t>(i); };

  // r = b - A x into V[1] (V[2] holds A x)
  double rr = k.initial_residual(v[2], v[1], norm);
  check_finite("r^T r", rr, 0);
  if (k.stop(0, rr, ops::dot(v[1], v[1]))) return;
  CycleProgress progress("pipelined GMRES");
  double lost_residual = -1.0;  // the true residual after the last restart for lost orthogonality

  // Per iteration (one rank, per unknown of its block):
  //   messages:   one halo exchange, in the mat-vec, tested while the interior
  //               is computed
  //   reductions: 1 of i + 3 doubles (the inner products of the newest vector
  //               with the basis, ||v_{i-1}||^2 and ||z_{i-1}||^2), started
  //               after the fused pass and in flight through the next
  //               iteration's preconditioner and mat-vec
  //   memory:     (i + 8) x 8 B besides the mat-vec and the preconditioner:
  //               one fused pass over the i basis vectors, z_i and A M^-1 z_i
  for (;;) {
    // v_0 = r / ||r||
    const double beta = std::sqrt(rr);
    k.timed(orthog_phase, [&] { ops::scale(1.0 / beta, v[1], v[0]); });
    lsq.start(beta);
    double estimate = 0.0;  // the rotations' estimate of ||r||, per completed column
    int done = 0;           // completed columns of H
    // how the cycle ended (unless the solve stops); lost_what: why orthogonality
    bool stopped = false;
    RestartReason ending = RestartReason::cycle;
    std::string lost_what;
    try {
      for (int i = 0;; ++i) {
        // V[i+1] = A M^-1 V[i], behind the reduction started in the previous iteration
        if (i <= m) k.matvec(pc.apply(v[at(i)], z), v[at(i + 1)]);
        if (i == 0) {
          // start H(0, 0) = v_0 . A M^-1 v_0
          std::fill(local.begin(), local.end(), 0.0);
          k.timed(orthog_phase, [&] { ops::mdot(basis.first(1), v[1], local); });
          pipe.start(local);
          continue;
        }
        pipe.wait(global);
        // H(0..i-1, i-1) = v_q . z_i, before the scaling of v_{i-1} and z_i
        // (none once the cycle is full: the last column is m-1)
        for (int q = 0; q < i && i <= m; ++q) {
          check_finite("v_k^T A M^-1 z", global[at(q)], its + 1);
          lsq.h(q, i - 1) = global[at(q)];
        }
        double scale = 1.0;
        if (i > 1) {
          // H(i-1, i-2) = ||v_{i-1}||: column i-2 is complete
          const double norm2 = global[at(i)];
          const double before2 = global[at(i + 1)];
          check_finite("||v||^2", norm2, its + 1);
          const double hnorm = std::sqrt(std::max(norm2, 0.0));
          lsq.h(i - 1, i - 2) = hnorm;
          estimate = k.timed(orthog_phase, [&] { return lsq.rotate(i - 2, its + 1); });
          ++its;
          done = i - 1;
          // stop when estimate / ||b|| < tol (or at max_iters, max_time)
          if (k.stop(its, estimate * estimate, -1.0)) {
            stopped = true;
            break;
          }
          if (hnorm < lost_orthogonality * std::sqrt(std::max(before2, 0.0))) {
            ending = RestartReason::orthogonality;
            lost_what = fmt::format("||v|| / ||z|| = {:.2e} at iteration {}",
                                    hnorm / std::sqrt(before2), its);
            break;
          }
          if (i == m + 1) break;  // the cycle is full
          // the deferred normalisation of v_{i-1} (and of z_i, A M^-1 z_i, which
          // were made from it): H's column i-1 scaled alike
          scale = 1.0 / hnorm;
          for (int q = 0; q < i - 1; ++q) lsq.h(q, i - 1) *= scale;
          lsq.h(i - 1, i - 1) *= scale * scale;
        }
        // a_q = sum_j H(q, j) H(j, i-1): A M^-1 v_j expressed in the basis
        // (Arnoldi), so that A M^-1 z_i becomes A M^-1 v_i
        for (int q = 0; q < i; ++q) {
          double sum = 0.0;
          for (int j = std::max(0, q - 1); j <= i - 2; ++j) sum += lsq.h(q, j) * lsq.h(j, i - 1);
          a[at(q)] = sum;
          c[at(q)] = lsq.h(q, i - 1);
        }
        // v_{i-1} *= scale, z_i *= scale, A M^-1 z_i *= scale;
        // A M^-1 z_i -= sum_q a_q v_q + H(i-1, i-1) z_i; z_i -= sum_q H(q, i-1) v_q;
        // the local v_q . A M^-1 z_i (q <= i), ||z_i||^2 after and before
        std::fill(local.begin(), local.end(), 0.0);
        k.timed(orthog_phase, [&] {
          ops::pgmres_pass(basis.first(i), v[at(i)], v[at(i + 1)], scale, a, lsq.h(i - 1, i - 1), c,
                           local);
        });
        pipe.start(local);
      }
    } catch (const Breakdown&) {
      // x keeps the correction of the columns completed before the breakdown
      add_correction(k, basis.first(done), lsq.solve(done, its), &pc, z, tmp);
      throw;
    }
    // x += M^-1 (V y) over the completed columns
    add_correction(k, basis.first(done), lsq.solve(done, its), &pc, z, tmp);
    if (stopped) return;
    // restart from the true residual r = b - A x (into V[1])
    const double began = rr;
    rr = k.initial_residual(v[2], v[1], norm);
    check_finite("r^T r", rr, its);
    const bool lost = ending == RestartReason::orthogonality;
    k.note_restart(its, ending, rr, estimate * estimate);
    if (k.stop(its, rr, ops::dot(v[1], v[1]))) return;
    if (lost) {
      if (lost_residual >= 0.0 && !(rr < lost_residual)) {
        throw Breakdown{fmt::format(
            "loss of orthogonality in pgmres: {}, and the previous restart for the same cause "
            "made no progress (true residual {:.6e})",
            lost_what, std::sqrt(rr) / k.b_norm())};
      }
      lost_residual = rr;
    } else {
      lost_residual = -1.0;
    }
    progress.check(std::sqrt(began), std::sqrt(rr), its, k.b_norm());
  }
}

}  // namespace asyncsolve::solvers::detail
