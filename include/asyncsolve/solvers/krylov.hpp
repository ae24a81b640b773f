#pragma once
/// Krylov methods that hide their communication: conjugate gradients for
/// symmetric positive definite matrices, GMRES and BiCGStab for general ones.
///
/// - `cg`: paper 001 Listing 2 (Hestenes-Stiefel, no preconditioner).
/// - `pcg1`: paper 003 Figure 3, hypre's PCG with DiagScale.
/// - `pcg2`: paper 003 Figure 6 (Demmel et al.'s variant) with DiagInvScale.
/// - `pcg-overlap`: paper 003 Figure 7: pcg2 with each of its three inner
///   products started non-blocking and completed after independent work
///   (sdotp behind X_Axpy, iprod and gamma behind the two DiagInvScales).
/// - `pipecg`: pipelined CG (Ghysels and Vanroose 2014, Algorithm 4): one
///   non-blocking reduction of three values per iteration, overlapped with the
///   preconditioner and the mat-vec.
/// - `gmres`: restarted GMRES(m) (Saad and Schultz 1986), right
///   preconditioned, classical Gram-Schmidt with one reorthogonalisation pass
///   when needed (KrylovOptions::refinement), Givens rotations.
/// - `fgmres`: flexible GMRES (Saad 1993): the preconditioned vectors are
///   kept, so the preconditioner may change from one iteration to the next.
/// - `pgmres`: p(1)-GMRES (Ghysels, Ashby, Meerbergen and Vanroose 2013): one
///   non-blocking reduction per iteration, in flight behind the next
///   preconditioner and mat-vec; a restart when orthogonality is lost.
/// - `bicgstab`: BiCGStab (van der Vorst 1992), right preconditioned, three
///   reductions per iteration; a restart on breakdown (rho or omega ~ 0).
/// - `pipebicgstab`: pipelined BiCGStab (Cools and Vanroose 2017): two
///   non-blocking reductions per iteration, each behind a preconditioner and
///   a mat-vec, with residual replacement and a restart on breakdown.
///
/// Every mat-vec starts the halo exchange, computes the interior points that
/// need no remote data while calling HaloExchange::test() every
/// `test_every` planes (paper 001 §3.4), completes the exchange, then
/// computes the boundary points. All methods stop when ||r||_2 / ||b||_2 <
/// tol, r being the recursively updated residual; the true residual
/// ||b - A x|| / ||b|| is measured after the solve.
///
/// One method per file under src/solvers/: cg.cpp, pcg1.cpp, pcg2.cpp,
/// pcg_overlap.cpp, pipecg.cpp, gmres.cpp, fgmres.cpp, pgmres.cpp,
/// bicgstab.cpp and pipebicgstab.cpp, each a loop over the shared pieces of
/// krylov_context.hpp (the overlapped mat-vec, the reductions, the history;
/// gmres_common.hpp for what the GMRES family shares); krylov.cpp holds
/// krylov_solve, which picks the loop.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/hybrid_stencil.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/ops/stencil.hpp"
#include "asyncsolve/par/fault_injection.hpp"
#include "asyncsolve/par/progress.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/result.hpp"

