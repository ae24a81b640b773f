#pragma once
// The command line: options of every subcommand, parsed and validated into
// plain config structs. Pure: no MPI, no output.
#include <optional>
#include <string>
#include <vector>

#include "asyncsolve/grid/decomposition.hpp"

namespace asyncsolve::app {

/// Everything `asyncsolve solve` takes, validated except for what depends on
/// the rank count (checked when the decomposition is created).
struct SolveConfig {
  std::string problem = "plume";
  double offset = 0.0;
  grid::DecompositionSpec decomposition;
  std::string method = "jacobi";
  std::string variant = "sync";
  std::string transport = "mpi";
  std::string halo = "waitall";
  std::string allreduce = "auto";  ///< resolved: mpi for sync, tree for async/racy
  std::string progress = "none";
  int progress_planes = 0;  ///< K of --progress poll:K (0 for none)
  int progress_thread_us = -1;  ///< --progress thread[:US]: the thread's sleep; -1 for no thread
  double tol = 1e-4;  ///< resolved: 1e-4 for jacobi, 1e-6 for the Krylov methods unless given
  long max_iters = 100000;
  int check_every = 100;
  int halo_every = 1;
  bool copy = false;
  bool monitor = false;
  double monitor_every_s = 2.0;
  std::string json_path;  ///< empty: no result document
  int max_in_flight = 100;
  int final_sync = 0;
  /// --transport omp: OpenMP threads; 0 when --threads is not given (then
  /// omp_get_max_threads(), i.e. OMP_NUM_THREADS, at solve time).
  int threads = 0;
  int slow_rank = -1;
  double slow_factor = 2.0;
  double noise_us = 0.0;
  double noise_hz = 0.0;
  long noise_seed = 1;
  // Krylov methods
  int test_every = 4;       ///< interior planes between tests of the halo exchange (0: never)
  std::string pc = "auto";  ///< resolved: none for cg, jacobi for pcg*, none or jacobi for pipecg
  double shift = 0.0;       ///< solve (A + shift I) x = b
};

/// True for the Krylov methods (cg, pcg1, pcg2, pcg-overlap, pipecg).
bool is_krylov(const SolveConfig& config);

/// The preconditioner `config` resolves to: "none" or "jacobi".
std::string resolved_pc(const SolveConfig& config);

/// The reduction algorithm `config` resolves to ("auto" depends on the variant).
std::string resolved_allreduce(const SolveConfig& config);

/// What `asyncsolve info` takes.
struct InfoConfig {};

/// A parsed command line.
struct Command {
  enum class Kind { help, version, solve, info };
  Kind kind = Kind::help;
  std::string text;  ///< help or version text to print
  SolveConfig solve;
  InfoConfig info;
};

/// Parses and validates `args` (args[0] is the program name). Throws
/// core::InputError with one line naming the bad value and what was expected.
Command parse_command_line(const std::vector<std::string>& args);

}  // namespace asyncsolve::app
