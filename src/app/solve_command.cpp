#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/channel_tree.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/hybrid_stencil.hpp"
#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/fault_injection.hpp"
#include "asyncsolve/par/progress.hpp"
#include "asyncsolve/par/shmem.hpp"
#include "asyncsolve/par/simulation.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "asyncsolve/solvers/jacobi_omp.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "commands.hpp"
#include "memory_check.hpp"
#include "options_common.hpp"
#include "result_document.hpp"
#include "solve_advice.hpp"

namespace asyncsolve::app {
namespace {

/// Refuses, as bad input, a grid whose fields would not fit in a node's memory.
void check_memory(const SolveConfig& config, const grid::Decomposition& decomposition, int fields) {
  const grid::Int3& n = decomposition.local();
  refuse_grid_over_memory(config, decomposition,
                          fields * 8.0 * (n[0] + 2.0) * (n[1] + 2.0) * (n[2] + 2.0),
                          ": the fields need");
}

/// Every rank's residual history, on rank 0, as result-document entries.
/// With `threads`, each entry also names the OpenMP thread that made it.
nlohmann::json gather_history(const par::Comm& comm, const std::vector<solvers::HistoryPoint>& h,
                              bool threads) {
  constexpr int width = 5;
  std::vector<double> mine;
  for (const auto& p : h) {
    mine.insert(mine.end(), {static_cast<double>(p.iteration), p.time_s, p.residual,
                             p.local_residual, static_cast<double>(p.thread)});
  }
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(comm.is_root() ? static_cast<std::size_t>(comm.size()) : 0);
  par::check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm.get()),
                 "MPI_Gather");
  std::vector<int> displs(counts.size(), 0);
  int total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<double> all(static_cast<std::size_t>(total));
  par::check_mpi(MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(),
                             displs.data(), MPI_DOUBLE, 0, comm.get()),
                 "MPI_Gatherv");
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t r = 0; r < counts.size(); ++r) {
    for (int i = displs[r]; i < displs[r] + counts[r]; i += width) {
      const auto at = static_cast<std::size_t>(i);
      nlohmann::json entry = {{"rank", r},
                              {"iteration", std::llround(all[at])},
                              {"time_s", all[at + 1]},
                              {"residual", all[at + 2]},
                              {"local_residual", all[at + 3]}};
      if (threads) entry["thread"] = std::llround(all[at + 4]);
      out.push_back(std::move(entry));
    }
  }
  return out;
}

/// Histogram of batch sizes summed over ranks, on rank 0: {"n": calls}.
nlohmann::json gather_batches(const par::Comm& comm, std::vector<long> batches) {
  long longest = static_cast<long>(batches.size());
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_LONG, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  batches.resize(static_cast<std::size_t>(longest), 0);
  std::vector<long> sum(batches.size(), 0);
  par::check_mpi(MPI_Reduce(batches.data(), sum.data(), static_cast<int>(batches.size()), MPI_LONG,
                            MPI_SUM, 0, comm.get()),
                 "MPI_Reduce");
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t n = 0; n < sum.size(); ++n)
    if (sum[n] > 0) out[std::to_string(n)] = sum[n];
  return out;
}

grid::Int3 reduce_triple(const par::Comm& comm, const grid::Int3& v, MPI_Op op) {
  grid::Int3 out = v;
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, out.data(), 3, MPI_INT, op, comm.get()),
                 "MPI_Allreduce");
  return out;
}

/// The objects of --hybrid: the linkwise exchange of the multiple scheme and
/// the stencil driver. Empty without --hybrid.
struct HybridSetup {
  std::unique_ptr<comm::LinkwiseHaloExchange> links;
  std::unique_ptr<comm::HybridStencil> stencil;
  int threads = 1;
};

