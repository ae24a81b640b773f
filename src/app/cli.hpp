#pragma once
// The command line: options of every subcommand, parsed and validated into
// plain config structs. Pure: no MPI, no output.
#include <optional>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/grid/decomposition.hpp"

namespace asyncsolve::app {

/// What --method lanczos --problem tfim takes (paper 004's SPIN benchmark).
struct SpinConfig {
  int sites = 16;                ///< n: 2^n states (chain; square: L W)
  bool sites_given = false;
  double coupling = 1.0;         ///< J of J sum_<ij> Z_i Z_j
  double field = 1.0;            ///< Gamma of Gamma sum_i X_i
  std::string lattice = "chain"; ///< chain or square:LxW
  int length = 0;                ///< square: L (0 for the chain)
  int width = 0;                 ///< square: W
  int buffers = 2;               ///< --transport mpi: K round-robin receive buffers
  long chunk = 32768;            ///< --transport mpi: doubles per message
  std::string rma_sync = "fence";  ///< --transport rma: fence or notify
};

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
  /// --transport omp, or --hybrid: OpenMP threads (per rank with --hybrid);
  /// 0 when --threads is not given (then omp_get_max_threads(), i.e.
  /// OMP_NUM_THREADS, at solve time).
  int threads = 0;
  /// --hybrid: none (pure MPI), masteronly, funneled or multiple (paper 002).
  std::string hybrid = "none";
  int slow_rank = -1;
  double slow_factor = 2.0;
  double noise_us = 0.0;
  double noise_hz = 0.0;
  long noise_seed = 1;
  // Krylov methods
  int test_every = 4;       ///< interior planes between tests of the halo exchange (0: never)
  std::string pc = "auto";  ///< resolved: none for cg, jacobi for pcg*, none or jacobi for pipecg
  double shift = 0.0;       ///< solve (A + shift I) x = b
  SpinConfig spin;          ///< --method lanczos --problem tfim
  // A general sparse system (--matrix), or a model problem assembled as one
  std::string matrix_path;          ///< --matrix FILE.mtx; empty: a model problem
  std::string rhs_path;             ///< --rhs FILE.mtx; empty: b = A * 1
  std::string x0_path;              ///< --x0 FILE.mtx; empty: x0 = 0
  std::string write_solution_path;  ///< --write-solution FILE.mtx; empty: none
  std::string partition = "block";  ///< --partition block|metis|scotch[:rows|:nnz]
  std::string scale = "none";       ///< --scale none|unit-diagonal
  bool force = false;               ///< --force: async/racy Jacobi although rho >= 1
  bool assemble = false;            ///< --assemble: the model problem as a CSR matrix
  double matrix_memory_gib = 0.0;   ///< --matrix-memory: rank 0's reading limit (0: half its memory)
};

/// True for --matrix or --assemble: the solve runs on a distributed CSR matrix.
bool is_sparse(const SolveConfig& config);

/// True for --method lanczos (the TFIM ground state, paper 004).
bool is_lanczos(const SolveConfig& config);

/// True for the Krylov methods (cg, pcg1, pcg2, pcg-overlap, pipecg).
bool is_krylov(const SolveConfig& config);

/// True when --hybrid names a scheme (not none).
bool is_hybrid(const SolveConfig& config);

/// The preconditioner `config` resolves to: "none" or "jacobi".
std::string resolved_pc(const SolveConfig& config);

/// The reduction algorithm `config` resolves to ("auto" depends on the variant).
std::string resolved_allreduce(const SolveConfig& config);

/// What `asyncsolve info` takes.
struct InfoConfig {};

/// One noise setting of `bench allreduce --modes noise`: every rank is
/// interrupted for `us` microseconds `hz` times per second.
struct NoiseSetting {
  double us = 0.0;
  double hz = 0.0;
};

