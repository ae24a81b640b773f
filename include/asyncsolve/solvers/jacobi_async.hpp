#pragma once
/// Asynchronous and racy Jacobi over asynchronous channels (paper 000 §3.1.2-3.1.3).
#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/solvers/jacobi.hpp"

namespace asyncsolve::solvers {

/// Settings of asynchronous Jacobi beyond those of JacobiOptions.
struct AsyncJacobiOptions {
  /// tol, max_iters, max_time_s, check_every, halo_every, monitor, faults
  JacobiOptions base;
  bool racy = false;        ///< racy channels (one landing buffer, element-wise freshest data)
  int max_in_flight = 100;  ///< R: unacknowledged halo messages per neighbour and direction
  int final_sync = 0;       ///< up to this many synchronous iterations after the asynchronous stop
  /// 0: communication progresses only in the channel calls of each iteration
  /// (--progress none); K > 0: also every K planes of the sweep (poll:K).
  int progress_planes = 0;
  int transport = AS_TRANSPORT_MPI;  ///< channel transport (enum as_transport)
  /// --idle on: a rank with nothing new to work on waits for news instead of
  /// sweeping stale data (see jacobi_async); off: it sweeps at full speed.
  bool idle = true;
};

/// Doubles every round of jacobi_async's convergence reduction carries: this
/// rank's ||b - A u||^2, 1 if it has made max_iters sweeps, 1 if it has run
/// max_time_s seconds, 1 if it has made stagnation_span sweeps while the
/// residual estimate stood still (summed over the ranks).
inline constexpr std::size_t async_convergence_values = 4;

/// A rank idles when its part of ||b - A u||^2 is below
/// (async_idle_fraction * tol * ||b||)^2 / P (P ranks): were every rank
/// there, the global estimate would be below tol * async_idle_fraction.
inline constexpr double async_idle_fraction = 0.1;

/// Phases timed by jacobi_async, in PhaseTimers index order.
enum AsyncJacobiPhase : std::size_t {
  async_recv_phase,      ///< taking the newest halos out of the channels
  async_sweep_phase,     ///< the fused sweep (residual included), straggler delay included
  async_send_phase,      ///< packing and sending the new faces
  async_residual_phase,  ///< separate residual passes: none (the sweep returns it), always 0
  async_reduce_phase,    ///< starting and testing the convergence reduction
  async_idle_phase,      ///< waiting for news (--idle on), the reduction progressed meanwhile
};

/// Collective over the decomposition's communicator: asynchronous (or racy)
/// Jacobi. Ranks never wait for each other while iterating (paper 000
/// §3.1.2-3.1.3), and a rank with nothing new to work on waits for news.
///
/// One channel per neighbour carries face halos (options.transport). Each
/// iteration k of a rank: take the newest halo of every neighbour that sent
/// one (async: a whole message from one iteration of the sender; racy:
/// whatever landed), copied into the halos of both u and u_new (no copy of
/// the halos after the sweep); then sweep u^{k+1} = (sum of neighbours of
/// u^k)/6 with the fused kernel, which also returns this block's
/// ||b - A u^k||^2 with the halos it read; send the new faces every
/// halo_every iterations (a send is skipped, and counted, when a channel
/// already has R messages in flight, and retried while idle); every
/// check_every iterations, if no reduction is in flight, start a
/// non-blocking reduction of [||b - A u^k||^2, k >= max_iters, time >=
/// max_time_s, swept the stagnation span] (async_convergence_values
/// doubles), and test the one in flight. When a round completes every rank
/// sees the same sums and the same decision: stop with reason "tolerance"
/// if the estimate sqrt(sum) / ||b|| is below tol, "diverged" if it grew by
/// divergence_factor over its smallest, "breakdown" if it is not finite or
/// did not fall while every rank made options.base.stagnation_span sweeps
/// (above stagnation_floor: by stagnation_rate per sweep; below it: below
/// its smallest value in stagnation_iterations sweeps, the rounding level),
/// "max_time" if a rank ran out of time, "max_iters" if every rank has made
/// max_iters sweeps. Rounds an idle rank completes without sweeping do not
/// count toward a stagnation.
///
/// Idling (options.idle): a rank that has received nothing since its last
/// sweep, and whose last sweep left its part of the residual below the
/// threshold of async_idle_fraction, does not sweep stale data again: it
/// waits for news (as_channels_wait_any: polls, then sleeps with a bounded
/// back-off, giving its core to the processes that have work), and while it
/// waits it keeps its channels' sends going, resends faces whose send was
/// skipped, and keeps the convergence reduction going (a completed round is
/// restarted at once with this rank's part). The time is the `idle` phase,
/// the waits are counted in SolveResult::idle_waits. If every rank idles,
/// the next round's estimate is below tol * async_idle_fraction, so the
/// solve ends; a rank that is still progressing sends news to its
/// neighbours, which wake up and sweep again.
///
/// Crowded nodes: where a node runs more ranks than it has cores
/// (par::Comm::node_oversubscribed), a rank that has received nothing since
/// its last sweep yields its core (sched_yield) before sweeping again. The
/// neighbour whose news it lacks may be waiting for that very core; an MPI
/// library that spins while it waits (MPICH) gives it up only when the
/// scheduler's time slice ends, and Open MPI only with mpi_yield_when_idle.
///
/// max_iters counts the sweeps of the slowest rank: a rank that gets there
/// first goes on (idle on: it sweeps only on news or while its residual is
/// above the threshold; idle off: it stops sweeping and only progresses its
/// channels and the reduction), so a fast rank cannot end a solve as "not
/// converged" while another still progresses. max_time_s is a wall-clock
/// guard every rank checks on its own clock; its verdict travels through the
/// reduction.
///
/// Per iteration: at most one message per neighbour in each direction
/// (fewer when a channel is full or halo_every > 1), one fused sweep (16
/// B/point), one test of the reduction; every check_every iterations one
/// reduction of 4 doubles started.
///
/// Afterwards the channels are destroyed (nothing left in flight), the true
/// residual is measured synchronously with `sync_halo` and `reduction`, and
/// unless the reason is max_time up to final_sync synchronous iterations run
/// until it is below tol. `u` is prepared as for jacobi_sync; `convergence`
/// must carry async_convergence_values doubles (sum).
SolveResult jacobi_async(const grid::Problem& problem, const grid::Decomposition& decomposition,
                         grid::Field& u, comm::HaloExchange& sync_halo,
                         collectives::Allreduce& reduction,
                         collectives::NonblockingAllreduce& convergence,
                         const AsyncJacobiOptions& options);

}  // namespace asyncsolve::solvers
