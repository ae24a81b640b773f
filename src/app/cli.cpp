#include "cli.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/kernels/stencil2d.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/par/shmem.hpp"
#include "asyncsolve/comm/hybrid_stencil.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "asyncsolve/sparse/partition.hpp"
#include "asyncsolve/version.hpp"
#include "spin_options.hpp"

namespace asyncsolve::app {
namespace {

using core::InputError;

void expect_one_of(std::string_view option, const std::string& value,
                   const std::vector<std::string>& allowed, std::string_view note = {}) {
  for (const auto& a : allowed)
    if (a == value) return;
  throw InputError(fmt::format("{} '{}': expected {}{}{}", option, value,
                               allowed.size() == 1 ? "" : "one of ", fmt::join(allowed, ", "),
                               note));
}

struct RawSolve {
  std::string global;
  std::string local;
  std::string dims;
  CLI::Option* tol = nullptr;
  CLI::Option* threads = nullptr;
  CLI::Option* problem = nullptr;
  CLI::Option* matrix_memory = nullptr;
};

std::vector<std::string> method_names() {
  std::vector<std::string> names{"jacobi"};
  for (const auto& m : solvers::krylov_method_names()) names.push_back(m);
  names.push_back("lanczos");
  return names;
}

void add_solve_options(CLI::App& solve, SolveConfig& c, RawSolve& raw) {
  solve.option_defaults()->always_capture_default();
  raw.problem = solve.add_option("--problem", c.problem,
                   "Model problem: plume (paper 000), ones (paper 001), laplace27 (paper 003's "
                   "27-point Laplacian, b = 1; Krylov methods only) or tfim (paper 004's "
                   "transverse-field Ising model; --method lanczos)");
  solve.add_option("--offset", c.offset,
                   "Added to plume's boundary values and initial guess (paper 000 §6.1)");
  solve.add_option("--global", raw.global,
                   "Global interior grid NX,NY,NZ, split so local sizes differ by at most one")
      ->default_str("");
  solve.add_option("--local", raw.local,
                   "Interior points per rank NX,NY,NZ (weak scaling); the default when "
                   "--global is not given")
      ->default_str("50,50,50");
  solve.add_option("--dims", raw.dims, "Process grid PX,PY,PZ (default: MPI_Dims_create)")
      ->default_str("auto");
  solve.add_option("--method", c.method,
                   "Solver: jacobi, cg (paper 001), pcg1 (hypre's PCG, DiagScale), pcg2 "
                   "(DiagInvScale), pcg-overlap (pcg2 with non-blocking inner products), pipecg "
                   "(pipelined CG) or lanczos (ground state of --problem tfim)");
  solve.add_option("--variant", c.variant,
                   "Jacobi variant: sync, async (newest whole halo message), racy (freshest data)");
  solve.add_option("--transport", c.transport,
                   "Communication transport: mpi (two-sided), rma (MPI-3 one-sided), shmem "
                   "(OpenSHMEM; run under oshrun) or omp (Jacobi with OpenMP threads on one "
                   "rank, paper 000 §3.3)");
  raw.threads = solve.add_option("--threads", c.threads,
                                 "--transport omp: OpenMP threads, each owning a slab of z-planes "
                                 "(with --local, the grid grows in z with the threads); with "
                                 "--hybrid: OpenMP threads per MPI rank")
                    ->default_str("OMP_NUM_THREADS, or omp_get_max_threads()");
  solve.add_option("--hybrid", c.hybrid,
                   "Hybrid MPI+OpenMP (paper 002) for sync Jacobi over mpi and the Krylov "
                   "mat-vec, --threads per rank: none (pure MPI), masteronly (the master "
                   "exchanges halos outside parallel regions), funneled (thread 0 exchanges "
                   "while the others compute the interior; MPI_THREAD_FUNNELED) or multiple "
                   "(every thread exchanges some of the halo messages; MPI_THREAD_MULTIPLE)");
  solve.add_option("--halo", c.halo,
                   "Halo exchange strategy: waitall (Isend/Irecv + Waitall), alltoallv, "
                   "ialltoallv, neighbor, persistent");
  solve.add_option("--test-every", c.test_every,
                   "Krylov: call MPI_Test on the halo exchange every K interior planes of the "
                   "mat-vec (0: never; paper 001 §3.4)");
  solve.add_option("--pc", c.pc,
                   "Krylov preconditioner: auto (none for cg, jacobi for pcg1/pcg2/pcg-overlap, "
                   "none for pipecg), none or jacobi (pipecg)");
  solve.add_option("--shift", c.shift,
                   "Krylov: solve (A + shift I) x = b; a shift below -lambda_min(A) makes A "
                   "indefinite and CG breaks down");
  solve.add_option("--allreduce", c.allreduce,
                   "Reduction: auto (jacobi: mpi for sync, tree otherwise; Krylov: impi for "
                   "pcg-overlap and pipecg, mpi otherwise), mpi (MPI_Allreduce), impi "
                   "(MPI_Iallreduce), tree (asynchronous binary tree), rd (recursive doubling), "
                   "knomial:K (k-nomial reduce + broadcast, K >= 2) or twolevel:ALG (node "
                   "leaders run ALG: rd, knomial:K, mpi or impi); sync Jacobi runs any of them "
                   "to completion at each check, async and racy take any but mpi");
  solve.add_option("--max-in-flight", c.max_in_flight,
                   "Async/racy: unacknowledged halo messages per neighbour and direction (R), 1..512");
  solve.add_option("--final-sync", c.final_sync,
                   "Async/racy: up to K synchronous iterations after the asynchronous stop, until "
                   "the true residual is below --tol");
  solve.add_option("--slow-rank", c.slow_rank,
                   "Fault injection: this rank's sweeps take --slow-factor times longer (-1: none)");
  solve.add_option("--slow-factor", c.slow_factor, "Slow-down of --slow-rank, >= 1");
  solve.add_option("--noise-us", c.noise_us,
                   "Noise injection: every rank is interrupted for this many microseconds ...");
  solve.add_option("--noise-hz", c.noise_hz, "... this many times per second (0: no noise)");
  solve.add_option("--noise-seed", c.noise_seed, "Seed of each rank's noise phase");
  solve.add_option("--progress", c.progress,
                   "Communication progress: none (only in the solver's own MPI calls), poll:K "
                   "(Jacobi async/racy: also every K planes of the sweep) or thread[:US] "
                   "(Krylov, and async/racy Jacobi over mpi or rma: a reserved communication "
                   "thread, sleeping US microseconds between passes; needs "
                   "MPI_THREAD_MULTIPLE)");
  raw.tol = solve.add_option("--tol", c.tol, "Stop when ||b - Au||_2 / ||b||_2 < tol")
                ->default_str("1e-4 for jacobi, 1e-6 for the Krylov methods");
  solve.add_option("--max-iters", c.max_iters, "Stop after this many iterations");
  solve.add_option("--check-every", c.check_every,
                   "Compute the global residual every K iterations");
  solve.add_option("--halo-every", c.halo_every,
                   "Swap halos only every N iterations (paper 000 §6.3)");
  solve.add_flag("--copy", c.copy, "Copy u_new into u each iteration instead of swapping pointers");
  solve.add_flag("--monitor", c.monitor, "Print iteration, residual and rate from rank 0");
  solve.add_option("--monitor-every", c.monitor_every_s,
                   "Seconds between --monitor lines (each residual check at most)");
  solve.add_option("--json", c.json_path, "Write the result document to this file")
      ->default_str("");
  add_spin_options(solve, c);
  solve.add_option("--matrix", c.matrix_path,
                   "Solve A x = b for the square matrix of this Matrix Market file (read on "
                   "rank 0, distributed by rows; instead of --problem)")
      ->default_str("");
  solve.add_option("--rhs", c.rhs_path, "--matrix: b from this Matrix Market file (N x 1); "
                                        "default b = A * 1, whose solution is all ones")
      ->default_str("");
  solve.add_option("--x0", c.x0_path, "--matrix: the initial guess from this file (default 0)")
      ->default_str("");
  solve.add_option("--write-solution", c.write_solution_path,
                   "--matrix: write x to this Matrix Market file (N x 1, the file's row order)")
      ->default_str("");
  solve.add_option("--partition", c.partition,
                   "--matrix: block (contiguous rows), metis or scotch (graph partitioning of "
                   "the symmetrised pattern); :rows or :nnz balances rows or non-zeros");
  solve.add_option("--scale", c.scale,
                   "--matrix or --assemble: none, or unit-diagonal (solve D^-1/2 A D^-1/2 y = "
                   "D^-1/2 b, x = D^-1/2 y)");
  solve.add_flag("--force", c.force,
                 "Run async or racy Jacobi even when rho(|D^-1 (A - D)|) >= 1 (no convergence "
                 "guarantee)");
  solve.add_flag("--assemble", c.assemble,
                 "Assemble the model problem (ones, plume, laplace27) as a distributed CSR "
                 "matrix and solve with the sparse operator");
  raw.matrix_memory = solve.add_option("--matrix-memory", c.matrix_memory_gib,
                                       "--matrix: GiB rank 0 may use to read the file (default: "
                                       "half of its node's memory)");
}

/// What --matrix and --assemble take, and what they refuse.
void validate_sparse(const SolveConfig& c, const RawSolve& raw) {
  const bool matrix = !c.matrix_path.empty();
  const auto refuse = [](bool given, const std::string& message) {
    if (given) throw InputError(message);
  };
  const bool problem_given = raw.problem != nullptr && raw.problem->count() > 0;
  refuse(matrix && problem_given,
         fmt::format("--matrix with --problem {}: expected one of them (a matrix file or a model "
                     "problem)",
                     c.problem));
  refuse(matrix && !raw.global.empty(), "--matrix with --global: the matrix sets the size, "
                                        "expected no --global");
  refuse(matrix && !raw.local.empty(), "--matrix with --local: the matrix sets the size, "
                                       "expected no --local");
  refuse(matrix && !raw.dims.empty(), "--matrix with --dims: rows are partitioned "
                                      "(--partition), expected no --dims");
  refuse(matrix && c.assemble, "--assemble with --matrix: --assemble builds a model problem's "
                               "matrix, expected one of them");
  for (const auto& [option, value] :
       {std::pair<std::string_view, const std::string&>{"--rhs", c.rhs_path},
        {"--x0", c.x0_path},
        {"--write-solution", c.write_solution_path}}) {
    refuse(!matrix && !value.empty(),
           fmt::format("{} {}: applies to --matrix, expected --matrix FILE.mtx", option, value));
  }
  refuse(!matrix && c.partition != "block",
         fmt::format("--partition {}: applies to --matrix, expected --matrix FILE.mtx",
                     c.partition));
  refuse(!matrix && raw.matrix_memory != nullptr && raw.matrix_memory->count() > 0,
         "--matrix-memory: applies to --matrix, expected --matrix FILE.mtx");
  expect_one_of("--scale", c.scale, {"none", "unit-diagonal"});
  refuse(!is_sparse(c) && c.scale != "none",
         fmt::format("--scale {}: applies to --matrix or --assemble", c.scale));
  refuse(!is_sparse(c) && c.force, "--force: applies to --matrix or --assemble (the model "
                                   "problems always satisfy rho < 1)");
  if (!is_sparse(c)) return;
  if (matrix) sparse::parse_partition(c.partition);  // unknown, or not in this build: exit 2
  refuse(!(c.matrix_memory_gib >= 0.0) || !std::isfinite(c.matrix_memory_gib),
         fmt::format("--matrix-memory {}: expected a number of GiB > 0", c.matrix_memory_gib));
  refuse(raw.matrix_memory != nullptr && raw.matrix_memory->count() > 0 &&
             !(c.matrix_memory_gib > 0.0),
         fmt::format("--matrix-memory {}: expected a number of GiB > 0", c.matrix_memory_gib));
  const std::string what = matrix ? "--matrix" : "--assemble";
  refuse(c.method == "lanczos" || c.problem == "tfim",
         fmt::format("{} with {}: Lanczos runs on the TFIM Hamiltonian, expected another method",
                     what, c.method == "lanczos" ? "--method lanczos" : "--problem tfim"));
  refuse(c.transport == "omp", fmt::format("{} with --transport omp: OpenMP Jacobi runs on the "
                                           "structured problems, expected mpi, rma or shmem",
                                           what));
  refuse(is_hybrid(c), fmt::format("{} with --hybrid {}: the hybrid schemes run on the "
                                   "structured problems, expected --hybrid none",
                                   what, c.hybrid));
  refuse(c.copy, fmt::format("{} with --copy: the sparse Jacobi swaps its vectors, expected no "
                             "--copy",
                             what));
  refuse(matrix && c.shift != 0.0,
         fmt::format("--shift {} with --matrix: expected 0 (add the shift to the matrix)",
                     c.shift));
  refuse(matrix && c.offset != 0.0,
         fmt::format("--offset {} with --matrix: expected 0 (a plume parameter)", c.offset));
}

/// `thread` or `thread:US` (US >= 0): sets progress_thread_us and returns
/// true; false for anything else.
bool parse_progress_thread(SolveConfig& c) {
  if (c.progress == "thread") {
    c.progress_thread_us = 0;
    return true;
  }
  if (!c.progress.starts_with("thread:")) return false;
  const std::string us = c.progress.substr(7);
  int value = -1;
  const auto [ptr, ec] = std::from_chars(us.data(), us.data() + us.size(), value);
  if (us.empty() || ec != std::errc{} || ptr != us.data() + us.size() || value < 0) return false;
  c.progress_thread_us = value;
  return true;
}

/// What only the Krylov methods take, and the Jacobi options they refuse.
void validate_krylov(SolveConfig& c) {
  const auto refuse = [&](bool given, std::string_view option, std::string_view expected) {
    if (given) {
      throw InputError(fmt::format("{} with --method {}: {} applies to jacobi only, expected {}",
                                   option, c.method, option.substr(0, option.find(' ')),
                                   expected));
    }
  };
  refuse(c.variant != "sync", fmt::format("--variant {}", c.variant), "sync (the default)");
  refuse(c.transport != "mpi", fmt::format("--transport {}", c.transport), "mpi (the default)");
  refuse(c.halo_every != 1, fmt::format("--halo-every {}", c.halo_every), "1");
  refuse(c.copy, "--copy", "no --copy");
  if (c.progress != "none" && !parse_progress_thread(c)) {
    throw InputError(fmt::format("--progress '{}' with --method {}: expected none or thread or "
                                 "thread:US with US >= 0 (Krylov methods poll through "
                                 "--test-every)",
                                 c.progress, c.method));
  }
  if (c.test_every < 0) {
    throw InputError(fmt::format("--test-every {}: expected an integer >= 0", c.test_every));
  }
  if (!std::isfinite(c.shift)) {
    throw InputError(fmt::format("--shift {}: expected a finite number", c.shift));
  }
  if (c.pc == "auto") return;
  if (c.method == "pipecg") {
    expect_one_of("--pc", c.pc, {"auto", "none", "jacobi"});
  } else if (c.method == "cg") {
    expect_one_of("--pc", c.pc, {"auto", "none"}, " (cg is unpreconditioned; pcg1, pcg2 and "
                  "pcg-overlap use jacobi)");
  } else {
    expect_one_of("--pc", c.pc, {"auto", "jacobi"},
                  fmt::format(" ({} is the Jacobi-preconditioned CG of paper 003)", c.method));
  }
}

/// What --transport omp takes (checks that need the rank count or the grid
/// are made when the solve starts).
void validate_omp(const SolveConfig& c, const RawSolve& raw) {
  if (raw.threads != nullptr && raw.threads->count() > 0 && c.threads < 1) {
    throw InputError(fmt::format("--threads {}: expected an integer >= 1", c.threads));
  }
  const auto refuse = [&](bool given, const std::string& what, std::string_view expected) {
    if (given) {
      throw InputError(fmt::format("{} with --transport omp: expected {}", what, expected));
    }
  };
  refuse(c.halo_every != 1, fmt::format("--halo-every {}", c.halo_every),
         "1 (threads read their neighbours' planes directly)");
  refuse(c.progress != "none", fmt::format("--progress {}", c.progress), "none");
  refuse(c.slow_rank != -1, fmt::format("--slow-rank {}", c.slow_rank),
         "-1 (fault injection is for MPI ranks)");
  refuse(c.noise_hz != 0.0, fmt::format("--noise-hz {}", c.noise_hz),
         "0 (noise injection is for MPI ranks)");
  refuse(c.allreduce != "auto", fmt::format("--allreduce {}", c.allreduce),
         "auto (threads reduce through shared memory)");
}

/// What --hybrid takes (the thread count against the planes of the block is
/// checked when the solve starts, and MPI_THREAD_MULTIPLE once MPI is up).
void validate_hybrid(const SolveConfig& c, const RawSolve& raw) {
  const std::vector<std::string> modes = comm::hybrid_mode_names();
  std::vector<std::string> allowed{"none"};
  allowed.insert(allowed.end(), modes.begin(), modes.end());
  expect_one_of("--hybrid", c.hybrid, allowed);
  const bool threads_given = raw.threads != nullptr && raw.threads->count() > 0;
  if (!is_hybrid(c)) return;
  if (threads_given && c.threads < 1) {
    throw InputError(fmt::format("--threads {}: expected an integer >= 1", c.threads));
  }
  const auto refuse = [&](bool given, const std::string& what, std::string_view expected) {
    if (given) {
      throw InputError(fmt::format("--hybrid {} with {}: expected {}", c.hybrid, what, expected));
    }
  };
  refuse(c.transport != "mpi", fmt::format("--transport {}", c.transport),
         "--transport mpi (hybrid schemes run over MPI two-sided; --transport omp is OpenMP "
         "alone)");
  refuse(!is_krylov(c) && c.variant != "sync", fmt::format("--variant {}", c.variant),
         "--variant sync (the hybrid schemes are written for synchronous Jacobi)");
  refuse(c.progress != "none", fmt::format("--progress {}", c.progress),
         "--progress none (the hybrid schemes place MPI calls on threads themselves)");
  refuse(c.hybrid == "multiple" && c.halo != "waitall", fmt::format("--halo {}", c.halo),
         "--halo waitall (multiple exchanges each halo message with its own "
         "MPI_Isend/MPI_Irecv on the thread that owns it)");
}

void validate(SolveConfig& c, const RawSolve& raw) {
  if (!raw.global.empty()) c.decomposition.global = core::parse_triple(raw.global, "--global");
  if (!raw.local.empty()) c.decomposition.local = core::parse_triple(raw.local, "--local");
  if (!raw.dims.empty()) c.decomposition.dims = core::parse_triple(raw.dims, "--dims");
  if (c.decomposition.global && c.decomposition.local) {
    throw InputError("--global and --local both given: expected one of them");
  }
  validate_sparse(c, raw);
  if (c.method == "lanczos" || c.problem == "tfim") {
    validate_spin(c, SpinRaw{!raw.global.empty() || !raw.local.empty() || !raw.dims.empty(),
                             raw.tol != nullptr && raw.tol->count() > 0,
                             raw.threads != nullptr && raw.threads->count() > 0});
    return;
  }
  expect_one_of("--problem", c.problem, grid::problem_names());
  if (!std::isfinite(c.offset)) throw InputError(fmt::format("--offset {}: expected a finite number", c.offset));
  if (c.offset != 0.0 && c.problem != "plume") {
    throw InputError(fmt::format("--offset {}: only the plume problem takes an offset, expected 0 "
                                 "with --problem {}",
                                 c.offset, c.problem));
  }
  expect_one_of("--method", c.method, method_names());
  if (raw.tol != nullptr && raw.tol->count() == 0) c.tol = is_krylov(c) ? 1e-6 : 1e-4;
  if (is_krylov(c)) validate_krylov(c);
  if (!is_krylov(c) && c.problem == "laplace27" && !c.assemble) {
    throw InputError(fmt::format("--problem laplace27 with --method {}: the 27-point problem is "
                                 "solved by the Krylov methods, expected one of {}",
                                 c.method, fmt::join(solvers::krylov_method_names(), ", ")));
  }
  if (!is_krylov(c)) {
    if (c.pc != "auto") {
      throw InputError(fmt::format("--pc {} with --method jacobi: expected auto (Jacobi takes no "
                                   "preconditioner)",
                                   c.pc));
    }
    if (c.shift != 0.0) {
      throw InputError(fmt::format("--shift {} with --method jacobi: expected 0 (the shift applies "
                                   "to the Krylov methods)",
                                   c.shift));
    }
  }
  expect_one_of("--variant", c.variant, {"sync", "async", "racy"});
  expect_one_of("--transport", c.transport, {"mpi", "rma", "shmem", "omp"});
  validate_hybrid(c, raw);
  if (c.transport == "omp") {
    validate_omp(c, raw);
  } else if (raw.threads != nullptr && raw.threads->count() > 0 && !is_hybrid(c)) {
    throw InputError(fmt::format("--threads {} with --transport {}: threads apply to "
                                 "--transport omp or --hybrid, expected no --threads",
                                 c.threads, c.transport));
  }
  if (c.transport == "shmem" && !par::shmem_available()) {
    throw InputError("--transport shmem: this build of asyncsolve has no OpenSHMEM");
  }
  expect_one_of("--halo", c.halo, comm::halo_exchange_names());
  if (is_krylov(c)) {
    if (c.allreduce != "auto") collectives::check_allreduce_name(c.allreduce);
  } else if (c.variant == "sync") {
    // Any algorithm, run to completion (start + wait) at each residual check.
    if (c.allreduce != "auto") collectives::check_allreduce_name(c.allreduce);
  } else {
    if (c.allreduce == "mpi") {
      expect_one_of("--allreduce", c.allreduce, {"auto", "tree", "impi"},
                    fmt::format(" or another non-blocking algorithm (the {} variant needs a "
                                "non-blocking reduction)",
                                c.variant));
    }
    if (c.allreduce != "auto") collectives::check_allreduce_name(c.allreduce);
  }
  if (c.copy && c.variant != "sync") {
    throw InputError(fmt::format("--copy with --variant {}: the copy loop exists only in the sync "
                                 "variant, expected no --copy",
                                 c.variant));
  }
  if (c.max_in_flight < 1 || c.max_in_flight > 512) {
    throw InputError(fmt::format("--max-in-flight {}: expected an integer from 1 to 512",
                                 c.max_in_flight));
  }
  if (c.final_sync < 0) {
    throw InputError(fmt::format("--final-sync {}: expected an integer >= 0", c.final_sync));
  }
  if (c.slow_rank < -1) {
    throw InputError(fmt::format("--slow-rank {}: expected a rank, or -1 for none", c.slow_rank));
  }
  if (!(c.slow_factor >= 1.0) || !std::isfinite(c.slow_factor)) {
    throw InputError(fmt::format("--slow-factor {}: expected a number >= 1", c.slow_factor));
  }
  if (!(c.noise_us >= 0.0) || !std::isfinite(c.noise_us)) {
    throw InputError(fmt::format("--noise-us {}: expected a number of microseconds >= 0", c.noise_us));
  }
  if (!(c.noise_hz >= 0.0) || !std::isfinite(c.noise_hz)) {
    throw InputError(fmt::format("--noise-hz {}: expected a frequency >= 0", c.noise_hz));
  }
  if (c.noise_us * 1e-6 * c.noise_hz >= 1.0) {
    throw InputError(fmt::format("--noise-us {} at --noise-hz {}: interrupts take all the time; "
                                 "expected noise_us * 1e-6 * noise_hz < 1",
                                 c.noise_us, c.noise_hz));
  }
  if (c.progress != "none" && !is_krylov(c) && c.progress.starts_with("thread")) {
    if (!parse_progress_thread(c)) {
      throw InputError(fmt::format("--progress '{}': expected none, poll:K with K >= 1, or "
                                   "thread or thread:US with US >= 0",
                                   c.progress));
    }
    if (c.variant == "sync" || (c.transport != "mpi" && c.transport != "rma")) {
      throw InputError(fmt::format("--progress {} with --variant {} --transport {}: a progress "
                                   "thread serves async and racy Jacobi over mpi or rma, expected "
                                   "none or poll:K",
                                   c.progress, c.variant, c.transport));
    }
  } else if (c.progress != "none" && !is_krylov(c)) {
    const auto fail = [&] {
      return InputError(fmt::format("--progress '{}': expected none, poll:K with K >= 1, or "
                                    "thread[:US]",
                                    c.progress));
    };
    if (!c.progress.starts_with("poll:")) throw fail();
    const std::string k = c.progress.substr(5);
    int value = 0;
    const auto [ptr, ec] = std::from_chars(k.data(), k.data() + k.size(), value);
    if (k.empty() || ec != std::errc{} || ptr != k.data() + k.size() || value < 1) throw fail();
    if (c.variant == "sync") {
      throw InputError(fmt::format("--progress {} with the sync variant: its exchanges block, "
                                   "expected none (poll:K applies to async and racy)",
                                   c.progress));
    }
    c.progress_planes = value;
  }
  if (!(c.tol > 0.0) || !std::isfinite(c.tol)) {
    throw InputError(fmt::format("--tol {}: expected a positive number", c.tol));
  }
  if (c.max_iters < 0) {
    throw InputError(fmt::format("--max-iters {}: expected an integer >= 0", c.max_iters));
  }
  if (c.check_every < 1) {
    throw InputError(fmt::format("--check-every {}: expected an integer >= 1", c.check_every));
  }
  if (c.halo_every < 1) {
    throw InputError(fmt::format("--halo-every {}: expected an integer >= 1", c.halo_every));
  }
  if (!(c.monitor_every_s >= 0.0) || !std::isfinite(c.monitor_every_s)) {
    throw InputError(fmt::format("--monitor-every {}: expected a number of seconds >= 0",
                                 c.monitor_every_s));
  }
}

/// Raw text of the `bench allreduce` options that need parsing.
struct RawBench {
  std::string algorithms = "mpi,impi,tree";
  std::string modes = "latency,overlap";
  std::string noise_global = "64,64,64";
  std::string noise = "50:20,200:1000";
};

constexpr std::size_t bench_min_bytes = 8;              // one double
constexpr std::size_t bench_max_bytes = 8u << 20;       // 8 MiB: 2^20 doubles

void add_bench_allreduce_options(CLI::App& bench, BenchAllreduceConfig& c, RawBench& raw) {
  bench.option_defaults()->always_capture_default();
  bench.add_option("--algorithms", raw.algorithms,
                   "Comma-separated reductions (collectives::make_nonblocking_allreduce names), "
                   "e.g. mpi (MPI_Allreduce), impi (MPI_Iallreduce), tree (asynchronous binary "
                   "tree)");
  bench.add_option("-m,--message-size", c.message_sizes,
                   "Message sizes MIN:MAX in bytes (or MAX): powers of two, 8 <= MIN <= MAX <= "
                   "8388608; doubles = bytes / 8");
  bench.add_option("-i,--iterations", c.iterations, "Timed operations per measurement");
  bench.add_option("-x,--warmup", c.warmup, "Untimed warm-up operations before them");
  bench.add_option("--repeats", c.repeats,
                   "Measurements of every figure, interleaved; min/median/max are reported");
  bench.add_option("--modes", raw.modes,
                   "Comma-separated: latency (start+wait), overlap (start, calibrated compute, "
                   "wait; IMB-NBC), noise (pcg2 vs pcg-overlap under injected noise)");
  bench.add_option("--progress", c.progress,
                   "Overlap mode: none (test only in wait), poll:K (the compute cut into K "
                   "pieces with a test between them) or thread (a progress thread; "
                   "MPI_THREAD_MULTIPLE)");
  bench.add_option("--noise-global", raw.noise_global,
                   "Noise mode: global grid NX,NY,NZ of the ones problem");
  bench.add_option("--noise", raw.noise,
                   "Noise mode: comma-separated US:HZ settings (interrupts of US microseconds, "
                   "HZ per second)");
  bench.add_option("--noise-allreduce", c.noise_allreduce,
                   "Noise mode: pcg-overlap's reduction (pcg2 uses mpi)");
  bench.add_option("--json", c.json_path, "Write the result document to this file")
      ->default_str("");
}

/// Splits a comma-separated list; an empty item is an error naming `option`.
std::vector<std::string> split_list(std::string_view option, const std::string& text,
                                    std::string_view expected) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(',', begin);
    std::string item =
        text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (item.empty()) {
      throw InputError(fmt::format("{} '{}': empty item, expected {}", option, text, expected));
    }
    for (const auto& seen : items) {
      if (seen == item) {
        throw InputError(fmt::format("{} '{}': '{}' listed twice, expected {}", option, text,
                                     item, expected));
      }
    }
    items.push_back(std::move(item));
    if (end == std::string::npos) return items;
    begin = end + 1;
  }
}
std::vector<NoiseSetting> parse_noise(const std::string& text) {
  const std::string expected =
      "a list of US:HZ pairs (interrupts of US > 0 microseconds, HZ > 0 times per second, "
      "US * 1e-6 * HZ < 1), e.g. 50:20,200:1000";
  std::vector<NoiseSetting> out;
  for (const auto& item : split_list("--noise", text, expected)) {
    const std::size_t colon = item.find(':');
    NoiseSetting n;
    if (colon == std::string::npos ||
        !core::parse_whole(std::string_view(item).substr(0, colon), n.us) ||
        !core::parse_whole(std::string_view(item).substr(colon + 1), n.hz) || !(n.us > 0.0) ||
        !(n.hz > 0.0) || !std::isfinite(n.us) || !std::isfinite(n.hz) ||
        n.us * 1e-6 * n.hz >= 1.0) {
      throw InputError(fmt::format("--noise '{}': bad setting '{}', expected {}", text, item,
                                   expected));
    }
    out.push_back(n);
  }
  return out;
}

