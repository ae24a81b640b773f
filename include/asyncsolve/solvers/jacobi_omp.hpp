#pragma once
/// Jacobi with OpenMP threads on one rank (paper 000 §3.3): sync, async and racy.
#include <string>
#include <vector>

#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/result.hpp"

namespace asyncsolve::solvers {

/// The three OpenMP variants.
enum class OmpVariant { sync, async, racy };

/// Settings of OpenMP Jacobi beyond those of JacobiOptions.
struct OmpJacobiOptions {
  /// tol, max_iters, max_time_s, check_every, monitor and (sync only) copy
  /// are used; halo_every and faults are not (the solver refuses halo_every
  /// != 1 and faults).
  JacobiOptions base;
  OmpVariant variant = OmpVariant::sync;
  int threads = 1;     ///< OpenMP threads, 1 .. the number of z-planes
  int final_sync = 0;  ///< async/racy: up to this many sync iterations after the stop
  /// async/racy (--idle on): a thread with nothing new to work on waits for
  /// news instead of sweeping the same planes again (see jacobi_omp).
  bool idle = true;
};

/// Phases timed by jacobi_omp, in PhaseTimers index order (per thread; the
/// result holds the largest over threads).
enum OmpJacobiPhase : std::size_t {
  omp_sweep_phase,  ///< u_new = (sum of neighbours of u)/6 on the slab (async: lock waits included)
  omp_copy_phase,   ///< sync --copy: u = u_new on the slab; async/racy: publishing the boundary
                    ///< planes
  omp_residual_phase,  ///< the slab's residual and its reduction or running-sum update
  omp_barrier_phase,   ///< sync: waiting at the barrier after the sweep; async/racy: at a stop
  /// async/racy: waiting for a neighbour's news (idle), or (idle off) for the
  /// others at max_iters
  omp_idle_phase,
};

/// First z-plane of thread `t` of `threads` on a grid of `planes` planes: the
/// planes are split in contiguous slabs whose sizes differ by at most one
/// (paper 000 §3.3's 1D decomposition). plane_begin(threads, ...) == planes.
int omp_plane_begin(int t, int threads, int planes) noexcept;

/// Not collective (one rank; no MPI calls): Jacobi on `u` with OpenMP
/// threads, each owning a slab of z-planes of the whole grid.
///
/// `decomposition` must have a single rank; `u` is prepared as for
/// jacobi_sync (initial guess, Dirichlet data in the halo) and holds the last
/// iterate on exit.
///
/// - sync: one parallel region; per iteration each thread sweeps its slab
///   u -> u_new, one barrier, and every thread swaps its view of the two
///   fields; every check_every iterations the sweep is the fused one, whose
///   slab residuals an OpenMP reduction sums (its barrier is the sweep's),
///   together with whether max_time_s is up. The iterates are those of
///   jacobi_sync.
/// - async: the threads never wait for each other to iterate. A lock per
///   inter-thread boundary is held while a thread sweeps (or takes the
///   residual of) the plane next to that boundary, which reads the
///   neighbour's boundary plane from a mailbox, and while it publishes its
///   own boundary plane there; so a neighbour's plane is always read whole,
///   from one of its iterations. The sweep is fused (ops::
///   jacobi_sweep_residual_planes): it returns the slab's residual of the
///   iterate read. The global squared residual is a running sum: every
///   check_every iterations each thread adds the change of its slab's part
///   since its last contribution (one atomic add) and reads the sum back;
///   below tol it stops every thread. Per-thread iteration counts differ.
/// - racy: as async without locks; the planes next to a neighbour are read,
///   and a thread's own boundary planes written, with relaxed atomic loads
///   and stores (`omp atomic read`/`write`), so every value read was written
///   whole by some iteration and there is no data race.
/// - idle (async and racy, options.idle): every mailbox has a drift, the
///   sum of the norms of the changes of its plane, grown at each
///   publication. A thread whose slab's part of ||b - A u||^2, bounded from
///   its last fused sweep plus the drift of its neighbours' planes since, is
///   below (async_idle_fraction tol ||b||)^2 / threads waits for news with a
///   bounded back-off (sleeps up to 200 us) instead of sweeping (nearly) the
///   same planes again, keeping its part of the running sum current; the
///   time is the `idle` phase, the waits SolveResult::idle_waits. With more
///   threads than free cores this gives the core to the neighbour that has
///   work. The sweep returns the residual (fused) at checks and every 4
///   sweeps.
/// - stopping (async and racy): max_iters counts the slowest thread's sweeps
///   (a thread that gets there first goes on as before with idle on, and
///   waits with idle off; the stop comes when every thread has made them);
///   max_time_s stops every thread once one sees the time is up. A stop by
///   the estimate is confirmed at a barrier by the true residual of the
///   quiescent grid; if that refutes it, the asynchronous phase resumes
///   (unless the time or every thread's sweeps are used up), a decision made
///   once for all threads.
///
/// After the stop the true residual is measured synchronously; with
/// final_sync > 0 (async/racy) up to final_sync sync iterations follow until
/// it is below tol. Throws std::invalid_argument for more than one rank,
/// threads < 1 or more threads than planes, and core::RuntimeFailure if the
/// OpenMP runtime does not give the requested number of threads.
SolveResult jacobi_omp(const grid::Problem& problem, const grid::Decomposition& decomposition,
                       grid::Field& u, const OmpJacobiOptions& options);

}  // namespace asyncsolve::solvers
