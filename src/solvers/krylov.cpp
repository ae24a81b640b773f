#include "asyncsolve/solvers/krylov.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/grid/split.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::solvers {

using grid::Field;

namespace {

/// Thrown (identically on every rank: it is decided on reduced values) when
/// an iteration cannot go on.
struct Breakdown {
  std::string detail;
};

void check_finite(std::string_view what, double value, long iteration) {
  if (!std::isfinite(value)) {
    throw Breakdown{fmt::format("{} = {} at iteration {}", what, value, iteration)};
  }
}

void check_positive(std::string_view what, double value, long iteration) {
  check_finite(what, value, iteration);
  if (!(value > 0.0)) {
    throw Breakdown{fmt::format("{} = {:.6e} <= 0 at iteration {}", what, value, iteration)};
  }
}

/// One inner product: a reduction of `size` doubles, timed as start and wait.
/// With a progress thread, the reduction is registered with it: the thread
/// tests it (under the thread's mutex) and keeps the result once complete.
class InnerProduct {
 public:
  InnerProduct(std::string_view algorithm, const par::Comm& comm, std::size_t size,
               KrylovPhase start_phase, KrylovPhase wait_phase, par::ProgressThread* progress)
      : reduction_(collectives::make_nonblocking_allreduce(algorithm, comm, size)),
        start_phase_(start_phase),
        wait_phase_(wait_phase),
        progress_(progress),
        result_(size) {
    if (progress_ != nullptr) {
      registration_ = progress_->add([this] {
        if (reduction_->active() && reduction_->test(result_)) done_ = true;
      });
    }
  }
  InnerProduct(const InnerProduct&) = delete;
  InnerProduct& operator=(const InnerProduct&) = delete;
  ~InnerProduct() {
    if (progress_ != nullptr) progress_->remove(registration_);
  }

  void start(core::PhaseTimers& timers, std::span<const double> local) {
    const auto t = timers.time(start_phase_);
    const auto lock = guard();
    done_ = false;
    reduction_->start(local);
  }
  void start(core::PhaseTimers& timers, double local) { start(timers, std::span{&local, 1}); }

  void wait(core::PhaseTimers& timers, std::span<double> global) {
    const auto t = timers.time(wait_phase_);
    const auto lock = guard();
    if (!done_) reduction_->wait(result_);
    done_ = false;
    std::copy(result_.begin(), result_.end(), global.begin());
  }
  double wait(core::PhaseTimers& timers) {
    double global = 0.0;
    wait(timers, std::span{&global, 1});
    return global;
  }

  /// Completes a reduction left active by a breakdown (every rank started it).
  void drain() {
    const auto lock = guard();
    if (reduction_->active()) reduction_->wait(result_);
    done_ = false;
  }
  void free() {
    if (progress_ != nullptr) progress_->remove(registration_);
    progress_ = nullptr;
    reduction_->free();
  }

 private:
  std::unique_lock<std::mutex> guard() {
    return progress_ != nullptr ? std::unique_lock(progress_->mutex())
                                : std::unique_lock<std::mutex>();
  }

  std::unique_ptr<collectives::NonblockingAllreduce> reduction_;
  KrylovPhase start_phase_;
  KrylovPhase wait_phase_;
  par::ProgressThread* progress_;
  int registration_ = -1;
  std::vector<double> result_;
  bool done_ = false;  ///< the progress thread completed the active reduction
};

/// What every method shares: the operator with its overlapped halo exchange,
/// the timers, the reductions and the history.
class Krylov {
 public:
  Krylov(KrylovSystem& system, const grid::Decomposition& decomposition, comm::HaloExchange& halo,
         const KrylovOptions& options)
      : system_(system),
        decomposition_(decomposition),
        halo_(halo),
        options_(options),
        split_(grid::split_for_overlap(decomposition)),
        comm_(decomposition.comm()) {
    result_.phases = core::PhaseTimers(krylov_phase_names());
  }

  [[nodiscard]] Field make_field() const {
    Field f(system_.x.interior(), system_.x.halo());
    f.fill(0.0);
    return f;
  }

  core::PhaseTimers& timers() { return result_.phases; }
  SolveResult& result() { return result_; }
  [[nodiscard]] const ops::StencilOperator& op() const { return system_.op; }
  [[nodiscard]] const KrylovOptions& options() const { return options_; }

