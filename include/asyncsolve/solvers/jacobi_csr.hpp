#pragma once
/// Jacobi on a distributed CSR matrix: synchronous, and asynchronous or racy
/// over per-neighbour channels (paper 000's variants on a general matrix).
/// The iteration is u_new = u + D^-1 (b - A u), whose pass also yields the
/// residual of u (fused: no separate residual pass). The same loops as the
/// structured jacobi_sync and jacobi_async (jacobi.cpp, jacobi_async.cpp),
/// over the CSR operator (the sweep: linear_operator_jacobi.cpp).
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"

namespace asyncsolve::solvers {

/// Collective: ||b||_2 of `system` (scaled: no under- or overflow); 1 if
/// b = 0, so that it can divide.
double rhs_norm(const CsrSystem& system, collectives::Allreduce& reduction);

/// Collective over the matrix's communicator: synchronous Jacobi on
/// `system` (x: the initial guess on entry, the last iterate on exit), with
/// the structured jacobi_sync's loop: iteration k exchanges u^k's ghosts
/// (if k is a multiple of halo_every, or a check iteration; the interior
/// rows are swept while the exchange is in flight), sweeps to u^{k+1}, and
/// every check_every iterations reduces ||b - A u^k|| (from the same pass)
/// and stops at u^k below tol; max_iters N returns u^N.
/// ||b|| normalises (1 if b = 0).
/// Per iteration: one exchange (the plan's messages), one pass over A
/// (12 B per non-zero) and 4 vectors (32 B per row). Every diagonal entry
/// must be non-zero (check smallest_diagonal first); options.hybrid and
/// options.copy are not supported (std::invalid_argument).
SolveResult jacobi_sync(CsrSystem& system, const sparse::DistMatrix& matrix,
                        comm::SparseHaloExchange& halo, collectives::Allreduce& reduction,
                        const JacobiOptions& options);

/// Collective over the matrix's communicator: asynchronous or racy Jacobi
/// on `system`, the structured jacobi_async's loop: one channel per
/// neighbour rank (comm::make_async_sparse_halo over options.transport);
/// each iteration takes the newest ghosts, sweeps, and every halo_every
/// iterations sends the entries each neighbour needs (skipped when its
/// channel is full, retried while waiting); every check_every iterations
/// the residual of the sweep's input starts a non-blocking reduction of
/// [residual^2, ranks at max_iters, ranks over max_time_s], and every rank
/// stops when one completes below tol (or with every rank at max_iters, or
/// a rank over max_time_s). options.idle as for the stencils: every sweep
/// forms its rows' residual, a sweep with fixed ghosts raises it at most
/// sparse::jacobi_sweep_growth times and a change d of the ghosts by at most
/// sparse::ghost_block_norm ||d||, which bounds the residual a rank idles on.
/// The ghosts start from one synchronous exchange of x0 (`sync_halo`), which
/// also measures the true residual afterwards; then up to final_sync
/// synchronous iterations. `convergence` must carry async_convergence_values
/// doubles.
/// options.progress_planes > 0 progresses the channels every that many
/// "planes" of rows (n^(2/3) rows each) of the sweep.
SolveResult jacobi_async(CsrSystem& system, const sparse::DistMatrix& matrix,
                         comm::SparseHaloExchange& sync_halo, collectives::Allreduce& reduction,
                         collectives::NonblockingAllreduce& convergence,
                         const AsyncJacobiOptions& options);

}  // namespace asyncsolve::solvers
