#pragma once
/// What a solver returns: outcome, counts, residuals, timings and history.
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/precond/preconditioner.hpp"

namespace asyncsolve::solvers {

/// Why a solve stopped. Its text (stop_reason_name) appears only in the
/// result document and the summary.
enum class StopReason {
  none,         ///< not stopped (yet): ""
  tolerance,    ///< the residual met the tolerance: "tolerance"
  max_iters,    ///< "max_iters"
  max_time,     ///< the wall-clock guard: "max_time"
  final_sync,   ///< the synchronous tail after an asynchronous stop ran out: "final_sync"
  breakdown,    ///< a residual or inner product not finite, or p^T A p <= 0: "breakdown"
  unconfirmed,  ///< the estimate met the tolerance, the true residual did not: "unconfirmed"
  diverged,     ///< Jacobi's residual grew to divergence_factor times its smallest: "diverged"
};

/// The name of `reason` in result documents and summaries ("" for none).
std::string_view stop_reason_name(StopReason reason) noexcept;

/// One residual check as seen by one rank.
struct HistoryPoint {
  long iteration = 0;
  double time_s = 0;          ///< since the start of the solve
  double residual = 0;        ///< relative residual ||b - A u||_2 / ||b||_2 (global; an
                              ///< estimate in the asynchronous variants)
  double local_residual = 0;  ///< this rank's part: ||(b - A u) on this block|| / ||b||
                              ///< (OpenMP Jacobi: this thread's slab)
  int thread = 0;             ///< OpenMP Jacobi: the thread that made the check (0 elsewhere)
};

/// One solve of a run that repeats the solve after one setup (--repeat-solve),
/// as seen by one rank.
struct RepeatedSolve {
  double time_s = 0;                     ///< wall time of this solve on this rank
  long iterations = 0;                   ///< its iterations
  bool converged = false;                ///< its outcome (the true residual met the tolerance)
  StopReason reason = StopReason::none;  ///< as SolveResult::reason
  double true_residual = 0;              ///< ||b - A x|| / ||b|| after it (global)
  /// max |x - x_1| over every owned unknown (global): how far this solve's
  /// solution is from the first solve's (0 for the first)
  double change_inf = 0;
};

/// Why a Krylov method restarted. Its text (restart_reason_name) appears
/// only in the result document and the summary.
enum class RestartReason {
  cycle,          ///< a GMRES cycle's end: "cycle"
  orthogonality,  ///< p(1)-GMRES's safeguard on lost orthogonality: "orthogonality"
  rho,            ///< BiCGStab's (r, r0) ~ 0: "rho"
  sigma,          ///< BiCGStab's (A M^-1 p, r0) ~ 0: "sigma"
  omega,          ///< BiCGStab's (t, s) ~ 0: "omega"
  replacement,    ///< pipelined BiCGStab's residual replacement: "replacement"
  confirm,        ///< pipelined BiCGStab's estimate checked with the true residual: "confirm"
};

/// The name of `reason` in result documents and summaries.
std::string_view restart_reason_name(RestartReason reason) noexcept;

/// A restart of a Krylov method (GMRES's end of cycle, a BiCGStab or
/// p(1)-GMRES breakdown it recovered from, pipelined BiCGStab's residual
/// replacement), as seen by every rank alike.
struct RestartPoint {
  long iteration = 0;                           ///< iterations done when it happened
  RestartReason reason = RestartReason::cycle;  ///< why
  double true_residual = 0;                     ///< ||b - A x|| / ||b|| measured then
  double estimate = 0;                          ///< the method's own residual estimate then
};

/// The outcome of a solve on this rank. Values that are global (residuals,
/// error) are identical on every rank; counts and times are this rank's.
struct SolveResult {
  bool converged = false;
  StopReason reason = StopReason::none;  ///< why it stopped
  std::string detail;  ///< what broke down, and at which iteration (empty otherwise)
  /// --scale: the scaled system's true residual (true_residual is then the
  /// given system's); NaN without scaling.
  double scaled_true_residual = std::numeric_limits<double>::quiet_NaN();
  long iterations = 0;              ///< iterations (sweeps) this rank performed
  double time_s = 0;                ///< wall time of the solve on this rank
  double residual_estimate = 0;     ///< the relative residual the stop decision used
  double true_residual = 0;         ///< relative residual measured synchronously after the solve
  std::optional<double> error_inf;  ///< max |u - exact| when the exact solution is known
  /// Jacobi: the smallest residual its stop checks saw (estimates in the
  /// asynchronous variants), and the iteration of that check; a residual
  /// grown far above it stops the solve (check_divergence, norm.hpp).
  double best_residual = std::numeric_limits<double>::infinity();
  long best_iteration = 0;
  core::PhaseTimers phases{{}};
  /// The index in `phases` of the sweeps' time (Jacobi), for their
  /// bandwidth; -1 when the solver has no sweeps (the Krylov methods).
  int sweep_phase = -1;
  std::vector<HistoryPoint> history;
  long halo_exchanges = 0;  ///< halo exchanges this rank performed
  long halo_tests = 0;      ///< HaloExchange::test() calls made while the interior was computed
  long messages_sent = 0;   ///< halo messages this rank sent
  double bytes_sent = 0;    ///< halo bytes this rank sent
  double sweep_bytes = 0;   ///< bytes the sweeps moved (16 per point and sweep)
  long skipped_sends = 0;   ///< asynchronous: sends skipped because a channel was full
  std::vector<long> batch_sizes;  ///< asynchronous: batch_sizes[n] = recv calls that got n messages
  /// Asynchronous and racy iterations: stops on the estimate that the true
  /// residual refuted, after which the asynchronous iteration went on
  /// (OpenMP: below tol or a stagnation verdict; MPI: a stagnation verdict).
  long unconfirmed_stops = 0;
  long final_sync_iterations = 0;  ///< synchronous iterations run after an asynchronous solve
  /// Asynchronous Jacobi (MPI: this rank; OpenMP: all threads): times a rank
  /// (thread) with nothing new to work on waited for news instead of sweeping.
  long idle_waits = 0;
  double injected_s = 0;  ///< seconds of injected faults and noise on this rank
  /// OpenMP Jacobi: iterations (sweeps) of each thread, in thread order;
  /// `iterations` is then the largest of them. Empty for the MPI solvers.
  std::vector<long> thread_iterations;
  /// Krylov methods with --pc chebyshev or boomeramg: what the
  /// preconditioner's setup found, its settings and counts (name empty
  /// otherwise).
  precond::PcReport pc;
  /// Preconditioner applies made while a reduction was in flight (started,
  /// not yet waited for): pcg-overlap's iprod, pipecg's three dots.
  long pc_applies_behind_reduction = 0;
  /// Mat-vecs made while a reduction was in flight (pgmres, pipebicgstab,
  /// pipecg, pcg-overlap's sdotp is behind an update, not a mat-vec).
  long matvecs_behind_reduction = 0;
  /// GMRES family and BiCGStab: every restart, with the true residual then.
  std::vector<RestartPoint> restarts;
  /// gmres, fgmres: Gram-Schmidt second passes made (--cgs-refinement).
  long refinements = 0;
  /// Krylov methods: every solve run after the one setup, the first
  /// included (one entry unless KrylovOptions::repeat_solves > 1). The other
  /// fields describe the first solve.
  std::vector<RepeatedSolve> repeats;
};

}  // namespace asyncsolve::solvers