/// Collective: builds the --hybrid objects for fields shaped like `shape`.
/// Throws InputError (on every rank alike) for more threads than the
/// smallest block has z-planes, or a thread level MPI does not provide.
HybridSetup make_hybrid(const SolveConfig& config, const grid::Decomposition& decomposition,
                        const grid::Field& shape, comm::HaloExchange& halo,
                        comm::Neighbourhood neighbourhood) {
  HybridSetup out;
  if (!is_hybrid(config)) return out;
  const comm::HybridMode mode = config.hybrid;
  out.threads = config.threads > 0 ? config.threads : omp_get_max_threads();
  int provided = MPI_THREAD_SINGLE;
  par::check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  if (mode == comm::HybridMode::multiple && provided < MPI_THREAD_MULTIPLE) {
    throw core::InputError(
        "--hybrid multiple: this MPI library provides no MPI_THREAD_MULTIPLE "
        "(see asyncsolve info), expected masteronly or funneled");
  }
  if (mode == comm::HybridMode::funneled && provided < MPI_THREAD_FUNNELED) {
    throw core::InputError(
        "--hybrid funneled: this MPI library provides no "
        "MPI_THREAD_FUNNELED (see asyncsolve info), expected masteronly");
  }
  // Every thread needs a z-plane of every rank's block (slabs of planes).
  int planes = decomposition.local()[2];
  par::check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, &planes, 1, MPI_INT, MPI_MIN, decomposition.comm().get()),
      "MPI_Allreduce");
  if (out.threads > planes) {
    throw core::InputError(
        fmt::format("--threads {} with --hybrid {}: more threads than the {} "
                    "z-planes of the smallest block, expected at most {}",
                    out.threads, comm::hybrid_mode_name(mode), planes, planes));
  }
  if (mode == comm::HybridMode::multiple) {
    out.links = comm::make_linkwise_halo_exchange(decomposition, shape, neighbourhood);
  }
  out.stencil = std::make_unique<comm::HybridStencil>(decomposition, mode, out.threads, &halo,
                                                      out.links.get());
  return out;
}

/// The channel transport (AS_TRANSPORT_*) of an MPI or OpenSHMEM `transport`.
int channel_transport(Transport transport) {
  switch (transport) {
    case Transport::rma:
      return AS_TRANSPORT_RMA;
    case Transport::shmem:
      return AS_TRANSPORT_SHMEM;
    case Transport::mpi:
    case Transport::omp:
      break;
  }
  return AS_TRANSPORT_MPI;
}

/// Jacobi (sync, async, racy) over the chosen transport. Collective.
Solved solve_jacobi(const SolveConfig& config, const grid::Problem& problem,
                    const grid::Decomposition& decomposition) {
  const par::Comm& comm = decomposition.comm();
  check_memory(config, decomposition, /*fields: u, u_new, b=*/3);
  grid::Field u(decomposition.local(), 1);
  grid::apply_initial_guess(problem, u);
  grid::apply_boundary(problem, decomposition, u);
  const bool asynchronous = config.variant != Variant::sync;
  check_slow_rank(config, comm);
  const int transport = channel_transport(config.transport);
  // Sync over rma or shmem exchanges halos through channels; otherwise (and
  // for the true residual of the asynchronous variants) the --halo strategy.
  auto halo =
      !asynchronous && transport != AS_TRANSPORT_MPI
          ? comm::make_channel_halo_exchange(decomposition, u, transport)
          : comm::make_halo_exchange(config.halo, decomposition, u, comm::Neighbourhood::faces);
  const collectives::AllreduceAlgorithm& allreduce = *config.allreduce;
  // Sync: the chosen algorithm, run to completion at each residual check;
  // async and racy use it for convergence and MPI_Allreduce for the true residual.
  auto reduction = collectives::make_allreduce(
      asynchronous ? collectives::AllreduceAlgorithm{} : allreduce, comm);
  std::unique_ptr<collectives::NonblockingAllreduce> convergence;
  // The tree runs over the same transport as the halos (paper 000 §3.1.2).
  if (asynchronous) {
    convergence = collectives::make_convergence_allreduce(
        allreduce, comm, solvers::async_convergence_values, transport);
  }
  par::FaultInjector faults(fault_options(config), comm.rank());
  solvers::JacobiOptions options = jacobi_options(config, comm, faults);
  options.copy = config.copy;
  const HybridSetup hybrid =
      make_hybrid(config, decomposition, u, *halo, comm::Neighbourhood::faces);
  options.hybrid = hybrid.stencil.get();

  // A progress thread turns MPI's progress engine while the ranks sweep: the
  // channels' messages (mpi, rma) move without a call from the solver. It
  // touches no solver object, so it registers nothing.
  const auto progress = start_progress_thread(config, comm);
  Solved out;
  if (asynchronous) {
    const solvers::AsyncJacobiOptions async = async_jacobi_options(config, options, transport);
    out.result =
        solvers::jacobi_async(problem, decomposition, u, *halo, *reduction, *convergence, async);
  } else {
    out.result = solvers::jacobi_sync(problem, decomposition, u, *halo, *reduction, options);
  }
  stop_progress_thread(progress.get(), out);
  out.halo = std::string(halo->name());
  out.allreduce = allreduce.name();
  out.threads = hybrid.threads;
  halo->close();
  if (convergence) convergence->free();
  return out;
}

