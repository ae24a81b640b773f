#pragma once
/// What the nonsymmetric Krylov methods share (internal to the solvers
/// layer): right preconditioning (RightPreconditioner, also BiCGStab's), the
/// least-squares problem of a GMRES cycle with its Givens rotations
/// (ArnoldiLsq), and the Arnoldi cycle of gmres and fgmres with classical
/// Gram-Schmidt and its second pass when needed (GmresCycle). p(1)-GMRES
/// (pgmres.cpp) shares ArnoldiLsq and the restart.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/ops/multi_vector.hpp"
#include "krylov_context.hpp"

namespace asyncsolve::solvers::detail {

/// z = M^-1 v applied on the right: none (v itself, no copy), Jacobi (one
/// fused scaling pass, timed as precond) or a general preconditioner
/// through the context (precond phases).
class RightPreconditioner {
 public:
  explicit RightPreconditioner(KrylovContext& k);
  /// True for none: apply() returns v itself.
  bool is_identity() const { return identity_; }
  /// Jacobi folded into the vector kernels: its D^-1; null otherwise.
  const ops::Scaling* jacobi() const { return !identity_ && !general_ ? &minv_ : nullptr; }
  /// Collective (general preconditioners): z = M^-1 v; returns the field
  /// that holds it (v for none, z otherwise).
  grid::Field& apply(grid::Field& v, grid::Field& z);

 private:
  KrylovContext& k_;
  bool general_;
  bool identity_;
  ops::Scaling minv_;
};

/// The small problem of one GMRES cycle of at most m columns: the upper
/// Hessenberg matrix H ((m + 1) x m) as the columns arrive (kept unrotated:
/// p(1)-GMRES corrects its vectors with it), its QR factorisation by Givens
/// rotations R, and g = Q^T beta e_1, whose last entry is the residual norm
/// of the current iterate (Saad and Schultz 1986). Local; every rank holds
/// the same numbers (they come from reductions).
class ArnoldiLsq {
 public:
  explicit ArnoldiLsq(int m);
  /// A new cycle from a residual of norm beta.
  void start(double beta);
  /// Entry (i, j) of the unrotated H (i <= j + 1 < m + 1).
  double& h(int i, int j) { return h_[index(i, j)]; }
  double h(int i, int j) const { return h_[index(i, j)]; }
  /// Rotates column j (H's column j complete) into R and g; returns the
  /// residual norm estimate |g_{j+1}|. Throws Breakdown (a zero Krylov
  /// vector, naming `iteration`) when the column is zero.
  double rotate(int j, long iteration);
  /// y solving R y = g over the first n columns (back substitution). Throws
  /// Breakdown when a diagonal entry of R is zero.
  std::vector<double> solve(int n, long iteration) const;
  int columns() const { return m_; }

 private:
  std::size_t index(int i, int j) const {
    return static_cast<std::size_t>(j) * static_cast<std::size_t>(m_ + 1) +
           static_cast<std::size_t>(i);
  }

  int m_;
  std::vector<double> h_;  ///< unrotated, column-major (m + 1) x m
  std::vector<double> r_;  ///< rotated (upper triangular), column-major (m + 1) x m
  std::vector<double> c_, s_, g_;
};

/// Stored basis vectors with deferred normalisation: v_k = scale[k] V[k].
/// GMRES keeps each new vector as Gram-Schmidt left it and folds 1/||w||
/// into the next coefficients, which saves a pass over memory per iteration.
struct Basis {
  Basis(KrylovContext& k, int vectors);
  /// The first `n` stored vectors.
  ops::FieldList first(int n) { return {pointers.data(), static_cast<std::size_t>(n)}; }

  std::vector<grid::Field> v;
  std::vector<grid::Field*> pointers;
  std::vector<double> scale;
};

/// Restarted GMRES's stagnation. A cycle that leaves the true residual where
/// it began hands the next cycle the same iterate and residual, hence the
/// same Krylov space: restarted GMRES then makes no progress ever again (an
/// inconsistent singular system; GMRES(m) with m too small for a matrix
/// whose field of values holds 0). Two such cycles in a row (one may be
/// rounding's, or a flexible preconditioner's that changed) end the solve.
class CycleProgress {
 public:
  explicit CycleProgress(std::string_view method) : method_(method) {}
  /// Throws Breakdown at the second cycle in a row whose true residual norm
  /// `end` is not below its first, `start`, by a relative 1e-12, unless it
  /// is at the rounding floor (below stagnation_floor ||b||, norm.hpp).
  void check(double start, double end, long iteration, double b_norm);

 private:
  std::string method_;
  int stagnant_ = 0;  ///< cycles in a row without progress
};

/// Stagnation of a method that restarts from the true residual (pipebicgstab:
/// when that refuses an estimate below the tolerance, and after a breakdown
/// of rho or omega). On an inconsistent singular system the recurrences
/// reach an estimate below the tolerance again and again while b - A x keeps
/// the part of b outside A's range; under a tolerance below the rounding
/// level the breakdowns recur at a true residual that no longer falls. Ten
/// restarts in a row none of which lowered the smallest true residual seen
/// at a restart end the solve: refusals that lower it by less than a
/// relative 1e-3, or, below stagnation_floor ||b||, restarts of any cause
/// that do not lower it at all (above it a breakdown's restart counts for
/// nothing: BiCGStab's residual may rise far on its way).
class RestartProgress {
 public:
  explicit RestartProgress(std::string_view method) : method_(method) {}
  /// Throws Breakdown at the tenth restart in a row without progress;
  /// `true_norm` is this restart's ||b - A x||, `refusal` whether it refused
  /// an estimate below the tolerance (else a breakdown caused it).
  void restarted(double true_norm, long iteration, double b_norm, bool refusal);

