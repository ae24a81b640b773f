#pragma once
// The result document (schema asyncsolve.result/1) and the rank-0 summary.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/document.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/par/fault_injection.hpp"
#include "asyncsolve/par/progress.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "asyncsolve/solvers/result.hpp"
#include "cli.hpp"

namespace asyncsolve::app {

// The environment, the --json check and the document header are the
// library's (par/document.hpp, core/document.hpp), shared with the bench/
// drivers; the commands name them as before.
using core::document_header;
using par::check_json_path;
using par::describe_environment;
using par::environment_json;
using par::RunEnvironment;

/// A solve's result summarised over ranks (all of it known on rank 0).
struct RunSummary {
  bool converged = false;
  solvers::StopReason reason = solvers::StopReason::none;
  long iterations_last = 0;
  par::RankStats iterations;
  std::vector<double> iterations_per_rank;
  std::vector<long> iterations_per_thread;  ///< --transport omp: each thread's iterations
  par::RankStats time_s;
  double residual_estimate = 0;
  double true_residual = 0;
  std::optional<double> scaled_true_residual;  ///< --scale: the scaled system's true residual
  std::optional<double> error_inf;
  std::vector<std::pair<std::string, par::RankStats>> phases;
  double sends_per_iteration = 0;
  double sweep_bandwidth_gbs = 0;
  nlohmann::json history = nlohmann::json::array();
  nlohmann::json batch_sizes = nlohmann::json::object();
  double skipped_sends = 0;
  long final_sync_iterations = 0;
  long unconfirmed_stops = 0;  ///< async/racy: stops on the estimate the true residual refuted
  par::RankStats injected_s;
  std::vector<std::string> kernels;  ///< the stencil variants some rank ran (--kernel)
  std::string allreduce;             ///< the algorithm "auto" resolved to
  std::string halo;           ///< the halo exchange used (waitall, or channel for sync over rma)
  std::string detail;         ///< what broke down (Krylov), empty otherwise
  par::RankStats halo_tests;  ///< HaloExchange::test() calls per rank (Krylov)
  long halo_exchanges = 0;    ///< rank 0's halo exchanges
  par::RankStats progress_passes;  ///< passes of the progress thread's loop per rank
  par::RankStats idle_waits;  ///< async/racy Jacobi: waits for news per rank (OpenMP: all threads)
  precond::PcReport pc;       ///< rank 0's preconditioner report (name empty: none set up)
  par::RankStats pc_setup_s;  ///< the preconditioner's setup time per rank
  long pc_applies_behind_reduction = 0;         ///< rank 0's applies with a reduction in flight
  long matvecs_behind_reduction = 0;            ///< rank 0's mat-vecs with a reduction in flight
  std::vector<solvers::RestartPoint> restarts;  ///< the GMRES and BiCGStab families' restarts
  long refinements = 0;                         ///< gmres, fgmres: second Gram-Schmidt passes
  /// Krylov methods: every solve after the one setup (--repeat-solve; one
  /// entry without it), each time_s the maximum over ranks. Empty for Jacobi.
  std::vector<solvers::RepeatedSolve> repeats;
  /// What the command found wrong with the system (b = 0: solve_advice.hpp),
  /// already printed on stderr; the document's result.warnings.
  std::vector<std::string> warnings;
  /// What to try (a method that fits, a graph partitioner): the summary's
  /// "hint" lines and the document's result.hints.
  std::vector<std::string> hints;
};

/// What the solve ran on: problem and decomposition as resolved.
struct RunProblem {
  std::string name;
  grid::Int3 global{};
  grid::Int3 local{};  ///< rank 0's block
  grid::Int3 local_min{};
  grid::Int3 local_max{};
  grid::Int3 dims{};
  nlohmann::json parameters;
};

/// What a solver branch hands to the shared report.
struct Solved {
  solvers::SolveResult result;
  long progress_passes = 0;  ///< passes of the progress thread's loop (Krylov, --progress thread)
  std::string halo;
  std::string allreduce;
  int threads = 1;  ///< OpenMP threads per rank (--hybrid)
};

/// Collective: the progress thread --progress thread[:US] asks for, or none
/// (core::InputError where MPI provides no MPI_THREAD_MULTIPLE). Defined in
/// solve_command.cpp.
std::unique_ptr<par::ProgressThread> start_progress_thread(const SolveConfig& config,
                                                           const par::Comm& comm);
/// Collective: records the thread's passes in `out` and stops it (none: nothing).
void stop_progress_thread(par::ProgressThread* progress, Solved& out);

/// The --monitor printer (call it on rank 0): iteration, residual and rate,
/// at most every --monitor-every seconds. Defined in solve_command.cpp.
std::function<void(const solvers::HistoryPoint&)> make_monitor(const SolveConfig& config);

/// Jacobi's options from the config (tol, --max-iters, --max-time,
/// --check-every, --halo-every; `faults` when it injects anything; the
/// --monitor printer on the root of `comm`), for the structured and the CSR
/// solves alike. Local; `faults` must outlive the solve. Defined in
/// solve_command.cpp.
solvers::JacobiOptions jacobi_options(const SolveConfig& config, const par::Comm& comm,
                                      par::FaultInjector& faults);

/// The asynchronous iterations' options over `base` (--variant racy,
/// --max-in-flight, --final-sync, --progress poll:K, --idle) on the
/// channels of `transport` (enum as_transport): async and racy Jacobi on
/// the stencils and on CSR, and the Schwarz iteration. Defined in
/// solve_command.cpp.
solvers::AsyncJacobiOptions async_jacobi_options(const SolveConfig& config,
                                                 const solvers::JacobiOptions& base, int transport);

/// The Krylov methods' options from the config (method, tol, --max-iters,
/// --max-time, --test-every, --pc, the reduction; `faults` when it injects
/// anything; the --monitor printer on the root of `comm`), for the
/// structured and the CSR solves alike. Local; `faults` must outlive the
/// solve. Defined in solve_command.cpp.
solvers::KrylovOptions krylov_options(const SolveConfig& config, const par::Comm& comm,
                                      par::FaultInjector& faults);

/// The fault injection --slow-rank, --slow-factor and --noise-* ask for.
par::FaultOptions fault_options(const SolveConfig& config);

/// Throws core::InputError when --slow-rank names a rank that `comm` does
/// not have.
void check_slow_rank(const SolveConfig& config, const par::Comm& comm);

/// Collective: a solve's result summarised over the ranks of `comm` (with
/// `omp`, over OpenMP Jacobi's threads). Defined in solve_command.cpp.
RunSummary summarise(const par::Comm& comm, const Solved& solved, bool omp);

/// Collective: rank 0 prints the summary and writes the --json document; a
/// failure to write is broadcast. Returns the exit code, the same on every
/// rank. Defined in solve_command.cpp.
core::ExitCode report_solve(const par::Comm& comm, const std::vector<std::string>& command,
                            const std::string& started, const RunEnvironment& env,
                            const RunProblem& problem, const SolveConfig& config,
                            const RunSummary& summary, const solvers::SolveResult& result);

/// The 7-point stencil's variants some rank has run, by name (collective).
std::vector<std::string> kernels_used(const par::Comm& comm);

/// Collective: `repeats` (the same count on every rank) with each solve's
/// time_s replaced by its maximum over the ranks of `comm`.
std::vector<solvers::RepeatedSolve> repeats_over_ranks(const par::Comm& comm,
                                                       std::vector<solvers::RepeatedSolve> repeats);

/// The full result document.
nlohmann::ordered_json make_result_document(const std::vector<std::string>& command,
                                            const std::string& started, const RunEnvironment& env,
                                            const RunProblem& problem, const SolveConfig& config,
                                            const RunSummary& summary);

/// The short human summary rank 0 prints.
std::string format_summary(const RunEnvironment& env, const RunProblem& problem,
                           const SolveConfig& config, const RunSummary& summary);

}  // namespace asyncsolve::app
