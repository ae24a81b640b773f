// ShmSlots: sequence-numbered slots in an MPI-3 shared-memory window; the
// protocol and why it is safe are in shm_slots.hpp.
#include "shm_slots.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cassert>
#include <stdexcept>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::collectives::detail {
namespace {

using Word = std::uint64_t;
constexpr std::size_t line_bytes = 64;

static_assert(std::atomic_ref<Word>::is_always_lock_free,
              "the sequence words must be lock-free (address-free) between processes");
static_assert(std::atomic_ref<double>::is_always_lock_free,
              "the values must be lock-free (address-free) between processes");
static_assert(sizeof(Word) == sizeof(double));

std::atomic_ref<Word> word(std::byte* slot) noexcept {
  return std::atomic_ref<Word>(*reinterpret_cast<Word*>(slot));
}

double* values(std::byte* slot) noexcept { return reinterpret_cast<double*>(slot + sizeof(Word)); }

/// The window's memory model is MPI_WIN_UNIFIED (what load/store
/// communication through it relies on).
bool is_unified(MPI_Win win) {
  int* model = nullptr;
  int flag = 0;
  par::check_mpi(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag), "MPI_Win_get_attr");
  return flag != 0 && model != nullptr && *model == MPI_WIN_UNIFIED;
}

}  // namespace

ShmSlots::ShmSlots(const par::Comm& node, std::size_t count, int areas)
    : count_(count),
      stride_((sizeof(Word) + count * sizeof(double) + line_bytes - 1) / line_bytes * line_bytes),
      areas_(areas),
      rank_(node.rank()) {
  const std::size_t bytes = stride_ * depth * static_cast<std::size_t>(areas);
  MPI_Info info = MPI_INFO_NULL;
  par::check_mpi(MPI_Info_create(&info), "MPI_Info_create");
  // Each segment in its own pages, first touched by its owner.
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* base = nullptr;
  const int rc =
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, node.get(), &base, &win_);
  MPI_Info_free(&info);
  // Collective over the node: every rank learns that one failed, and all
  // stop alike (an MPI library configured without shared windows fails on
  // every rank: Open MPI with OMPI_MCA_osc=ucx).
  int failed = rc != MPI_SUCCESS ? 1 : 0;
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, node.get()),
                 "MPI_Allreduce");
  if (failed != 0) {
    if (rc == MPI_SUCCESS) MPI_Win_free(&win_);
    throw core::CollectiveFailure(fmt::format(
        "shared-memory allreduce: the MPI library could not allocate a shared-memory window "
        "({}); expected an MPI with shared windows (Open MPI: its osc/sm component, e.g. "
        "OMPI_MCA_osc=sm,ucx), or another --allreduce",
        rc != MPI_SUCCESS ? par::MpiError("MPI_Win_allocate_shared", rc).what()
                          : "on another rank of the node"));
  }
  par::check_mpi(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  if (!is_unified(win_)) {
    MPI_Win_free(&win_);
    throw core::RuntimeFailure(
        "shared-memory allreduce: the MPI library's shared window is not in the unified memory "
        "model");
  }
  const int ranks = node.size();
  bases_.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    MPI_Aint size = 0;
    int disp = 0;
    void* p = nullptr;
    par::check_mpi(MPI_Win_shared_query(win_, r, &size, &disp, &p), "MPI_Win_shared_query");
    if (static_cast<std::size_t>(size) < bytes ||
        reinterpret_cast<std::uintptr_t>(p) % alignof(Word) != 0) {
      MPI_Win_free(&win_);
      throw core::RuntimeFailure(fmt::format(
          "shared-memory allreduce: node rank {}'s segment is {} bytes at {}, expected {} bytes "
          "aligned to {}",
          r, size, p, bytes, alignof(Word)));
    }
    bases_[static_cast<std::size_t>(r)] = static_cast<std::byte*>(p);
  }
  sources_.resize(static_cast<std::size_t>(ranks));
  par::check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
  // Zero this rank's words (nobody has published anything), then make every
  // rank's zeros visible before anybody's first publication.
  for (int a = 0; a < areas_; ++a)
    for (std::uint64_t k = 0; k < depth; ++k)
      word(slot(rank_, a, k)).store(0, std::memory_order_relaxed);
  par::check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
  par::check_mpi(MPI_Barrier(node.get()), "MPI_Barrier");
  par::check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
}