void validate_bench_allreduce(BenchAllreduceConfig& c, const RawBench& raw) {
  c.algorithms = split_list("--algorithms", raw.algorithms,
                            "a comma-separated list of reduction names, e.g. mpi,impi,tree");
  c.sizes_bytes = core::parse_message_sizes(c.message_sizes, bench_min_bytes, bench_max_bytes);
  if (c.iterations < 1) {
    throw InputError(fmt::format("-i {}: expected an integer >= 1", c.iterations));
  }
  if (c.warmup < 0) throw InputError(fmt::format("-x {}: expected an integer >= 0", c.warmup));
  if (c.repeats < 1) {
    throw InputError(fmt::format("--repeats {}: expected an integer >= 1", c.repeats));
  }
  const std::string modes_expected = "a comma-separated list of latency, overlap, noise";
  c.modes = split_list("--modes", raw.modes, modes_expected);
  for (const auto& m : c.modes) {
    if (m != "latency" && m != "overlap" && m != "noise") {
      throw InputError(fmt::format("--modes '{}': unknown mode '{}', expected {}", raw.modes, m,
                                   modes_expected));
    }
  }
  c.progress_pieces = 1;
  c.progress_thread = false;
  if (c.progress == "thread") {
    c.progress_thread = true;
  } else if (c.progress != "none") {
    int k = 0;
    if (!c.progress.starts_with("poll:") ||
        !core::parse_whole(std::string_view(c.progress).substr(5), k) || k < 1) {
      throw InputError(fmt::format("--progress '{}': expected none, poll:K with K >= 1, or "
                                   "thread",
                                   c.progress));
    }
    c.progress_pieces = k;
  }
  c.noise_global = core::parse_triple(raw.noise_global, "--noise-global");
  c.noise = parse_noise(raw.noise);
}

