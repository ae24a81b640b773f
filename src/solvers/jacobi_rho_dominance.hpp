#pragma once
// The diagonal-dominance half of estimate_jacobi_rho (jacobi_rho.hpp):
// each row's dominance decided exactly, then which rows reach a strictly
// dominant one.
#include <cstddef>

#include "asyncsolve/solvers/jacobi_rho.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::solvers::detail {

/// How sum_{j != i} |a_ij| compares with |a_ii|, decided on the exact sum.
enum class RowDominance {
  strict,   ///< below |a_ii|
  equal,    ///< exactly |a_ii|
  above,    ///< above |a_ii|
  unknown,  ///< too close to |a_ii| for the rounding of the sum to tell
};

/// The sum of a row's |a_ij| (j != i) with its rounding errors: `sum` plus
/// the exact errors of each addition (Knuth's TwoSum) is the exact sum.
class ExactRowSum {
 public:
  /// Adds |value|.
  void add(double value) noexcept;
  /// Compares the exact sum with |diagonal| (non-zero).
  RowDominance compare(double diagonal) const noexcept;

 private:
  double sum_ = 0;         // the rounded sum
  double errors_ = 0;      // the rounded sum of the exact rounding errors
  double error_size_ = 0;  // the rounded sum of their magnitudes
  std::size_t terms_ = 0;
};

/// Collective over the matrix's communicator: what diagonal dominance
/// proves about rho(|D^-1 (A - D)|): below_one when every row is weakly
/// dominant and reaches a strictly dominant row in the graph of A;
/// at_least_one (rho = 1 exactly) when every row is weakly dominant and
/// some do not (they form a closed set whose rows of M sum to 1);
/// undecided when a row is above its diagonal or too close to tell.
/// Reachability is a breadth-first search over each rank's rows, then one
/// ghost exchange and one reduction per crossing between ranks.
RhoVerdict dominance_verdict(const sparse::DistMatrix& matrix);

}  // namespace asyncsolve::solvers::detail
