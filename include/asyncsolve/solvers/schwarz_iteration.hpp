#pragma once
/// Restricted additive Schwarz as a stationary iteration, synchronous,
/// asynchronous or racy (`asyncsolve solve --method schwarz`):
///
///   u <- u + sum_i R~_i^T A_i^-1 R_i (b - A u)
///
/// Each rank owns a subdomain, its owned rows grown by `overlap` layers of
/// the matrix graph (sparse/subdomain.hpp), whose matrix A_i a local solver
/// factorised once at setup (precond/schwarz.hpp). One sweep forms the
/// subdomain residual b_i - A_(i,:) u from the owned values and the newest
/// values of the extended halo (the overlap rows and the columns their rows
/// reach outside the subdomain), solves with the kept factor, and updates
/// the owned rows only (restricted: no reverse exchange). Only the owned
/// values the neighbours' extended halos hold travel.
///
/// The synchronous variant exchanges the extended halo before every sweep
/// (stationary.hpp's loop, as sync Jacobi); the asynchronous and racy ones
/// run paper 000's loop (async_iteration.hpp) with one channel per halo
/// neighbour: the same convergence reduction, stop rules, confirmation,
/// --max-iters/--max-time, straggler and noise injection as Jacobi.
///
/// Two levels (schwarz.coarse nicolaides, synchronous only): each sweep
/// first corrects on the coarse space from the residual it formed,
/// w = Z E^+ Z^T r (one MPI_Allgather), exchanges w over the extended halo
/// (one more exchange) and solves the subdomains on r - A w:
///   u <- u + w + sum_i R~_i^T A_i^-1 R_i (r - A w)
/// (multiplicative between the levels: the additive sum of the two
/// corrections would double the coarse modes, which the local solves
/// already reduce, and need damping).
///
/// Convergence: for an M-matrix (or H-matrix) the synchronous and every
/// asynchronous RAS iteration converge (Frommer and Szyld 2001, weighted
/// max-norm contraction); for SPD matrices only the synchronous iteration
/// is analysed (in the energy norm, for the symmetric variant: Glusa et
/// al. 2020); beyond those classes nothing is guaranteed and the true
/// residual at the end is the verdict.
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "asyncsolve/solvers/result.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::solvers {

/// What the Schwarz iteration takes besides the system.
struct SchwarzIterationOptions {
  /// The stop rules, injection, transport and (async, racy) channel
  /// settings, as Jacobi's; base and transport for the synchronous variant.
  AsyncJacobiOptions async;
  bool asynchronous = false;  ///< async or racy (async.racy) instead of sync
  /// overlap, local solver, coarse (nicolaides: sync only); type restricted.
  precond::SchwarzSettings schwarz;
  /// The coarse space's near-null vectors (block size, rigid-body modes);
  /// null: the partition of unity. Borrowed.
  const precond::NearNullSpace* near_null = nullptr;
  /// The exchange strategy of the synchronous extended-halo exchange over
  /// mpi (async.transport rma or shmem: channels in lockstep instead).
  comm::HaloStrategy strategy = comm::HaloStrategy::waitall;
};

/// Collective over matrix.comm(): solves system (x: the initial guess on
/// entry, the iterate on exit) with restricted additive Schwarz.
/// `sync_halo` is the matrix's own exchange (the true residual at the end),
/// `convergence` the non-blocking reduction of async_convergence_values
/// doubles (asynchronous: required; sync: unused, may be null). The result's `pc`
/// reports the subdomains and the local factorisations (name "schwarz").
/// Throws core::CollectiveBreakdown on every rank if a subdomain's
/// factorisation fails, core::InputError for settings the iteration cannot
/// take (the basic type; a coarse space with the asynchronous variants).
SolveResult schwarz_solve(CsrSystem& system, const sparse::DistMatrix& matrix,
                          comm::SparseHaloExchange& sync_halo, collectives::Allreduce& reduction,
                          collectives::NonblockingAllreduce* convergence,
                          const SchwarzIterationOptions& options);

}  // namespace asyncsolve::solvers
