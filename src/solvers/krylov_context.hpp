#pragma once
/// What the Krylov methods share (internal to the solvers layer): the
/// split mat-vec with the halo exchange in flight, the inner-product
/// reductions, the phase timers, the history and the monitor, the stopping
/// and breakdown checks, and the setup and teardown around a method's loop.
/// Each method is one function over a KrylovContext, in a file of its own:
/// cg.cpp, pcg1.cpp, pcg2.cpp, pcg_overlap.cpp, pipecg.cpp.
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/grid/split.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "linear_operator.hpp"

namespace asyncsolve::solvers::detail {

/// Thrown (identically on every rank: it is decided on reduced values) when
/// an iteration cannot go on; KrylovContext::run turns it into the result's
/// reason "breakdown" with this detail.
struct Breakdown {
  std::string detail;
};

/// Local: throws Breakdown unless `value` (the reduced `what` of
/// `iteration`) is finite.
void check_finite(std::string_view what, double value, long iteration);

/// Local: throws Breakdown unless `value` is finite and > 0 (p^T A p of a
/// positive definite A).
void check_positive(std::string_view what, double value, long iteration);

/// One inner product: a reduction of `size` doubles over the decomposition's
/// communicator (on a duplicate owned by the reduction), timed as its start
/// phase and its wait phase. With a progress thread, the reduction is
/// registered with it: the thread tests it (under the thread's mutex) and
/// keeps the result once complete. Built by KrylovContext::add_inner_product.
class InnerProduct {
 public:
  /// Collective (duplicates `comm`). `timers` and `progress` (may be null)
  /// must outlive this object.
  /// `in_flight` (may be null) counts the reductions started and not yet
  /// waited for.
  InnerProduct(const collectives::AllreduceAlgorithm& algorithm, const par::Comm& comm,
               std::size_t size, core::PhaseTimers& timers, KrylovPhase start_phase,
               KrylovPhase wait_phase, par::ProgressThread* progress, int* in_flight = nullptr);
  InnerProduct(const InnerProduct&) = delete;
  InnerProduct& operator=(const InnerProduct&) = delete;
  ~InnerProduct();

  /// Starts the sum over ranks of `local` (size() doubles, copied).
  void start(std::span<const double> local);
  void start(double local) { start(std::span{&local, 1}); }
  /// Waits for the started sum and writes it to `global`.
  void wait(std::span<double> global);
  double wait() {
    double global = 0.0;
    wait(std::span{&global, 1});
    return global;
  }
  /// start(local), then wait(): a reduction whose result is needed at once.
  double reduce(double local) {
    start(local);
    return wait();
  }

  /// Completes a reduction left active by a breakdown (every rank started it).
  void drain();
  /// Collective: unregisters from the progress thread and frees the reduction.
  void free();

 private:
  std::unique_lock<std::mutex> guard();

  std::unique_ptr<collectives::NonblockingAllreduce> reduction_;
  core::PhaseTimers& timers_;
  KrylovPhase start_phase_;
  KrylovPhase wait_phase_;
  par::ProgressThread* progress_;
  int* in_flight_;
  bool started_ = false;  ///< started, not yet waited for
  int registration_ = -1;
  std::vector<double> result_;
  bool done_ = false;  ///< the progress thread completed the active reduction
};

class KrylovContext;

/// A method's loop: runs on every rank until the context says stop (returns)
/// or an inner product breaks down (throws Breakdown).
using KrylovLoop = void (*)(KrylovContext&);

/// paper 001 Listing 2 (cg.cpp).
void run_cg(KrylovContext& k);
/// paper 003 Figure 3, hypre's PCG with DiagScale (pcg1.cpp).
void run_pcg1(KrylovContext& k);
/// paper 003 Figure 6, PCG-Algorithm2 with DiagInvScale (pcg2.cpp).
void run_pcg2(KrylovContext& k);
/// paper 003 Figure 7, PCG-Overlap (pcg_overlap.cpp).
void run_pcg_overlap(KrylovContext& k);
/// Ghysels and Vanroose 2014, Algorithm 4 (pipecg.cpp).
void run_pipecg(KrylovContext& k);
/// Restarted GMRES(m), right preconditioned (gmres.cpp).
void run_gmres(KrylovContext& k);
/// Flexible GMRES(m) (fgmres.cpp).
void run_fgmres(KrylovContext& k);
/// p(1)-GMRES of Ghysels, Ashby, Meerbergen and Vanroose 2013 (pgmres.cpp).
void run_pgmres(KrylovContext& k);
/// BiCGStab, right preconditioned, restarted on breakdown (bicgstab.cpp).
void run_bicgstab(KrylovContext& k);
/// Pipelined BiCGStab of Cools and Vanroose 2017 (pipebicgstab.cpp).
void run_pipebicgstab(KrylovContext& k);

/// The state of one solve that every method shares: the operator with its
/// overlapped halo exchange (structured stencils or a distributed CSR
/// matrix, linear_operator.hpp), x and b, the reductions (owned), the
/// timers and the result being built. Borrows the operator, x, b and the
/// options, which must outlive it.
class KrylovContext {
 public:
  /// Local.
  KrylovContext(LinearOperator& a, grid::Field& x, const grid::Field& b,
                const KrylovOptions& options);

