#pragma once
// The options of `asyncsolve solve`, parsed once into a typed SolveConfig:
// past validation nothing is text. Pure: no MPI, no output.
#include <optional>
#include <string>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/hybrid_stencil.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/ops/stencil7.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "option_table.hpp"
#include "options_common.hpp"
#include "schwarz_options.hpp"
#include "sparse_options.hpp"
#include "spin_options.hpp"

namespace asyncsolve::app {

/// --problem: the model problems (grid::make_problem) and paper 004's TFIM.
enum class Problem { plume, ones, laplace27, tfim };
template <>
struct EnumNames<Problem> {
  static constexpr std::array<std::string_view, 4> names{"plume", "ones", "laplace27", "tfim"};
};

/// --kernel: the 7-point stencil's variants, in the order of ops::Stencil7Kernel.
template <>
struct EnumNames<ops::Stencil7Kernel> {
  static constexpr const auto& names = ops::stencil7_kernel_names;
};

/// The grid layer's model problem of `problem`; throws std::logic_error for tfim.
grid::ModelProblem model_problem(Problem problem);

/// --method.
enum class Method {
  jacobi,
  cg,
  pcg1,
  pcg2,
  pcg_overlap,
  pipecg,
  lanczos,
  gmres,
  fgmres,
  pgmres,
  bicgstab,
  pipebicgstab,
  schwarz
};
template <>
struct EnumNames<Method> {
  static constexpr std::array<std::string_view, 13> names{
      "jacobi", "cg",     "pcg1",   "pcg2",     "pcg-overlap",  "pipecg", "lanczos",
      "gmres",  "fgmres", "pgmres", "bicgstab", "pipebicgstab", "schwarz"};
};

/// True for the Krylov methods (cg, pcg1, pcg2, pcg-overlap, pipecg, gmres,
/// fgmres, pgmres, bicgstab, pipebicgstab).
constexpr bool is_krylov(Method method) {
  return method != Method::jacobi && method != Method::lanczos && method != Method::schwarz;
}

/// True for the stationary iterations with sync, async and racy variants
/// (jacobi; schwarz: restricted additive Schwarz, solvers/schwarz_iteration.hpp).
constexpr bool is_stationary(Method method) {
  return method == Method::jacobi || method == Method::schwarz;
}

/// The solvers' KrylovMethod of a Krylov `method`; throws std::logic_error for
/// jacobi and lanczos.
solvers::KrylovMethod krylov_method(Method method);

/// --cgs-refinement, in solvers::CgsRefinement's order.
template <>
struct EnumNames<solvers::CgsRefinement> {
  static constexpr std::array<std::string_view, 4> names{"never", "ifneeded", "always", "delayed"};
};

/// --variant: synchronous, asynchronous (newest whole message) or racy Jacobi.
enum class Variant { sync, async, racy };
template <>
struct EnumNames<Variant> {
  static constexpr std::array<std::string_view, 3> names{"sync", "async", "racy"};
};

/// --transport of `solve`.
enum class Transport { mpi, rma, shmem, omp };
template <>
struct EnumNames<Transport> {
  static constexpr std::array<std::string_view, 4> names{"mpi", "rma", "shmem", "omp"};
};

/// --pc: the precond layer's kinds, spelled by its table.
template <>
struct EnumNames<precond::PcKind> {
  static constexpr const auto& names = precond::pc_kind_names;
};

/// Everything `asyncsolve solve` takes, validated and resolved except for
/// what depends on the rank count (checked when the decomposition is created).
struct SolveConfig {
  Problem problem = Problem::plume;
  double offset = 0.0;
  grid::DecompositionSpec decomposition;
  Method method = Method::jacobi;
  Variant variant = Variant::sync;
  Transport transport = Transport::mpi;
  comm::HaloStrategy halo = comm::HaloStrategy::waitall;
  /// --allreduce, resolved ("auto": mpi for sync Jacobi, tree for async and
  /// racy, impi for pcg-overlap and pipecg, mpi for the other Krylov methods
  /// and lanczos). Empty for --transport omp, whose threads reduce through
  /// shared memory (reduction_name()).
  std::optional<collectives::AllreduceAlgorithm> allreduce = collectives::AllreduceAlgorithm{};
  Progress progress;  ///< --progress
  double tol = 1e-4;  ///< resolved: 1e-4 for jacobi, 1e-6 for the Krylov methods unless given
  long max_iters = 100000;
  int check_every = 100;
  int halo_every = 1;
  bool copy = false;
  bool monitor = false;
  double monitor_every_s = 2.0;
  std::string json_path;  ///< empty: no result document
  /// R: 1, the optimum of paper 000 §6.3 (Figure 10) and of its reproduction
  /// here (docs/REPRODUCTION.md); the paper's initial experiments used 100.
  int max_in_flight = 1;
  int final_sync = 0;
  /// --idle on|off: async/racy Jacobi (mpi, rma, shmem, omp) wait for news
  /// instead of sweeping stale data. On unless --idle off.
  bool idle = true;
  /// --kernel: the variant of the 7-point stencil's kernels (automatic: the
  /// fastest, measured at the first sweep).
  ops::Stencil7Kernel kernel = ops::Stencil7Kernel::automatic;
  /// --max-time SECONDS: wall-clock guard of every solve (Jacobi and Krylov);
  /// 0 when not given (no guard).
  double max_time_s = 0.0;
  /// --transport omp, or --hybrid: OpenMP threads (per rank with --hybrid);
  /// 0 when --threads is not given (then omp_get_max_threads(), i.e.
  /// OMP_NUM_THREADS, at solve time).
  int threads = 0;
  /// --hybrid: none (pure MPI), masteronly, funneled or multiple (paper 002).
  comm::HybridMode hybrid = comm::HybridMode::none;
  int slow_rank = -1;
  double slow_factor = 2.0;
  double noise_us = 0.0;
  double noise_hz = 0.0;
  long noise_seed = 1;
  // Krylov methods
  int test_every = 4;  ///< interior planes between tests of the halo exchange (0: never)
  /// --pc and --pc-option as the precond layer takes them: the kind
  /// resolved (auto: none for jacobi, cg and pipecg, jacobi for pcg*, ilu0
  /// for the nonsymmetric methods, PETSc's default, block ILU(0)),
  /// chebyshev's degree, the typed options and their validated pairs.
  precond::PcSettings pc;
  double shift = 0.0;  ///< solve (A + shift I) x = b
  /// --repeat-solve: Krylov solves after one setup of the operator and the
  /// preconditioner, each from the same x0 and timed (1: one solve).
  int repeat_solves = 1;
  /// --restart: the GMRES family's restart length m.
  int restart = 30;
  /// --cgs-refinement: gmres and fgmres's second Gram-Schmidt pass.
  solvers::CgsRefinement refinement = solvers::CgsRefinement::delayed;
  SpinConfig spin;        ///< --method lanczos --problem tfim
  SparseConfig sparse;    ///< --matrix and its companions, --assemble
  SchwarzConfig schwarz;  ///< --block-size and --coordinates as given (the rest in pc)
};

/// True for --method lanczos (the TFIM ground state, paper 004).
bool is_lanczos(const SolveConfig& config);

/// True for the Krylov methods (cg, pcg1, pcg2, pcg-overlap, pipecg).
bool is_krylov(const SolveConfig& config);

/// True when --hybrid names a scheme (not none).
bool is_hybrid(const SolveConfig& config);

/// True for --matrix or --assemble: the solve runs on a distributed CSR matrix.
bool is_sparse(const SolveConfig& config);

/// The global reduction as the result document names it: the algorithm's
/// name, or for --transport omp "omp" (sync: an OpenMP reduction) or
/// "running-sum" (async and racy: the running shared sum).
std::string reduction_name(const SolveConfig& config);

/// The solve options as the command line gave them: text for what
/// validation turns into types, the numbers in `values`. CLI11 writes into
/// it, so it stays in place until validated.
struct SolveArgs {
  SolveConfig values;
  std::string problem = "plume";
  std::string global;
  std::string local;
  std::string dims;
  std::string method = "jacobi";
  std::string variant = "sync";
  std::string transport = "mpi";
  std::string hybrid = "none";
  std::string halo = "waitall";
  std::string pc{auto_choice};
  std::string pc_option;  ///< --pc-option, every occurrence joined by newlines
  std::string allreduce{auto_choice};
  std::string cgs_refinement = "delayed";
  std::string progress = "none";
  std::string idle;                 ///< --idle as given ("" when absent: on for async and racy)
  std::string kernel{auto_choice};  ///< --kernel as given
  CLI::Option* tol = nullptr;
  CLI::Option* check_every = nullptr;
  CLI::Option* max_time = nullptr;
  CLI::Option* threads = nullptr;
  SpinArgs spin;
  SparseArgs sparse;
  SchwarzArgs schwarz;
};

/// Declares every option of `solve` in `table` (help text, default, range,
/// where it applies), writing into `args`.
void add_solve_options(OptionTable& table, SolveArgs& args);

/// After the parse: the validated, resolved config. Throws core::InputError
/// with one line naming the bad value and what was expected, including an
/// option given where it does nothing (table.refuse_inapplicable).
SolveConfig validate_solve(const SolveArgs& args, const OptionTable& table);

/// The configuration the solve table's options are judged against:
/// --problem, --method, --variant, --transport and --hybrid as resolved.
Context solve_context(const SolveConfig& config);

}  // namespace asyncsolve::app