 private:
  std::string method_;
  double best_ = 0.0;  ///< the smallest true residual norm at a restart (0: none yet)
  int stagnant_ = 0;   ///< restarts in a row without progress
};

/// One restarted GMRES run's Arnoldi cycles, shared by gmres and fgmres:
/// the residual and its restarts, the orthogonalisation of each new vector
/// (classical Gram-Schmidt, a second pass as KrylovOptions::refinement
/// says), the rotations and the stopping test. The method supplies the
/// preconditioned vector z_j = M^-1 v_j of each step and builds x.
///
/// With CgsRefinement::delayed (DCGS2, gmres_dcgs2.cpp) step j applies the
/// operator to u_j, the vector that the previous step projected once, and
/// one reduction returns both u_j's reorthogonalisation coefficients and the
/// new vector's projections; H's column j - 1 is completed and rotated then,
/// so the stopping test of an iteration comes one mat-vec later, and close()
/// completes the cycle's last column.
class GmresCycle {
 public:
  /// Collective: allocates the basis (restart + 1 vectors) and the
  /// reductions.
  explicit GmresCycle(KrylovContext& k);

  /// Collective: r_0 = b - A x into V[0]; true when the solve stops there
  /// (the initial residual meets the tolerance, or no iterations allowed).
  bool begin();
  /// Collective: one Arnoldi step from z = M^-1 v_j (j the step's index in
  /// the cycle): V[j+1] = A z orthogonalised, H's column j, the rotation.
  /// Returns true when the method stops (tolerance, max_iters, max_time or
  /// a happy breakdown's zero estimate).
  bool step(int j, grid::Field& z);
  /// Collective: after step m - 1 of a full cycle, the last column (delayed
  /// refinement; nothing otherwise). Returns true when the method stops.
  bool close();
  /// H's completed columns in this cycle: the basis vectors x's correction
  /// is made of.
  int columns() const { return columns_; }
  /// The coefficients of x's correction over the first n basis vectors:
  /// x += M^-1 sum_k c_k V[k] (scales folded in); with `kept` (fgmres's
  /// stored z_k = M^-1 of the vector step k was given) x += sum_k c_k z_k.
  std::vector<double> coefficients(int n, bool kept = false) const;
  /// Collective: the end of a cycle that did not stop: r = b - A x into V[0]
  /// (the true residual, recorded as a restart), and the stopping test on
  /// it. Throws Breakdown when the residual estimate and the true residual
  /// differ by more than a tenth of the cycle's first residual (PETSc's
  /// breakdown test). Returns true when the solve stops there.
  bool restart();

  Basis& basis() { return basis_; }
  int restart_length() const { return m_; }
  long iterations() const { return iterations_; }

 private:
  double orthogonalise(int j, grid::Field& w);
  double project(int j, long iteration);
  bool step_delayed(int j, grid::Field& w);
  void start_delayed();
  double reorthogonalised_norm(int j, std::span<const double> a, double uu, grid::Field& u,
                               bool& explicit_pass);
  bool complete_column(int j, std::span<const double> a, double r);
  double project_explicitly(int j, double rho, double r, double ww, grid::Field& u, grid::Field& w);

  KrylovContext& k_;
  int m_;
  Basis basis_;
  ArnoldiLsq lsq_;
  InnerProduct& dots_;
  InnerProduct& norm_;
  std::vector<double> local_;
  std::vector<double> global_;
  std::vector<double> coef_;
  long iterations_ = 0;
  int columns_ = 0;               ///< H's completed columns in this cycle
  bool delayed_;                  ///< CgsRefinement::delayed
  InnerProduct* pair_ = nullptr;  ///< delayed: the step's one reduction (2m + 3 values)
  /// delayed: the step's vector u_k = rho_k (sum_{i<k} t(i, k) q_i + t(k, k) q_k)
  /// in the orthonormal basis, column-major (m + 1) x m, and rho_k = ||u_k||
  std::vector<double> t_;
  std::vector<double> rho_;
  /// delayed: step k stores u_{k+1} = (w - Q Q^T w) / sigma_k, sigma_k about
  /// its norm, so that the stored vectors stay near unit length
  std::vector<double> sigma_;
  double beta_ = 0.0;      ///< the cycle's first residual norm
  double estimate_ = 0.0;  ///< the current residual norm estimate
  CycleProgress progress_{"restarted GMRES"};
};

/// The BiCGStab family's restarts on a breakdown: allowed unless the last
/// one was at the same iteration (no progress since: the method cannot
/// proceed).
class BreakdownRestarts {
 public:
  explicit BreakdownRestarts(std::string_view method) : method_(method) {}
  /// Throws Breakdown naming `quantity`, its `value` and `iteration` when the
  /// last restart was at `iteration`; otherwise records a restart there.
  void check(std::string_view quantity, double value, long iteration);

 private:
  std::string method_;
  long last_ = -1;
};

/// BiCGStab's breakdown test: |(a, b)| at most 1e-14 ||a|| ||b|| (aa =
/// ||a||^2, bb = ||b||^2), a cosine at the rounding level of an inner
/// product, where the value carries no correct digit.
bool is_breakdown(double dot, double aa, double bb);

/// Collective: x += sum_k y_k z_k given fields z (for fgmres the stored M^-1
/// v_k; for gmres the basis, followed by one preconditioner apply of the
/// combination into `tmp`).
void add_correction(KrylovContext& k, ops::FieldList z, const std::vector<double>& y,
                    RightPreconditioner* pc, grid::Field& tmp, grid::Field& tmp2);

}  // namespace asyncsolve::solvers::detail
