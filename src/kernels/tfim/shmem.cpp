// The shmem transport of the TFIM mat-vec's remote part: paper 004's "SHMEM
// fast" (non-blocking put, then the receiver spins on a value it expects),
// written with OpenSHMEM 1.4 calls that guarantee the order it relies on.
//
// Symmetric block (shmem_malloc, the same size on every PE): m data slots of
// a whole block, then m flags and m acknowledgements (longs). Slot k, flag k
// and ack k of a PE are written only by its partner PE ^ 2^k. The mat-vec
// count t = 1, 2, ... is the value exchanged.
//   start(x):  for each k: shmem_long_wait_until(ack[k] >= t - 1) (the
//              partner has read what was put last time: one slot per partner
//              suffices); shmem_putmem_nbi(x -> partner's slot k);
//              shmem_fence (orders the data before the flag at that PE);
//              shmem_long_atomic_set(partner's flag[k] = t).
//   (the caller computes the local part while the puts proceed)
//   finish(y): for each k: shmem_long_wait_until(flag[k] >= t); y += gamma *
//              slot k; shmem_long_atomic_set(partner's ack[k] = t). Then
//              shmem_quiet: this PE's puts are complete, x may change.
// The paper appended the sender's rank to the data as an in-band sentinel
// and spun on it; OpenSHMEM does not promise that the words of one put land
// in order, so the flag is a separate put behind a fence (put-fence-put, as
// in paper 000 §3.2.1). Per mat-vec: m data puts, m flag and m ack AMOs.
//
// Needs OpenSHMEM started (par::Shmem) and comm ranks equal to PE numbers
// (MPI_COMM_WORLD under oshrun).
#include <mpi.h>

#include <atomic>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/kernels/spin_exchange.hpp"
#include "asyncsolve/par/check.hpp"

#ifdef ASYNCSOLVE_HAVE_SHMEM
#include <shmem.h>
#endif

namespace asyncsolve::kernels::detail {

#ifndef ASYNCSOLVE_HAVE_SHMEM

std::unique_ptr<SpinExchange> make_spin_exchange_shmem(const par::Comm&, int, std::size_t) {
  throw core::InputError(
      "--transport shmem: this build of asyncsolve has no OpenSHMEM, expected "
      "mpi or rma");
}

#else

namespace {

static_assert(sizeof(long) == 8, "flags are 8-byte longs");

class ShmemSpinExchange final : public SpinExchange {
 public:
  ShmemSpinExchange(const par::Comm& comm, int partners, std::size_t block)
      : partners_(partners), block_(block) {
    rank_ = comm.rank();
    int bad = comm.size() != shmem_n_pes() || rank_ != shmem_my_pe() ? 1 : 0;
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm.get()),
                   "MPI_Allreduce");
    if (bad != 0) {
      throw core::InputError(
          "--transport shmem: MPI ranks and OpenSHMEM PEs differ, expected a "
          "run under oshrun with every PE in the solve");
    }
    if (partners_ == 0) return;
    const std::size_t bytes = data_bytes() + 2 * static_cast<std::size_t>(partners_) * sizeof(long);
    void* base = shmem_malloc(bytes);
    int failed = base == nullptr ? 1 : 0;
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm.get()),
                   "MPI_Allreduce");
    if (failed != 0) {
      shmem_free(base);  // collective; null is allowed
      throw core::InputError(fmt::format(
          "--transport shmem: shmem_malloc of {:.1f} MiB failed on some PE, expected a symmetric "
          "heap that large (set SHMEM_SYMMETRIC_SIZE, e.g. {}M)",
          static_cast<double>(bytes) / 1048576.0, bytes / 1048576 + 64));
    }
    data_ = static_cast<double*>(base);
    flag_ = reinterpret_cast<long*>(static_cast<unsigned char*>(base) + data_bytes());
    ack_ = flag_ + partners_;
    for (int k = 0; k < partners_; ++k) flag_[k] = ack_[k] = 0;
    shmem_barrier_all();  // local stores complete before any PE writes here
  }

  std::string_view name() const override { return "shmem"; }

  void start(std::span<const double> x) override {
    if (partners_ == 0) return;
    ++count_;
    for (int k = 0; k < partners_; ++k) {
      const int peer = rank_ ^ (1 << k);
      // The partner has consumed what this PE put into its slot last time.
      shmem_long_wait_until(&ack_[k], SHMEM_CMP_GE, count_ - 1);
      shmem_putmem_nbi(data_ + static_cast<std::size_t>(k) * block_, x.data(),
                       block_ * sizeof(double), peer);
      shmem_fence();  // the data before the flag, at `peer`
      shmem_long_atomic_set(&flag_[k], count_, peer);
    }
  }

  void finish(std::span<double> y, double gamma) override {
    if (partners_ == 0) return;
    for (int k = 0; k < partners_; ++k) {
      const int peer = rank_ ^ (1 << k);
      shmem_long_wait_until(&flag_[k], SHMEM_CMP_GE, count_);
      std::atomic_thread_fence(std::memory_order_acquire);
      // y += gamma * x_{rank ^ 2^k}
      const double* in = data_ + static_cast<std::size_t>(k) * block_;
      double* out = y.data();
      for (std::size_t i = 0; i < block_; ++i) out[i] += gamma * in[i];
      std::atomic_thread_fence(std::memory_order_release);
      shmem_long_atomic_set(&ack_[k], count_, peer);
    }
    shmem_quiet();  // this PE's puts are complete: x may change
  }

  void free() override {
    if (data_ == nullptr) return;
    shmem_quiet();
    shmem_barrier_all();
    shmem_free(data_);
    data_ = nullptr;
  }

  std::size_t messages_per_matvec() const override { return static_cast<std::size_t>(partners_); }
  int partners() const override { return partners_; }
  std::size_t block() const override { return block_; }
  std::size_t buffer_bytes() const override {
    return partners_ == 0 ? 0
                          : data_bytes() + 2 * static_cast<std::size_t>(partners_) * sizeof(long);
  }

 private:
  std::size_t data_bytes() const {
    return static_cast<std::size_t>(partners_) * block_ * sizeof(double);
  }

  int rank_ = 0;
  int partners_;
  std::size_t block_;
  long count_ = 0;
  double* data_ = nullptr;
  long* flag_ = nullptr;
  long* ack_ = nullptr;
};

}  // namespace

std::unique_ptr<SpinExchange> make_spin_exchange_shmem(const par::Comm& comm, int partners,
                                                       std::size_t block) {
  return std::make_unique<ShmemSpinExchange>(comm, partners, block);
}

#endif  // ASYNCSOLVE_HAVE_SHMEM

}  // namespace asyncsolve::kernels::detail