/// The thread count of --transport omp: --threads, or OpenMP's default.
int omp_threads(const SolveConfig& config) {
  return config.threads > 0 ? config.threads : omp_get_max_threads();
}

/// --transport omp: one rank, `threads` OpenMP threads; with --local the
/// grid is the per-thread block with z multiplied by the threads. Throws
/// InputError (on every rank alike) for more than one rank.
grid::DecompositionSpec omp_decomposition_spec(const SolveConfig& config, int ranks, int threads) {
  if (ranks != 1) {
    throw core::InputError(
        fmt::format("--transport omp on {} ranks: OpenMP Jacobi runs on one "
                    "rank, expected mpirun -np 1 (or no mpirun) and --threads",
                    ranks));
  }
  grid::DecompositionSpec spec = config.decomposition;
  if (!spec.global) {
    grid::Int3 local = spec.local.value_or(grid::Int3{50, 50, 50});
    const long long z = static_cast<long long>(local[2]) * threads;
    if (z > std::numeric_limits<int>::max()) {
      throw core::InputError(fmt::format("--local {} with --threads {}: {} z-planes are too many",
                                         core::format_triple(local), threads, z));
    }
    local[2] = static_cast<int>(z);
    spec.global = local;
    spec.local.reset();
  }
  if ((*spec.global)[2] < threads) {
    throw core::InputError(fmt::format(
        "--threads {} with --global {}: more threads than the {} "
        "z-planes, expected at most {} threads",
        threads, core::format_triple(*spec.global), (*spec.global)[2], (*spec.global)[2]));
  }
  return spec;
}

/// Jacobi with OpenMP threads on one rank (--transport omp). Not collective
/// beyond the memory check.
Solved solve_jacobi_omp(const SolveConfig& config, const grid::Problem& problem,
                        const grid::Decomposition& decomposition, int threads) {
  check_memory(config, decomposition, /*fields: u, u_new, b=*/3);
  grid::Field u(decomposition.local(), 1);
  grid::apply_initial_guess(problem, u);
  grid::apply_boundary(problem, decomposition, u);
  solvers::OmpJacobiOptions options;
  options.base.tol = config.tol;
  options.base.max_iters = config.max_iters;
  if (config.max_time_s > 0.0) options.base.max_time_s = config.max_time_s;
  options.base.check_every = config.check_every;
  options.base.copy = config.copy;
  if (config.monitor) options.base.monitor = make_monitor(config);
  options.variant = config.variant == Variant::sync    ? solvers::OmpVariant::sync
                    : config.variant == Variant::async ? solvers::OmpVariant::async
                                                       : solvers::OmpVariant::racy;
  options.threads = threads;
  options.final_sync = config.final_sync;
  options.idle = config.idle;
  Solved out;
  out.result = solvers::jacobi_omp(problem, decomposition, u, options);
  out.halo = "none";
  out.allreduce = reduction_name(config);
  return out;
}

/// The Krylov methods (cg, pcg1, pcg2, pcg-overlap, pipecg, gmres, fgmres,
/// pgmres, bicgstab, pipebicgstab). Collective.
Solved solve_krylov(const SolveConfig& config, const grid::Problem& problem,
                    const grid::Decomposition& decomposition) {
  const par::Comm& comm = decomposition.comm();
  // --repeat-solve keeps x0 and the first solution besides the working set;
  // the GMRES family's basis is the library's to judge (it names --restart)
  check_memory(config, decomposition,
               static_cast<int>(solvers::krylov_fields(krylov_method(config.method), 1)) +
                   (config.repeat_solves > 1 ? 2 : 0));
  solvers::KrylovSystem system = solvers::make_krylov_system(problem, decomposition, config.shift);
  const auto neighbourhood = system.op.stencil == ops::Stencil::twenty_seven_point
                                 ? comm::Neighbourhood::full
                                 : comm::Neighbourhood::faces;
  auto halo = comm::make_halo_exchange(config.halo, decomposition, system.x, neighbourhood);
  check_slow_rank(config, comm);
  par::FaultInjector faults(fault_options(config), comm.rank());
  solvers::KrylovOptions options = krylov_options(config, comm, faults);
  const HybridSetup hybrid = make_hybrid(config, decomposition, system.x, *halo, neighbourhood);
  options.hybrid = hybrid.stencil.get();
  const auto progress = start_progress_thread(config, comm);
  options.progress = progress.get();
  Solved out;
  try {
    out.result = solvers::krylov_solve(system, decomposition, *halo, options);
  } catch (const precond::NotPositiveDefinite& e) {  // on every rank alike
    throw core::InputError(not_positive_definite(e));
  }
  stop_progress_thread(progress.get(), out);
  auto reduction = collectives::make_allreduce(collectives::AllreduceAlgorithm{}, comm);
  // The problem's exact solution is A's: with --shift (A + S I) x = b has
  // another, not known.
  if (config.shift == 0.0)
    out.result.error_inf = solvers::error_inf(problem, decomposition, system.x, *reduction);
  out.halo = std::string(halo->name());
  out.allreduce = options.allreduce.name();
  out.threads = hybrid.threads;
  halo->close();
  return out;
}

}  // namespace

