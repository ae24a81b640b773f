#pragma once
/// The coarse level of two-level Schwarz: an additive correction
/// z += Z E^+ Z^T r with E = Z^T A Z, where Z holds `count` columns per rank,
/// each non-zero only on that rank's owned rows (Nicolaides: the partition of
/// unity of the owned rows; or near-null vectors such as the rigid-body
/// modes, near_null_space.hpp). E has ranks x count rows; it is assembled at
/// setup with one MPI_Allgather and decomposed redundantly on every rank.
///
/// For an asynchronous method the two halves are apart: restrict_local (this
/// rank's count values of Z^T r, to be gathered or reduced by any means) and
/// prolong_add (the correction from the gathered values, on the owned rows).
#include <span>
#include <vector>

#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::precond {

/// The coarse space of one distributed matrix.
class CoarseSpace {
 public:
  CoarseSpace() = default;
  /// Collective over matrix.comm(): Z's columns on this rank's owned rows,
  /// local_rows() x count values column by column, `count` the same on
  /// every rank. Assembles E (one exchange of Z's ghost values through the
  /// matrix's plan per column, one MPI_Allgather of the rows of E) and
  /// keeps this rank's rows of its pseudo-inverse: E = V diag(lambda) V^T
  /// by LAPACK dsyev, eigenvalues below 1e-12 max |lambda| in magnitude dropped (a
  /// dependent column of Z, e.g. rotations of a subdomain whose nodes are
  /// collinear, drops out instead of breaking down). A nonsymmetric E (a
  /// nonsymmetric A) is decomposed by its SVD instead (LAPACK dgesvd,
  /// singular values below 1e-12 of the largest dropped). Throws
  /// core::CollectiveFailure if LAPACK fails.
  CoarseSpace(const sparse::DistMatrix& matrix, std::vector<double> z, int count);

  /// Local: out (count values) = Z_i^T r on the owned rows.
  void restrict_local(std::span<const double> r, std::span<double> out) const;
  /// Local: z += Z_i (E^+ g)_i from the gathered g (dimension() values, rank
  /// by rank).
  void prolong_add(std::span<const double> g, std::span<double> z) const;
  /// Collective: z += Z E^+ Z^T r (one MPI_Allgather of count values a rank).
  void apply_add(const par::Comm& comm, std::span<const double> r, std::span<double> z);

  int count() const noexcept { return count_; }
  int dimension() const noexcept { return dimension_; }
  /// Eigenvalues of E dropped as (near) zero.
  int dropped() const noexcept { return dropped_; }
  double setup_s() const noexcept { return setup_s_; }

 private:
  int rows_ = 0;
  int count_ = 0;
  int dimension_ = 0;
  int dropped_ = 0;
  int first_ = 0;                 ///< this rank's first coarse row
  std::vector<double> z_;         ///< rows_ x count_, column by column
  std::vector<double> inverse_;   ///< this rank's count_ rows of E^+, row by row
  std::vector<double> local_;     ///< restrict_local's output
  std::vector<double> gathered_;  ///< every rank's Z^T r
  double setup_s_ = 0;
};

}  // namespace asyncsolve::precond
