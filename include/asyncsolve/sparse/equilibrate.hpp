#pragma once
/// Exact equilibration of a distributed system by powers of two. A x = b
/// becomes (2^a A) y = 2^c b, y = 2^(c - a) x: a power of two rounds nothing
/// (while values stay in the normal range), so every solver's iterates are
/// the unscaled ones times 2^(c - a) and every relative residual is the same,
/// bit for bit, but a system whose entries or right-hand side lie far from 1
/// (1e±160, 1e±300) no longer overflows or underflows in r^T r, p^T A p and
/// the other inner products of a solve.
#include <span>

#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::sparse {

/// The powers of two a system was scaled by.
struct PowerOfTwoScaling {
  int matrix_exponent = 0;  ///< a: A <- 2^a A (even)
  int rhs_exponent = 0;     ///< c: b <- 2^c b
  /// x = 2^(a - c) y: the unscaled unknowns from the scaled system's. Local.
  void unscale(std::span<double> y) const;
};

/// The powers for a matrix already scaled by 2^`matrix_exponent` and a
/// right-hand side whose largest |b_i| is `b_max` (x0's `x0_max`): b's
/// largest into [1, 2), unless b or x0 would overflow; then b takes A's
/// power, or neither is scaled. Local.
PowerOfTwoScaling scaling_for(int matrix_exponent, double b_max, double x0_max);

/// Scales `a` (its largest |a_ij| into [1/2, 2)), `b` (its largest |b_i|
/// into [1, 2)) and `x0` (by 2^(c - a), as y) in place; b and x0 hold the
/// local rows. `a` keeps its scale where its entries span so many powers of
/// two that the smallest would leave the normal range, and b keeps A's where
/// x0 would overflow. Collective over the matrix's communicator.
PowerOfTwoScaling equilibrate(DistMatrix& a, std::span<double> b, std::span<double> x0);

}  // namespace asyncsolve::sparse