/// Collective: the progress thread --progress thread[:US] asks for, or none.
std::unique_ptr<par::ProgressThread> start_progress_thread(const SolveConfig& config,
                                                           const par::Comm& comm) {
  if (config.progress.mode != Progress::Mode::thread) return nullptr;
  int provided = MPI_THREAD_SINGLE;
  par::check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  if (provided != MPI_THREAD_MULTIPLE) {
    throw core::InputError(
        fmt::format("--progress {}: this MPI library provides no "
                    "MPI_THREAD_MULTIPLE, expected none",
                    config.progress.name()));
  }
  return std::make_unique<par::ProgressThread>(
      comm, std::chrono::microseconds{config.progress.thread_sleep_us()});
}

void stop_progress_thread(par::ProgressThread* progress, Solved& out) {
  if (progress == nullptr) return;
  out.progress_passes = progress->passes();
  progress->stop();
}

void check_slow_rank(const SolveConfig& config, const par::Comm& comm) {
  if (config.slow_rank >= comm.size()) {
    throw core::InputError(fmt::format("--slow-rank {}: expected a rank below {} (or -1)",
                                       config.slow_rank, comm.size()));
  }
}

par::FaultOptions fault_options(const SolveConfig& config) {
  return par::FaultOptions{config.slow_rank, config.slow_factor, config.noise_us, config.noise_hz,
                           static_cast<std::uint64_t>(config.noise_seed)};
}

solvers::AsyncJacobiOptions async_jacobi_options(const SolveConfig& config,
                                                 const solvers::JacobiOptions& base,
                                                 int transport) {
  solvers::AsyncJacobiOptions async;
  async.base = base;
  async.racy = config.variant == Variant::racy;
  async.max_in_flight = config.max_in_flight;
  async.final_sync = config.final_sync;
  async.progress_planes = config.progress.every;  // poll:K; 0 otherwise
  async.transport = transport;
  async.idle = config.idle;
  return async;
}

solvers::JacobiOptions jacobi_options(const SolveConfig& config, const par::Comm& comm,
                                      par::FaultInjector& faults) {
  solvers::JacobiOptions options;
  options.tol = config.tol;
  options.max_iters = config.max_iters;
  if (config.max_time_s > 0.0) options.max_time_s = config.max_time_s;
  options.check_every = config.check_every;
  options.halo_every = config.halo_every;
  if (faults.is_active()) options.faults = &faults;
  if (config.monitor && comm.is_root()) options.monitor = make_monitor(config);
  return options;
}

solvers::KrylovOptions krylov_options(const SolveConfig& config, const par::Comm& comm,
                                      par::FaultInjector& faults) {
  solvers::KrylovOptions options;
  options.method = krylov_method(config.method);
  options.tol = config.tol;
  options.max_iters = config.max_iters;
  if (config.max_time_s > 0.0) options.max_time_s = config.max_time_s;
  options.test_every = config.test_every;
  options.pc = config.pc;
  options.repeat_solves = config.repeat_solves;
  options.allreduce = *config.allreduce;
  options.restart = config.restart;
  options.refinement = config.refinement;
  if (config.monitor && comm.is_root()) options.monitor = make_monitor(config);
  if (faults.is_active()) options.faults = &faults;
  return options;
}