/// The `model hybrid` options whose presence matters.
struct RawModel {
  CLI::Option* threads = nullptr;
  CLI::Option* reserved = nullptr;
  CLI::Option* f_comm = nullptr;
  CLI::Option* f_comp_non = nullptr;
  CLI::Option* f_comp_overlap = nullptr;
  double f_comp_overlap_value = 0.0;
};

bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

void add_model_hybrid_options(CLI::App& model, ModelHybridConfig& c, RawModel& raw) {
  model.option_defaults()->always_capture_default();
  raw.threads = model.add_option("--threads", c.threads,
                                 "n: threads per SMP node, >= 2 (with --fit: overrides the "
                                 "file's threads)")
                    ->default_str("required; with --fit the file's");
  raw.reserved = model.add_option("--reserved", c.reserved,
                                  "m: threads reserved for communication, 1 <= m < n (with "
                                  "--fit: overrides the file's reserved)")
                     ->default_str("1; with --fit the file's");
  raw.f_comm = model.add_option("--f-comm", c.f_comm,
                                "f_comm: fraction of T_masteronly spent communicating (master "
                                "thread), in [0, 1]")
                   ->default_str("required without --fit");
  raw.f_comp_non = model.add_option("--f-comp-non", c.f_comp_non,
                                    "f_comp,non: fraction of T_masteronly in computation that "
                                    "cannot overlap communication, in [0, 1]")
                       ->default_str("required without --fit");
  raw.f_comp_overlap = model.add_option("--f-comp-overlap", raw.f_comp_overlap_value,
                                        "f_comp,overlap: optional; if given, the three fractions "
                                        "must sum to 1 (eq. 1)")
                           ->default_str("1 - f_comm - f_comp,non");
  model.add_option("--fit", c.fit_path,
                   "Fit eq. 14 to a measured MVM sweep (schema asyncsolve.bench.hybrid_mvm/1) "
                   "and print measured next to predicted epsilon")
      ->default_str("");
  model.add_option("--non-ratio", c.non_ratio_text,
                   "With --fit: hold x_MVM,non / x_MVM,overlap at this value (a number or A/B; "
                   "the paper's 1/6) and fit only x_comm / x_MVM,overlap")
      ->default_str("fitted");
  model.add_option("--json", c.json_path,
                   "Write the document (schema asyncsolve.model.hybrid/1) to this file")
      ->default_str("");
}