// A window not freed (an exception unwinding past its owner) is left to
// MPI_Finalize: freeing it here would communicate.
ShmSlots::~ShmSlots() = default;

void ShmSlots::free() {
  if (win_ == MPI_WIN_NULL) return;
  par::check_mpi(MPI_Win_unlock_all(win_), "MPI_Win_unlock_all");
  par::check_mpi(MPI_Win_free(&win_), "MPI_Win_free");
  win_ = MPI_WIN_NULL;
  bases_.clear();
}

std::byte* ShmSlots::slot(int rank, int area, std::uint64_t op) const noexcept {
  const std::size_t index = static_cast<std::size_t>(area) * depth + op % depth;
  return bases_[static_cast<std::size_t>(rank)] + index * stride_;
}

void ShmSlots::publish(int area, std::uint64_t op, std::span<const double> in) noexcept {
  assert(in.size() == count_);
  std::byte* s = slot(rank_, area, op);
  double* v = values(s);
  for (std::size_t j = 0; j < count_; ++j)
    std::atomic_ref<double>(v[j]).store(in[j], std::memory_order_relaxed);
  // Every value store above happens before a reader's loads once it has
  // read op + 1 here with acquire.
  word(s).store(op + 1, std::memory_order_release);
}

bool ShmSlots::is_published(int rank, int area, std::uint64_t op) const noexcept {
  // >=, not ==: a word past op + 1 would break the protocol; read() then
  // reports it instead of this rank waiting for ever.
  return word(slot(rank, area, op)).load(std::memory_order_acquire) >= op + 1;
}

void ShmSlots::read(int rank, int area, std::uint64_t op, std::span<double> dst) const {
  assert(dst.size() == count_);
  const double* v = values(slot(rank, area, op));
  for (std::size_t j = 0; j < count_; ++j) dst[j] = load(v[j]);
  std::atomic_thread_fence(std::memory_order_acquire);
  check_unchanged(rank, area, op);
}

void ShmSlots::fold(int ranks, int area, std::uint64_t op, ReduceOp rop,
                    std::span<double> out) const {
  assert(out.size() == count_ && ranks >= 1 && static_cast<std::size_t>(ranks) <= sources_.size());
  for (int r = 0; r < ranks; ++r) sources_[static_cast<std::size_t>(r)] = values(slot(r, area, op));
  const double* const* src = sources_.data();
  // One loop per operation, each element folded over the ranks in order.
  const auto run = [&](auto combine_two) {
    for (std::size_t j = 0; j < count_; ++j) {
      double acc = load(src[0][j]);
      for (int r = 1; r < ranks; ++r) acc = combine_two(acc, load(src[r][j]));
      out[j] = acc;
    }
  };
  switch (rop) {
    case ReduceOp::sum:
      run([](double a, double b) { return a + b; });
      break;
    case ReduceOp::min:
      run([](double a, double b) { return b < a ? b : a; });
      break;
    case ReduceOp::max:
      run([](double a, double b) { return a < b ? b : a; });
      break;
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  for (int r = 0; r < ranks; ++r) check_unchanged(r, area, op);
}

double ShmSlots::load(const double& v) noexcept {
  return std::atomic_ref<double>(const_cast<double&>(v)).load(std::memory_order_relaxed);
}

// The seqlock check, after an acquire fence that orders the value loads
// before this load of the word: had the owner rewritten the slot meanwhile,
// the word would have moved on.
void ShmSlots::check_unchanged(int rank, int area, std::uint64_t op) const {
  const Word now = word(slot(rank, area, op)).load(std::memory_order_relaxed);
  if (now != op + 1)
    throw std::logic_error(fmt::format(
        "shared-memory allreduce: node rank {}'s slot of operation {} was rewritten while read "
        "(its word is {})",
        rank, op, now));
}

}  // namespace asyncsolve::collectives::detail
