// The OpenSHMEM space of the one-sided Stencil2D variants
// (stencil2d_onesided.cpp): one symmetric block per PE (shmem_malloc, the
// same size everywhere) holding V then 16 long counters. `comm` must span
// the SHMEM world with rank == PE number (checked; every PE fails alike).
//
// Data: puts with shmem_double_iput (one call per column of a block that is
// taller than wide) or shmem_double_put (one per row); bulk gets likewise
// with shmem_double_iget / shmem_double_get (blocking); fine-grain gets with
// shmem_double_get_nbi, one per row, completed by shmem_quiet. Counters:
// shmem_fence (orders the data puts to that PE before the flag) then
// shmem_long_atomic_set; read with shmem_long_atomic_fetch on oneself.
// Before a counter announces local stores to V to peers that will get them,
// shmem_quiet completes the stores (OpenSHMEM 1.4: quiet covers memory
// stores to symmetric objects).
//
// Progress: OSHMEM over UCX moves remote operations inside SHMEM and MPI
// calls; every counter read also calls MPI_Iprobe on a private duplicate of
// the communicator (never used for messages), as channel_shmem.cpp does.
#include <mpi.h>

#include <atomic>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/shmem.hpp"
#include "stencil2d_impl.hpp"

#ifdef ASYNCSOLVE_HAVE_SHMEM
#include <shmem.h>
#endif

namespace asyncsolve::kernels::detail {

#ifndef ASYNCSOLVE_HAVE_SHMEM

std::unique_ptr<OneSidedSpace> make_shmem_space(const par::Comm&, const Stencil2dLayout&) {
  throw core::RuntimeFailure("stencil2d: this build has no OpenSHMEM");
}

#else

namespace {

using par::check_mpi;

static_assert(sizeof(long) == 8, "the counters are 8-byte longs");
constexpr int flag_slots = 2 * stencil2d_directions;

class ShmemSpace final : public OneSidedSpace {
 public:
  ShmemSpace(const par::Comm& comm, const Stencil2dLayout& layout) : layout_(layout) {
    pe_ = comm.rank();
    const std::size_t bytes = static_cast<std::size_t>(layout_.doubles()) * 8 + flag_slots * 8;
    void* base = shmem_malloc(bytes);  // collective over all PEs
    int failed = base == nullptr ? 1 : 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm.get()),
              "MPI_Allreduce");
    if (failed != 0) {
      shmem_free(base);  // collective; null is allowed
      throw core::RuntimeFailure("stencil2d: shmem_malloc failed on some PE");
    }
    v_ = static_cast<double*>(base);
    flags_ = reinterpret_cast<long*>(v_ + layout_.doubles());
    for (long i = 0; i < layout_.doubles(); ++i) v_[i] = 0.0;
    for (int s = 0; s < flag_slots; ++s) flags_[s] = 0;
    check_mpi(MPI_Comm_dup(comm.get(), &quiet_), "MPI_Comm_dup");
    shmem_barrier_all();  // local stores complete before any PE touches a peer's block
  }
  // free() is collective (shmem_barrier_all, shmem_free) and must be called
  // explicitly by every PE; the destructor frees nothing collectively.
  ~ShmemSpace() override = default;

  std::string transport() const override { return "shmem"; }
  double* data() noexcept override { return v_; }

  void put_block(int target, int d) override {
    const Rect2d b = layout_.border(d);
    const Rect2d h = layout_.halo(dir2d_opposite(d));
    transfer(b, h, target, true, false);
  }

  void get_block(int target, int d, bool fine) override {
    const Rect2d h = layout_.halo(d);
    const Rect2d b = layout_.border(dir2d_opposite(d));
    transfer(b, h, target, false, fine);
  }

  void complete_all() override { shmem_quiet(); }

  void signal(int target, int slot, long long value) override {
    std::atomic_thread_fence(std::memory_order_release);
    shmem_fence();  // the data puts to `target` are delivered before the flag
    shmem_long_atomic_set(flags_ + slot, static_cast<long>(value), target);
  }

  long long read_flag(int slot) override {
    int probe = 0;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet_, &probe, MPI_STATUS_IGNORE),
              "MPI_Iprobe");
    const long v = shmem_long_atomic_fetch(flags_ + slot, pe_);
    std::atomic_thread_fence(std::memory_order_acquire);
    return v;
  }

  void publish_local() override {
    std::atomic_thread_fence(std::memory_order_release);
    shmem_quiet();
  }
  void acquire_local() override { std::atomic_thread_fence(std::memory_order_acquire); }

  void free() override {
    if (v_ == nullptr) return;
    shmem_quiet();
    shmem_barrier_all();
    shmem_free(v_);
    v_ = nullptr;
    flags_ = nullptr;
    check_mpi(MPI_Comm_free(&quiet_), "MPI_Comm_free");
  }

 private:
  /// Moves `src` (in the block of the putting side) to `dst` (in the block of
  /// the receiving side): a put from here to `target`, or a get from
  /// `target` to here.
  void transfer(const Rect2d& src, const Rect2d& dst, int target, bool put, bool fine) {
    const long stride = layout_.stride;
    if (!fine && src.w < src.h) {
      // Column by column, strided.
      for (int c = 0; c < src.w; ++c) {
        double* to = v_ + layout_.index(dst.x0 + c, dst.y0);
        double* from = v_ + layout_.index(src.x0 + c, src.y0);
        if (put) {
          shmem_double_iput(to, from, stride, stride, static_cast<std::size_t>(src.h), target);
        } else {
          shmem_double_iget(to, from, stride, stride, static_cast<std::size_t>(src.h), target);
        }
      }
      return;
    }
    for (int row = 0; row < src.h; ++row) {
      double* to = v_ + layout_.index(dst.x0, dst.y0 + row);
      double* from = v_ + layout_.index(src.x0, src.y0 + row);
      const auto count = static_cast<std::size_t>(src.w);
      if (put) {
        shmem_double_put(to, from, count, target);
      } else if (fine) {
        shmem_double_get_nbi(to, from, count, target);
      } else {
        shmem_double_get(to, from, count, target);
      }
    }
  }

  Stencil2dLayout layout_;
  int pe_ = 0;
  double* v_ = nullptr;
  long* flags_ = nullptr;
  MPI_Comm quiet_ = MPI_COMM_NULL;
};

}  // namespace

std::unique_ptr<OneSidedSpace> make_shmem_space(const par::Comm& comm,
                                                const Stencil2dLayout& layout) {
  if (!par::shmem_initialized()) {
    throw core::RuntimeFailure(
        "stencil2d: OpenSHMEM is not started (run under oshrun with "
        "--transport shmem)");
  }
  int bad = comm.size() != shmem_n_pes() || comm.rank() != shmem_my_pe() ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm.get()), "MPI_Allreduce");
  if (bad != 0) {
    throw core::RuntimeFailure("stencil2d: the communicator is not the SHMEM world (rank != PE)");
  }
  return std::make_unique<ShmemSpace>(comm, layout);
}

#endif  // ASYNCSOLVE_HAVE_SHMEM

}  // namespace asyncsolve::kernels::detail