  InnerProduct& add_inner_product(std::size_t size, KrylovPhase start, KrylovPhase wait) {
    products_.push_back(std::make_unique<InnerProduct>(options_.allreduce, comm_, size, start, wait,
                                                       options_.progress));
    return *products_.back();
  }

  /// out = A in (paper 001 Listing 3): start the halo exchange of `in`,
  /// compute the interior while testing the exchange every test_every
  /// planes, complete the exchange, compute the boundary. Returns the local
  /// in . out.
  double matvec(Field& in, Field& out) {
    if (options_.hybrid != nullptr) return hybrid_matvec(in, out);
    core::PhaseTimers& t = timers();
    double t0 = core::now_s();
    halo_.start(in);
    double t1 = core::now_s();
    t.add(halo_start_phase, t1 - t0);
    double dot = 0.0;
    const grid::Box& inner = split_.interior;
    const int step = options_.test_every;
    par::FaultInjector* faults = options_.faults;
    if (step > 0 && !split_.boundary.empty()) {
      bool done = false;
      for (int k = inner.lo[2]; k < inner.hi[2]; k += step) {
        dot += ops::apply(system_.op, in, out, grid::planes(inner, k, k + step));
        if (faults != nullptr) faults->poll();
        if (!done) done = halo_.test();
      }
    } else if (faults != nullptr && step > 0) {
      for (int k = inner.lo[2]; k < inner.hi[2]; k += step) {
        dot += ops::apply(system_.op, in, out, grid::planes(inner, k, k + step));
        faults->poll();
      }
    } else {
      dot += ops::apply(system_.op, in, out, inner);
    }
    t0 = core::now_s();
    if (faults != nullptr) faults->after_sweep(t0 - t1);  // the straggler's slower mat-vec
    t0 = core::now_s();
    t.add(matvec_interior_phase, t0 - t1);
    halo_.finish(in);
    t1 = core::now_s();
    t.add(halo_wait_phase, t1 - t0);
    for (const grid::Box& box : split_.boundary) dot += ops::apply(system_.op, in, out, box);
    t.add(matvec_boundary_phase, core::now_s() - t1);
    ++result_.halo_exchanges;
    return dot;
  }

  /// out = A in with OpenMP threads in the scheme of options.hybrid: the
  /// same points with the same arithmetic (the fused in . out is summed per
  /// thread, then over threads in thread order).
  double hybrid_matvec(Field& in, Field& out) {
    comm::HybridTimes times;
    const ops::StencilOperator& op = system_.op;
    const double dot = options_.hybrid->apply(
        in, [&](const grid::Box& box) { return ops::apply(op, in, out, box); }, times);
    par::FaultInjector* faults = options_.faults;
    if (faults != nullptr) {
      // The straggler's slower mat-vec: its delay counts as interior time.
      const double t0 = core::now_s();
      faults->after_sweep(times.interior + times.boundary);
      faults->poll();
      times.interior += core::now_s() - t0;
    }
    core::PhaseTimers& t = timers();
    t.add(halo_start_phase, times.exchange_start);
    t.add(halo_wait_phase, times.exchange_wait);
    t.add(matvec_interior_phase, times.interior);
    t.add(matvec_boundary_phase, times.boundary);
    ++result_.halo_exchanges;
    return dot;
  }

  /// Collective: r = b - A x (x's halo is exchanged), returns global r . r.
  double initial_residual(Field& ax, Field& r, InnerProduct& product) {
    matvec(system_.x, ax);
    const double local = ops::residual(system_.b, ax, r);
    product.start(timers(), local);
    return product.wait(timers());
  }

  /// Records the residual after `iteration` iterations; true when it is
  /// below the tolerance.
  bool record(long iteration, double rr, double local_rr) {
    HistoryPoint p;
    p.iteration = iteration;
    p.time_s = core::now_s() - t_start_;
    p.residual = std::sqrt(std::max(rr, 0.0)) / b_norm_;
    p.local_residual = std::sqrt(std::max(local_rr, 0.0)) / b_norm_;
    if (comm_.is_root()) result_.history.push_back(p);
    if (options_.faults != nullptr) options_.faults->poll();
    if (options_.monitor) options_.monitor(p);
    result_.iterations = iteration;
    result_.residual_estimate = p.residual;
    return p.residual < options_.tol;
  }

