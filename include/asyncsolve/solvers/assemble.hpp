#pragma once
/// The model problems assembled as distributed CSR matrices (`--assemble`),
/// so that the two operator paths can be compared on the same system.
#include <vector>

#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::solvers {

/// A model problem's A x = b as a distributed matrix and this rank's b and x0.
struct AssembledSystem {
  sparse::DistMatrix matrix;
  std::vector<double> b;   ///< source plus boundary contributions, as make_krylov_system's
  std::vector<double> x0;  ///< the problem's initial guess
};

/// Collective over the decomposition's communicator: the matrix of the
/// problem's stencil (7 points: 6 + shift on the diagonal, -1 per face
/// neighbour; 27 points: 26 + shift, -1 per neighbour), Dirichlet points
/// eliminated. Rank r owns its block's points, numbered after those of
/// ranks 0 .. r-1, x fastest within the block: local row i is the block's
/// point i in grid::Field interior order, so a vector's entries line up
/// with a field's interior.
AssembledSystem assemble(const grid::Problem& problem, const grid::Decomposition& decomposition,
                         double shift);

}  // namespace asyncsolve::solvers
