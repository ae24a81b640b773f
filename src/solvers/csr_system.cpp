#include "asyncsolve/solvers/csr_system.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::solvers {

CsrSystem make_csr_system(const sparse::DistMatrix& matrix, std::span<const double> b,
                          std::span<const double> x0) {
  const auto n = static_cast<std::size_t>(matrix.local_rows());
  if (b.size() != n || (!x0.empty() && x0.size() != n))
    throw std::invalid_argument("make_csr_system: b and x0 need local_rows() values each");
  CsrSystem s{ops::CsrOperator(matrix), grid::Field({matrix.local_rows(), 1, 1}, 0),
              grid::Field({matrix.local_rows(), 1, 1}, 0)};
  std::copy(b.begin(), b.end(), s.b.origin());
  s.x.fill(0.0);
  std::copy(x0.begin(), x0.end(), s.x.origin());
  return s;
}

DiagonalCheck smallest_diagonal(const sparse::DistMatrix& matrix, const ops::CsrOperator& op,
                                std::span<const std::int64_t> row_names, DiagonalOrder order) {
  struct {
    double value;
    int rank;
  } mine{std::numeric_limits<double>::infinity(), matrix.comm().rank()};
  int where = 0;
  const auto key = [order](double v) {
    return order == DiagonalOrder::magnitude ? std::abs(v) : v;
  };
  for (int i = 0; i < op.rows(); ++i) {
    if (key(op.diagonal()[i]) < mine.value) {
      mine.value = key(op.diagonal()[i]);
      where = i;
    }
  }
  par::check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_DOUBLE_INT, MPI_MINLOC, matrix.comm().get()),
      "MPI_Allreduce");
  std::int64_t row =
      row_names.empty() ? matrix.first_row() + where : (op.rows() > 0 ? row_names[where] : 0);
  double value = op.rows() > 0 ? op.diagonal()[where] : 0.0;  // signed, also by magnitude
  par::check_mpi(MPI_Bcast(&row, 1, MPI_INT64_T, mine.rank, matrix.comm().get()), "MPI_Bcast");
  par::check_mpi(MPI_Bcast(&value, 1, MPI_DOUBLE, mine.rank, matrix.comm().get()), "MPI_Bcast");
  return {value, row};
}

}  // namespace asyncsolve::solvers