/// The --monitor printer (rank 0): iteration, residual and rate, at most
/// every --monitor-every seconds.
std::function<void(const solvers::HistoryPoint&)> make_monitor(const SolveConfig& config) {
  struct State {
    double last_print = -1e300;
    long last_iteration = 0;
    double last_time = 0;
  };
  auto state = std::make_shared<State>();
  const double every = config.monitor_every_s;
  return [state, every](const solvers::HistoryPoint& p) {
    if (p.time_s - state->last_print < every && p.iteration != 0) return;
    const double rate = p.time_s > state->last_time
                            ? static_cast<double>(p.iteration - state->last_iteration) /
                                  (p.time_s - state->last_time)
                            : 0.0;
    std::printf("  iteration %8ld  residual %.6e  %10.1f it/s  %8.2f s\n", p.iteration, p.residual,
                rate, p.time_s);
    std::fflush(stdout);
    state->last_print = p.time_s;
    state->last_iteration = p.iteration;
    state->last_time = p.time_s;
  };
}

RunSummary summarise(const par::Comm& comm, const Solved& solved, bool omp) {
  const solvers::SolveResult& result = solved.result;
  // Summaries over ranks: every rank takes part in every reduction.
  RunSummary s;
  s.converged = result.converged;
  s.reason = result.reason;
  s.iterations = par::rank_stats(comm, static_cast<double>(result.iterations));
  s.iterations_per_rank = par::gather_to_root(comm, static_cast<double>(result.iterations));
  if (!result.thread_iterations.empty()) {
    // OpenMP Jacobi (one rank): min, mean and max over the threads.
    s.iterations_per_thread = result.thread_iterations;
    s.iterations.min = s.iterations.max = static_cast<double>(result.thread_iterations[0]);
    double sum = 0;
    for (const long it : result.thread_iterations) {
      s.iterations.min = std::min(s.iterations.min, static_cast<double>(it));
      s.iterations.max = std::max(s.iterations.max, static_cast<double>(it));
      sum += static_cast<double>(it);
    }
    s.iterations.mean = sum / static_cast<double>(result.thread_iterations.size());
  }
  s.time_s = par::rank_stats(comm, result.time_s);
  s.residual_estimate = result.residual_estimate;
  s.true_residual = result.true_residual;
  if (!std::isnan(result.scaled_true_residual))
    s.scaled_true_residual = result.scaled_true_residual;
  s.error_inf = result.error_inf;
  for (std::size_t i = 0; i < result.phases.size(); ++i) {
    s.phases.emplace_back(result.phases.names()[i],
                          par::rank_stats(comm, result.phases.seconds(i)));
  }
  const par::RankStats messages = par::rank_stats(comm, static_cast<double>(result.messages_sent));
  s.sends_per_iteration =
      result.iterations > 0 ? messages.mean / static_cast<double>(result.iterations) : 0.0;
  const double sweep_bytes = par::rank_stats(comm, result.sweep_bytes).mean * comm.size();
  const double sweep_time =
      result.sweep_phase >= 0 ? s.phases.at(static_cast<std::size_t>(result.sweep_phase)).second.max
                              : 0.0;
  s.sweep_bandwidth_gbs = sweep_time > 0.0 ? sweep_bytes / sweep_time / 1e9 : 0.0;
  s.history = gather_history(comm, result.history, omp);
  s.batch_sizes = gather_batches(comm, result.batch_sizes);
  s.skipped_sends =
      par::rank_stats(comm, static_cast<double>(result.skipped_sends)).mean * comm.size();
  s.final_sync_iterations = result.final_sync_iterations;
  s.unconfirmed_stops = result.unconfirmed_stops;
  s.injected_s = par::rank_stats(comm, result.injected_s);
  s.allreduce = solved.allreduce;
  s.kernels = kernels_used(comm);
  s.halo = solved.halo;
  s.detail = result.detail;
  s.halo_tests = par::rank_stats(comm, static_cast<double>(result.halo_tests));
  s.halo_exchanges = result.halo_exchanges;
  s.progress_passes = par::rank_stats(comm, static_cast<double>(solved.progress_passes));
  s.idle_waits = par::rank_stats(comm, static_cast<double>(result.idle_waits));
  s.pc = result.pc;
  s.pc_setup_s = par::rank_stats(comm, result.pc.setup_s);
  s.pc_applies_behind_reduction = result.pc_applies_behind_reduction;
  s.matvecs_behind_reduction = result.matvecs_behind_reduction;
  s.restarts = result.restarts;
  s.refinements = result.refinements;
  s.repeats = repeats_over_ranks(comm, result.repeats);

  return s;
}

