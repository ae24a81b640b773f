#pragma once
/// Asynchronous and racy Jacobi over asynchronous channels (paper 000 §3.1.2-3.1.3).
#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/solvers/jacobi.hpp"

namespace asyncsolve::solvers {

/// Settings of asynchronous Jacobi beyond those of JacobiOptions.
struct AsyncJacobiOptions {
  JacobiOptions base;       ///< tol, max_iters, check_every, halo_every, monitor, faults
  bool racy = false;        ///< racy channels (one landing buffer, element-wise freshest data)
  int max_in_flight = 100;  ///< R: unacknowledged halo messages per neighbour and direction
  int final_sync = 0;       ///< up to this many synchronous iterations after the asynchronous stop
  /// 0: communication progresses only in the channel calls of each iteration
  /// (--progress none); K > 0: also every K planes of the sweep (poll:K).
  int progress_planes = 0;
  int transport = AS_TRANSPORT_MPI;  ///< channel transport (enum as_transport)
};

/// Collective over the decomposition's communicator: asynchronous (or racy)
/// Jacobi. Ranks never wait for each other while iterating.
///
/// One channel per neighbour carries face halos (MPI two-sided transport).
/// Each iteration k of a rank: take the newest halo of every neighbour that
/// sent one (async: a whole message from one iteration of the sender; racy:
/// whatever landed); every check_every iterations, if no reduction is in
/// flight, compute the local residual with the current halos and start a
/// non-blocking reduction of [residual^2, ranks at max_iters]; when one
/// completes, every rank sees the same global estimate and stops if it is
/// below tol (or a rank reached max_iters); otherwise sweep, and every
/// halo_every iterations send the new faces (skipped, and counted, when a
/// channel already has R messages in flight). A rank that reaches max_iters
/// stops sweeping and only progresses until the reduction lets everyone stop.
///
/// Afterwards the channels are destroyed (nothing left in flight), the true
/// residual is measured synchronously with `sync_halo` and `reduction`, and
/// up to final_sync synchronous iterations run until it is below tol.
/// `u` is prepared as for jacobi_sync; `convergence` must carry 2 doubles.
SolveResult jacobi_async(const grid::Problem& problem, const grid::Decomposition& decomposition,
                         grid::Field& u, comm::HaloExchange& sync_halo,
                         collectives::Allreduce& reduction,
                         collectives::NonblockingAllreduce& convergence,
                         const AsyncJacobiOptions& options);

}  // namespace asyncsolve::solvers