  /// Collective: ||b|| (one blocking reduction), a barrier, then `loop` on
  /// the clock; a Breakdown it throws ends it with reason "breakdown". Then
  /// frees the reductions, measures the true residual ||b - A x|| / ||b||
  /// (a halo exchange and a blocking reduction, outside time_s) and fills
  /// in the traffic counts. Call once.
  SolveResult run(KrylovLoop loop);

  /// A zero vector laid out like x (halo width included).
  grid::Field make_field() const { return a_.make_vector(); }
  /// Collective: a new inner product of `size` doubles, timed as the two
  /// phases; owned by the context, freed when run() returns.
  InnerProduct& add_inner_product(std::size_t size, KrylovPhase start, KrylovPhase wait);

  /// Collective: out = A in (paper 001 Listing 3): start the halo exchange
  /// of `in`, compute the interior while testing the exchange every
  /// test_every planes (of rows, for a CSR matrix), complete the exchange,
  /// compute the boundary. With
  /// options.hybrid, the same with OpenMP threads in its scheme. Returns the
  /// local in . out.
  double matvec(grid::Field& in, grid::Field& out);
  /// Collective: r = b - A x (ax receives A x), returns the global r . r
  /// through `product`.
  double initial_residual(grid::Field& ax, grid::Field& r, InnerProduct& product);

  /// Records the residual sqrt(rr) / ||b|| after `iteration` iterations
  /// (history on rank 0, the monitor, noise polling) and decides: true, with
  /// the outcome set, when it is below the tolerance ("tolerance") or the
  /// iterations are used up ("max_iters"), when it has grown to
  /// krylov_divergence_factor times the first residual recorded ("diverged", as
  /// PETSc's divergence tolerance, relative to the start), or (collectively, every 16
  /// iterations, only when options.max_time_s is finite) some rank has run
  /// options.max_time_s seconds ("max_time"). `local_rr` is this rank's part.
  /// Throws Breakdown when the residual is below krylov_estimate_floor and
  /// not below the tolerance: run() then lets the true residual decide.
  bool stop(long iteration, double rr, double local_rr);

  /// Runs `step` with its time added to `phase`; returns what it returns.
  template <class Step>
  decltype(auto) timed(KrylovPhase phase, Step&& step) {
    const auto scope = result_.phases.time(phase);
    return step();
  }

  /// True when a preconditioner is applied through the precond interface
  /// (chebyshev, boomeramg) rather than fused into the vector kernels.
  bool has_preconditioner() const { return pc_ != nullptr; }
  /// Uses `pc` (not owned; outlives run()) for precondition().
  void set_preconditioner(precond::Preconditioner* pc) { pc_ = pc; }
  /// Collective: z = M^-1 r through the preconditioner, timed as precond
  /// (and as precond_hidden when a reduction is in flight meanwhile);
  /// returns the local r . z.
  double precondition(grid::Field& r, grid::Field& z);
  /// Collective: z = M^-1 r as precondition(), without the inner product.
  void apply_preconditioner(grid::Field& r, grid::Field& z);
  /// Throws Breakdown when gamma = r^T M^-1 r (global) is not > 0 while
  /// r^T r is: M is not positive definite.
  static void check_preconditioned(double gamma, double rr, long iteration);
  /// Adds `seconds` to the precond_setup phase.
  void add_setup_time(double seconds) { result_.phases.add(precond_setup_phase, seconds); }

