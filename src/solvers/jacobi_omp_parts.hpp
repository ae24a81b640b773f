#pragma once
// Internal to jacobi_omp.cpp: the pieces OpenMP Jacobi's threads work with
// (slabs, the boxed plane sweeps that read a neighbour's planes from its
// mailbox, mailboxes and their locks, per-thread records, the back-off of a
// waiting thread). See jacobi_omp.cpp for how they fit together.
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "asyncsolve/solvers/jacobi_omp.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "asyncsolve/solvers/result.hpp"

namespace asyncsolve::solvers::omp_detail {

using grid::Field;

/// Relaxed atomic load and store of one double (racy). `omp atomic` rather
/// than std::atomic_ref: OpenMP's rule is the plain data-race rule (two
/// accesses conflict only if one writes), so a thread may read its own
/// boundary plane with plain loads while its neighbour reads the same plane
/// atomically; atomic_ref would formally demand that every access made while
/// any atomic_ref to the value exists go through atomic_ref.
inline double load_relaxed(const double* p) noexcept {
  auto* q = const_cast<double*>(p);  // omp atomic read takes a modifiable lvalue
  double v;
#pragma omp atomic read relaxed
  v = *q;
  return v;
}

inline void store_relaxed(double* p, double v) noexcept {
#pragma omp atomic write relaxed
  *p = v;
}

/// A run of planes of one thread's slab, and whether it touches the
/// neighbouring thread below (its first plane reads plane begin - 1, which
/// that neighbour writes) or above (its last plane reads plane end).
struct Part {
  int begin = 0;
  int end = 0;
  bool below = false;
  bool above = false;
};

/// The slab [k0, k1) of thread t of `threads` in at most three parts: the
/// plane next to the lower neighbour, the planes touching no neighbour, the
/// plane next to the upper neighbour. A one-plane slab between two
/// neighbours is one part touching both.
inline std::vector<Part> split_slab(int k0, int k1, int t, int threads) {
  const bool lower = t > 0;
  const bool upper = t < threads - 1;
  if (k1 - k0 == 1) return {Part{k0, k1, lower, upper}};
  std::vector<Part> parts;
  const int mid_begin = lower ? k0 + 1 : k0;
  const int mid_end = upper ? k1 - 1 : k1;
  if (lower) parts.push_back({k0, k0 + 1, true, false});
  if (mid_begin < mid_end) parts.push_back({mid_begin, mid_end, false, false});
  if (upper) parts.push_back({k1 - 1, k1, false, true});
  return parts;
}

/// Plane k of the sweep and its residual, the plane below read from the
/// mailbox `below` (nx * ny values, row by row) instead of plane k - 1 of u
/// when `below` is not null, and likewise `above`; with `atomic`, mailbox
/// values are read with relaxed atomic loads. The neighbours are added in
/// jacobi_sweep_ref's order. With `Sweep`, writes u_new = (sum of neighbours
/// of u)/6 on the plane; either way returns ||b - A u||^2 on the plane with
/// the values it read (fused, as ops::jacobi_sweep_residual).
template <bool Sweep>
double plane_boxed(const Field& u, Field* u_new, int k, const double* below, const double* above,
                   bool atomic) noexcept {
  const int nx = u.interior()[0];
  const int ny = u.interior()[1];
  const std::ptrdiff_t sy = u.stride_y();
  const std::ptrdiff_t sz = u.stride_z();
  const bool atomic_below = atomic && below != nullptr;
  const bool atomic_above = atomic && above != nullptr;
  double sum_sq = 0.0;
  for (int j = 0; j < ny; ++j) {
    const double* c = u.origin() + u.index(0, j, k);
    const double* b = below != nullptr ? below + static_cast<std::ptrdiff_t>(j) * nx : c - sz;
    const double* t = above != nullptr ? above + static_cast<std::ptrdiff_t>(j) * nx : c + sz;
    double* out = nullptr;
    if constexpr (Sweep) out = u_new->origin() + u_new->index(0, j, k);
    for (int i = 0; i < nx; ++i) {
      const double down = atomic_below ? load_relaxed(b + i) : b[i];
      const double up = atomic_above ? load_relaxed(t + i) : t[i];
      const double sum = c[i - 1] + c[i + 1] + c[i - sy] + c[i + sy] + down + up;
      if constexpr (Sweep) out[i] = sum * (1.0 / 6.0);
      const double r = sum - 6.0 * c[i];
      sum_sq += r * r;
    }
  }
  return sum_sq;
}

/// Sweep of plane k into u_new (plane_boxed<true>); returns ||b - A u||^2 on it.
inline double sweep_plane_boxed(const Field& u, Field& u_new, int k, const double* below,
                                const double* above, bool atomic) noexcept {
  return plane_boxed<true>(u, &u_new, k, below, above, atomic);
}

/// ||b - A u||^2 on plane k, the planes below and above read as in
/// sweep_plane_boxed.
inline double residual_plane_boxed(const Field& u, int k, const double* below, const double* above,
                                   bool atomic) noexcept {
  return plane_boxed<false>(u, nullptr, k, below, above, atomic);
}

/// Plane k of f (interior points) into the mailbox `box` (nx * ny values,
/// row by row); with `atomic`, with relaxed atomic stores. Returns the
/// squared 2-norm of the change of the mailbox (the caller is its only
/// writer, so reading its old values races with nothing but reads).
inline double plane_to_box(const Field& f, int k, double* box, bool atomic) noexcept {
  const int nx = f.interior()[0];
  const int ny = f.interior()[1];
  double change_sq = 0.0;
  for (int j = 0; j < ny; ++j) {
    const double* src = f.origin() + f.index(0, j, k);
    double* dst = box + static_cast<std::ptrdiff_t>(j) * nx;
    for (int i = 0; i < nx; ++i) {
      const double d = src[i] - dst[i];
      change_sq += d * d;
      // A loop, not memcpy: see copy_planes.
      if (atomic) {
        store_relaxed(dst + i, src[i]);
      } else {
        dst[i] = src[i];
      }
    }
  }
  return change_sq;
}

/// The mailboxes of async/racy: thread t publishes its bottom plane in
/// bottom(t) (read by thread t - 1) and its top plane in top(t) (read by
/// thread t + 1). Lock b guards top(b) and bottom(b + 1). Each mailbox also
/// has a drift: the sum of the 2-norms of the changes of its plane, added
/// (release) after every publication. A reader that noted the drift at its
/// last sweep knows how far, at most, the plane moved since: by the triangle
/// inequality, by no more than the drift's growth.
class Mailboxes {
 public:
  Mailboxes(int threads, int nx, int ny)
      : plane_(static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny)),
        data_(2 * static_cast<std::size_t>(threads) * plane_, 0.0),
        drift_(std::make_unique<std::atomic<double>[]>(2 * static_cast<std::size_t>(threads))) {}
  double* bottom(int t) noexcept {
    return data_.data() + (2 * static_cast<std::size_t>(t)) * plane_;
  }
  double* top(int t) noexcept {
    return data_.data() + (2 * static_cast<std::size_t>(t) + 1) * plane_;
  }
  std::atomic<double>& bottom_drift(int t) noexcept {
    return drift_[2 * static_cast<std::size_t>(t)];
  }
  std::atomic<double>& top_drift(int t) noexcept {
    return drift_[2 * static_cast<std::size_t>(t) + 1];
  }

