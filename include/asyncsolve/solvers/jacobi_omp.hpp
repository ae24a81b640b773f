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
  /// tol, max_iters, check_every, monitor and (sync only) copy are used;
  /// halo_every and faults are not (the solver refuses halo_every != 1 and
  /// faults).
  JacobiOptions base;
  OmpVariant variant = OmpVariant::sync;
  int threads = 1;     ///< OpenMP threads, 1 .. the number of z-planes
  int final_sync = 0;  ///< async/racy: up to this many sync iterations after the stop
};

/// Phases timed by jacobi_omp, in PhaseTimers index order (per thread; the
/// result holds the largest over threads).
enum OmpJacobiPhase : std::size_t {
  omp_sweep_phase,  ///< u_new = (sum of neighbours of u)/6 on the slab (async: lock waits included)
  omp_copy_phase,   ///< sync --copy: u = u_new on the slab; async/racy: publishing the boundary
                    ///< planes
  omp_residual_phase,  ///< the slab's residual and its reduction or running-sum update
  omp_barrier_phase,   ///< sync: waiting at the barrier after the sweep
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
///   fields; every check_every iterations the residual is summed by an OpenMP
///   reduction. The iterates are those of jacobi_sync.
/// - async: the threads never wait for each other. A lock per inter-thread
///   boundary is held while a thread sweeps (or takes the residual of) the
///   plane next to that boundary, which reads the neighbour's boundary plane,
///   and while it copies u_new into u on that plane; so a neighbour's plane
///   is always read whole, from one of its iterations. The global squared
///   residual is a running sum: every check_every iterations each thread adds
///   the change of its slab's part since its last contribution (one atomic
///   add) and reads the sum back; below tol it sets a shared flag and every
///   thread stops at its next iteration. Per-thread iteration counts differ.
/// - racy: as async without locks; the planes next to a neighbour are read,
///   and a thread's own boundary planes written, with relaxed atomic loads
///   and stores (`omp atomic read`/`write`), so every value read was written
///   whole by some iteration and there is no data race.
///
/// After the stop the true residual is measured synchronously; with
/// final_sync > 0 (async/racy) up to final_sync sync iterations follow until
/// it is below tol. Throws std::invalid_argument for more than one rank,
/// threads < 1 or more threads than planes, and core::RuntimeFailure if the
/// OpenMP runtime does not give the requested number of threads.
SolveResult jacobi_omp(const grid::Problem& problem, const grid::Decomposition& decomposition,
                       grid::Field& u, const OmpJacobiOptions& options);

}  // namespace asyncsolve::solvers