/// "X" or "A/B", finite and >= 0.
std::optional<double> parse_ratio(const std::string& text) {
  const std::size_t slash = text.find('/');
  double value = 0.0;
  if (slash == std::string::npos) {
    if (!core::parse_whole(std::string_view(text), value)) return std::nullopt;
  } else {
    double a = 0.0;
    double b = 0.0;
    if (!core::parse_whole(std::string_view(text).substr(0, slash), a) ||
        !core::parse_whole(std::string_view(text).substr(slash + 1), b) || !(b > 0.0)) {
      return std::nullopt;
    }
    value = a / b;
  }
  if (!(value >= 0.0) || !std::isfinite(value)) return std::nullopt;
  return value;
}

void check_fraction_option(std::string_view option, double value) {
  if (!(value >= 0.0 && value <= 1.0)) {
    throw InputError(fmt::format("{} {}: expected a fraction of T_masteronly in [0, 1]", option,
                                 value));
  }
}

void validate_model_hybrid(ModelHybridConfig& c, const RawModel& raw) {
  if (given(raw.threads) && c.threads < 2) {
    throw InputError(fmt::format("--threads {}: expected an integer >= 2 (threads per SMP node: "
                                 "one communicating, at least one computing)",
                                 c.threads));
  }
  if (given(raw.reserved) && c.reserved < 1) {
    throw InputError(fmt::format("--reserved {}: expected an integer >= 1 (threads reserved for "
                                 "communication)",
                                 c.reserved));
  }
  if (c.is_fit()) {
    for (const CLI::Option* o : {raw.f_comm, raw.f_comp_non, raw.f_comp_overlap}) {
      if (given(o)) {
        throw InputError(fmt::format("{} with --fit: the fit finds the fractions from the "
                                     "measured times, expected either --fit FILE or the fractions",
                                     o->get_name()));
      }
    }
    if (!c.non_ratio_text.empty()) {
      c.non_ratio = parse_ratio(c.non_ratio_text);
      if (!c.non_ratio) {
        throw InputError(fmt::format("--non-ratio '{}': expected a number >= 0 or A/B (the "
                                     "paper's 1/6)",
                                     c.non_ratio_text));
      }
    }
    if (given(raw.threads) && given(raw.reserved) && c.reserved >= c.threads) {
      throw InputError(fmt::format("--reserved {} with --threads {}: expected 1 <= reserved < "
                                   "threads",
                                   c.reserved, c.threads));
    }
    return;
  }
  if (!c.non_ratio_text.empty()) {
    throw InputError(fmt::format("--non-ratio {} without --fit: expected --fit FILE with it",
                                 c.non_ratio_text));
  }
  if (!given(raw.threads)) {
    throw InputError("--threads: missing, expected the threads per SMP node (n >= 2), or "
                     "--fit FILE");
  }
  if (!given(raw.f_comm) || !given(raw.f_comp_non)) {
    throw InputError(fmt::format("{}: missing, expected --f-comm F and --f-comp-non F "
                                 "(fractions of T_masteronly), or --fit FILE",
                                 given(raw.f_comm) ? "--f-comp-non" : "--f-comm"));
  }
  if (!given(raw.reserved)) c.reserved = 1;
  if (c.reserved >= c.threads) {
    throw InputError(fmt::format("--reserved {} with --threads {}: expected 1 <= reserved < "
                                 "threads",
                                 c.reserved, c.threads));
  }
  check_fraction_option("--f-comm", c.f_comm);
  check_fraction_option("--f-comp-non", c.f_comp_non);
  if (c.f_comm + c.f_comp_non > 1.0 + 1e-12) {
    throw InputError(fmt::format("--f-comm {} + --f-comp-non {} = {:.6g}: expected a sum <= 1 "
                                 "(f_comp,overlap = 1 - f_comm - f_comp,non, eq. 1)",
                                 c.f_comm, c.f_comp_non, c.f_comm + c.f_comp_non));
  }
  if (given(raw.f_comp_overlap)) {
    const double o = raw.f_comp_overlap_value;
    check_fraction_option("--f-comp-overlap", o);
    const double sum = c.f_comm + c.f_comp_non + o;
    if (std::abs(sum - 1.0) > 1e-9) {
      throw InputError(fmt::format("--f-comm {} + --f-comp-non {} + --f-comp-overlap {} = {:.6g}: "
                                   "expected the three fractions to sum to 1 (eq. 1)",
                                   c.f_comm, c.f_comp_non, o, sum));
    }
    c.f_comp_overlap = o;
  }
}