 private:
  std::size_t plane_;
  std::vector<double> data_;
  std::unique_ptr<std::atomic<double>[]> drift_;
};

/// u = u_new on planes [k_begin, k_end) (interior points only).
inline void copy_planes(const Field& u_new, Field& u, int k_begin, int k_end) noexcept {
  const int nx = u.interior()[0];
  const int ny = u.interior()[1];
  for (int k = k_begin; k < k_end; ++k)
    for (int j = 0; j < ny; ++j) {
      const double* src = u_new.origin() + u_new.index(0, j, k);
      double* dst = u.origin() + u.index(0, j, k);
      // A loop rather than memcpy: ThreadSanitizer with
      // ignore_noninstrumented_modules=1 does not see memcpy's stores, and the
      // compiler makes the same code of both.
      for (int i = 0; i < nx; ++i) dst[i] = src[i];
    }
}

/// Holds an OpenMP lock (or nothing, for a null pointer) for its lifetime.
class LockGuard {
 public:
  explicit LockGuard(omp_lock_t* lock) noexcept : lock_(lock) {
    if (lock_ != nullptr) omp_set_lock(lock_);
  }
  ~LockGuard() {
    if (lock_ != nullptr) omp_unset_lock(lock_);
  }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  omp_lock_t* lock_;
};

