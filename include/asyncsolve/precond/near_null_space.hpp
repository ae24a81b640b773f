#pragma once
/// What a preconditioner may know of A's near-null space beyond the matrix:
/// the block size of a system of PDEs (which unknown of its node each row
/// is) and the nodes' coordinates, from which the rigid-body modes of
/// linear elasticity are built (translations and rotations). BoomerAMG
/// takes the block size (num_functions and each row's function); the
/// Schwarz coarse space takes the modes (one coarse vector per mode per
/// subdomain).
#include <span>
#include <vector>

namespace asyncsolve::precond {

/// This rank's rows' part of the near-null space, in the operator's row
/// order (PcOperator::gather's).
struct NearNullSpace {
  int block_size = 1;               ///< unknowns per node (1: a scalar equation)
  std::vector<int> component;       ///< each row's unknown of its node, 0 .. block_size-1
  int dimension = 0;                ///< coordinates per node (0: none given)
  std::vector<double> coordinates;  ///< each row's node's coordinates, `dimension` per row
};

/// Local: the near-null vectors of `space` on `rows` rows, column by column
/// (rows x count values). Without coordinates: one vector per component
/// (1 on that component's rows, 0 elsewhere; for block size 1 the constant).
/// With coordinates of dimension d = block_size (2 or 3): the rigid-body
/// modes, d translations and d(d-1)/2 rotations about `centre` (d values; the
/// modes' span does not depend on it, their conditioning does).
std::vector<double> near_null_vectors(const NearNullSpace& space, int rows,
                                      std::span<const double> centre, int& count);

/// How many vectors near_null_vectors makes for `space`.
int near_null_count(const NearNullSpace& space);

}  // namespace asyncsolve::precond
