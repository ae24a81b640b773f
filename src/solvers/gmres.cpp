// gmres: restarted GMRES(m) of Saad and Schultz (1986), right preconditioned
// (A M^-1 u = b, x = M^-1 u, so the residual it minimises is b - A x
// itself), with PETSc's KSPGMRES conventions: classical Gram-Schmidt with a
// second pass (KrylovOptions::refinement: by default every vector's, delayed
// by one iteration into the next vector's reduction, gmres_dcgs2.cpp; or
// PETSc's -ksp_gmres_cgs_refinement_type choices), Givens rotations giving
// the residual norm after every iteration (one mat-vec later when delayed),
// and at each restart the true residual
// b - A x, on which the next cycle starts (GmresCycle, gmres_common.hpp).
// An iteration is one Arnoldi step; a restart costs a mat-vec and no
// iteration, as in PETSc.
#include "gmres_common.hpp"

namespace asyncsolve::solvers::detail {

void run_gmres(KrylovContext& k) {
  RightPreconditioner pc(k);
  GmresCycle cycle(k);
  const int m = cycle.restart_length();
  Basis& basis = cycle.basis();
  // z = M^-1 v_j, and at the end of a cycle sum_k y_k v_k (none: not needed)
  grid::Field z = pc.is_identity() ? grid::Field() : k.make_field();
  grid::Field tmp = pc.is_identity() ? grid::Field() : k.make_field();
  if (cycle.begin()) return;

  // Per iteration j of a cycle (one rank, per unknown of its block):
  //   messages:   one halo exchange, in the mat-vec, tested while the interior
  //               is computed
  //   reductions: 1 blocking with --cgs-refinement delayed (the default:
  //               2j + 2 values, gmres_dcgs2.cpp), reading the basis twice,
  //               (2j + 6) x 8 B; otherwise 2 blocking (the j+1 inner products
  //               of Gram-Schmidt; the update's ||w||^2, with the second
  //               pass's j+1 inner products unless never), 3 when the second
  //               pass is needed, and:
  //   memory:     (2j + 5) x 8 B besides the mat-vec and the preconditioner:
  //               the block inner products j+2 streams, the update with the
  //               norm (and the second pass's inner products) j+3 (the
  //               normalisation is deferred into the scales); (3j + 8) x 8 B
  //               with the second pass; Jacobi adds z = D^-1 v (24 B)
  for (;;) {
    int n = 0;
    bool stop = false;
    // x += M^-1 (V y) over H's completed columns, y solving the cycle's
    // least-squares problem
    const auto correct = [&] {
      const int c = cycle.columns();
      add_correction(k, basis.first(c), cycle.coefficients(c), &pc, z, tmp);
    };
    try {
      while (!stop && n < m) {
        // z = M^-1 v_n; V[n+1] = A z, orthogonalised; the rotation; the test
        stop = cycle.step(n, pc.apply(basis.v[static_cast<std::size_t>(n)], z));
        ++n;
      }
      if (!stop) stop = cycle.close();
    } catch (const Breakdown&) {
      // x keeps the correction of the columns completed before the breakdown
      correct();
      throw;
    }
    correct();
    // the true residual b - A x, on which the next cycle starts
    if (stop || cycle.restart()) return;
  }
}

}  // namespace asyncsolve::solvers::detail