// ---- bench stencil2d ----------------------------------------------------------

/// Raw text of the `bench stencil2d` options that need parsing.
struct RawStencil2d {
  std::string local = "256";
};

void add_bench_stencil2d_options(CLI::App& bench, BenchStencil2dConfig& c, RawStencil2d& raw) {
  bench.option_defaults()->always_capture_default();
  bench.add_option("--local", raw.local,
                   "Block size n per rank (n x n points; weak scaling: the domain grows with "
                   "the ranks), or a comma-separated sweep, e.g. 64,128,256");
  bench.add_option("--radius", c.radius, "Halo width r (stencil (2r+1) x (2r+1)), 1 <= r < n");
  bench.add_option("-i,--iterations", c.iterations, "Timed iterations per measurement");
  bench.add_option("-x,--warmup", c.warmup, "Untimed iterations before them");
  bench.add_option("--repeats", c.repeats,
                   "Measurements of every variant, interleaved; min/median/max are reported");
  bench.add_option("--transport", c.transport_text,
                   "auto (mpi and rma, and shmem when built with OpenSHMEM and run under "
                   "oshrun with OMPI_MCA_osc=ucx) or a comma-separated list of mpi (two-sided), "
                   "rma (MPI-3 one-sided), shmem (OpenSHMEM; run under oshrun)");
  bench.add_option("--variant", c.variant_text,
                   "all, or a comma-separated list: trivial, sendrecv, halo (mpi); put, get, "
                   "get0, get1 (rma and shmem); each runs over every chosen transport that has it");
  bench.add_flag("--test-corrupt-corner", c.corrupt_corner,
                 "Test hook: corrupt one halo corner so that validation fails (exit 4)")
      ->group("");
  bench.add_option("--json", c.json_path, "Write the result document to this file")
      ->default_str("");
}