  /// Collective: true on every rank if any rank has run options.max_time_s.
  [[nodiscard]] bool out_of_time() const {
    int over = elapsed() >= options_.max_time_s ? 1 : 0;
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, comm_.get()),
                   "MPI_Allreduce");
    return over != 0;
  }

  void set_b_norm(double bb) { b_norm_ = bb > 0.0 ? std::sqrt(bb) : 1.0; }
  void start_clock() { t_start_ = core::now_s(); }
  [[nodiscard]] double elapsed() const { return core::now_s() - t_start_; }

  void drain_and_free() {
    for (auto& p : products_) p->drain();
    for (auto& p : products_) p->free();
    products_.clear();
  }

  Field& x() { return system_.x; }
  [[nodiscard]] const Field& b() const { return system_.b; }

 private:
  KrylovSystem& system_;
  const grid::Decomposition& decomposition_;
  comm::HaloExchange& halo_;
  const KrylovOptions& options_;
  grid::OverlapSplit split_;
  const par::Comm& comm_;
  std::vector<std::unique_ptr<InnerProduct>> products_;
  SolveResult result_;
  double b_norm_ = 1.0;
  double t_start_ = 0.0;
};

/// ||b||^2 over all ranks (a blocking reduction: setup, not timed).
double global_sum(const par::Comm& comm, double local) {
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_DOUBLE, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  return local;
}

/// Iterations between two checks of KrylovOptions::max_time_s.
constexpr long max_time_check_every = 16;

/// Ends the loop of every method: true (and the outcome set) when the
/// residual is small enough, the iterations are used up, or (collectively,
/// every max_time_check_every iterations) the time is.
bool should_stop(Krylov& k, bool small, long iteration) {
  if (small) {
    k.result().converged = true;
    k.result().reason = "tolerance";
    return true;
  }
  if (iteration >= k.options().max_iters) {
    k.result().reason = "max_iters";
    return true;
  }
  if (std::isfinite(k.options().max_time_s) && iteration % max_time_check_every == 0 &&
      k.out_of_time()) {
    k.result().reason = "max_time";
    return true;
  }
  return false;
}

/// Paper 001 Listing 2 with the vector updates fused: p = r + beta p;
/// q = A p with p . q in the same pass; x += alpha p, r -= alpha q with r . r
/// in the same pass. Two blocking-in-effect reductions per iteration, since
/// each result is needed at once.
void run_cg(Krylov& k) {
  core::PhaseTimers& t = k.timers();
  Field r = k.make_field();
  Field p = k.make_field();
  Field q = k.make_field();
  InnerProduct& delta_product = k.add_inner_product(1, sdotp_start_phase, sdotp_wait_phase);
  InnerProduct& gamma_product = k.add_inner_product(1, iprod_start_phase, iprod_wait_phase);

  double gamma = k.initial_residual(q, r, gamma_product);
  double gamma_old = gamma;
  check_finite("r^T r", gamma, 0);
  ops::copy(r, p);
  for (long it = 0;; ++it) {
    if (should_stop(k, k.record(it, gamma, ops::dot(r, r)), it)) return;
    if (it > 0) {
      const auto s = t.time(vector_scale_phase);
      ops::xpby(r, gamma / gamma_old, p);
    }
    const double delta_local = k.matvec(p, q);
    delta_product.start(t, delta_local);
    const double delta = delta_product.wait(t);
    check_positive("p^T A p", delta, it + 1);
    const double alpha = gamma / delta;
    double rr_local = 0.0;
    {
      const auto s = t.time(axpy_phase);
      rr_local = ops::cg_update(alpha, p, q, k.x(), r);
    }
    gamma_old = gamma;
    gamma_product.start(t, rr_local);
    gamma = gamma_product.wait(t);
    check_finite("r^T r", gamma, it + 1);
  }
}

