#pragma once
/// Synchronous Jacobi for the model problems (paper 000, Figure 1).
#include <functional>
#include <limits>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/hybrid_stencil.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/par/fault_injection.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "asyncsolve/solvers/result.hpp"

namespace asyncsolve::solvers {

/// Settings of the Jacobi solvers.
struct JacobiOptions {
  double tol = 1e-4;        ///< stop when ||b - A u|| / ||b|| < tol
  long max_iters = 100000;  ///< stop after this many iterations (async: of the slowest rank)
  /// Wall-clock guard: stop (reason "max_time", not converged) once the solve
  /// has run this many seconds; infinity: none. Decided collectively at a
  /// residual check (sync: every check_every iterations), so every rank
  /// stops at the same iteration.
  double max_time_s = std::numeric_limits<double>::infinity();
  int check_every = 100;  ///< compute the global residual every K iterations
  int halo_every = 1;     ///< swap halos every N iterations (paper 000 §6.3)
  bool copy = false;      ///< copy u_new into u (paper's loop) instead of swapping
  /// Called on every rank after each residual check (the app prints on rank 0).
  std::function<void(const HistoryPoint&)> monitor;
  /// Straggler and noise injection after each sweep (not owned; may be null).
  par::FaultInjector* faults = nullptr;
  /// jacobi_sync only: with a hybrid stencil (not owned; may be null), each
  /// sweep and its halo exchange run with OpenMP threads in its scheme
  /// (--hybrid), and so do the residual and the copy loop; `halo` then only
  /// serves ||b|| and the true residual (unless the scheme uses it too).
  comm::HybridStencil* hybrid = nullptr;
  /// The fewest iterations a residual must stand still before the solve
  /// stops as stagnated (check_stagnation's min_span): stagnation_iterations,
  /// or, where rho(|D^-1 (A - D)|) < 1 is proven, the global rows (the
  /// residual of a convergent non-normal iteration can stand still that long).
  long stagnation_span = stagnation_iterations;
};

/// Phases timed by jacobi_sync, in PhaseTimers index order.
enum JacobiPhase : std::size_t {
  halo_phase,
  sweep_phase,
  copy_phase,
  residual_phase,
  reduce_phase
};

/// Collective over the decomposition's communicator: synchronous Jacobi.
///
/// On entry `u` holds the initial guess in its interior and the Dirichlet data
/// in its physical-boundary halo (grid::apply_initial_guess and
/// grid::apply_boundary); on exit it holds the last iterate. Each iteration k:
/// swap halos (if k is a multiple of halo_every, or a check iteration); sweep
/// u^{k+1} = (sum of neighbours of u^k)/6; every check_every iterations the
/// sweep is the fused kernel (ops::jacobi_sweep_residual), which also returns
/// ||b - A u^k||^2 in the same pass, and one allreduce of [that, "this rank
/// ran out of time"] follows: below tol the solve stops at u^k (the u^{k+1}
/// just made is dropped); if a rank has run max_time_s seconds it stops too,
/// reason "max_time". A check iteration always swaps halos, so the residual
/// that stops the solve is exact. Per iteration: 1 halo exchange (up to 6
/// messages of one face each), 1 sweep (16 B/point); every K iterations one
/// allreduce of two doubles (the residual costs no pass of its own, so
/// check_every = 1 is affordable). `iterations` counts sweeps kept; the
/// returned iterate is u^iterations, with the bits of the separate residual
/// pass and sweep of earlier releases.
///
/// With options.hybrid the iterates are the same bits. The threads' fused
/// sweeps return the residual, summed per thread, so it can differ from the
/// pure MPI one in the last bits. Phases are the master thread's: halo =
/// HybridTimes::exchange_start + exchange_wait, sweep = interior + boundary
/// (see HybridTimes); `residual` stays 0 (no separate pass).
SolveResult jacobi_sync(const grid::Problem& problem, const grid::Decomposition& decomposition,
                        grid::Field& u, comm::HaloExchange& halo, collectives::Allreduce& reduction,
                        const JacobiOptions& options);

/// Collective: ||b||_2, where b holds the boundary contributions (the 7-point
/// residual of a field shaped like `shape` that is zero except for the
/// Dirichlet data in its halo); 1 if b = 0, so that it can divide.
double rhs_norm(const grid::Problem& problem, const grid::Decomposition& decomposition,
                const grid::Field& shape, collectives::Allreduce& reduction);

/// Collective: ||b - A u||_2 / ||b||_2 for the current iterate (exchanges halos).
/// ||b|| = 0 (no boundary data) normalises by 1 instead.
double relative_residual(const grid::Problem& problem, const grid::Decomposition& decomposition,
                         grid::Field& u, comm::HaloExchange& halo,
                         collectives::Allreduce& reduction);

/// Collective: max |u - exact| over the interior, or nullopt if the problem
/// has no known exact solution.
std::optional<double> error_inf(const grid::Problem& problem,
                                const grid::Decomposition& decomposition, const grid::Field& u,
                                collectives::Allreduce& reduction);

}  // namespace asyncsolve::solvers
