#pragma once
/// The operator a solver iterates with (internal to the solvers layer): its
/// vectors, its mat-vec split around a halo exchange (paper 001 Listing 3)
/// and its diagonal. The solvers are written once against this interface;
/// two implementations serve them:
///
/// - StencilLinearOperator: a model problem's 7- or 27-point stencil on a
///   structured block (grid::Field with a halo of width 1; the interior is
///   split_for_overlap's inner box, in pieces of test_every z-planes);
/// - CsrLinearOperator: a distributed CSR matrix (one-row fields without
///   halo; the ghosts live in the sparse halo exchange; the interior rows in
///   pieces of test_every "planes" of rows, a plane being n^(2/3) rows of an
///   n-row block, as many as a cube of n points has in one plane).
#include <memory>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/comm/async_halo.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/hybrid_stencil.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/grid/split.hpp"
#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/ops/stencil.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "stationary.hpp"

namespace asyncsolve::solvers::detail {

/// Also what a preconditioner sees of the operator (precond::PcOperator:
/// the mat-vec, the diagonal, the rows in a global numbering).
class LinearOperator : public precond::PcOperator, public StationarySweep {
 public:
  /// A zero vector laid out for this operator.
  grid::Field make_vector() const override = 0;
  /// The exchange that fills what the boundary part reads.
  virtual comm::HaloExchange& halo() = 0;
  /// The communicator of the operator's ranks.
  const par::Comm& comm() const override = 0;
  /// True if the boundary part reads data of other ranks (the exchange is
  /// then tested while the interior is computed).
  virtual bool has_boundary() const = 0;
  /// Pieces of the interior with a halo test every `test_every` (> 0) planes.
  virtual int interior_pieces(int test_every) const = 0;
  /// out = A in on interior piece `piece` of those (test_every > 0), or on
  /// the whole interior (test_every == 0); reads no halo. Returns the local
  /// in . out over it.
  virtual double apply_interior(const grid::Field& in, grid::Field& out, int piece,
                                int test_every) = 0;
  /// out = A in on the rest, after halo().finish(in); returns the local in . out.
  virtual double apply_boundary(const grid::Field& in, grid::Field& out) = 0;
  /// out = A in with OpenMP threads in `hybrid`'s scheme (structured
  /// stencils only; others throw std::logic_error).
  virtual double apply_hybrid(comm::HybridStencil& hybrid, grid::Field& in, grid::Field& out,
                              comm::HybridTimes& times) = 0;

  /// D, D^-1 and D^-1/2 for D = diag(A) (constants for the stencils, per
  /// point for a general matrix; the inverses only where D > 0).
  virtual ops::Scaling diagonal() const = 0;
  ops::Scaling inverse_diagonal() const override = 0;
  virtual ops::Scaling inverse_sqrt_diagonal() const = 0;
  /// Local: the smallest diagonal entry of this rank.
  virtual double min_diagonal() const = 0;

  /// Collective: out = A in, the exchange started before the interior and
  /// finished before the boundary (untimed, no halo tests: a
  /// preconditioner's mat-vec).
  void apply(grid::Field& in, grid::Field& out) override;

  // ---- Jacobi: u_new = u + D^-1 (b - A u) (linear_operator_jacobi.cpp) ----
  //
  // The StationarySweep (stationary.hpp) of the operator's own Jacobi: b is
  // the system's right-hand side for a matrix; the stencils' Jacobi reads b
  // from the Dirichlet data in u's physical-boundary halo (b null). Its halo
  // is the operator's.
  comm::HaloExchange& sweep_halo() override { return halo(); }
};

/// The structured stencils. Borrows everything, which must outlive it.
class StencilLinearOperator final : public LinearOperator {
 public:
  StencilLinearOperator(const ops::StencilOperator& op, const grid::Decomposition& decomposition,
                        const grid::Field& shape, comm::HaloExchange& halo);
  grid::Field make_vector() const override;
  comm::HaloExchange& halo() override { return halo_; }
  const par::Comm& comm() const override { return decomposition_.comm(); }
  bool has_boundary() const override { return !split_.boundary.empty(); }
  int interior_pieces(int test_every) const override;
  double apply_interior(const grid::Field& in, grid::Field& out, int piece,
                        int test_every) override;
  double apply_boundary(const grid::Field& in, grid::Field& out) override;
  double apply_hybrid(comm::HybridStencil& hybrid, grid::Field& in, grid::Field& out,
                      comm::HybridTimes& times) override;
  ops::Scaling diagonal() const override { return {op_.diagonal(), nullptr}; }
  ops::Scaling inverse_diagonal() const override { return {1.0 / op_.diagonal(), nullptr}; }
  ops::Scaling inverse_sqrt_diagonal() const override;
  double min_diagonal() const override { return op_.diagonal(); }
  /// Collective (one halo exchange of the row numbers): the stencil's rows,
  /// numbered x fastest within each rank's block, blocks in rank order.
  precond::AssembledRows assemble() override;
  void gather(const grid::Field& v, std::span<double> out) const override;
  void scatter(std::span<const double> in, grid::Field& v) const override;
  /// 1 + (6 or 26 neighbours) / |diagonal|: an interior point's row.
  double gershgorin_bound() override;