/// Paper 003 Figure 3 (hypre's PCG, "PCG-Algorithm1") with DiagScale: three
/// reductions per iteration (sdotp, gamma, iprod), each needed at once. The
/// local parts are fused into the neighbouring vector kernels.
void run_pcg1(Krylov& k) {
  core::PhaseTimers& t = k.timers();
  const double d = k.op().diagonal();
  Field r = k.make_field();
  Field p = k.make_field();
  Field s = k.make_field();
  InnerProduct& sdotp_product = k.add_inner_product(1, sdotp_start_phase, sdotp_wait_phase);
  InnerProduct& gamma_product = k.add_inner_product(1, gamma_start_phase, gamma_wait_phase);
  InnerProduct& iprod_product = k.add_inner_product(1, iprod_start_phase, iprod_wait_phase);

  double iprod = k.initial_residual(s, r, iprod_product);
  double rr_local = ops::dot(r, r);
  check_finite("r^T r", iprod, 0);
  double gamma_local = 0.0;
  {
    const auto sc = t.time(precond_phase);
    gamma_local = ops::diag_scale_dot(r, d, p);
  }
  gamma_product.start(t, gamma_local);
  double gamma = gamma_product.wait(t);
  for (long it = 0;; ++it) {
    if (should_stop(k, k.record(it, iprod, rr_local), it)) return;
    const double sdotp_local = k.matvec(p, s);
    sdotp_product.start(t, sdotp_local);
    const double sdotp = sdotp_product.wait(t);
    check_positive("p^T A p", sdotp, it + 1);
    const double alpha = gamma / sdotp;
    const double gamma_old = gamma;
    {
      const auto sc = t.time(axpy_phase);
      rr_local = ops::cg_update(alpha, p, s, k.x(), r);
    }
    {
      const auto sc = t.time(precond_phase);
      gamma_local = ops::diag_scale_dot(r, d, s);
    }
    gamma_product.start(t, gamma_local);
    gamma = gamma_product.wait(t);
    iprod_product.start(t, rr_local);
    iprod = iprod_product.wait(t);
    check_finite("r^T C^-1 r", gamma, it + 1);
    check_finite("r^T r", iprod, it + 1);
    const double beta = gamma / gamma_old;
    const auto sc = t.time(vector_scale_phase);
    ops::xpby(s, beta, p);
  }
}

/// Paper 003 Figure 6 ("PCG-Algorithm2", DiagInvScale with L = sqrt(diag A))
/// and, with `overlap`, Figure 7 ("PCG-Overlap"): sdotp is in flight during
/// X_Axpy, iprod during t = L^-1 r, gamma during w = L^-T t. X_Axpy lags one
/// iteration (it uses the previous alpha and p), so the last update of x is
/// made after the loop. Without overlap every reduction is waited for at once.
void run_pcg2(Krylov& k, bool overlap) {
  core::PhaseTimers& t = k.timers();
  const double d = k.op().diagonal();
  const double linv = 1.0 / std::sqrt(d);
  Field r = k.make_field();
  Field tv = k.make_field();
  Field w = k.make_field();
  Field p = k.make_field();
  Field p_prev = k.make_field();
  Field s = k.make_field();
  InnerProduct& sdotp_product = k.add_inner_product(1, sdotp_start_phase, sdotp_wait_phase);
  InnerProduct& gamma_product = k.add_inner_product(1, gamma_start_phase, gamma_wait_phase);
  InnerProduct& iprod_product = k.add_inner_product(1, iprod_start_phase, iprod_wait_phase);

  double iprod = k.initial_residual(s, r, iprod_product);
  double rr_local = ops::dot(r, r);
  check_finite("r^T r", iprod, 0);
  double gamma_local = 0.0;
  {
    const auto sc = t.time(precond_phase);
    gamma_local = ops::scale_dot(linv, r, tv);
  }
  gamma_product.start(t, gamma_local);
  double gamma = gamma_product.wait(t);
  double gamma_old = gamma;
  double alpha = 0.0;
  bool finish_x = false;
  {
    const auto sc = t.time(precond_phase);
    ops::scale(linv, tv, w);
  }
  for (long it = 0;; ++it) {
    if (should_stop(k, k.record(it, iprod, rr_local), it)) break;
    finish_x = true;
    {
      const auto sc = t.time(vector_scale_phase);
      ops::waxpby(w, it == 0 ? 0.0 : gamma / gamma_old, p_prev, p);
    }
    const double sdotp_local = k.matvec(p, s);
    sdotp_product.start(t, sdotp_local);
    double sdotp = 0.0;
    if (!overlap) sdotp = sdotp_product.wait(t);
    if (it > 0) {
      const auto sc = t.time(axpy_phase);
      ops::axpy(alpha, p_prev, k.x());
    }
    if (overlap) sdotp = sdotp_product.wait(t);
    check_positive("p^T A p", sdotp, it + 1);
    alpha = gamma / sdotp;
    {
      const auto sc = t.time(axpy_phase);
      rr_local = ops::axpy_dot(alpha, s, r);
    }
    iprod_product.start(t, rr_local);
    if (!overlap) iprod = iprod_product.wait(t);
    {
      const auto sc = t.time(precond_phase);
      gamma_local = ops::scale_dot(linv, r, tv);
    }
    gamma_old = gamma;
    gamma_product.start(t, gamma_local);
    if (!overlap) gamma = gamma_product.wait(t);
    if (overlap) iprod = iprod_product.wait(t);
    check_finite("r^T r", iprod, it + 1);
    std::swap(p, p_prev);  // p_prev: this iteration's direction
    {
      const auto sc = t.time(precond_phase);
      ops::scale(linv, tv, w);
    }
    if (overlap) gamma = gamma_product.wait(t);
    check_finite("t^T t", gamma, it + 1);
  }
  if (finish_x) {
    const auto sc = t.time(axpy_phase);
    ops::axpy(alpha, p_prev, k.x());
  }
}

