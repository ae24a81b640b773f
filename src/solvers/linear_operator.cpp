#include "linear_operator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/stats.hpp"

namespace asyncsolve::solvers::detail {

void LinearOperator::apply(grid::Field& in, grid::Field& out) {
  halo().start(in);
  apply_interior(in, out, 0, 0);
  halo().finish(in);
  apply_boundary(in, out);
}

// ---- StencilLinearOperator -------------------------------------------------

StencilLinearOperator::StencilLinearOperator(const ops::StencilOperator& op,
                                             const grid::Decomposition& decomposition,
                                             const grid::Field& shape, comm::HaloExchange& halo)
    : op_(op),
      decomposition_(decomposition),
      interior_(shape.interior()),
      halo_width_(shape.halo()),
      halo_(halo),
      split_(grid::split_for_overlap(decomposition)) {}

grid::Field StencilLinearOperator::make_vector() const {
  grid::Field f(interior_, halo_width_);
  f.fill(0.0);
  return f;
}

int StencilLinearOperator::interior_pieces(int test_every) const {
  const grid::Box& inner = split_.interior;
  const int planes = inner.hi[2] - inner.lo[2];
  return test_every > 0 ? (planes + test_every - 1) / test_every : 1;
}

double StencilLinearOperator::apply_interior(const grid::Field& in, grid::Field& out, int piece,
                                             int test_every) {
  const grid::Box& inner = split_.interior;
  if (test_every <= 0) return ops::apply(op_, in, out, inner);
  const int k = inner.lo[2] + piece * test_every;
  return ops::apply(op_, in, out, grid::planes(inner, k, k + test_every));
}

double StencilLinearOperator::apply_boundary(const grid::Field& in, grid::Field& out) {
  double dot = 0.0;
  for (const grid::Box& box : split_.boundary) dot += ops::apply(op_, in, out, box);
  return dot;
}

double StencilLinearOperator::apply_hybrid(comm::HybridStencil& hybrid, grid::Field& in,
                                           grid::Field& out, comm::HybridTimes& times) {
  return hybrid.apply(
      in, [&](const grid::Box& box) { return ops::apply(op_, in, out, box); }, times);
}

ops::Scaling StencilLinearOperator::inverse_sqrt_diagonal() const {
  return {1.0 / std::sqrt(op_.diagonal()), nullptr};
}

double StencilLinearOperator::gershgorin_bound() {
  const double neighbours = op_.stencil == ops::Stencil::seven_point ? 6.0 : 26.0;
  return 1.0 + neighbours / std::abs(op_.diagonal());
}

precond::AssembledRows StencilLinearOperator::assemble() {
  const grid::Int3 n = interior_;
  const std::int64_t local = static_cast<std::int64_t>(n[0]) * n[1] * n[2];
  precond::AssembledRows rows;
  std::int64_t first = 0;
  std::int64_t total = local;
  MPI_Comm comm = decomposition_.comm().get();
  par::check_mpi(MPI_Exscan(&local, &first, 1, MPI_INT64_T, MPI_SUM, comm), "MPI_Exscan");
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, comm),
                 "MPI_Allreduce");
  if (decomposition_.comm().rank() == 0) first = 0;  // MPI_Exscan leaves rank 0's undefined
  rows.first_row = first;
  rows.global_rows = total;
  // Global row numbers of this block and, after the exchange, of the
  // neighbours' points in the halo (-1: the physical boundary).
  grid::Field ids(n, halo_width_);
  ids.fill(-1.0);
  std::int64_t next = first;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) ids(i, j, k) = static_cast<double>(next++);
  halo_.exchange(ids);
  const bool faces_only = op_.stencil == ops::Stencil::seven_point;
  rows.row_ptr.reserve(static_cast<std::size_t>(local) + 1);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        for (int dk = -1; dk <= 1; ++dk)
          for (int dj = -1; dj <= 1; ++dj)
            for (int di = -1; di <= 1; ++di) {
              const int away = std::abs(di) + std::abs(dj) + std::abs(dk);
              if (faces_only && away > 1) continue;
              const double id = ids(i + di, j + dj, k + dk);
              if (id < 0.0) continue;
              rows.col.push_back(static_cast<std::int64_t>(id));
              rows.val.push_back(away == 0 ? op_.diagonal() : -1.0);
            }
        rows.row_ptr.push_back(static_cast<std::int64_t>(rows.col.size()));
      }
  return rows;
}

void StencilLinearOperator::gather(const grid::Field& v, std::span<double> out) const {
  std::size_t at = 0;
  for (int k = 0; k < interior_[2]; ++k)
    for (int j = 0; j < interior_[1]; ++j)
      for (int i = 0; i < interior_[0]; ++i) out[at++] = v(i, j, k);
}

void StencilLinearOperator::scatter(std::span<const double> in, grid::Field& v) const {
  std::size_t at = 0;
  for (int k = 0; k < interior_[2]; ++k)
    for (int j = 0; j < interior_[1]; ++j)
      for (int i = 0; i < interior_[0]; ++i) v(i, j, k) = in[at++];
}

