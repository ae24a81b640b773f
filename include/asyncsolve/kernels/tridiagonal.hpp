#pragma once
/// The lowest eigenpair of a symmetric tridiagonal matrix, through LAPACK
/// (dstebz for the eigenvalue by bisection, dstein for its eigenvector by
/// inverse iteration): O(j) work for a j x j matrix.
#include <span>

namespace asyncsolve::kernels {

/// The lowest eigenvalue of T and the last component of its unit eigenvector.
struct LowestEigenpair {
  double value = 0;
  double last_component = 0;  ///< |s_j|: the Lanczos residual bound is beta_{j+1} |s_j|
};

/// Local: the lowest eigenpair of the symmetric tridiagonal matrix with
/// diagonal `diagonal` (j entries) and off-diagonal `off` (j - 1 entries).
/// Throws std::runtime_error if LAPACK reports a failure.
LowestEigenpair lowest_eigenpair(std::span<const double> diagonal, std::span<const double> off);

/// Local: all eigenvalues of the dense symmetric n x n matrix `a`
/// (column-major; overwritten), ascending, by LAPACK dsyev. For tests.
void symmetric_eigenvalues(std::span<double> a, int n, std::span<double> values);

}  // namespace asyncsolve::kernels