core::ExitCode report_solve(const par::Comm& comm, const std::vector<std::string>& command,
                            const std::string& started, const RunEnvironment& e,
                            const RunProblem& p, const SolveConfig& config, const RunSummary& s,
                            const solvers::SolveResult& result) {
  RunSummary summary = s;
  if (config.transport == Transport::rma) warn_of_rma_crowding(comm, &summary.warnings);
  // Rank 0 reports; a failure to write the document is broadcast so that
  // every rank returns the same exit code.
  int write_failed = 0;
  if (comm.is_root()) {
    std::fputs(format_summary(e, p, config, summary).c_str(), stdout);
    std::fflush(stdout);
    if (!config.json_path.empty()) {
      try {
        const auto doc = make_result_document(command, started, e, p, config, summary);
        core::write_file_atomic(config.json_path, core::document_text(doc));
        std::printf("  %-10s %s\n", "json", config.json_path.c_str());
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "asyncsolve: error: %s\n", ex.what());
        write_failed = 1;
      }
    }
  }
  par::check_mpi(MPI_Bcast(&write_failed, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
  if (write_failed != 0) return core::ExitCode::runtime_failure;
  // --repeat-solve: every solve must converge
  const bool all_converged =
      std::all_of(result.repeats.begin(), result.repeats.end(),
                  [](const solvers::RepeatedSolve& r) { return r.converged; });
  return result.converged && all_converged ? core::ExitCode::success
                                           : core::ExitCode::not_converged;
}

core::ExitCode run_solve(const SolveConfig& config, const par::Comm& world,
                         const par::Environment& env, const std::vector<std::string>& command) {
  if (is_lanczos(config)) return run_lanczos(config, world, env, command);
  if (is_sparse(config)) return run_sparse_solve(config, world, env, command);
  const std::string started = core::iso8601_now();
  check_json_path(config.json_path, world);
  const auto problem =
      grid::make_problem(model_problem(config.problem), grid::ProblemOptions{config.offset});
  const bool omp = config.transport == Transport::omp;
  const int threads = omp ? omp_threads(config) : 1;
  grid::Decomposition decomposition = grid::Decomposition::create(
      world, omp ? omp_decomposition_spec(config, world.size(), threads) : config.decomposition);
  const par::Comm& comm = decomposition.comm();
  // Simulated ranks are charged alike for every variant: nothing to measure.
  const bool simulated_auto =
      config.kernel == ops::Stencil7Kernel::automatic && par::is_simulated();
  ops::stencil7_set_kernel(simulated_auto ? ops::Stencil7Kernel::portable : config.kernel);
  Solved solved = is_krylov(config) ? solve_krylov(config, *problem, decomposition)
                  : omp             ? solve_jacobi_omp(config, *problem, decomposition, threads)
                                    : solve_jacobi(config, *problem, decomposition);
  const solvers::SolveResult& result = solved.result;
  const RunSummary s = summarise(comm, solved, omp);

  RunProblem p;
  p.name = std::string(problem->name());
  p.global = decomposition.global();
  p.local = decomposition.local();
  p.local_min = reduce_triple(comm, decomposition.local(), MPI_MIN);
  p.local_max = reduce_triple(comm, decomposition.local(), MPI_MAX);
  p.dims = decomposition.dims();
  p.parameters = problem->parameters();
  if (omp) {
    // The threads' slabs: local is thread 0's, dims the thread grid (1 x 1 x T).
    const int nz = decomposition.global()[2];
    int lo = nz;
    int hi = 0;
    for (int t = 0; t < threads; ++t) {
      const int planes =
          solvers::omp_plane_begin(t + 1, threads, nz) - solvers::omp_plane_begin(t, threads, nz);
      lo = std::min(lo, planes);
      hi = std::max(hi, planes);
    }
    p.local[2] = solvers::omp_plane_begin(1, threads, nz);
    p.local_min[2] = lo;
    p.local_max[2] = hi;
    p.dims = {1, 1, threads};
  }
  RunEnvironment e = describe_environment(comm, env);
  e.threads = omp ? threads : solved.threads;

  const core::ExitCode code = report_solve(comm, command, started, e, p, config, s, result);
  decomposition.free();
  return code;
}

}  // namespace asyncsolve::app
