// Jacobi on a distributed CSR matrix (see jacobi_csr.hpp). The loops follow
// the structured jacobi_sync and jacobi_async step for step; the sweep is
// ops::jacobi_interior/_boundary, which also yields the residual of its
// input, so a check costs no extra pass.
#include "asyncsolve/solvers/jacobi_csr.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "jacobi_check.hpp"

namespace asyncsolve::solvers {
namespace {

/// 1 / a_ii for every row (the caller checked they are non-zero).
std::vector<double> inverse_diagonal(const ops::CsrOperator& op) {
  std::vector<double> dinv(op.diagonal().size());
  for (std::size_t i = 0; i < dinv.size(); ++i) dinv[i] = 1.0 / op.diagonal()[i];
  return dinv;
}

/// ||b||, scaled (no under/overflow; collective); 1 for b = 0.
double b_norm_of(const CsrSystem& s, collectives::Allreduce& reduction) {
  const double norm = field_norm(s.b, &reduction);
  return norm > 0.0 ? norm : 1.0;
}

/// ||b - A u||_2 over every rank, scaled like ||b|| (no under/overflow; the
/// residual vector is formed once). Collective over `reduction`.
double true_residual_norm(const ops::CsrOperator& op, const double* b, const double* u,
                          const double* ghosts, collectives::Allreduce& reduction) {
  grid::Field r({op.rows(), 1, 1}, 0);
  ops::residual(op, b, u, ghosts, r.origin());
  return field_norm(r, &reduction);
}

/// Rows per "plane" of an n-row block (a cube's plane: n^(2/3)).
int plane_rows(int n) {
  const double rows = std::pow(static_cast<double>(std::max(n, 1)), 2.0 / 3.0);
  return std::max(1, static_cast<int>(std::lround(rows)));
}

/// What both CSR Jacobi solves work on: the operator, 1/d, the iterate
/// (system.x) and a second vector for the sweep, b, ||b|| (collective, through
/// `reduction`) and the number of interior rows.
struct SweepState {
  SweepState(CsrSystem& system, collectives::Allreduce& reduction)
      : op(system.op),
        dinv(inverse_diagonal(system.op)),
        u(system.x),
        u_new({system.op.rows(), 1, 1}, 0),
        b(system.b.origin()),
        b_norm(b_norm_of(system, reduction)),
        ni(system.op.interior_rows()) {}
  const ops::CsrOperator& op;
  const std::vector<double> dinv;
  grid::Field& u;
  grid::Field u_new;
  const double* b;
  const double b_norm;
  const int ni;
};

/// Bytes one sweep moves: 12 per non-zero, and b, 1/d, u, u_new per row.
double sweep_bytes(const ops::CsrOperator& op) {
  return 12.0 * static_cast<double>(op.nnz()) + 32.0 * static_cast<double>(op.rows());
}

}  // namespace

SolveResult jacobi_sync(CsrSystem& system, const sparse::DistMatrix& matrix,
                        comm::SparseHaloExchange& halo, collectives::Allreduce& reduction,
                        const JacobiOptions& options) {
  if (options.hybrid != nullptr || options.copy)
    throw std::invalid_argument("jacobi_sync on a CSR matrix: no hybrid scheme, no copy loop");
  SolveResult result;
  result.phases = core::PhaseTimers({"halo", "sweep", "copy", "residual", "reduce"});
  core::PhaseTimers& timers = result.phases;
  SweepState state(system, reduction);
  auto& [op, dinv, u, u_new, b, b_norm, ni] = state;
  (void)matrix;

  const double t0 = core::now_s();
  double residual = std::numeric_limits<double>::infinity();
  bool over_time = false;
  // Per iteration: one halo exchange (the plan's messages) in flight while
  // the interior rows are swept, one sweep (12 B per non-zero, 32 B per row)
  // that also gives ||b - A u^k||^2; every check_every iterations one
  // allreduce of 2 doubles (the residual and whether a rank ran out of time).
  for (long k = 0;; ++k) {
    const bool check = k % options.check_every == 0 || k >= options.max_iters;
    const bool exchange = check || k % options.halo_every == 0;
    const double ts = core::now_s();
    double halo_s = 0.0;
    double local = 0.0;
    if (exchange) {
      halo.start(u);
      halo_s += core::now_s() - ts;
    }
    // u^{k+1} = u^k + D^-1 (b - A u^k): interior rows (no ghost) first
    local += ops::jacobi_interior(op, b, dinv.data(), u.origin(), u_new.origin(), 0, ni);
    if (exchange) {
      const double tw = core::now_s();
      halo.finish(u);
      ++result.halo_exchanges;
      halo_s += core::now_s() - tw;
    }
    // then the boundary rows, with the ghosts of u^k (or stale ones between exchanges)
    local +=
        ops::jacobi_boundary(op, b, dinv.data(), u.origin(), halo.ghosts().data(), u_new.origin());
    timers.add(halo_phase, halo_s);
    // A straggler's sweep takes longer: its delay counts as sweep time.
    if (options.faults != nullptr) options.faults->after_sweep(core::now_s() - ts - halo_s);
    timers.add(sweep_phase, core::now_s() - ts - halo_s);
    if (options.faults != nullptr) options.faults->poll();
    if (check) {
      {
        const auto scope = timers.time(reduce_phase);
        // [||b - A u^k||^2, ranks over time]: one reduction for both.
        std::array<double, 2> sums{local, core::now_s() - t0 >= options.max_time_s ? 1.0 : 0.0};
        reduction.reduce(sums, collectives::ReduceOp::sum);
        residual = std::sqrt(sums[0]) / b_norm;
        over_time = sums[1] > 0.0;
      }
      const HistoryPoint point{k, core::now_s() - t0, residual, std::sqrt(local) / b_norm};
      result.history.push_back(point);
      if (options.monitor) options.monitor(point);
      if (breaks_down(residual)) {  // the same reduced value on every rank: all stop
        set_breakdown(result, residual, k);
        result.iterations = k;
        break;
      }
      if (residual < options.tol) {
        result.converged = true;
        result.reason = "tolerance";
        result.iterations = k;
        break;  // u^k stands; u^{k+1} is dropped
      }
      if (over_time) {
        result.reason = "max_time";
        result.iterations = k;
        break;
      }
      if (k >= options.max_iters) {
        result.reason = "max_iters";
        result.iterations = k;
        break;
      }
    }
    u.swap(u_new);
  }
  result.time_s = core::now_s() - t0;
  if (options.faults != nullptr) result.injected_s = options.faults->injected_s();
  result.residual_estimate = residual;
  result.messages_sent = result.halo_exchanges * halo.messages_per_exchange();
  result.bytes_sent =
      static_cast<double>(result.halo_exchanges) * static_cast<double>(halo.bytes_per_exchange());
  result.sweep_bytes = sweep_bytes(op) * static_cast<double>(result.iterations);

  // The true residual of the returned iterate, measured synchronously.
  halo.exchange(u);
  result.true_residual =
      true_residual_norm(op, b, u.origin(), halo.ghosts().data(), reduction) / b_norm;
  confirm_convergence(result, options.tol);
  return result;
}

namespace {

enum AsyncPhase : std::size_t {
  recv_phase,
  sweep_phase_a,
  send_phase,
  residual_phase_a,
  reduce_phase_a
};

}  // namespace

SolveResult jacobi_async(CsrSystem& system, const sparse::DistMatrix& matrix,
                         comm::SparseHaloExchange& sync_halo, collectives::Allreduce& reduction,
                         collectives::NonblockingAllreduce& convergence,
                         const AsyncJacobiOptions& options) {
  const JacobiOptions& base = options.base;
  SolveResult result;
  result.phases = core::PhaseTimers({"recv", "sweep", "send", "residual", "reduce"});
  core::PhaseTimers& timers = result.phases;
  SweepState state(system, reduction);
  auto& [op, dinv, u, u_new, b, b_norm, ni] = state;

  // The ghosts start from x0 (one synchronous exchange), then come from the
  // channels: one per neighbour rank.
  sync_halo.exchange(u);
  std::vector<double> ghosts(sync_halo.ghosts().begin(), sync_halo.ghosts().end());
  ghosts.push_back(0.0);  // never empty
  comm::SparseHaloChannels channels(matrix,
                                    {options.transport, options.racy, options.max_in_flight});
  const int piece = options.progress_planes > 0 ? options.progress_planes * plane_rows(op.rows())
                                                : std::max(ni, 1);

  const double t0 = core::now_s();
  double estimate = std::numeric_limits<double>::infinity();
  double local_r2 = 0.0;
  long k = 0;
  detail::AsyncCheckSums contribution{};
  detail::AsyncCheckSums sum{};
  const int ranks = matrix.comm().size();
  // Per iteration: at most one message per neighbour and direction (fewer
  // when a channel is full or halo_every > 1), one sweep (12 B per non-zero,
  // 32 B per row) that gives the residual of its input; every check_every
  // iterations one started reduction of async_convergence_values doubles,
  // tested every iteration.
  for (;;) {
    {
      // Async: the newest whole message of every neighbour; racy: whatever landed.
      const auto scope = timers.time(recv_phase);
      channels.recv(ghosts, result.batch_sizes);
    }
    bool stop = false;
    if (convergence.active()) {
      const auto scope = timers.time(reduce_phase_a);
      stop = convergence.test(sum) && detail::finish_async_check(result, base, k, t0, sum, local_r2,
                                                                 b_norm, ranks, estimate);
    }
    if (stop) break;
    if (k >= base.max_iters) {
      // Wait (progressing) until a reduction lets every rank stop: this rank's
      // contributions now say it is at max_iters (the solve stops there when
      // every rank is, or on time or convergence).

      if (!convergence.active()) {
        contribution = detail::async_contribution(base, k, t0, local_r2);
        convergence.start(contribution);
      }
      channels.progress();
      continue;
    }
    double r2 = 0.0;
    {
      // u^{k+1} = u^k + D^-1 (b - A u^k) with the newest ghosts; ||b - A u^k||^2
      const double ts = core::now_s();
      for (int begin = 0; begin < ni; begin += piece) {
        r2 += ops::jacobi_interior(op, b, dinv.data(), u.origin(), u_new.origin(), begin,
                                   std::min(ni, begin + piece));
        if (options.progress_planes > 0) channels.progress();
      }
      r2 += ops::jacobi_boundary(op, b, dinv.data(), u.origin(), ghosts.data(), u_new.origin());
      if (base.faults != nullptr) base.faults->after_sweep(core::now_s() - ts);
      timers.add(sweep_phase_a, core::now_s() - ts);
      if (base.faults != nullptr) base.faults->poll();
    }
    local_r2 = r2;
    if (!convergence.active() && k % base.check_every == 0) {
      contribution = detail::async_contribution(base, k, t0, local_r2);
      const auto scope = timers.time(reduce_phase_a);
      convergence.start(contribution);
    }
    u.swap(u_new);
    ++k;
    if (k % base.halo_every == 0) {
      const auto scope = timers.time(send_phase);
      result.skipped_sends += channels.send(u.origin());
    }
  }
  result.time_s = core::now_s() - t0;
  result.iterations = k;
  result.residual_estimate = estimate;
  result.messages_sent = channels.messages_sent();
  result.bytes_sent = channels.bytes_sent();
  // Nothing may stay in flight: complete every message in both directions.
  channels.destroy();
  result.sweep_bytes = sweep_bytes(op) * static_cast<double>(k);
  if (base.faults != nullptr) result.injected_s = base.faults->injected_s();

  // The true residual of this rank's last iterate together with the others'.
  sync_halo.exchange(u);
  result.true_residual =
      true_residual_norm(op, b, u.origin(), sync_halo.ghosts().data(), reduction) / b_norm;
  if (const long tail_iterations =
          detail::final_sync_iterations(result, base.tol, options.final_sync);
      tail_iterations > 0) {
    JacobiOptions sync = base;
    sync.max_iters = tail_iterations;
    sync.check_every = 1;
    sync.halo_every = 1;
    sync.monitor = nullptr;
    sync.faults = nullptr;
    sync.max_time_s = std::numeric_limits<double>::infinity();
    const SolveResult tail = jacobi_sync(system, matrix, sync_halo, reduction, sync);
    result.final_sync_iterations = tail.iterations;
    result.converged = tail.converged;
    result.reason = tail.converged ? "tolerance" : "final_sync";
    result.true_residual = tail.true_residual;
    result.time_s += tail.time_s;
    result.sweep_bytes += tail.sweep_bytes;
  }
  confirm_convergence(result, base.tol);
  return result;
}

}  // namespace asyncsolve::solvers