/// True when the process was started by a launcher (mpirun, mpiexec or
/// oshrun, which in Open MPI is mpirun), not as a singleton.
bool started_by_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

/// True when OMPI_MCA_osc=ucx (Open MPI's OSHMEM needs it, see main.cpp).
bool osc_is_ucx() {
  const char* osc = std::getenv("OMPI_MCA_osc");
  return osc != nullptr && std::string_view(osc) == "ucx";
}

void validate_bench_stencil2d(BenchStencil2dConfig& c, const RawStencil2d& raw) {
  const std::string sizes_expected = "a comma-separated list of block sizes >= 2, e.g. 64,128,256";
  c.local_sizes.clear();
  for (const auto& item : split_list("--local", raw.local, sizes_expected)) {
    int n = 0;
    if (!core::parse_whole(item, n) || n < 2 || n > 65536) {
      throw InputError(fmt::format("--local '{}': bad size '{}', expected {} (at most 65536)",
                                   raw.local, item, sizes_expected));
    }
    c.local_sizes.push_back(n);
  }
  if (c.radius < 1) {
    throw InputError(fmt::format("--radius {}: expected an integer >= 1", c.radius));
  }
  for (const int n : c.local_sizes) {
    if (c.radius >= n) {
      throw InputError(fmt::format("--radius {} with --local {}: expected 1 <= radius < the "
                                   "local size (the halo comes from the neighbour's block)",
                                   c.radius, n));
    }
  }
  if (c.iterations < 1) {
    throw InputError(fmt::format("-i {}: expected an integer >= 1", c.iterations));
  }
  if (c.warmup < 0) throw InputError(fmt::format("-x {}: expected an integer >= 0", c.warmup));
  if (c.repeats < 1) {
    throw InputError(fmt::format("--repeats {}: expected an integer >= 1", c.repeats));
  }

  const std::vector<std::string> all_transports = kernels::stencil2d_transport_names();
  std::vector<std::string> transports;
  if (c.transport_text == "auto") {
    transports = {"mpi", "rma"};
    if (par::shmem_available() && started_by_launcher() && osc_is_ucx()) {
      transports.push_back("shmem");
    }
  } else {
    transports = split_list("--transport", c.transport_text,
                            "auto or a comma-separated list of mpi, rma, shmem");
    for (const auto& t : transports) {
      expect_one_of("--transport", t, all_transports, " (or auto)");
    }
  }
  for (const auto& t : transports) {
    if (t != "shmem") continue;
    if (!par::shmem_available()) {
      throw InputError("--transport shmem: this build of asyncsolve has no OpenSHMEM, expected "
                       "mpi or rma");
    }
    if (!started_by_launcher()) {
      throw InputError("--transport shmem: not started by a launcher, expected to run under "
                       "oshrun, e.g. 'OMPI_MCA_osc=ucx oshrun -np 4 asyncsolve bench stencil2d "
                       "--transport shmem'");
    }
  }
  std::vector<std::string> all_variants;
  for (const auto& t : {"mpi", "rma"})
    for (const auto& v : kernels::stencil2d_variant_names(t)) all_variants.push_back(v);
  std::vector<std::string> variants;
  if (c.variant_text == "all") {
    variants = all_variants;
  } else {
    variants = split_list("--variant", c.variant_text,
                          "all or a comma-separated list of variants");
    for (const auto& v : variants) expect_one_of("--variant", v, all_variants, " (or all)");
  }
  // "all": every variant of the chosen transports; a list: each must exist
  // over one of them.
  for (const auto& v : c.variant_text == "all" ? std::vector<std::string>{} : variants) {
    bool any = false;
    for (const auto& t : transports) any = any || kernels::is_stencil2d_variant(t, v);
    if (!any) {
      const bool two_sided = kernels::is_stencil2d_variant("mpi", v);
      throw InputError(fmt::format(
          "--variant {} with --transport {}: {} is {}, expected --transport {}", v,
          fmt::join(transports, ","), v, two_sided ? "two-sided" : "one-sided",
          two_sided ? "mpi" : "rma or shmem"));
    }
  }
  c.runs.clear();
  for (const auto& t : transports)
    for (const auto& v : variants)
      if (kernels::is_stencil2d_variant(t, v)) c.runs.push_back({t, v});
}

}  // namespace

