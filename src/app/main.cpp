// The `asyncsolve` command: parse, start MPI, run a subcommand, stop together.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agreement.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/par/shmem.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace {

/// A message as one line of stderr (user text in it may hold newlines).
std::string one_line(const char* message) { return asyncsolve::core::printable(message, 4000); }

/// This rank's exit code. Every path that reaches the end of main is
/// collective (a rank-local failure aborts), and the outcome is rank 0's to
/// report: rank 0 exits with the largest code of any rank (reduced over the
/// world), the others with 0. A launcher ends the whole job at the first
/// non-zero exit it sees (Open MPI's mpirun kills the ranks still running);
/// were that another rank's, rank 0's summary, written but not yet
/// forwarded, could be lost. The launcher's own exit code stays the
/// outcome's (mpirun, mpiexec.hydra and srun pass on a non-zero code of any
/// rank). Collective, before MPI is finalized.
int rank_exit_code(bool root, asyncsolve::core::ExitCode code) {
  const int mine = asyncsolve::core::to_int(code);
  int worst = mine;
  if (MPI_Reduce(root ? MPI_IN_PLACE : &worst, root ? &worst : nullptr, 1, MPI_INT, MPI_MAX, 0,
                 MPI_COMM_WORLD) != MPI_SUCCESS) {
    worst = std::max(worst, mine);
  }
  return root ? worst : 0;
}

