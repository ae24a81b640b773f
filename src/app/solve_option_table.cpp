#include "solve_options.hpp"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/par/shmem.hpp"

// The solve command's option table: every option with its range, default,
// help text and where it applies (validated by validate_solve in
// solve_options.cpp).

namespace asyncsolve::app {

namespace {

/// The conditions of the solve table.
Condition when(std::string dimension, std::vector<std::string> values) {
  return Condition{std::move(dimension), std::move(values)};
}

/// The Krylov methods' names.
std::vector<std::string> krylov_names() {
  std::vector<std::string> out;
  for (const Method m : values<Method>())
    if (is_krylov(m)) out.emplace_back(name(m));
  return out;
}

/// The Krylov methods that take a general preconditioner (all but cg).
std::vector<std::string> preconditioned_names() {
  std::vector<std::string> out;
  for (const Method m : values<Method>())
    if (is_krylov(m) && m != Method::cg) out.emplace_back(name(m));
  return out;
}

/// The Krylov methods for nonsymmetric matrices.
std::vector<std::string> nonsymmetric_names() {
  std::vector<std::string> out;
  for (const Method m : values<Method>())
    if (is_krylov(m) && !solvers::needs_symmetric_matrix(krylov_method(m)))
      out.emplace_back(name(m));
  return out;
}

/// The methods that solve a grid problem or a matrix (all but lanczos;
/// schwarz a matrix only).
std::vector<std::string> grid_methods() {
  std::vector<std::string> out{std::string(name(Method::jacobi)),
                               std::string(name(Method::schwarz))};
  for (const auto& m : krylov_names()) out.push_back(m);
  return out;
}

const std::vector<std::string> mpi_transports{"mpi", "rma", "shmem"};
/// The stationary iterations: sync, async and racy.
const std::vector<std::string> stationary{"jacobi", "schwarz"};
const std::vector<std::string> asynchronous{"async", "racy"};

/// --problem to --halo: the problem, its grid, the method and how it communicates.
void add_problem_and_method(OptionTable& t, SolveArgs& a) {
  SolveConfig& c = a.values;
  const Applies jacobi = applies_when({when("--method", stationary)});
  const Applies grid_method = applies_when({when("--method", grid_methods())});
  a.sparse.problem = t.choice(
      "--problem", a.problem, names<Problem>(),
      {.help = "Model problem: plume (paper 000), ones (paper 001), laplace27 (paper 003's "
               "27-point Laplacian, b = 1; Krylov methods only) or tfim (paper 004's "
               "transverse-field Ising model; --method lanczos)"});
  t.number("--offset", c.offset, {-1e12, 1e12},
           {.help = "Added to plume's boundary values and initial guess (paper 000 §6.1)",
            .applies = applies_when({when("--problem", {"plume"})})});
  t.text("--global", a.global,
         {.help = "Global interior grid NX,NY,NZ, split so local sizes differ by at most one",
          .applies = grid_method,
          .shown_default = "",
          .sample = "12,10,8",
          .value = "X,Y,Z",
          .limits = "each 1 to 1e9"});
  t.text("--local", a.local,
         {.help = "Interior points per rank NX,NY,NZ (weak scaling); the default when "
                  "--global is not given",
          .applies = grid_method,
          .shown_default = "50,50,50",
          .sample = "6,5,4",
          .value = "X,Y,Z",
          .limits = "each 1 to 1e9"});
  t.text("--dims", a.dims,
         {.help = "Process grid PX,PY,PZ (default: MPI_Dims_create)",
          .applies = grid_method,
          .shown_default = "auto",
          .sample = "1,1,1",
          .value = "X,Y,Z",
          .limits = "each 1 to 1e9, product = ranks"});
  t.choice("--method", a.method, names<Method>(),
           {.help = "Solver: jacobi, cg (paper 001), pcg1 (hypre's PCG, DiagScale), pcg2 "
                    "(DiagInvScale), pcg-overlap (pcg2 with non-blocking inner products), pipecg "
                    "(pipelined CG), lanczos (ground state of --problem tfim); for nonsymmetric "
                    "matrices gmres (restarted GMRES), fgmres (flexible GMRES), pgmres "
                    "(pipelined p(1)-GMRES), bicgstab or pipebicgstab (pipelined BiCGStab); "
                    "schwarz (restricted additive Schwarz iteration on a matrix: --overlap, "
                    "--local-solver, --variant)"});
  t.choice("--variant", a.variant, names<Variant>(),
           {.help = "Jacobi or Schwarz variant: sync, async (newest whole halo message), racy "
                    "(freshest data)",
            .applies = jacobi});
  t.choice("--transport", a.transport, names<Transport>(),
           {.help = "Communication transport: mpi (two-sided), rma (MPI-3 one-sided), shmem "
                    "(OpenSHMEM; run under oshrun) or omp (Jacobi with OpenMP threads on one "
                    "rank, paper 000 §3.3)",
            .applies = applies_when({when("--method", {"jacobi", "lanczos", "schwarz"})})});
  std::vector<std::string> hybrid_modes{"none"};
  for (const auto& mode : comm::hybrid_mode_names()) hybrid_modes.push_back(mode);
  a.threads = t.number(
      "--threads", c.threads, {1, 1024},
      {.help = "--transport omp: OpenMP threads, each owning a slab of z-planes (with --local, "
               "the grid grows in z with the threads); with --hybrid: OpenMP threads per MPI "
               "rank",
       .applies = Applies{{{when("--transport", {"omp"})},
                           {when("--hybrid", {hybrid_modes.begin() + 1, hybrid_modes.end()})}}},
       .shown_default = "OMP_NUM_THREADS, or omp_get_max_threads()",
       .sample = "2"});
  t.choice("--hybrid", a.hybrid, hybrid_modes,
           {.help = "Hybrid MPI+OpenMP (paper 002) for sync Jacobi over mpi and the Krylov "
                    "mat-vec, --threads per rank: none (pure MPI), masteronly (the master "
                    "exchanges halos outside parallel regions), funneled (thread 0 exchanges "
                    "while the others compute the interior; MPI_THREAD_FUNNELED) or multiple "
                    "(every thread exchanges some of the halo messages; MPI_THREAD_MULTIPLE)",
            .applies = grid_method});
  // Sync Jacobi over rma or shmem exchanges halos through channels; async
  // and racy use --halo for the true residual and the final sync iterations.
  t.choice("--halo", a.halo, comm::halo_exchange_names(),
           {.help = "Halo exchange strategy: waitall (Isend/Irecv + Waitall), alltoallv, "
                    "ialltoallv, neighbor, persistent",
            .applies = Applies{{{when("--method", stationary), when("--variant", {"sync"}),
                                 when("--transport", {"mpi"})},
                                {when("--method", stationary), when("--variant", asynchronous),
                                 when("--transport", mpi_transports)},
                                {when("--method", krylov_names())}}}});
}

/// --test-every to --idle: the Krylov methods' and asynchronous Jacobi's settings.
void add_krylov_and_async(OptionTable& t, SolveArgs& a) {
  SolveConfig& c = a.values;
  const Applies jacobi = applies_when({when("--method", {"jacobi"})});
  const Applies krylov = applies_when({when("--method", krylov_names())});
  const Applies async_jacobi =
      applies_when({when("--method", {"jacobi"}), when("--variant", asynchronous)});
  const Applies async_stationary =
      applies_when({when("--method", stationary), when("--variant", asynchronous)});
  t.number("--test-every", c.test_every, {0, 1e6},
           {.help = "Krylov: call MPI_Test on the halo exchange every K interior planes of the "
                    "mat-vec (0: never; paper 001 §3.4)",
            .applies = krylov});
  t.text("--pc", a.pc,
         {.help = "Krylov preconditioner: auto (none for cg, jacobi for pcg1/pcg2/pcg-overlap, "
                  "none for pipecg, ilu0 for the nonsymmetric methods), none (pipecg and the "
                  "nonsymmetric methods), jacobi, chebyshev[:DEGREE] (Chebyshev polynomial of "
                  "D^-1 A, DEGREE mat-vecs per apply, default 3; no inner products; the CG "
                  "family only), boomeramg (hypre BoomerAMG, one V-cycle; builds with hypre), "
                  "ilu0 (block-Jacobi ILU(0) on each rank's rows, no communication) or asm "
                  "(additive Schwarz: --overlap, --local-solver, --coarse)",
          .applies = krylov,
          .sample = "chebyshev:4",
          .value = "auto|none|jacobi|chebyshev[:DEGREE]|boomeramg|ilu0|asm",
          .limits = "DEGREE 1 to 100"});
  t.text(
       "--pc-option", a.pc_option,
       {.help = "Preconditioner setting NAME=VALUE (repeat, or separate by commas); "
                "chebyshev: lanczos_steps (2 to 200, default 10), lambda_max_factor (1 to 10, "
                "default 1.1); boomeramg: coarsen (hmis), interp (ext+i), relax (l1-sym-gs; l1-gs "
                "with gmres and bicgstab), "
                "cycle (v), cycles (1), sweeps (1), strong_threshold (0.25), agg_levels (0), "
                "max_levels (25), pmax (4); asm: type (basic; restricted with gmres and "
                "bicgstab, not symmetric); docs/preconditioners.md lists their values",
        .applies =
            Applies{{{when("--method", {"pcg1", "pcg2", "pcg-overlap", "pipecg"}),
                      when("--pc", {"chebyshev", "boomeramg", "asm"})},
                     {when("--method", nonsymmetric_names()), when("--pc", {"boomeramg", "asm"})}}},
        .shown_default = "none",
        .sample = "lanczos_steps=20",
        .value = "NAME=VALUE"})
      ->multi_option_policy(CLI::MultiOptionPolicy::Join);
  t.number("--restart", c.restart, {1, 1000},
           {.help = "gmres, fgmres, pgmres: the restart length m, basis vectors kept before "
                    "the method restarts from the true residual (a length whose basis would "
                    "not fit in the nodes' memory is refused)",
            .applies = applies_when({when("--method", {"gmres", "fgmres", "pgmres"})}),
            .sample = "10"});
  t.choice("--cgs-refinement", a.cgs_refinement, names<solvers::CgsRefinement>(),
           {.help = "gmres, fgmres: classical Gram-Schmidt's second pass: never, ifneeded (when "
                    "the projected vector is shorter than its projections), always (PETSc's "
                    "-ksp_gmres_cgs_refinement_type), or delayed: every vector's second pass "
                    "made one iteration later, in the next projection's reduction and passes "
                    "(one reduction and two passes over the basis an iteration)",
            .applies = applies_when({when("--method", {"gmres", "fgmres"})}),
            .sample = "always"});
  add_schwarz_options(t, a.schwarz, preconditioned_names());
  t.number("--shift", c.shift, {-1e12, 1e12},
           {.help = "Krylov: solve (A + shift I) x = b; a shift below -lambda_min(A) makes A "
                    "indefinite and CG breaks down",
            .applies = Applies{krylov.any, "not with --matrix: add the shift to the matrix"}});
  t.number("--repeat-solve", c.repeat_solves, {1, 1e6},
           {.help = "Krylov: set the operator and the preconditioner up once, then solve N "
                    "times from the same initial guess, each solve timed (result.repeat_solves "
                    "in the document; the other results are the first solve's)",
            .applies = krylov,
            .sample = "3"});
  t.text("--allreduce", a.allreduce,
         {.help = "Reduction: auto (jacobi: mpi for sync, tree otherwise; Krylov: "
                  "twolevel:shm+impi for pcg-overlap, pipecg, pgmres and pipebicgstab (impi in "
                  "the simulation build and without shared windows, OMPI_MCA_osc=ucx), mpi "
                  "otherwise), mpi (MPI_Allreduce), impi "
                  "(MPI_Iallreduce), tree "
                  "(asynchronous binary tree), rd (recursive doubling), knomial:K (k-nomial "
                  "reduce + broadcast, K >= 2), twolevel:ALG (node leaders run ALG: rd, "
                  "knomial:K, mpi or impi), shm (progress-free, over a shared-memory window; "
                  "one node only) or twolevel:shm+ALG (shm in each node, ALG among the "
                  "leaders); sync Jacobi runs any of them to completion at each check, async "
                  "and racy take any but mpi",
          .applies = applies_when({when("--transport", mpi_transports)}),
          .sample = "impi",
          .value = "NAME",
          .limits = "knomial:K: K 2 to 1024"});
  t.number("--max-in-flight", c.max_in_flight, {1, 512},
           {.help = "Async/racy: unacknowledged halo messages per neighbour and direction (R)",
            .applies = applies_when({when("--method", stationary), when("--variant", asynchronous),
                                     when("--transport", mpi_transports)})});
  t.number("--final-sync", c.final_sync, {0, 1e9},
           {.help = "Async/racy: up to K synchronous iterations after the asynchronous stop, "
                    "until the true residual is below --tol",
            .applies = async_stationary});
  t.choice("--kernel", a.kernel, names<ops::Stencil7Kernel>(),
           {.help = "Jacobi on a grid: the 7-point stencil's kernels: auto (the fastest on this "
                    "machine for the local block, measured once at the first sweep), portable "
                    "(plain stores), stream (streaming stores; "
                    "builds with AVX) or avx512 (builds with AVX-512); every one gives the "
                    "same iterates",
            .applies = jacobi,
            .sample = "portable"});
  t.choice("--idle", a.idle, names<OnOff>(),
           {.help = "Async/racy Jacobi: on (a rank, or thread, whose block has converged against "
                    "what it has waits for news instead of sweeping stale data) or off",
            .applies = async_jacobi,
            .shown_default = "on for async and racy",
            .sample = "off"});
}

/// --slow-rank to --json: fault injection, progress, when to stop, output.
void add_faults_and_stop(OptionTable& t, SolveArgs& a) {
  SolveConfig& c = a.values;
  const Applies jacobi = applies_when({when("--method", {"jacobi"})});
  const Applies grid_method = applies_when({when("--method", grid_methods())});
  const Applies jacobi_or_krylov_over_mpi =
      applies_when({when("--method", grid_methods()), when("--transport", mpi_transports)});
  t.number("--slow-rank", c.slow_rank, {-1, 1e6},
           {.help = "Fault injection: this rank's sweeps take --slow-factor times longer (-1: "
                    "none)",
            .applies = jacobi_or_krylov_over_mpi,
            .sample = "0"});
  t.number("--slow-factor", c.slow_factor, {1, 100},
           {.help = "Slow-down of --slow-rank", .applies = jacobi_or_krylov_over_mpi});
  t.number("--noise-us", c.noise_us, {0, 1e6},
           {.help = "Noise injection: every rank is interrupted for this many microseconds ...",
            .applies = jacobi_or_krylov_over_mpi,
            .sample = "10"});
  t.number("--noise-hz", c.noise_hz, {0, 1e6},
           {.help = "... this many times per second (0: no noise)",
            .applies = jacobi_or_krylov_over_mpi,
            .sample = "10"});
  t.number("--noise-seed", c.noise_seed, {0, 1e15},
           {.help = "Seed of each rank's noise phase", .applies = jacobi_or_krylov_over_mpi});
  t.text("--progress", a.progress,
         {.help = "Communication progress: none (only in the solver's own MPI calls), poll:K "
                  "(Jacobi async/racy: also every K planes of the sweep) or thread[:US] "
                  "(Krylov, and async/racy Jacobi over mpi or rma: a reserved communication "
                  "thread, sleeping US microseconds between passes; needs "
                  "MPI_THREAD_MULTIPLE)",
          .applies = Applies{{{when("--method", stationary), when("--variant", asynchronous)},
                              {when("--method", krylov_names())}},
                             "the Krylov methods with --matrix or --assemble: none only"},
          .sample = "poll:4",
          .value = "MODE",
          .limits = "K 1 to 1e6, US 0 to 1e6"});
  a.tol = t.number("--tol", c.tol, {1e-300, 1},
                   {.help = "Stop when ||b - Au||_2 / ||b||_2 < tol (the true residual must "
                            "meet it for a solve to count as converged; lanczos: the relative "
                            "change of the energy)",
                    .shown_default = "1e-4 for jacobi, 1e-6 for schwarz and the Krylov "
                                     "methods, 1e-10 for lanczos",
                    .sample = "1e-8"});
  t.number("--max-iters", c.max_iters, {0, 1e9},
           {.help = "Stop after this many iterations (lanczos: at least 1)"});
  a.max_time = t.number("--max-time", c.max_time_s, {1e-300, 1e9},
                        {.help = "Wall-clock guard of every solve, in seconds: it stops (exit "
                                 "code 3, reason max_time) once it has run this long",
                         .applies = grid_method,
                         .shown_default = "none",
                         .noun = "a positive number of seconds"});
  a.check_every =
      t.number("--check-every", c.check_every, {1, 1e9},
               {.help = "Compute the global residual every K iterations (async, racy: a "
                        "sweeping rank starts a reduction round every K; a rank waiting for "
                        "news starts one at once)",
                .applies = applies_when({when("--method", stationary)}),
                .shown_default = "100 for jacobi, 1 for schwarz"});
  t.number("--halo-every", c.halo_every, {1, 1e6},
           {.help = "Swap halos only every N iterations (paper 000 §6.3)",
            .applies =
                applies_when({when("--method", {"jacobi"}), when("--transport", mpi_transports)})});
  t.flag("--copy", c.copy,
         {.help = "Copy u_new into u each iteration instead of swapping pointers (the model "
                  "problems' stencil sweep; with --matrix or --assemble the sparse iterations "
                  "swap, and --copy is refused)",
          .applies = applies_when({when("--method", {"jacobi"}), when("--variant", {"sync"})})});
  t.flag("--monitor", c.monitor, {.help = "Print iteration, residual and rate from rank 0"});
  t.number("--monitor-every", c.monitor_every_s, {0, 86400},
           {.help = "Seconds between --monitor lines (each residual check at most)"});
  t.path("--json", c.json_path, {.help = "Write the result document to this file"});
}

}  // namespace

void add_solve_options(OptionTable& t, SolveArgs& a) {
  // In --help's order.
  add_problem_and_method(t, a);
  add_krylov_and_async(t, a);
  add_faults_and_stop(t, a);
  const Applies lanczos =
      applies_when({when("--method", {"lanczos"}), when("--problem", {"tfim"})});
  add_spin_options(t, a.spin, lanczos);
  add_sparse_options(t, a.sparse);
}

}  // namespace asyncsolve::app
