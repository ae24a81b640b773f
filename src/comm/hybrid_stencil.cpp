#include "asyncsolve/comm/hybrid_stencil.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/grid/split.hpp"

namespace asyncsolve::comm {

using grid::Box;

namespace {

/// One thread's partial sum, alone on its cache line.
struct alignas(64) Partial {
  double value = 0.0;
};

/// The threads' partial sums added in thread order.
double sum_in_order(const std::vector<Partial>& partial) noexcept {
  double sum = 0.0;
  for (const Partial& p : partial) sum += p.value;
  return sum;
}

[[noreturn]] void too_few_threads(int got, int wanted) {
  throw core::RuntimeFailure(fmt::format(
      "OpenMP gave {} threads for a parallel region of {} (--hybrid); check OMP_THREAD_LIMIT "
      "and OMP_DYNAMIC",
      got, wanted));
}

/// First index of part t of `count` items split in `parts` parts whose
/// sizes differ by at most one.
int part_begin(int t, int parts, int count) noexcept {
  const int base = count / parts;
  const int extra = count % parts;
  return t * base + std::min(t, extra);
}

Box split_along(const Box& box, int axis, int parts, int t) noexcept {
  Box b = box;
  const int n = box.hi[axis] - box.lo[axis];
  b.lo[axis] = box.lo[axis] + part_begin(t, parts, n);
  b.hi[axis] = box.lo[axis] + part_begin(t + 1, parts, n);
  return b;
}

}  // namespace

std::string_view hybrid_mode_name(HybridMode mode) noexcept {
  switch (mode) {
    case HybridMode::masteronly:
      return "masteronly";
    case HybridMode::funneled:
      return "funneled";
    case HybridMode::multiple:
      return "multiple";
    case HybridMode::none:
      break;
  }
  return "none";
}

std::vector<std::string> hybrid_mode_names() { return {"masteronly", "funneled", "multiple"}; }

HybridMode parse_hybrid_mode(std::string_view name) {
  if (name == "none") return HybridMode::none;
  if (name == "masteronly") return HybridMode::masteronly;
  if (name == "funneled") return HybridMode::funneled;
  if (name == "multiple") return HybridMode::multiple;
  throw core::InputError(
      fmt::format("--hybrid '{}': expected one of {}", name, fmt::join(hybrid_mode_names(), ", ")));
}

Box HybridStencil::slab(const Box& box, int parts, int t) noexcept {
  return split_along(box, 2, parts, t);
}

Box HybridStencil::share(const Box& box, int parts, int t) noexcept {
  const int nz = box.hi[2] - box.lo[2];
  const int ny = box.hi[1] - box.lo[1];
  const int axis = nz >= parts || nz >= ny ? 2 : 1;
  return split_along(box, axis, parts, t);
}

HybridStencil::HybridStencil(const grid::Decomposition& decomposition, HybridMode mode, int threads,
                             comm::HaloExchange* halo, comm::LinkwiseHaloExchange* links)
    : mode_(mode), threads_(threads), halo_(halo), links_(links) {
  const grid::Int3& n = decomposition.local();
  if (mode == HybridMode::none) throw std::invalid_argument("HybridStencil: mode none");
  if (threads < 1) {
    throw std::invalid_argument(
        fmt::format("HybridStencil: {} threads, expected at least 1", threads));
  }
  if (mode == HybridMode::multiple ? links == nullptr : halo == nullptr) {
    throw std::invalid_argument("HybridStencil: no halo exchange for the mode");
  }
  // Funneled with one thread has nobody to overlap with: it is masteronly.
  if (mode_ == HybridMode::funneled && threads_ == 1) mode_ = HybridMode::masteronly;
  block_ = Box{{0, 0, 0}, n};
  const grid::OverlapSplit split = grid::split_for_overlap(decomposition);
  interior_ = split.interior;
  boundary_ = split.boundary;
}

double HybridStencil::apply(grid::Field& in, const Kernel& kernel, HybridTimes& times) {
  switch (mode_) {
    case HybridMode::funneled:
      return funneled(in, kernel, times);
    case HybridMode::multiple:
      return multiple(in, kernel, times);
    default:
      return masteronly(in, kernel, times);
  }
}

double HybridStencil::compute(const Kernel& kernel) { return all_threads(kernel, slab); }

double HybridStencil::all_threads(const Kernel& kernel, Box (*part)(const Box&, int, int)) {
  std::vector<Partial> partial(static_cast<std::size_t>(threads_));
  int team = threads_;
#pragma omp parallel num_threads(threads_) default(shared)
  {
    const int t = omp_get_thread_num();
    if (t == 0) team = omp_get_num_threads();
    if (omp_get_num_threads() == threads_) {
      partial[static_cast<std::size_t>(t)].value = kernel(part(block_, threads_, t));
    }
  }
  if (team != threads_) too_few_threads(team, threads_);
  return sum_in_order(partial);
}

// The master exchanges outside any parallel region; then all threads compute.
double HybridStencil::masteronly(grid::Field& in, const Kernel& kernel, HybridTimes& times) {
  const double t0 = core::now_s();
  halo_->start(in);
  const double t1 = core::now_s();
  halo_->finish(in);
  const double t2 = core::now_s();
  const double sum = all_threads(kernel, share);
  times.exchange_start += t1 - t0;
  times.exchange_wait += t2 - t1;
  times.interior += core::now_s() - t2;
  return sum;
}

// Thread 0 exchanges while threads 1..T-1 compute the interior; after a
// barrier (which also makes the received halo visible to every thread) all
// compute the boundary shell.
double HybridStencil::funneled(grid::Field& in, const Kernel& kernel, HybridTimes& times) {
  std::vector<Partial> partial(static_cast<std::size_t>(threads_));
  int team = threads_;
  double t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  std::exception_ptr error;
  const int workers = threads_ - 1;
#pragma omp parallel num_threads(threads_) default(shared)
  {
    const int t = omp_get_thread_num();
    if (t == 0) team = omp_get_num_threads();
    if (omp_get_num_threads() == threads_) {
      double mine = 0.0;
      if (t == 0) {
        t0 = core::now_s();
        // An exception must not leave the parallel region: kept, rethrown after it.
        try {
          halo_->start(in);
          t1 = core::now_s();
          halo_->finish(in);
        } catch (...) {
          error = std::current_exception();
        }
        t2 = core::now_s();
      } else {
        mine += kernel(share(interior_, workers, t - 1));
      }
#pragma omp barrier
      if (t == 0) t3 = core::now_s();
      for (const Box& box : boundary_) mine += kernel(share(box, threads_, t));
      partial[static_cast<std::size_t>(t)].value = mine;
    }
  }
  if (error) std::rethrow_exception(error);
  if (team != threads_) too_few_threads(team, threads_);
  times.exchange_start += t1 - t0;
  times.exchange_wait += t2 - t1;
  times.interior += t3 - t2;
  times.boundary += core::now_s() - t3;
  return sum_in_order(partial);
}

// Every thread exchanges its links (round-robin by thread id), then all
// compute the block.
double HybridStencil::multiple(grid::Field& in, const Kernel& kernel, HybridTimes& times) {
  std::vector<Partial> partial(static_cast<std::size_t>(threads_));
  int team = threads_;
  double t0 = 0, t1 = 0;
  std::exception_ptr error;
  const int links = links_->links();
#pragma omp parallel num_threads(threads_) default(shared)
  {
    const int t = omp_get_thread_num();
    if (t == 0) {
      team = omp_get_num_threads();
      t0 = core::now_s();
    }
    if (omp_get_num_threads() == threads_) {
      try {
        for (int i = t; i < links; i += threads_) links_->exchange_link(in, i);
      } catch (...) {
#pragma omp critical(asyncsolve_hybrid_error)
        if (!error) error = std::current_exception();
      }
#pragma omp barrier
      if (t == 0) t1 = core::now_s();
      partial[static_cast<std::size_t>(t)].value = kernel(share(block_, threads_, t));
    }
  }
  if (error) std::rethrow_exception(error);
  if (team != threads_) too_few_threads(team, threads_);
  times.exchange_wait += t1 - t0;
  times.interior += core::now_s() - t1;
  return sum_in_order(partial);
}

}  // namespace asyncsolve::comm