  /// Records a restart after `iteration` iterations: `reason`, the true
  /// residual squared `true_rr` (global) and the method's estimate squared
  /// (both relative to ||b|| once recorded).
  void note_restart(long iteration, RestartReason reason, double true_rr, double estimate_rr);
  /// Adds `seconds` to `phase` (and, for precond, to precond_hidden when a
  /// reduction is in flight).
  void add_time(KrylovPhase phase, double seconds);
  /// True while a reduction is started and not yet waited for.
  bool reduction_in_flight() const { return in_flight_ > 0; }
  /// Counts one second pass of classical Gram-Schmidt.
  void note_refinement() { ++result_.refinements; }
  /// ||b|| (1 when b = 0): what residuals are relative to.
  double b_norm() const { return b_norm_; }

  const KrylovOptions& options() const { return options_; }
  /// The Jacobi preconditioner M = diag(A): M, M^-1 and M^-1/2 (constants
  /// for the stencils, per point for a general matrix).
  ops::Scaling diagonal() const { return a_.diagonal(); }
  ops::Scaling inverse_diagonal() const { return a_.inverse_diagonal(); }
  ops::Scaling inverse_sqrt_diagonal() const { return a_.inverse_sqrt_diagonal(); }
  grid::Field& x() { return x_; }
  const grid::Field& b() const { return b_; }

 private:
  double hybrid_matvec(grid::Field& in, grid::Field& out);
  void drain_and_free();
  void measure_true_residual();

  LinearOperator& a_;
  grid::Field& x_;
  const grid::Field& b_;
  comm::HaloExchange& halo_;
  const KrylovOptions& options_;
  const par::Comm& comm_;
  std::unique_ptr<collectives::Allreduce> setup_sum_;  ///< blocking: ||b||, the true residual
  std::vector<std::unique_ptr<InnerProduct>> products_;
  precond::Preconditioner* pc_ = nullptr;
  int in_flight_ = 0;  ///< reductions started and not yet waited for
  SolveResult result_;
  double b_norm_ = 1.0;  ///< ||b|| (1 when b = 0)
  double t_start_ = 0.0;
  double first_residual_ = -1.0;       ///< the first residual stop() recorded (relative)
  long first_iteration_ = 0;           ///< its iteration
  bool estimate_below_floor_ = false;  ///< stop() ended it at krylov_estimate_floor
};

/// The working set of paper 003's PCG-Algorithm2 (Figure 6, DiagInvScale
/// with L = sqrt(diag A)), which PCG-Overlap (Figure 7) shares: the same
/// vectors, the same inner products, the same start. The two differ only in
/// where each reduction is waited for.
struct Pcg2State {
  /// Collective: allocates the vectors, builds the three inner products and
  /// makes the start of both methods: r = b - A x, iprod = r^T r,
  /// t = L^-1 r, gamma = t^T t, w = L^-T t (with a general preconditioner:
  /// w = M^-1 r, gamma = r^T w).
  explicit Pcg2State(KrylovContext& k);
  /// The first half of the preconditioner: t = L^-1 r, returns the local
  /// t^T t (general: w = M^-1 r, returns the local r^T w).
  double precondition_start(KrylovContext& k);
  /// The second half: w = L^-T t (general: nothing left to do).
  void precondition_finish(KrylovContext& k);
  /// After the loop: x += alpha p_prev, the X_Axpy that lags one iteration
  /// behind (none when the loop never got past its first test).
  void finish_x(KrylovContext& k);

  ops::Scaling linv;  ///< L^-1 = 1/sqrt(diag A)
  grid::Field r, t, w, p, p_prev, s;
  InnerProduct& sdotp_product;
  InnerProduct& gamma_product;
  InnerProduct& iprod_product;
  double iprod = 0.0;     ///< r^T r (global)
  double rr_local = 0.0;  ///< r^T r (this rank's part)
  double gamma = 0.0;     ///< t^T t = r^T M^-1 r (global)
  double gamma_old = 0.0;
  double alpha = 0.0;
  bool x_lags = false;  ///< x += alpha p_prev is still owed
};

}  // namespace asyncsolve::solvers::detail
