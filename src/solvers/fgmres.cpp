// fgmres: flexible GMRES(m) (Saad 1993), right preconditioned with a
// preconditioner that may change from one iteration to the next: the
// preconditioned vectors z_j = M_j^-1 v_j are kept (m more vectors than
// gmres) and x += Z y at the end of a cycle, so no preconditioner is
// applied to the correction. Otherwise the cycle is gmres's (GmresCycle,
// gmres_common.hpp): classical Gram-Schmidt with a second pass when needed,
// Givens rotations, the true residual at every restart; iterations are
// counted as PETSc's KSPFGMRES counts them.
#include "gmres_common.hpp"

namespace asyncsolve::solvers::detail {

void run_fgmres(KrylovContext& k) {
  RightPreconditioner pc(k);
  GmresCycle cycle(k);
  const int m = cycle.restart_length();
  Basis& basis = cycle.basis();
  // the kept z_j (none: z_j is v_j itself, nothing kept)
  std::vector<grid::Field> kept;
  if (!pc.is_identity()) {
    kept.reserve(static_cast<std::size_t>(m));
    for (int j = 0; j < m; ++j) kept.push_back(k.make_field());
  }
  std::vector<grid::Field*> z(static_cast<std::size_t>(m), nullptr);
  grid::Field unused;
  if (cycle.begin()) return;

  // Per iteration j of a cycle: gmres's (one halo exchange, 2 blocking
  // reductions, 4 with the second pass; (2j + 5) x 8 B besides the mat-vec),
  // the preconditioner writing z_j, which stays.
  for (;;) {
    int n = 0;
    bool stop = false;
    // x += sum_k y_k s_k z_k (the scales folded into y) over H's completed
    // columns
    const auto correct = [&] {
      const int c = cycle.columns();
      add_correction(k, ops::FieldList{z.data(), static_cast<std::size_t>(c)},
                     cycle.coefficients(c, !kept.empty()), nullptr, unused, unused);
    };
    try {
      while (!stop && n < m) {
        const auto j = static_cast<std::size_t>(n);
        // z_n = M_n^-1 v_n (kept); V[n+1] = A z_n, orthogonalised; the test
        z[j] = &pc.apply(basis.v[j], kept.empty() ? basis.v[j] : kept[j]);
        stop = cycle.step(n, *z[j]);
        ++n;
      }
      if (!stop) stop = cycle.close();
    } catch (const Breakdown&) {
      correct();
      throw;
    }
    correct();
    if (stop || cycle.restart()) return;
  }
}

}  // namespace asyncsolve::solvers::detail