/// The locks of the inter-thread boundaries: lock b guards the planes on
/// either side of the boundary between threads b and b + 1.
class BoundaryLocks {
 public:
  explicit BoundaryLocks(int boundaries)
      : locks_(static_cast<std::size_t>(std::max(0, boundaries))) {
    for (auto& l : locks_) omp_init_lock(&l);
  }
  ~BoundaryLocks() {
    for (auto& l : locks_) omp_destroy_lock(&l);
  }
  BoundaryLocks(const BoundaryLocks&) = delete;
  BoundaryLocks& operator=(const BoundaryLocks&) = delete;
  omp_lock_t* at(int b) noexcept { return &locks_[static_cast<std::size_t>(b)]; }

 private:
  std::vector<omp_lock_t> locks_;
};

/// ||b||_2 on one rank: the residual of a field that is zero except for the
/// Dirichlet data in its halo; 1 if that is zero.
inline double local_rhs_norm(const grid::Problem& problem, const grid::Decomposition& decomposition,
                             const Field& shape) {
  Field boundary_only(shape.interior(), shape.halo());
  grid::apply_boundary(problem, decomposition, boundary_only);
  const double norm = jacobi_residual_norm(boundary_only, nullptr);  // scaled: no under/overflow
  return norm > 0.0 ? norm : 1.0;
}

inline core::PhaseTimers omp_timers() {
  return core::PhaseTimers({"sweep", "copy", "residual", "barrier", "idle"});
}

/// What every thread leaves behind for the result.
struct ThreadRecord {
  long iterations = 0;
  double sweep_points = 0;  ///< points of its slab
  long idle_waits = 0;
  core::PhaseTimers timers = omp_timers();
  std::vector<HistoryPoint> history;
};

/// Why the threads stop (async/racy: the first reason set wins; sync: the
/// check's verdict).
/// Why the threads stopped; `judged`: by the divergence or stagnation rule
/// of synchronous Jacobi (sync), or by the asynchronous stagnation rule
/// (async/racy, detail::AsyncStandstill) (OmpShared::judged_reason and
/// judged_detail).
enum class OmpStop : int { none, tolerance, max_iters, max_time, breakdown, judged };

/// Sleeps of a waiting thread: a few polls back to back, then sleeps doubling
/// from 2 us to 200 us (as as_channels_wait_any), so that a thread with
/// nothing to do gives its core to one that has.
class Backoff {
 public:
  void pause() {
    if (polls_ < 4) {
      ++polls_;
      return;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s_));
    sleep_s_ = std::min(2.0 * sleep_s_, 200e-6);
  }

 private:
  int polls_ = 0;
  double sleep_s_ = 2e-6;
};