namespace asyncsolve::solvers {

/// The Krylov methods (see above for what each one is).
enum class KrylovMethod {
  cg,
  pcg1,
  pcg2,
  pcg_overlap,
  pipecg,
  gmres,
  fgmres,
  pgmres,
  bicgstab,
  pipebicgstab
};

/// The name of `method` on the command line and in result documents: "cg",
/// "pcg1", "pcg2", "pcg-overlap", "pipecg", "gmres", "fgmres", "pgmres",
/// "bicgstab" or "pipebicgstab".
std::string_view krylov_method_name(KrylovMethod method);

/// True for the conjugate-gradient family (cg, pcg1, pcg2, pcg-overlap,
/// pipecg), which needs a symmetric positive definite matrix (and
/// preconditioner); false for GMRES and BiCGStab and their variants.
bool needs_symmetric_matrix(KrylovMethod method);

/// True for the methods that keep a basis of `restart` vectors (gmres,
/// fgmres, pgmres).
bool is_restarted(KrylovMethod method);

/// The method called `name` (one of krylov_method_names()), or nullopt for
/// any other name.
std::optional<KrylovMethod> parse_krylov_method(std::string_view name);

/// The names of every KrylovMethod, in declaration order.
std::vector<std::string> krylov_method_names();

/// Fields of a method's working set (x and b included): what it needs in
/// memory; the GMRES family's grows with its restart length.
long krylov_fields(KrylovMethod method, int restart = 30);

/// Collective: throws core::InputError, on every rank alike, for a
/// restarted method (is_restarted) whose restart is below 1 or whose basis
/// (krylov_fields vectors of `vector_bytes` each) and Hessenberg matrix would
/// not fit in 90% of the smallest node's memory. Nothing for the others.
void check_restart(const par::Comm& comm, KrylovMethod method, int restart, double vector_bytes);

/// When classical Gram-Schmidt makes its second pass (GMRES and FGMRES; PETSc's
/// -ksp_gmres_cgs_refinement_type): never, when needed (the projected
/// vector's norm is below the norm of its projections, PETSc's test),
/// always, or delayed: every vector reorthogonalised once, one iteration
/// later, in the same reduction and the same two passes over the basis as
/// the next vector's projection (DCGS2, Swirydowicz et al. 2021).
enum class CgsRefinement { never, if_needed, always, delayed };

/// "never", "ifneeded", "always" or "delayed".
std::string_view cgs_refinement_name(CgsRefinement refinement);

/// The linear system A x = b of a model problem on one rank's block.
struct KrylovSystem {
  ops::StencilOperator op;
  grid::Field b;  ///< source plus boundary contributions (interior; halo zero)
  grid::Field x;  ///< initial guess on entry, solution on exit (halo zero on the physical boundary)
};

/// Local: builds A (the problem's stencil plus `shift` I), b and x0 for
/// `problem` on this rank's block. Fields have halo width 1.
KrylovSystem make_krylov_system(const grid::Problem& problem,
                                const grid::Decomposition& decomposition, double shift);

/// Settings of the Krylov solvers.
struct KrylovOptions {
  KrylovMethod method = KrylovMethod::cg;
  double tol = 1e-6;       ///< stop when ||r||_2 / ||b||_2 < tol
  long max_iters = 10000;  ///< stop after this many iterations
  /// Wall-clock guard (--max-time): stop, reason "max_time", once the solve
  /// has run this long on any rank; checked every 16 iterations with one
  /// MPI_Allreduce of one value (none when infinite, the default).
  double max_time_s = std::numeric_limits<double>::infinity();
  int test_every = 4;  ///< interior planes between halo tests (0: never test)
  /// The preconditioner. jacobi is fused into the methods' vector kernels
  /// (pipecg: only with pc.kind jacobi; pcg1, pcg2, pcg-overlap: always,
  /// unless a general one is given; cg: never). chebyshev and boomeramg are
  /// set up before the solve and applied through the precond interface
  /// (pcg1, pcg2, pcg-overlap, pipecg; cg refuses them).
  precond::PcSettings pc;
  /// The inner products' reduction algorithm (collectives::make_nonblocking_allreduce).
  collectives::AllreduceAlgorithm allreduce;
  /// Called on every rank after each iteration's residual is known.
  std::function<void(const HistoryPoint&)> monitor;
  /// Straggler and noise injection (not owned; may be null): the slow rank's
  /// mat-vecs take slow_factor times longer; noise interrupts are polled
  /// between the pieces of the mat-vec and once per iteration, so a pending
  /// interrupt is served within about test_every planes of work.
  par::FaultInjector* faults = nullptr;
  /// A progress thread (not owned; may be null): the inner-product
  /// reductions register with it, so that it advances them while the solver
  /// computes; halo exchanges progress through its MPI calls.
  par::ProgressThread* progress = nullptr;
  /// A hybrid stencil (not owned; may be null): every mat-vec of the
  /// iteration runs with OpenMP threads in its scheme (--hybrid; the halo
  /// exchange is then not tested while the interior is computed, the
  /// exchanging thread completes it at once). The vector updates stay on the
  /// master thread. Phases: halo_start / halo_wait / matvec_interior /
  /// matvec_boundary are the master's HybridTimes.
  comm::HybridStencil* hybrid = nullptr;
  /// Solves after one setup (--repeat-solve, 1 to 1e6): the operator and
  /// the preconditioner are set up once, then the method runs this many
  /// times from the same x0 and b (x is reset before each). The result
  /// describes the first solve and lists every solve in SolveResult::repeats;
  /// x holds the last solve's solution. A solve that does not converge ends
  /// the repetition. Needs two more vectors (x0 and the first solution).
  int repeat_solves = 1;
  /// This rank's rows as the user numbers them (a file's, LoadedSystem::
  /// file_rows, or a caller's matrix's), so that a message names a row as
  /// the user knows it; unnamed: the distributed numbering.
  sparse::RowNames row_names;
  /// GMRES family: the restart length m (--restart, >= 1): basis vectors
  /// kept before the method restarts from the true residual.
  int restart = 30;
  /// gmres and fgmres: classical Gram-Schmidt's second pass (--cgs-refinement).
  CgsRefinement refinement = CgsRefinement::delayed;
};

/// Phases timed by the Krylov solvers (paper 003 Table I), in PhaseTimers
/// index order. Inner products are split into start (the local part was
/// computed in a fused kernel; this is the reduction call) and wait.
enum KrylovPhase : std::size_t {
  matvec_interior_phase,
  halo_start_phase,
  halo_wait_phase,
  matvec_boundary_phase,
  sdotp_start_phase,
  sdotp_wait_phase,
  gamma_start_phase,
  gamma_wait_phase,
  iprod_start_phase,
  iprod_wait_phase,
  dots_start_phase,  ///< pipecg's single reduction of three values
  dots_wait_phase,
  precond_phase,  ///< applying the preconditioner (its mat-vecs included)
  axpy_phase,
  vector_scale_phase,
  precond_setup_phase,   ///< setting the preconditioner up (outside time_s)
  precond_hidden_phase,  ///< the part of precond during which a reduction was in flight
  /// GMRES family: the local work of the orthogonalisation (the block inner
  /// products and updates of Gram-Schmidt, the Givens rotations)
  orthog_phase,
  reduce_start_phase,  ///< GMRES and BiCGStab families: starting their reductions
  reduce_wait_phase,   ///< ... and waiting for them
  /// the part of the mat-vec (interior, halo, boundary) during which a
  /// reduction was in flight: reductions hidden behind it
  matvec_hidden_phase,
  krylov_phase_count
};
/// Names of the phases in KrylovPhase order.
std::vector<std::string> krylov_phase_names();

/// Collective over the decomposition's communicator: solves system.op x = b
/// with options.method. `halo` must be built for fields shaped like
/// system.x with the stencil's neighbourhood (faces for 7 points, full for
/// 27). Throws core::InputError for an unknown allreduce, a
/// preconditioner the operator or the method cannot have (a diagonal <= 0;
/// chebyshev with a nonsymmetric method), or a restart length whose basis
/// would not fit in the nodes' memory (estimated collectively). Breakdown
/// (p^T A p <= 0, a NaN or an infinity in any inner product, a zero Krylov
/// vector, BiCGStab's rho or omega ~ 0 twice without progress, pgmres's
/// loss of orthogonality twice in a row) ends the solve with converged =
/// false, reason "breakdown" and a detail naming the iteration. The
/// reductions are freed before returning.
SolveResult krylov_solve(KrylovSystem& system, const grid::Decomposition& decomposition,
                         comm::HaloExchange& halo, const KrylovOptions& options);

/// Collective over the matrix's communicator: the same methods on a
/// distributed CSR matrix (the same loops: the solvers are written once over
/// an operator, see docs/design.md). `halo` must be built on `matrix`, and
/// `system` from it (make_csr_system). The mat-vec tests the exchange every
/// test_every "planes" of interior rows (n^(2/3) rows of an n-row block).
/// The preconditioners that divide by each row's diagonal entry (the
/// Jacobi one fused into pcg1, pcg2 and pcg-overlap, or pipecg's with
/// --pc jacobi, and chebyshev) refuse a diagonal entry <= 0 or missing
/// with core::InputError (on every rank), naming the preconditioner and
/// the row (options.file_rows); --hybrid is refused (structured problems
/// only).
SolveResult krylov_solve(CsrSystem& system, const sparse::DistMatrix& matrix,
                         comm::SparseHaloExchange& halo, const KrylovOptions& options);

}  // namespace asyncsolve::solvers
