#pragma once
/// Hybrid MPI+OpenMP stencil passes (paper 002 §3-4, §7.2): a halo exchange
/// of the input field followed by a kernel over every point of the block,
/// computed by T OpenMP threads per MPI rank in one of three schemes.
///
/// - masteronly: MPI only outside parallel regions. The master exchanges the
///   halo (start + finish), then one parallel region computes the block, each
///   thread a slab of z-planes (share(): along y when the block has fewer
///   z-planes than threads and more rows than planes).
/// - funneled: one parallel region. Thread 0 exchanges the halo (start +
///   finish: MPI_THREAD_FUNNELED) while threads 1..T-1 compute the interior
///   (the points whose stencil needs no halo), split among them by thread id;
///   after a barrier all T threads compute the boundary shell. With T = 1 it
///   is masteronly.
/// - multiple: one parallel region. The links of the halo (faces, and for 27
///   points edges and corners) are dealt out round-robin to the threads; each
///   thread posts and completes its own messages (MPI_THREAD_MULTIPLE); after
///   a barrier all threads compute the block, as in masteronly.
///
/// T may exceed the block's z-planes: the passes then split the block along
/// y (share()), while compute() gives threads without a plane nothing to do.
///
/// Each point is computed by whichever thread gets it, with the kernel's own
/// arithmetic, so the field a pass writes does not depend on the scheme or
/// on T. The kernel's return values (a fused inner product, a residual) are
/// summed per thread and the threads' sums added in thread order: the same
/// bits from run to run, but summed in another order than without threads.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::comm {

/// The hybrid schemes; `none` is pure MPI (no threads).
enum class HybridMode { none, masteronly, funneled, multiple };

/// "none", "masteronly", "funneled" or "multiple".
std::string_view hybrid_mode_name(HybridMode mode) noexcept;
/// The names --hybrid takes: masteronly, funneled, multiple.
std::vector<std::string> hybrid_mode_names();
/// The mode named `name` (one of hybrid_mode_names(), or "none"); throws
/// core::InputError naming the value otherwise.
HybridMode parse_hybrid_mode(std::string_view name);

/// Where the master thread (thread 0) spent a pass, accumulated over passes,
/// in seconds; the four add up to the passes' wall time.
///
/// - masteronly: exchange_start / exchange_wait are HaloExchange::start and
///   finish, interior the parallel region (the whole block), boundary 0.
/// - funneled: exchange_start / exchange_wait are thread 0's start and
///   finish (overlapped with the other threads' interior), interior thread
///   0's wait at the barrier (the interior left when the halo was in),
///   boundary the shell computed by all threads.
/// - multiple: exchange_wait is thread 0's links plus its wait at the barrier
///   (until every thread's links are in), interior the block, the rest 0.
struct HybridTimes {
  double exchange_start = 0;
  double exchange_wait = 0;
  double interior = 0;
  double boundary = 0;
};

/// Runs stencil passes on one rank's block with `threads` OpenMP threads in
/// one scheme. Not thread-safe itself: call it from the thread that called
/// MPI_Init_thread (MPI_THREAD_FUNNELED and MPI_THREAD_MULTIPLE name that
/// thread), outside any parallel region.
class HybridStencil {
 public:
  /// A kernel computes its output on the points of a box (inside the
  /// interior) and returns a partial sum (0 if it has none). It is called
  /// concurrently from several threads on disjoint boxes.
  using Kernel = std::function<double(const grid::Box&)>;

  /// `halo` serves masteronly and funneled, `links` serves multiple; the one
  /// the mode does not use may be null. Neither is owned; both, and
  /// `decomposition`, must outlive this object. Throws std::invalid_argument
  /// for mode none, threads < 1, or a missing exchange.
  HybridStencil(const grid::Decomposition& decomposition, HybridMode mode, int threads,
                comm::HaloExchange* halo, comm::LinkwiseHaloExchange* links);

  HybridMode mode() const noexcept { return mode_; }
  int threads() const noexcept { return threads_; }

  /// Collective among neighbours: exchanges the halo of `in`, then calls
  /// `kernel` on boxes that tile the block (the kernel must read `in` only
  /// within one point of its box). Returns the sum of the kernel's results;
  /// adds the master's times to `times`. Throws core::RuntimeFailure if the
  /// OpenMP runtime gives fewer threads than asked for.
  double apply(grid::Field& in, const Kernel& kernel, HybridTimes& times);

  /// Not collective: `kernel` on slabs of z-planes that tile the block, from
  /// all threads, without an exchange (a residual, a sweep between exchanges).
  /// Threads beyond the block's z-planes get empty slabs.
  double compute(const Kernel& kernel);

  /// The slab of z-planes of the block that thread `t` of `parts` computes
  /// (sizes differ by at most one).
  static grid::Box slab(const grid::Box& box, int parts, int t) noexcept;
  /// Part `t` of `parts` of `box`, split along z when it has at least
  /// `parts` planes, else along the longer of y and z (parts may be empty).
  static grid::Box share(const grid::Box& box, int parts, int t) noexcept;

 private:
  /// `kernel` on part(block, T, t) from every thread t; the sum in thread order.
  double all_threads(const Kernel& kernel, grid::Box (*part)(const grid::Box&, int, int));
  double masteronly(grid::Field& in, const Kernel& kernel, HybridTimes& times);
  double funneled(grid::Field& in, const Kernel& kernel, HybridTimes& times);
  double multiple(grid::Field& in, const Kernel& kernel, HybridTimes& times);

  HybridMode mode_;
  int threads_;
  comm::HaloExchange* halo_;
  comm::LinkwiseHaloExchange* links_;
  grid::Box block_;
  grid::Box interior_;
  std::vector<grid::Box> boundary_;
};

}  // namespace asyncsolve::comm