/// What `asyncsolve bench allreduce` takes, validated except for the
/// algorithm names (checked by constructing each reduction once, collectively).
struct BenchAllreduceConfig {
  std::vector<std::string> algorithms{"mpi", "impi", "tree"};  ///< make_nonblocking_allreduce names
  std::vector<std::size_t> sizes_bytes;  ///< powers of two from -m MIN to MAX (8, 16, ..., 8192)
  std::string message_sizes = "8:8192";  ///< -m as given
  long iterations = 1000;                ///< -i: timed operations per measurement
  long warmup = 100;                     ///< -x: untimed operations before them
  int repeats = 3;                       ///< measurements of every figure (min/median/max)
  std::vector<std::string> modes{"latency", "overlap"};  ///< of latency, overlap, noise
  std::string progress = "none";         ///< overlap mode: none, poll:K or thread
  int progress_pieces = 1;               ///< K of poll:K (1: the compute is not cut)
  bool progress_thread = false;          ///< --progress thread (needs MPI_THREAD_MULTIPLE)
  grid::Int3 noise_global{64, 64, 64};   ///< the ones problem of the noise mode
  std::vector<NoiseSetting> noise{{50.0, 20.0}, {200.0, 1000.0}};
  std::string noise_allreduce = "impi";  ///< pcg-overlap's reduction (pcg2 uses mpi)
  std::string json_path;                 ///< empty: no result document

  bool has_mode(std::string_view mode) const;
};

/// One run of `bench stencil2d`: a variant over a transport.
struct Stencil2dRun {
  std::string transport;  ///< mpi, rma or shmem
  std::string variant;    ///< kernels::stencil2d_variant_names(transport)
  std::string name() const { return transport + "/" + variant; }
};

/// What `asyncsolve bench stencil2d` takes (paper 004's Stencil2D), fully
/// validated: sizes, radius against every size, variant x transport pairs,
/// and whether OpenSHMEM can be used.
struct BenchStencil2dConfig {
  std::vector<int> local_sizes{256};  ///< --local: n of the n x n block per rank, one run each
  int radius = 1;                     ///< --radius: halo width r, 1 <= r < every local size
  long iterations = 100;              ///< -i: timed iterations per measurement
  long warmup = 5;                    ///< -x: untimed iterations before them
  int repeats = 5;                    ///< measurements per figure (min/median/max)
  std::string transport_text = "auto";  ///< --transport as given
  std::string variant_text = "all";     ///< --variant as given
  std::vector<Stencil2dRun> runs;       ///< resolved, in order
  bool corrupt_corner = false;  ///< --test-corrupt-corner (hidden test hook): validation must fail
  std::string json_path;        ///< empty: no result document

  /// True if some run goes over OpenSHMEM (main starts it).
  bool uses_shmem() const;
};

/// What `asyncsolve model hybrid` takes (paper 002 §7.2): either the fractions
/// of T_masteronly (quantities mode) or a measured MVM sweep to fit (--fit).
/// Validated except for what depends on the sweep file (threads and reserved
/// taken from it are checked when it is read).
struct ModelHybridConfig {
  int threads = 0;   ///< n, threads per SMP node; 0: not given (--fit: the file's)
  int reserved = 0;  ///< m, threads reserved for communication; 0: not given (1, or the file's)
  double f_comm = 0.0;
  double f_comp_non = 0.0;
  std::optional<double> f_comp_overlap;  ///< given: the three must sum to 1 (eq. 1)
  std::string fit_path;                  ///< --fit FILE; empty: quantities mode
  std::optional<double> non_ratio;       ///< --non-ratio: x_MVM,non / x_MVM,overlap held fixed
  std::string non_ratio_text;            ///< --non-ratio as given ("1/6")
  std::string json_path;                 ///< empty: no document

  bool is_fit() const { return !fit_path.empty(); }
};

/// A parsed command line.
struct Command {
  enum class Kind { help, version, solve, info, bench_allreduce, bench_stencil2d, model_hybrid };
  Kind kind = Kind::help;
  std::string text;  ///< help or version text to print
  SolveConfig solve;
  InfoConfig info;
  BenchAllreduceConfig bench_allreduce;
  BenchStencil2dConfig bench_stencil2d;
  ModelHybridConfig model_hybrid;
};

/// Parses and validates `args` (args[0] is the program name). Throws
/// core::InputError with one line naming the bad value and what was expected.
Command parse_command_line(const std::vector<std::string>& args);

}  // namespace asyncsolve::app