// ---- CsrLinearOperator -----------------------------------------------------

CsrLinearOperator::CsrLinearOperator(const ops::CsrOperator& op, const sparse::DistMatrix& matrix,
                                     comm::SparseHaloExchange& halo)
    : op_(op),
      matrix_(matrix),
      halo_(halo),
      d_(make_vector()),
      dinv_(make_vector()),
      dinv_sqrt_(make_vector()) {
  for (int i = 0; i < op_.rows(); ++i) {
    const double d = op_.diagonal()[i];
    d_.origin()[i] = d;
    dinv_.origin()[i] = d != 0.0 ? 1.0 / d : 0.0;
    dinv_sqrt_.origin()[i] = d > 0.0 ? 1.0 / std::sqrt(d) : 0.0;
  }
  // A "plane" of rows: n^(2/3) rows of an n-row block (a cube's plane).
  const double n = static_cast<double>(std::max(op_.rows(), 1));
  plane_rows_ = std::max(1, static_cast<int>(std::lround(std::pow(n, 2.0 / 3.0))));
}

grid::Field CsrLinearOperator::make_vector() const {
  grid::Field f({op_.rows(), 1, 1}, 0);
  f.fill(0.0);
  return f;
}

bool CsrLinearOperator::has_boundary() const {
  return !matrix_.plan().recvs.empty() || !matrix_.plan().sends.empty();
}

int CsrLinearOperator::piece_rows(int test_every) const noexcept {
  return test_every > 0 ? test_every * plane_rows_ : std::max(op_.interior_rows(), 1);
}

int CsrLinearOperator::interior_pieces(int test_every) const {
  const int rows = piece_rows(test_every);
  return std::max(1, (op_.interior_rows() + rows - 1) / rows);
}

double CsrLinearOperator::apply_interior(const grid::Field& in, grid::Field& out, int piece,
                                         int test_every) {
  if (test_every <= 0)
    return ops::spmv_interior(op_, in.origin(), out.origin(), 0, op_.interior_rows());
  const int rows = piece_rows(test_every);
  const int begin = std::min(op_.interior_rows(), piece * rows);
  const int end = std::min(op_.interior_rows(), begin + rows);
  return ops::spmv_interior(op_, in.origin(), out.origin(), begin, end);
}

double CsrLinearOperator::apply_boundary(const grid::Field& in, grid::Field& out) {
  return ops::spmv_boundary(op_, in.origin(), halo_.ghosts().data(), out.origin());
}

double CsrLinearOperator::apply_hybrid(comm::HybridStencil&, grid::Field&, grid::Field&,
                                       comm::HybridTimes&) {
  throw std::logic_error("the hybrid MPI+OpenMP schemes need a structured problem");
}

double CsrLinearOperator::min_diagonal() const {
  double m = std::numeric_limits<double>::infinity();
  for (const double d : op_.diagonal()) m = std::min(m, d);
  return m;
}

}  // namespace asyncsolve::solvers::detail

namespace asyncsolve::solvers::detail {

double CsrLinearOperator::gershgorin_bound() {
  double bound = 0.0;
  for (int i = 0; i < matrix_.local_rows(); ++i) {
    double sum = 0.0;
    double diagonal = 0.0;
    for (std::int64_t k = matrix_.row_ptr()[i]; k < matrix_.row_ptr()[i + 1]; ++k) {
      sum += std::abs(matrix_.val()[k]);
      if (matrix_.col()[k] == i) diagonal = std::abs(matrix_.val()[k]);
    }
    bound = std::max(bound, sum / diagonal);
  }
  return par::max_over_ranks(matrix_.comm(), bound);
}

precond::AssembledRows CsrLinearOperator::assemble() {
  precond::AssembledRows rows;
  rows.first_row = matrix_.first_row();
  rows.global_rows = matrix_.global_rows();
  const int n = matrix_.local_rows();
  rows.row_ptr = matrix_.row_ptr();
  rows.val = matrix_.val();
  rows.col.reserve(matrix_.col().size());
  const std::vector<std::int64_t>& ghosts = matrix_.ghost_globals();
  for (const std::int32_t c : matrix_.col()) {
    rows.col.push_back(c < n ? matrix_.first_row() + c : ghosts[static_cast<std::size_t>(c - n)]);
  }
  return rows;
}

precond::DiagonalBlock CsrLinearOperator::diagonal_block() {
  // local columns: the owned rows' first, then the ghosts (dropped)
  precond::DiagonalBlock b =
      precond::make_diagonal_block(matrix_.row_ptr(), matrix_.col(), matrix_.val(), 0);
  b.first_row = matrix_.first_row();
  b.global_rows = matrix_.global_rows();
  return b;
}

void CsrLinearOperator::gather(const grid::Field& v, std::span<double> out) const {
  std::copy(v.origin(), v.origin() + op_.rows(), out.begin());
}

void CsrLinearOperator::scatter(std::span<const double> in, grid::Field& v) const {
  std::copy(in.begin(), in.begin() + op_.rows(), v.origin());
}

}  // namespace asyncsolve::solvers::detail
