#pragma once
/// When asynchronous Jacobi converges on a general matrix: for every delay
/// pattern if and only if rho(|D^-1 (A - D)|) < 1 (Chazan and Miranker
/// 1969). The solve command bounds this spectral radius before Jacobi runs,
/// reports what is proven, and refuses async and racy Jacobi unless
/// rho < 1 is proven (or --force).
///
/// What is proven rests on bounds, never on an estimate alone. With
/// M = |D^-1 (A - D)| (entrywise absolute values, M >= 0):
/// - diagonal dominance, decided exactly per row (the row's sum of
///   |a_ij|, j != i, against |a_ii|, with its rounding errors carried): if
///   every row is weakly dominant, rho(M) <= 1, and rho(M) < 1 exactly when
///   every row reaches a strictly dominant row in the graph of A (then
///   M^k 1 < 1 componentwise; Taussky, Varga's irreducibly diagonally
///   dominant matrices); otherwise the rows that reach none form a closed
///   set on which M is stochastic, so rho(M) = 1;
/// - Collatz-Wielandt bounds of power iterates x >= 0: rho(M) <= max_i
///   (M x)_i / x_i for x > 0, and rho(M) >= min (M x)_i / x_i over the
///   support of x (for any x >= 0, x != 0: M x >= c x implies M^k x >= c^k
///   x), taken over the iterates and, for the lower bound, over the iterate
///   cut to its largest entries (which finds a part of M with rho >= 1 that
///   a small block hides among many rows with rho < 1). Both are widened by
///   the rounding of the products, so a computed bound is a proven one.
#include <string_view>

#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::solvers {

/// What the bounds prove about rho(|D^-1 (A - D)|).
enum class RhoVerdict {
  below_one,     ///< rho < 1: asynchronous Jacobi converges for every delay pattern
  at_least_one,  ///< rho >= 1: some delay pattern makes asynchronous Jacobi diverge
  undecided,     ///< the bounds still bracket 1 after every power iteration allowed
};

/// "below_one", "at_least_one" or "undecided" (result documents).
std::string_view rho_verdict_name(RhoVerdict verdict) noexcept;

/// How a verdict was proven.
enum class RhoProof {
  none,       ///< undecided
  dominance,  ///< exact diagonal dominance and reachability (rho < 1 or rho = 1)
  bounds,     ///< the Collatz-Wielandt bounds of the power iterates
};

/// "none", "dominance" or "bounds" (result documents).
std::string_view rho_proof_name(RhoProof proof) noexcept;

/// What the bounds found, the same on every rank.
struct JacobiRho {
  double estimate = 0;     ///< power iteration's ||M x_k|| / ||x_k||, M = |D^-1 (A - D)|
  double upper_bound = 0;  ///< proven: rho <= this (the best Collatz-Wielandt bound; 1 under
                           ///< weak dominance when the power iterates give no better)
  double lower_bound = 0;  ///< proven: rho >= this
  int iterations = 0;      ///< power iterations made
  RhoVerdict verdict = RhoVerdict::undecided;
  RhoProof proof = RhoProof::none;
};

/// How long the power iterations go on.
struct RhoOptions {
  /// Power iterations while the estimate is still moving (it has settled
  /// once it changes by less than `rtol` relative).
  int iterations = 100;
  double rtol = 1e-4;
  /// While the bounds bracket 1, the iterations go on up to this many
  /// (each one ghost exchange and three reductions; every 10th, three
  /// more mat-vecs for the cut lower bounds).
  int max_iterations = 1000;
};

/// Collective over the matrix's communicator: the diagonal-dominance proof
/// (one pass over the rows, then as many ghost exchanges as the
/// reachability needs to cross ranks), and power iterations on M from
/// x_0 = 1 with their Collatz-Wielandt bounds, for the estimate and,
/// unless dominance decided, for the verdict. Requires every diagonal
/// entry to be non-zero (std::invalid_argument otherwise: check
/// smallest_diagonal first).
JacobiRho estimate_jacobi_rho(const sparse::DistMatrix& matrix, const ops::CsrOperator& op,
                              const RhoOptions& options = {});

}  // namespace asyncsolve::solvers