/// Pipelined CG (Ghysels and Vanroose 2014, Algorithm 4, with M = I or the
/// Jacobi preconditioner): the one reduction of {r.u, w.u, r.r} is in flight
/// while m = M^-1 w is known and n = A m is computed. One fused pass updates
/// the eight vectors and computes the next local inner products.
void run_pipecg(Krylov& k) {
  core::PhaseTimers& t = k.timers();
  const double minv = k.options().jacobi ? 1.0 / k.op().diagonal() : 1.0;
  Field r = k.make_field();
  Field u = k.make_field();
  Field w = k.make_field();
  Field m = k.make_field();
  Field n = k.make_field();
  Field z = k.make_field();
  Field q = k.make_field();
  Field s = k.make_field();
  Field p = k.make_field();
  InnerProduct& dots_product = k.add_inner_product(3, dots_start_phase, dots_wait_phase);
  const ops::PipeVectors v{&k.x(), &r, &u, &w, &m, &n, &z, &q, &s, &p};

  // r = b - A x, u = M^-1 r, w = A u, m = M^-1 w and the first inner products.
  k.matvec(k.x(), n);
  ops::residual(k.b(), n, r);
  {
    const auto sc = t.time(precond_phase);
    ops::scale(minv, r, u);
  }
  k.matvec(u, w);
  std::array<double, 3> local = ops::pipecg_dots(minv, v);
  std::array<double, 3> global{};
  double gamma_old = 0.0;
  double alpha_old = 0.0;
  for (long it = 0;; ++it) {
    dots_product.start(t, local);
    k.matvec(m, n);
    dots_product.wait(t, global);
    const auto [gamma, delta, rr] = global;
    check_finite("r^T r", rr, it);
    if (should_stop(k, k.record(it, rr, local[2]), it)) return;
    check_finite("r^T M^-1 r", gamma, it);
    check_finite("w^T u", delta, it);
    double alpha = 0.0;
    double beta = 0.0;
    if (it == 0) {
      check_positive("p^T A p", delta, it + 1);
      alpha = gamma / delta;
    } else {
      beta = gamma / gamma_old;
      const double pap = delta - beta * gamma / alpha_old;
      check_positive("p^T A p", pap, it + 1);
      alpha = gamma / pap;
    }
    {
      const auto sc = t.time(axpy_phase);
      local = ops::pipecg_update(alpha, beta, minv, v);
    }
    gamma_old = gamma;
    alpha_old = alpha;
  }
}

}  // namespace

std::vector<std::string> krylov_method_names() {
  return {"cg", "pcg1", "pcg2", "pcg-overlap", "pipecg"};
}

