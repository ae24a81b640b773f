#pragma once
/// Whether a distributed matrix is symmetric: the check the CG family makes
/// before it runs (it needs A = A^T), cheap enough for every setup.
#include <cstdint>
#include <string>

#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::sparse {

/// What check_symmetry found, the same on every rank.
struct Symmetry {
  /// Every stored a_ij has a stored a_ji (the pattern is symmetric).
  bool structural = true;
  /// max_asymmetry and max_scaled_asymmetry both at most the tolerance (a
  /// missing a_ji counts as 0).
  bool numerical = true;
  /// max |a_ij - a_ji| / max |a| over the stored entries (0 for a zero matrix).
  double max_asymmetry = 0.0;
  /// max |a_ij - a_ji| / sqrt(|a_ii a_jj|) over the stored entries whose two
  /// diagonal entries are non-zero: the same for D A D, any diagonal D (a row
  /// scaled far below the largest cannot hide its asymmetry).
  double max_scaled_asymmetry = 0.0;
  std::int64_t unmatched = 0;  ///< stored entries whose transpose is not stored
  double tolerance = 0.0;      ///< the tolerance it was checked to
  /// Symmetric as the CG family needs it: numerically.
  bool symmetric() const { return numerical; }
  /// "max |a_ij - a_ji| / max |a| = X, / sqrt(|a_ii a_jj|) = Y", for messages.
  std::string statement() const;
};

/// The default tolerance of check_symmetry, relative to max |a|: far above
/// the round-off of an assembly that sums in different orders (about 1e-16),
/// far below any asymmetry a discretisation makes on purpose.
constexpr double symmetry_tolerance = 1e-10;

/// Collective over the matrix's communicator: compares every stored a_ij
/// with a_ji. Entries in owned columns are looked up locally; an entry in a
/// ghost column is sent, transposed, to the owner of that column (one
/// MPI_Alltoall of counts and one MPI_Alltoallv of the boundary entries:
/// about a halo exchange's volume), which looks it up in its rows. One
/// MPI_Allreduce gathers the verdict. Costs about a mat-vec's pass over the
/// entries, plus a binary search per entry.
Symmetry check_symmetry(const DistMatrix& matrix, double tolerance = symmetry_tolerance);

}  // namespace asyncsolve::sparse
