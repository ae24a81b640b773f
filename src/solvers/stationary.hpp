#pragma once
/// Stationary iterations u_new = u + M^-1 (b - A u) (internal to the
/// solvers layer): the sweep interface both loops are written against, and
/// the two loops themselves.
///
/// Two sweeps implement it: Jacobi's (M = D, every LinearOperator:
/// linear_operator_jacobi.cpp) and restricted additive Schwarz's (M^-1 =
/// sum_i R~_i^T A_i^-1 R_i, each rank's overlapping subdomain solved with
/// its kept factor: schwarz_iteration.cpp). The loops own the rest: the
/// synchronous one (jacobi.cpp: exchange, sweep, the residual check every
/// check_every iterations) and the asynchronous one (jacobi_async.cpp over
/// async_iteration.hpp: channels, the non-blocking convergence reduction,
/// the true residual and the synchronous tail).
#include <functional>
#include <memory>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/async_halo.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "asyncsolve/solvers/result.hpp"

namespace asyncsolve::solvers::detail {

/// One stationary sweep u_new = u + M^-1 (b - A u) on this rank's rows.
class StationarySweep {
 public:
  virtual ~StationarySweep() = default;

  /// The exchange that fills the halo the sweep reads (Jacobi: the
  /// operator's; Schwarz: its subdomain's extended halo).
  virtual comm::HaloExchange& sweep_halo() = 0;
  /// Pieces of one whole sweep, cut every `test_every` planes (0: the
  /// fewest): the first halo_free_pieces of them read no halo and may be
  /// swept while the exchange is in flight, the rest after it.
  virtual int sweep_pieces(int test_every) const = 0;
  virtual int halo_free_pieces(int test_every) const = 0;
  /// The sweep on piece `piece`, the halo of u current for the pieces that
  /// read it; with `residual` returns its ||b - A u||^2 on this rank's rows
  /// (of the iterate it read: fused), else 0 where that costs a pass of its own.
  virtual double sweep(const grid::Field* b, const grid::Field& u, grid::Field& u_new, int piece,
                       int test_every, bool residual) = 0;
  /// Collective: ||b - A u||_2 over every rank after one exchange of u's
  /// halo (scaled: no under- or overflow).
  virtual double residual_norm(const grid::Field* b, grid::Field& u,
                               collectives::Allreduce& reduction) = 0;
  /// Bytes one sweep streams (SolveResult::sweep_bytes).
  virtual double sweep_bytes() const = 0;
  /// Between exchanges (--halo-every > 1), before u and u_new are swapped:
  /// u_new keeps the halo u last received.
  virtual void keep_halo(const grid::Field& u, grid::Field& u_new) const = 0;
  /// Collective (as channel creation): the asynchronous halo of u and u_new
  /// over one channel per neighbour (comm/async_halo.hpp), writing where
  /// the sweep reads its halo.
  virtual std::unique_ptr<comm::AsyncHalo> make_async_halo(
      grid::Field& u, grid::Field& u_new, const comm::ChannelSettings& settings) = 0;
  /// Whether a sweep's residual bounds this rank's residual for idle
  /// waits: a sweep with a fixed halo raises ||b - A u|| at most
  /// sweep_growth() times, and the asynchronous halo's unpack returns a
  /// bound of the change a halo change makes to ||b - A u||^2 (the 7-point
  /// stencil: r_new = (N/6) r, ||N/6|| < 1, and a halo value enters one
  /// residual with coefficient 1; a CSR matrix: the norms of its blocks).
  virtual bool bounds_residual() const = 0;
  /// With bounds_residual: a bound of ||r_new|| / ||r|| for one sweep with a
  /// fixed halo, r_new = -(A_local - D) D^-1 r (1 for the stencil). Above 1
  /// the sweep must form its residual every time (residual_is_free): the
  /// asynchronous loop's bound then grows by one sweep's factor, not by many.
  virtual double sweep_growth() const { return 1.0; }
  /// Whether a sweep with the same halo as the last one reproduces u
  /// (AsyncLocalUpdate::stale_update_repeats): Schwarz with exact local
  /// solves; never Jacobi.
  virtual bool stale_sweep_repeats() const { return false; }
  /// Whether sweep() forms this rank's residual whether asked or not (the
  /// asynchronous loop then takes it from every sweep): Schwarz.
  virtual bool residual_is_free() const { return false; }
};

/// Collective: the synchronous iteration with `sweep` from the iterate in u
/// (`b`: the right-hand side, null for the stencils; ||b|| = b_norm), up to
/// the true residual (the caller's).
SolveResult run_stationary_sync(StationarySweep& sweep, grid::Field& u, const grid::Field* b,
                                double b_norm, collectives::Allreduce& reduction,
                                const JacobiOptions& options);

/// Collective: the asynchronous iteration with `sweep` (async_iteration.hpp)
/// from the iterate in u, whose halo must hold u's neighbours' values;
/// then the true residual and, if options.final_sync asks and the
/// asynchronous stop missed tol, `sync_tail(n)` (n synchronous iterations).
SolveResult run_stationary_async(StationarySweep& sweep, grid::Field& u, const grid::Field* b,
                                 double b_norm, collectives::Allreduce& reduction,
                                 collectives::NonblockingAllreduce& convergence,
                                 const AsyncJacobiOptions& options,
                                 const std::function<SolveResult(long)>& sync_tail);

}  // namespace asyncsolve::solvers::detail