bool BenchStencil2dConfig::uses_shmem() const {
  for (const auto& r : runs)
    if (r.transport == "shmem") return true;
  return false;
}

bool BenchAllreduceConfig::has_mode(std::string_view mode) const {
  for (const auto& m : modes)
    if (m == mode) return true;
  return false;
}

bool is_lanczos(const SolveConfig& config) { return config.method == "lanczos"; }

bool is_krylov(const SolveConfig& config) {
  return config.method != "jacobi" && !is_lanczos(config);
}

bool is_hybrid(const SolveConfig& config) { return config.hybrid != "none"; }

bool is_sparse(const SolveConfig& config) {
  return !config.matrix_path.empty() || config.assemble;
}

std::string resolved_pc(const SolveConfig& config) {
  if (config.pc != "auto") return config.pc;
  if (config.method == "jacobi" || config.method == "cg" || config.method == "pipecg") return "none";
  return "jacobi";
}

std::string resolved_allreduce(const SolveConfig& config) {
  if (config.allreduce != "auto") return config.allreduce;
  // OpenMP Jacobi: an OpenMP reduction (sync) or the running shared sum.
  if (config.transport == "omp") return config.variant == "sync" ? "omp" : "running-sum";
  if (is_krylov(config)) {
    return config.method == "pcg-overlap" || config.method == "pipecg" ? "impi" : "mpi";
  }
  return config.variant == "sync" ? "mpi" : "tree";
}

