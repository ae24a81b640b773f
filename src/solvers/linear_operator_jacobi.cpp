// The Jacobi sweep of the two operators (linear_operator.hpp): where a
// Jacobi sweep on a structured block and on a CSR matrix happens, each in
// its pieces, with the residual of the iterate it read fused in.
#include <algorithm>
#include <stdexcept>

#include "asyncsolve/core/triple.hpp"
#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/ops/stencil7.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "linear_operator.hpp"

namespace asyncsolve::solvers::detail {

// ---- StencilLinearOperator ---------------------------------------------------

namespace {

/// The Jacobi kernels are the 7-point Laplacian's (ops/stencil7.hpp).
void check_seven_point(const ops::StencilOperator& op) {
  if (op.stencil != ops::Stencil::seven_point || op.shift != 0.0)
    throw std::logic_error("Jacobi runs on the 7-point stencil without shift");
}

}  // namespace

int StencilLinearOperator::sweep_pieces(int test_every) const {
  const int planes = interior_[2];
  return test_every > 0 ? (planes + test_every - 1) / test_every : 1;
}

double StencilLinearOperator::sweep(const grid::Field*, const grid::Field& u, grid::Field& u_new,
                                    int piece, int test_every, bool residual) {
  check_seven_point(op_);
  const int nz = interior_[2];
  const int z0 = test_every > 0 ? piece * test_every : 0;
  const int z1 = test_every > 0 ? std::min(nz, z0 + test_every) : nz;
  // u^{k+1} = (sum of neighbours of u^k) / 6 on planes [z0, z1); with the
  // residual, ||b - A u^k||^2 there in the same pass
  if (residual) return ops::jacobi_sweep_residual_planes(u, u_new, z0, z1);
  ops::jacobi_sweep_planes(u, u_new, z0, z1);
  return 0.0;
}

double StencilLinearOperator::residual_norm(const grid::Field*, grid::Field& u,
                                            collectives::Allreduce& reduction) {
  check_seven_point(op_);
  halo_.exchange(u);
  return jacobi_residual_norm(u, &reduction);
}

double StencilLinearOperator::sweep_bytes() const {
  // u read, u_new written: 16 bytes a point.
  return 16.0 * static_cast<double>(core::product(interior_));
}

void StencilLinearOperator::keep_halo(const grid::Field& u, grid::Field& u_new) const {
  grid::copy_face_halos(u, u_new);
}

std::unique_ptr<comm::AsyncHalo> StencilLinearOperator::make_async_halo(
    grid::Field& u, grid::Field& u_new, const comm::ChannelSettings& settings) {
  return comm::make_async_face_halo(decomposition_, u, u_new, settings);
}

// ---- CsrLinearOperator ---------------------------------------------------------

double CsrLinearOperator::sweep(const grid::Field* b, const grid::Field& u, grid::Field& u_new,
                                int piece, int test_every, bool) {
  const double* dinv = dinv_.origin();
  if (piece < interior_pieces(test_every)) {
    // u^{k+1} = u^k + D^-1 (b - A u^k) on interior rows (no ghost); ||b - A u^k||^2
    const int rows = piece_rows(test_every);
    const int begin = std::min(op_.interior_rows(), piece * rows);
    const int end = std::min(op_.interior_rows(), begin + rows);
    return ops::jacobi_interior(op_, b->origin(), dinv, u.origin(), u_new.origin(), begin, end);
  }
  // the same on the boundary rows, with the ghosts the halo holds
  return ops::jacobi_boundary(op_, b->origin(), dinv, u.origin(), halo_.ghosts().data(),
                              u_new.origin());
}

double CsrLinearOperator::residual_norm(const grid::Field* b, grid::Field& u,
                                        collectives::Allreduce& reduction) {
  halo_.exchange(u);
  // The residual vector formed once, its norm scaled like ||b||.
  grid::Field r = make_vector();
  ops::residual(op_, b->origin(), u.origin(), halo_.ghosts().data(), r.origin());
  return field_norm(r, &reduction);
}

double CsrLinearOperator::sweep_bytes() const {
  // 12 bytes per non-zero (value and column), and b, 1/d, u, u_new per row.
  return 12.0 * static_cast<double>(op_.nnz()) + 32.0 * static_cast<double>(op_.rows());
}

std::unique_ptr<comm::AsyncHalo> CsrLinearOperator::make_async_halo(
    grid::Field& u, grid::Field&, const comm::ChannelSettings& settings) {
  // The ghosts are the synchronous exchange's array, which the sweep reads.
  return comm::make_async_sparse_halo(matrix_, u, halo_.ghosts(), settings);
}

}  // namespace asyncsolve::solvers::detail