  /// Jacobi (7-point, diagonal 6, no shift: std::logic_error otherwise):
  /// the whole block after the exchange, in pieces of test_every z-planes
  /// (halo_free_pieces 0: the sweep kernels run whole planes at full speed,
  /// with the bits of ops::jacobi_sweep and jacobi_sweep_residual).
  int sweep_pieces(int test_every) const override;
  int halo_free_pieces(int) const override { return 0; }
  double sweep(const grid::Field* b, const grid::Field& u, grid::Field& u_new, int piece,
               int test_every, bool residual) override;
  double residual_norm(const grid::Field* b, grid::Field& u,
                       collectives::Allreduce& reduction) override;
  double sweep_bytes() const override;
  void keep_halo(const grid::Field& u, grid::Field& u_new) const override;
  std::unique_ptr<comm::AsyncHalo> make_async_halo(grid::Field& u, grid::Field& u_new,
                                                   const comm::ChannelSettings& settings) override;
  bool bounds_residual() const override { return true; }

 private:
  const ops::StencilOperator& op_;
  const grid::Decomposition& decomposition_;
  grid::Int3 interior_;
  int halo_width_;
  comm::HaloExchange& halo_;
  grid::OverlapSplit split_;
};

/// A distributed CSR matrix. Borrows the operator, the matrix and the
/// exchange; owns the fields of its diagonal.
class CsrLinearOperator final : public LinearOperator {
 public:
  CsrLinearOperator(const ops::CsrOperator& op, const sparse::DistMatrix& matrix,
                    comm::SparseHaloExchange& halo);
  grid::Field make_vector() const override;
  comm::HaloExchange& halo() override { return halo_; }
  const par::Comm& comm() const override { return matrix_.comm(); }
  bool has_boundary() const override;
  int interior_pieces(int test_every) const override;
  double apply_interior(const grid::Field& in, grid::Field& out, int piece,
                        int test_every) override;
  double apply_boundary(const grid::Field& in, grid::Field& out) override;
  double apply_hybrid(comm::HybridStencil& hybrid, grid::Field& in, grid::Field& out,
                      comm::HybridTimes& times) override;
  ops::Scaling diagonal() const override { return {1.0, &d_}; }
  ops::Scaling inverse_diagonal() const override { return {1.0, &dinv_}; }
  ops::Scaling inverse_sqrt_diagonal() const override { return {1.0, &dinv_sqrt_}; }
  double min_diagonal() const override;
  /// Local: the matrix's rows in its own numbering (rows are contiguous per rank).
  precond::AssembledRows assemble() override;
  /// From the rows as they are held (local columns): no assembled copy.
  precond::DiagonalBlock diagonal_block() override;
  bool assembles_locally() const override { return true; }
  void gather(const grid::Field& v, std::span<double> out) const override;
  void scatter(std::span<const double> in, grid::Field& v) const override;
  /// Collective (one reduction): from the matrix's rows.
  double gershgorin_bound() override;

  /// Jacobi: the interior rows in pieces of test_every "planes" of rows
  /// (read no ghost), then the boundary rows as one piece; the residual
  /// comes with every sweep (ops::jacobi_interior, jacobi_boundary).
  int sweep_pieces(int test_every) const override { return interior_pieces(test_every) + 1; }
  int halo_free_pieces(int test_every) const override { return interior_pieces(test_every); }
  double sweep(const grid::Field* b, const grid::Field& u, grid::Field& u_new, int piece,
               int test_every, bool residual) override;
  double residual_norm(const grid::Field* b, grid::Field& u,
                       collectives::Allreduce& reduction) override;
  double sweep_bytes() const override;
  void keep_halo(const grid::Field&, grid::Field&) const override {}
  std::unique_ptr<comm::AsyncHalo> make_async_halo(grid::Field& u, grid::Field& u_new,
                                                   const comm::ChannelSettings& settings) override;
  bool bounds_residual() const override { return true; }
  /// Local, a pass over this rank's rows (the asynchronous loop asks once a
  /// run): sqrt(||M||_1 ||M||_inf) of M = (A_local - D) D^-1 on its own
  /// columns, a bound of ||M||_2 (+inf with a zero diagonal).
  double sweep_growth() const override { return sparse::jacobi_sweep_growth(matrix_); }
  /// The sweep forms the residual of every row it updates (ops::jacobi_interior).
  bool residual_is_free() const override { return true; }

  /// Rows of one piece of the interior with a test every `test_every` planes.
  int piece_rows(int test_every) const noexcept;
  const ops::CsrOperator& csr() const noexcept { return op_; }
  comm::SparseHaloExchange& sparse_halo() noexcept { return halo_; }

 private:
  const ops::CsrOperator& op_;
  const sparse::DistMatrix& matrix_;
  comm::SparseHaloExchange& halo_;
  grid::Field d_;
  grid::Field dinv_;
  grid::Field dinv_sqrt_;
  int plane_rows_ = 1;
};

}  // namespace asyncsolve::solvers::detail
