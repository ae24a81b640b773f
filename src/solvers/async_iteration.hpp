#pragma once
/// The asynchronous iteration (internal to the solvers layer): paper 000's
/// loop, written once, over two extension points:
///
/// - AsyncLocalUpdate: what one rank computes with the newest data of its
///   neighbours: a stationary sweep (SweepUpdate in jacobi_async.cpp over
///   stationary.hpp): Jacobi's over the LinearOperator, on the structured
///   stencils and on CSR alike, and restricted additive Schwarz's subdomain
///   solve (schwarz_iteration.cpp).
/// - comm::AsyncHalo: how the neighbours' data travels (one channel per
///   neighbour; the faces of a block, the ghosts of a sparse plan, or a
///   method's own overlap).
///
/// The loop owns what every such method shares: taking news, sending,
/// the non-blocking convergence reduction and its stop decision
/// (jacobi_check.hpp), idle waits, the max_iters rule of the slowest rank,
/// the wall-clock guard, straggler and noise injection, and the counts and
/// phases of the result.
#include <limits>
#include <vector>

#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/async_halo.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "asyncsolve/solvers/result.hpp"

namespace asyncsolve::solvers::detail {

/// One rank's update of an asynchronous iteration: x_new from x and the
/// neighbours' newest data in the halo (which the AsyncHalo writes into
/// both x and x_new, or into an array both share).
class AsyncLocalUpdate {
 public:
  virtual ~AsyncLocalUpdate() = default;
  /// Pieces of one update, cut every `progress_planes` planes (0: the
  /// fewest); the loop progresses the channels between them.
  virtual int pieces(int progress_planes) const = 0;
  /// The update on piece `piece`; with `fused`, returns its part of this
  /// rank's ||b - A x||^2 for the x it read (else 0 where that costs more).
  virtual double update(int piece, int progress_planes, bool fused) = 0;
  /// After every piece: x_new becomes x (the halo stays valid in both).
  virtual void advance() = 0;
  /// Whether the fused residuals bound this rank's residual as idle waits
  /// need (LinearOperator::bounds_residual). Without, a rank never idles.
  virtual bool bounds_residual() const = 0;
  /// With bounds_residual: how many times one update with a fixed halo can
  /// raise this rank's ||b - A x|| (StationarySweep::sweep_growth). The idle
  /// decision multiplies the last fused residual by its square when above 1
  /// (then every update must be fused: residual_is_free).
  virtual double growth() const { return 1.0; }
  /// Bytes one update streams.
  virtual double bytes() const = 0;
  /// True when an update with the same halo as the last one reproduces the
  /// same iterate (restricted Schwarz with exact local solves: the owned
  /// values depend only on those outside the subdomain). The loop then
  /// waits for news before sweeping again, for up to stale_wait_factor
  /// sweeps' time, instead of spinning on stale data (--idle aside: this
  /// is exact, not a bound).
  virtual bool stale_update_repeats() const { return false; }
  /// True when every update returns its residual at no extra cost (then
  /// every update is fused and refreshes the rank's part of the estimate).
  virtual bool residual_is_free() const { return false; }
};

/// What the loop needs besides its two extension points.
struct AsyncSettings {
  const AsyncJacobiOptions* options = nullptr;
  double b_norm = 1.0;  ///< ||b||, which normalises the residual
  /// Where given: set to the estimate that started the stagnation window
  /// when a stagnation verdict (AsyncStandstill) stopped the loop, to NaN
  /// otherwise; the caller checks the verdict (stale_verdict).
  double* judged_start = nullptr;
  /// A resumed iteration (after a refuted verdict): this rank's sweeps so
  /// far, and the clock (core::now_s) at the solve's start, which
  /// --max-time, the history and the result's time count from (NaN: now).
  long first_iteration = 0;
  double t0 = std::numeric_limits<double>::quiet_NaN();
};

/// Collective over the ranks of `convergence`: runs the asynchronous
/// iteration until a round of `convergence` (async_convergence_values
/// doubles, sum) stops it (jacobi_check.hpp), as jacobi_async describes.
/// Fills the iteration's part of the result: reason, converged, estimate,
/// iterations, history, phases (recv, sweep, send, residual, reduce, idle),
/// counts, time and injected delay; sweep_bytes from update.bytes(). The
/// channels are left open: the caller destroys them (halo.destroy()).
SolveResult run_async(AsyncLocalUpdate& update, comm::AsyncHalo& halo,
                      collectives::NonblockingAllreduce& convergence,
                      const AsyncSettings& settings);

}  // namespace asyncsolve::solvers::detail