Command parse_command_line(const std::vector<std::string>& args) {
  CLI::App app{"asyncsolve: latency-tolerant parallel iterative solvers", "asyncsolve"};
  app.set_version_flag("--version", fmt::format("asyncsolve {} (git {})", version, git_commit));
  app.require_subcommand(1, 1);
  app.footer("Run under mpirun, e.g.: mpirun -np 4 asyncsolve solve --problem plume\n"
             "Exit codes: 0 success, 2 bad input, 3 did not converge, 4 runtime failure.");

  Command cmd;
  RawSolve raw;
  CLI::App* solve = app.add_subcommand("solve", "Solve a model problem in parallel");
  add_solve_options(*solve, cmd.solve, raw);
  CLI::App* info = app.add_subcommand(
      "info", "Show the MPI library, thread level, OpenSHMEM, OpenMP and cores");
  CLI::App* bench = app.add_subcommand("bench", "Microbenchmarks of the communication layer");
  bench->require_subcommand(1, 1);
  RawBench raw_bench;
  CLI::App* bench_allreduce = bench->add_subcommand(
      "allreduce",
      "Latency, overlap (IMB-NBC) and noise sensitivity of the reductions (OSU conventions)");
  add_bench_allreduce_options(*bench_allreduce, cmd.bench_allreduce, raw_bench);
  RawStencil2d raw_stencil2d;
  CLI::App* bench_stencil2d = bench->add_subcommand(
      "stencil2d",
      "Paper 004's Stencil2D: 8-neighbour halo exchange and (2r+1)^2 filter on a 2-D periodic "
      "process grid, two-sided and one-sided (RMA, OpenSHMEM) variants, validated");
  add_bench_stencil2d_options(*bench_stencil2d, cmd.bench_stencil2d, raw_stencil2d);
  CLI::App* model = app.add_subcommand("model", "Performance models of the papers");
  model->require_subcommand(1, 1);
  RawModel raw_model;
  CLI::App* model_hybrid = model->add_subcommand(
      "hybrid",
      "Paper 002 §7.2: masteronly vs funneled hybrid MPI+OpenMP with reserved communication "
      "threads (eqs. 1-9), or the fit of eq. 14 to a measured MVM sweep (--fit)");
  add_model_hybrid_options(*model_hybrid, cmd.model_hybrid, raw_model);

  std::vector<std::string> reversed(args.rbegin(), args.rend() - (args.empty() ? 0 : 1));
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    cmd.kind = Command::Kind::help;
    cmd.text = app.help();
    return cmd;
  } catch (const CLI::CallForAllHelp&) {
    cmd.kind = Command::Kind::help;
    cmd.text = app.help("", CLI::AppFormatMode::All);
    return cmd;
  } catch (const CLI::CallForVersion& v) {
    cmd.kind = Command::Kind::version;
    cmd.text = v.what();
    return cmd;
  } catch (const CLI::ExtrasError&) {
    std::vector<std::string> extras = app.remaining();
    for (const CLI::App* sub :
         {solve, info, bench, bench_allreduce, bench_stencil2d, model, model_hybrid})
      for (const auto& x : sub->remaining()) extras.push_back(x);
    const char* which = solve->parsed()             ? "solve"
                        : bench_allreduce->parsed() ? "bench allreduce"
                        : bench_stencil2d->parsed() ? "bench stencil2d"
                        : bench->parsed()           ? "bench"
                        : model_hybrid->parsed()    ? "model hybrid"
                        : model->parsed()           ? "model"
                                                    : "info";
    throw InputError(fmt::format("unexpected argument{} '{}': expected the options listed by "
                                 "'asyncsolve {} --help'",
                                 extras.size() == 1 ? "" : "s", fmt::join(extras, " "), which));
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      if (args.size() <= 1) {
        message = "no command given: expected one of solve, bench, model, info (see --help)";
      } else if (args[1] == "bench") {
        message = args.size() <= 2 || args[2].starts_with("-")
                      ? std::string("bench: no benchmark given: expected allreduce or stencil2d")
                      : fmt::format("unknown benchmark '{}': expected allreduce or stencil2d",
                                    args[2]);
      } else if (args[1] == "model") {
        message = args.size() <= 2 || args[2].starts_with("-")
                      ? std::string("model: no model given: expected hybrid")
                      : fmt::format("unknown model '{}': expected hybrid", args[2]);
      } else if (!args[1].starts_with("-")) {
        message = fmt::format("unknown command '{}': expected one of solve, bench, model, info",
                              args[1]);
      }
    }
    throw InputError(message);
  }
  if (solve->parsed()) {
    validate(cmd.solve, raw);
    cmd.kind = Command::Kind::solve;
  } else if (info->parsed()) {
    cmd.kind = Command::Kind::info;
  } else if (bench_allreduce->parsed()) {
    validate_bench_allreduce(cmd.bench_allreduce, raw_bench);
    cmd.kind = Command::Kind::bench_allreduce;
  } else if (bench_stencil2d->parsed()) {
    validate_bench_stencil2d(cmd.bench_stencil2d, raw_stencil2d);
    cmd.kind = Command::Kind::bench_stencil2d;
  } else if (model_hybrid->parsed()) {
    validate_model_hybrid(cmd.model_hybrid, raw_model);
    cmd.kind = Command::Kind::model_hybrid;
  }
  return cmd;
}

}  // namespace asyncsolve::app
