#include "linear_operator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace asyncsolve::solvers::detail {

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