/// What the threads of one solve share: the fields, the settings, and the
/// state of the parallel region (setup: jacobi_omp).
struct OmpShared {
  OmpShared(const OmpJacobiOptions& o, Field& u_in, Field& u_new_in, double b_norm_in)
      : options(o),
        base(o.base),
        u(u_in),
        u_new(u_new_in),
        threads(o.threads),
        planes(u_in.interior()[2]),
        b_norm(b_norm_in),
        b_norm_sq(b_norm_in * b_norm_in),
        // async/racy: below this part of ||b - A u||^2 a thread with nothing
        // new idles (the MPI solver's threshold: all threads there would put
        // the estimate below tol * async_idle_fraction).
        idle_r2(std::pow(async_idle_fraction * o.base.tol, 2) * b_norm_sq / o.threads),
        timed(std::isfinite(o.base.max_time_s)),
        racy(o.variant == OmpVariant::racy),
        records(static_cast<std::size_t>(o.threads)),
        locks(o.threads - 1),
        boxes(o.variant == OmpVariant::sync ? 0 : o.threads, u_in.interior()[0],
              u_in.interior()[1]),
        part_sq(static_cast<std::size_t>(o.threads)) {
    for (std::vector<double>& p : partial_sq) p.assign(static_cast<std::size_t>(o.threads), 0.0);
  }

  /// The sum of the threads' parts of ||b - A u||^2 (async/racy).
  double sum_sq() const {
    double sum = 0.0;
    for (const PartSq& p : part_sq) sum += p.value.load(std::memory_order_relaxed);
    return sum;
  }

  bool over_time() const { return timed && core::now_s() - t0 >= base.max_time_s; }
  /// The first reason wins; true if this call set it.
  bool set_stop(OmpStop why) {
    int none = static_cast<int>(OmpStop::none);
    return stop.compare_exchange_strong(none, static_cast<int>(why));
  }

  const OmpJacobiOptions& options;
  const JacobiOptions& base;
  Field& u;
  Field& u_new;
  const int threads;
  const int planes;
  const double b_norm;
  const double b_norm_sq;
  const double idle_r2;
  const bool timed;
  const bool racy;
  double t0 = 0.0;
  std::vector<ThreadRecord> records;
  BoundaryLocks locks;
  Mailboxes boxes;
  std::atomic<bool> wrong_team{false};
  // sync: per check (two slots, used in turn), every thread's ||b - A u||^2
  // of its slab and whether the clock ran out (one thread reads it)
  std::array<std::vector<double>, 2> partial_sq;
  std::array<bool, 2> sync_over_time{};
  OmpStop sync_stop = OmpStop::none;                 // why the threads stopped (thread 0 writes)
  StopReason judged_reason = StopReason::max_iters;  // OmpStop::judged's (thread 0 writes,
                                                     // before it sets `stop`)
  std::string judged_detail;
  double judged_start = 0.0;  // async: the value that started the stagnation window judged
  double sync_residual = std::numeric_limits<double>::infinity();  // written by thread 0
  // async/racy
  // each thread's latest ||b - A u||^2 of its slab (its own cache line),
  // whose sum is the global estimate: summed afresh at every contribution,
  // since a running sum of the changes kept their rounding (about 1e-16 of
  // the first residual^2, an estimate floor near 1e-8 that a --tol below it
  // never met while every thread waited for news)
  struct alignas(64) PartSq {
    std::atomic<double> value{0.0};
    std::atomic<long> sweeps{0};  ///< the thread's sweeps so far (the stagnation rule)
  };
  std::vector<PartSq> part_sq;
  std::atomic<int> stop{0};    // an OmpStop, set once per round
  std::atomic<int> at_max{0};  // threads that made max_iters sweeps
  double stop_estimate = std::numeric_limits<double>::infinity();  // by the thread that set `stop`
  double verify_sq = 0.0;           // true residual^2 at a stop (under barriers)
  OmpStop verdict = OmpStop::none;  // a round's outcome (in a single)
  long restarts = 0;                // stops the true residual did not confirm
};

/// Async and racy, thread t of the team on planes [k0, k1): its rounds of
/// an asynchronous phase and a checked stop (jacobi_omp_async.cpp). Call
/// from every thread of the parallel region.
void async_thread(OmpShared& s, int t, int k0, int k1);

}  // namespace asyncsolve::solvers::omp_detail
