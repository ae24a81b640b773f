#pragma once
/// When asynchronous Jacobi converges on a general matrix: for every delay
/// pattern if and only if rho(|D^-1 (A - D)|) < 1 (Chazan and Miranker
/// 1969). The solve command estimates this spectral radius before Jacobi
/// runs, reports it, and refuses async and racy Jacobi when it is >= 1
/// unless --force.
#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::solvers {

/// What the estimate found, the same on every rank.
struct JacobiRho {
  double estimate = 0;     ///< power iteration's ||M x_k|| / ||x_k||, M = |D^-1 (A - D)|
  double upper_bound = 0;  ///< max_i (M x)_i / x_i for the last (positive) iterate: rho <= this
  int iterations = 0;      ///< power iterations made
};

/// Collective over the matrix's communicator: a few power iterations on
/// M = |D^-1 (A - D)| (entrywise absolute values; M >= 0, so the norm ratio
/// tends to the Perron root from x_0 = 1), until the estimate changes by
/// less than `rtol` relative or `max_iterations` (each one a ghost exchange
/// and two reductions). Requires every diagonal entry to be non-zero
/// (std::invalid_argument otherwise: check smallest_diagonal first).
JacobiRho estimate_jacobi_rho(const sparse::DistMatrix& matrix, const ops::CsrOperator& op,
                              int max_iterations = 100, double rtol = 1e-4);

}  // namespace asyncsolve::solvers