int krylov_fields(std::string_view method) {
  if (method == "cg") return 5;
  if (method == "pcg1") return 5;
  if (method == "pcg2" || method == "pcg-overlap") return 8;
  return 11;  // pipecg
}

std::vector<std::string> krylov_phase_names() {
  return {"matvec_interior", "halo_start", "halo_wait",   "matvec_boundary",
          "sdotp_start",     "sdotp_wait", "gamma_start", "gamma_wait",
          "iprod_start",     "iprod_wait", "dots_start",  "dots_wait",
          "precond",         "axpy",       "vector_scale"};
}

KrylovSystem make_krylov_system(const grid::Problem& problem,
                                const grid::Decomposition& decomposition, double shift) {
  KrylovSystem system;
  system.op.stencil =
      problem.stencil_points() == 27 ? ops::Stencil::twenty_seven_point : ops::Stencil::seven_point;
  system.op.shift = shift;
  const grid::Int3& n = decomposition.local();
  // b = source + the boundary contributions = source - A g, g being zero
  // except for the Dirichlet data in its physical-boundary halo.
  Field g(n, 1);
  g.fill(0.0);
  grid::apply_boundary(problem, decomposition, g);
  system.b = Field(n, 1);
  system.b.fill(0.0);
  ops::StencilOperator unshifted = system.op;
  unshifted.shift = 0.0;
  ops::apply(unshifted, g, system.b, system.b.interior_box());
  const double source = problem.source();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) system.b(i, j, k) = source - system.b(i, j, k);
  system.x = Field(n, 1);
  system.x.fill(0.0);
  system.x.fill_interior(problem.initial_value());
  return system;
}

SolveResult krylov_solve(KrylovSystem& system, const grid::Decomposition& decomposition,
                         comm::HaloExchange& halo, const KrylovOptions& options) {
  const auto methods = krylov_method_names();
  if (std::find(methods.begin(), methods.end(), options.method) == methods.end()) {
    throw core::InputError(
        fmt::format("--method '{}': expected one of {}", options.method, fmt::join(methods, ", ")));
  }
  const bool preconditioned =
      options.method != "cg" && (options.method != "pipecg" || options.jacobi);
  if (preconditioned && !(system.op.diagonal() > 0.0)) {
    throw core::InputError(fmt::format(
        "--shift {}: the diagonal of A is {} with it, and the Jacobi preconditioner of {} needs "
        "a positive diagonal; expected a shift above {}",
        system.op.shift, system.op.diagonal(), options.method,
        -(system.op.diagonal() - system.op.shift)));
  }
  const par::Comm& comm = decomposition.comm();
  Krylov k(system, decomposition, halo, options);
  const double bb = global_sum(comm, ops::dot(system.b, system.b));
  k.set_b_norm(bb);
  par::check_mpi(MPI_Barrier(comm.get()), "MPI_Barrier");
  k.start_clock();
  try {
    if (options.method == "cg") {
      run_cg(k);
    } else if (options.method == "pcg1") {
      run_pcg1(k);
    } else if (options.method == "pcg2") {
      run_pcg2(k, false);
    } else if (options.method == "pcg-overlap") {
      run_pcg2(k, true);
    } else {
      run_pipecg(k);
    }
  } catch (const Breakdown& b) {
    k.result().converged = false;
    k.result().reason = "breakdown";
    k.result().detail = b.detail;
  }
  SolveResult& result = k.result();
  result.time_s = k.elapsed();
  k.drain_and_free();

  // The true residual, after the solve and outside its time.
  Field ax(system.x.interior(), system.x.halo());
  ax.fill(0.0);
  Field r(system.x.interior(), system.x.halo());
  halo.exchange(system.x);
  ops::apply(system.op, system.x, ax, system.x.interior_box());
  const double rr = global_sum(comm, ops::residual(system.b, ax, r));
  result.true_residual = std::sqrt(rr) / (bb > 0.0 ? std::sqrt(bb) : 1.0);
  result.halo_tests = halo.tests();
  if (options.faults != nullptr) result.injected_s = options.faults->injected_s();
  result.messages_sent = result.halo_exchanges * halo.messages_per_exchange();
  result.bytes_sent =
      static_cast<double>(result.halo_exchanges) * static_cast<double>(halo.bytes_per_exchange());
  return result;
}

}  // namespace asyncsolve::solvers
