#pragma once
/// A linear system on a distributed CSR matrix, for every solver: the
/// operator of this rank's rows and b and x as one-row fields without halo
/// (this rank's entries, in the matrix's distributed numbering).
#include <cstdint>
#include <span>

#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::solvers {

/// A x = b on this rank's rows. Owns the operator and the vectors.
struct CsrSystem {
  ops::CsrOperator op;
  grid::Field b;  ///< this rank's entries of b
  grid::Field x;  ///< initial guess on entry, solution on exit
};

/// Local: the system of `matrix` with this rank's entries of b and of the
/// initial guess (local_rows() each; x0 empty: zero). Throws
/// std::invalid_argument for vectors of another length.
CsrSystem make_csr_system(const sparse::DistMatrix& matrix, std::span<const double> b,
                          std::span<const double> x0 = {});

/// The smallest diagonal entry of a distributed matrix and its row.
struct DiagonalCheck {
  double value = 0;      ///< the smallest a_ii in the order asked (signed; 0 where the row
                         ///< has none)
  std::int64_t row = 0;  ///< the row it is on: row_names[i] for local row i if names were
                         ///< given (e.g. the file's rows), else the global row
};

/// What "smallest" means to smallest_diagonal: the value, or its magnitude.
enum class DiagonalOrder { value, magnitude };

/// Collective over the matrix's communicator: the smallest diagonal entry,
/// by value or by magnitude (a zero one first), and its row (the first such
/// row, by rank then local row). `row_names`, if not empty, has
/// local_rows() entries.
DiagonalCheck smallest_diagonal(const sparse::DistMatrix& matrix, const ops::CsrOperator& op,
                                std::span<const std::int64_t> row_names = {},
                                DiagonalOrder order = DiagonalOrder::value);

}  // namespace asyncsolve::solvers