/// The refusal of Stencil2D's shmem variants outside a launcher (`launched`,
/// app::started_by_launcher before MPI_Init), or none.
std::optional<std::string> launcher_refusal(const asyncsolve::app::Command& command,
                                            bool launched) {
  using asyncsolve::app::Command;
  if (command.kind != Command::Kind::bench_stencil2d || !command.bench_stencil2d.uses_shmem() ||
      !asyncsolve::par::shmem_available() || launched) {
    return std::nullopt;
  }
  return "--transport shmem: not started by a launcher, expected to run under oshrun, e.g. "
         "'OMPI_MCA_osc=ucx oshrun -np 4 asyncsolve bench stencil2d --transport shmem'";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace asyncsolve;
  const std::vector<std::string> args(argv, argv + argc);
  if (args.size() == 2 && args[1] == "--check-command-lines") {
    return app::check_command_lines(std::cin, std::cout);  // no MPI: the lab's suite check
  }

  // Parsing is pure and identical on every rank; its verdict is acted on once
  // MPI is up, so that exactly rank 0 reports and every rank exits together.
  app::Command command;
  std::optional<std::string> parse_error;
  try {
    command = app::parse_command_line(args);
  } catch (const core::InputError& e) {
    parse_error = e.what();
  }
  // Before MPI_Init, which sets a singleton's PMIx variables too.
  const bool launched = app::started_by_launcher();
  // What this rank is about to do, as one number: ranks that failed to parse
  // agree with each other (each reports its own error, rank 0's is printed).
  const std::string config_text =
      parse_error ? std::string(app::unparsed_command) : app::canonical(command);
  const std::uint64_t config_hash = app::fnv1a(config_text);

  using Hybrid = comm::HybridMode;
  constexpr auto progress_thread = app::Progress::Mode::thread;
  const bool solve = command.kind == app::Command::Kind::solve;
  // info reports the most MPI can give; a progress thread needs it, and so
  // does --hybrid multiple (every thread makes its own MPI calls).
  const bool multiple = command.kind == app::Command::Kind::info ||
                        (solve && command.solve.progress.mode == progress_thread) ||
                        (solve && command.solve.hybrid == Hybrid::multiple) ||
                        (command.kind == app::Command::Kind::bench_allreduce &&
                         command.bench_allreduce.progress.mode == progress_thread);
  // OpenMP Jacobi runs threads that never call MPI: funneled. --hybrid
  // funneled calls MPI from thread 0 inside parallel regions: funneled.
  // --hybrid masteronly calls MPI only outside parallel regions (paper 002's
  // THREAD_MASTERONLY, which MPI has no name for): the standard's nearest
  // level that allows other threads to exist is funneled too.
  const bool funneled = solve && (command.solve.transport == app::Transport::omp ||
                                  command.solve.hybrid == Hybrid::funneled ||
                                  command.solve.hybrid == Hybrid::masteronly);
  const par::ThreadLevel level = multiple   ? par::ThreadLevel::multiple
                                 : funneled ? par::ThreadLevel::funneled
                                            : par::ThreadLevel::single;
#ifdef OPEN_MPI
  // Open MPI 4.1's osc/rdma, which Debian's configuration leaves as the
  // one-sided component, serialises MPI_Fetch_and_op under a lock at the
  // target; on a node whose ranks share cores, the rma channels' flags then
  // all but stop moving (docs/channels.md). The rma transport therefore asks
  // for any other component (osc/ucx for its windows, osc/sm stays for shared
  // ones) unless the user chose; the document records it (environment.mpi_osc).
  // Read at MPI_Init, so set before it; argv, hence the choice, is the same on
  // every rank.
  if (solve && command.solve.transport == app::Transport::rma &&
      std::getenv("OMPI_MCA_osc") == nullptr) {
    setenv("OMPI_MCA_osc", "^rdma", 0);
  }
#endif
  par::Environment env(argc, argv, level);
  // The one place that names the world: everything else gets a communicator.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  const bool root = world.is_root();
  // Before anything collective: every rank must run the same configuration,
  // or the first collective they do not share would wait for ever.
  if (!app::ranks_agree(world, config_hash)) {
    std::string why = app::disagreement_message(world, config_text);  // collective
    if (!parse_error) parse_error = std::move(why);
  }
  // OpenSHMEM starts after MPI, on every rank, only for --transport shmem
  // (argv, hence the decision, is the same everywhere).
  std::optional<par::Shmem> shmem;
  const bool wants_shmem =
      (solve && command.solve.transport == app::Transport::shmem) ||
      (command.kind == app::Command::Kind::bench_stencil2d && command.bench_stencil2d.uses_shmem());
  if (!parse_error) parse_error = launcher_refusal(command, launched);
  if (!parse_error && wants_shmem && par::shmem_available()) {
    // Open MPI's OSHMEM crashes in shmem_finalize unless its one-sided
    // component is UCX: refuse up front, on every rank together (the
    // environment could differ between nodes, so the ranks agree first).
    int bad =
        par::mpi_library_version().find("Open MPI") != std::string::npos && !app::mca_osc_is_ucx()
            ? 1
            : 0;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad != 0) {
      parse_error =
          "--transport shmem: Open MPI's OSHMEM needs OMPI_MCA_osc=ucx in the "
          "environment of every rank; expected e.g. 'OMPI_MCA_osc=ucx oshrun -np 4 "
          "asyncsolve solve --transport shmem ...'";
    } else {
      shmem.emplace();
    }
  }

  core::ExitCode code = core::ExitCode::success;
  try {
    if (parse_error) throw core::InputError(*parse_error);
    switch (command.kind) {
      case app::Command::Kind::help:
      case app::Command::Kind::version:
        if (root) std::fputs((command.text + "\n").c_str(), stdout);
        break;
      case app::Command::Kind::info:
        code = app::run_info(command.info, world, env);
        break;
      case app::Command::Kind::solve:
        code = app::run_solve(command.solve, world, env, args);
        break;
      case app::Command::Kind::bench_allreduce:
        code = app::run_bench_allreduce(command.bench_allreduce, world, env, args);
        break;
      case app::Command::Kind::bench_stencil2d:
        code = app::run_bench_stencil2d(command.bench_stencil2d, world, env, args);
        break;
      case app::Command::Kind::model_hybrid:
        code = app::run_model_hybrid(command.model_hybrid, world, args);
        break;
    }
  } catch (const core::InputError& e) {
    // Bad input is found identically on every rank: all stop here together.
    if (root) std::fprintf(stderr, "asyncsolve: error: %s\n", one_line(e.what()).c_str());
    code = core::ExitCode::bad_input;
  } catch (const core::CollectiveBreakdown& e) {
    // A breakdown every rank agreed on (a subdomain's factorisation).
    if (root) std::fprintf(stderr, "asyncsolve: error: %s\n", one_line(e.what()).c_str());
    code = core::ExitCode::not_converged;
  } catch (const core::CollectiveFailure& e) {
    // A runtime failure every rank met alike: all stop here together too.
    if (root) std::fprintf(stderr, "asyncsolve: error: %s\n", one_line(e.what()).c_str());
    code = core::ExitCode::runtime_failure;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "asyncsolve: rank %d: error: out of memory%s\n", world.rank(),
                 app::out_of_memory_hint(command).c_str());
    par::Environment::abort(core::to_int(core::ExitCode::runtime_failure));
  } catch (const std::exception& e) {
    // A rank-local failure: the others may be blocked in communication, so
    // the only way to stop everyone is to abort.
    std::fprintf(stderr, "asyncsolve: rank %d: error: %s\n", world.rank(),
                 one_line(e.what()).c_str());
    par::Environment::abort(core::to_int(core::ExitCode::runtime_failure));
  }
  std::fflush(stdout);
  const int exit_code = rank_exit_code(root, code);
  if (shmem) shmem->finalize();  // finalizes MPI too (Open MPI's OSHMEM)
  env.finalize();
  return exit_code;
}
