// The rma transport of the TFIM mat-vec's remote part: paper 004's "MPI-2
// one-sided PUT", MPI_Put into a window synchronised by MPI_Win_fence.
//
// Window: m slots of a whole block (2^(n-m) doubles), slot k written only by
// partner rank ^ 2^k. Per mat-vec:
//   start():  MPI_Win_fence(NOPRECEDE | NOSTORE)  -- opens the epoch; a put
//             issued after it reaches a target only once the target has
//             called it too, i.e. has finished reading the previous data
//             (MPI-3.1 §11.5.1), so one slot per partner suffices;
//             MPI_Put of x into slot k of each partner (chunks of at most
//             2^27 doubles, to stay inside an int count);
//   (the caller computes the local part: the puts may proceed meanwhile)
//   finish(): MPI_Win_fence(NOSTORE | NOPUT | NOSUCCEED)  -- completes every
//             put, at origin and target; then y += gamma * slot k for
//             k = 0 .. m-1.
// The assertions hold: between the two fences this rank stores nothing into
// its window, and between a closing fence and the next opening one no rank
// puts. Two fences per mat-vec (each a synchronisation of the window group,
// often a barrier), m puts of a block each.
//
// --rma-sync notify: passive target instead, no collective synchronisation.
// The window (MPI_Win_lock_all(MPI_MODE_NOCHECK) for its whole life) holds
// the m slots, then m flags and m acknowledgements (int64, written only by
// the partner with MPI_Accumulate(MPI_REPLACE), read by the owner with
// MPI_Fetch_and_op(MPI_NO_OP) + MPI_Win_flush on itself: atomic with
// respect to each other). Mat-vec t:
//   start():  for each k: wait until ack[k] >= t - 1 (the partner has read
//             the previous block), MPI_Put x into the partner's slot k;
//   finish(): MPI_Win_flush_all (the puts are complete at their targets),
//             then flag[k] = t at each partner (accumulate + flush); wait for
//             this rank's flags to reach t, MPI_Win_sync, add slot k, and
//             acknowledge: ack[k] = t at the partner.
// The puts are flushed only in finish(), after the local part, so they may
// proceed while it is computed. Every poll of a flag also calls MPI_Iprobe
// on a private communicator (never used for messages) to turn the progress
// engine, as the channels do, and then yields the core: on an
// oversubscribed machine a rank spinning on a flag would otherwise keep the
// partner that must write it off the CPU for a whole time slice.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <thread>

#include "asyncsolve/kernels/spin_exchange.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/window.hpp"

namespace asyncsolve::kernels::detail {
namespace {

using par::check_mpi;

class RmaSpinExchange final : public SpinExchange {
 public:
  RmaSpinExchange(const par::Comm& comm, int partners, std::size_t block)
      : comm_(comm.dup()), partners_(partners), block_(block) {
    rank_ = comm_.rank();
    if (partners_ == 0) return;  // one rank: no window (every rank agrees)
    const auto bytes =
        static_cast<MPI_Aint>(static_cast<std::size_t>(partners_) * block_ * sizeof(double));
    check_mpi(MPI_Win_allocate(par::padded_window_bytes(bytes), static_cast<int>(sizeof(double)),
                               MPI_INFO_NULL, comm_.get(), &base_, &win_),
              "MPI_Win_allocate");
    check_mpi(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  }

  std::string_view name() const override { return "rma"; }

  void start(std::span<const double> x) override {
    if (partners_ == 0) return;
    check_mpi(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE, win_), "MPI_Win_fence");
    for (int k = 0; k < partners_; ++k) {
      const int peer = rank_ ^ (1 << k);
      for (std::size_t offset = 0; offset < block_; offset += max_message_doubles) {
        const int n = static_cast<int>(std::min(max_message_doubles, block_ - offset));
        const auto disp = static_cast<MPI_Aint>(static_cast<std::size_t>(k) * block_ + offset);
        check_mpi(MPI_Put(x.data() + offset, n, MPI_DOUBLE, peer, disp, n, MPI_DOUBLE, win_),
                  "MPI_Put");
      }
    }
  }

  void finish(std::span<double> y, double gamma) override {
    if (partners_ == 0) return;
    check_mpi(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED, win_),
              "MPI_Win_fence");
    for (int k = 0; k < partners_; ++k) {
      // y += gamma * x_{rank ^ 2^k}
      const double* in = base_ + static_cast<std::size_t>(k) * block_;
      double* out = y.data();
      for (std::size_t i = 0; i < block_; ++i) out[i] += gamma * in[i];
    }
  }

  void free() override {
    if (win_ != MPI_WIN_NULL) check_mpi(MPI_Win_free(&win_), "MPI_Win_free");
    comm_.free();
  }

  std::size_t messages_per_matvec() const override {
    return static_cast<std::size_t>(partners_) *
           ((block_ + max_message_doubles - 1) / max_message_doubles);
  }
  int partners() const override { return partners_; }
  std::size_t block() const override { return block_; }
  std::size_t buffer_bytes() const override {
    return static_cast<std::size_t>(partners_) * block_ * sizeof(double);
  }

 private:
  par::Comm comm_;
  int rank_ = 0;
  int partners_;
  std::size_t block_;
  double* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

class RmaNotifySpinExchange final : public SpinExchange {
 public:
  RmaNotifySpinExchange(const par::Comm& comm, int partners, std::size_t block)
      : comm_(comm.dup()), quiet_(comm.dup()), partners_(partners), block_(block) {
    rank_ = comm_.rank();
    if (partners_ == 0) return;
    const std::size_t words = static_cast<std::size_t>(partners_) * (block_ + 2);
    check_mpi(MPI_Win_allocate(par::padded_window_bytes(static_cast<MPI_Aint>(words * 8)), 8,
                               MPI_INFO_NULL, comm_.get(), &base_, &win_),
              "MPI_Win_allocate");
    check_mpi(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
    auto* counters = reinterpret_cast<std::int64_t*>(base_) + flag_disp(0);
    for (int k = 0; k < 2 * partners_; ++k) counters[k] = 0;
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
    comm_.barrier();  // every window initialised before anyone writes into it
  }

  std::string_view name() const override { return "rma"; }

  void start(std::span<const double> x) override {
    if (partners_ == 0) return;
    ++count_;
    for (int k = 0; k < partners_; ++k) {
      const int peer = rank_ ^ (1 << k);
      while (read(ack_disp(k)) < count_ - 1) std::this_thread::yield();
      for (std::size_t offset = 0; offset < block_; offset += max_message_doubles) {
        const int n = static_cast<int>(std::min(max_message_doubles, block_ - offset));
        const auto disp = static_cast<MPI_Aint>(static_cast<std::size_t>(k) * block_ + offset);
        check_mpi(MPI_Put(x.data() + offset, n, MPI_DOUBLE, peer, disp, n, MPI_DOUBLE, win_),
                  "MPI_Put");
      }
    }
  }

  void finish(std::span<double> y, double gamma) override {
    if (partners_ == 0) return;
    check_mpi(MPI_Win_flush_all(win_), "MPI_Win_flush_all");  // the blocks are at the targets
    for (int k = 0; k < partners_; ++k) write(rank_ ^ (1 << k), flag_disp(k), count_);
    for (int k = 0; k < partners_; ++k) {
      while (read(flag_disp(k)) < count_) std::this_thread::yield();
      check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
      // y += gamma * x_{rank ^ 2^k}
      const double* in = base_ + static_cast<std::size_t>(k) * block_;
      double* out = y.data();
      for (std::size_t i = 0; i < block_; ++i) out[i] += gamma * in[i];
      write(rank_ ^ (1 << k), ack_disp(k), count_);
    }
  }

  void free() override {
    if (win_ != MPI_WIN_NULL) {
      check_mpi(MPI_Win_unlock_all(win_), "MPI_Win_unlock_all");
      check_mpi(MPI_Win_free(&win_), "MPI_Win_free");
    }
    quiet_.free();
    comm_.free();
  }

  std::size_t messages_per_matvec() const override {
    return static_cast<std::size_t>(partners_) *
           ((block_ + max_message_doubles - 1) / max_message_doubles);
  }
  int partners() const override { return partners_; }
  std::size_t block() const override { return block_; }
  std::size_t buffer_bytes() const override {
    return partners_ == 0 ? 0 : static_cast<std::size_t>(partners_) * (block_ + 2) * 8;
  }

 private:
  MPI_Aint flag_disp(int k) const {
    return static_cast<MPI_Aint>(static_cast<std::size_t>(partners_) * block_) + k;
  }
  MPI_Aint ack_disp(int k) const { return flag_disp(k) + partners_; }

  /// This rank's counter at `disp`, read atomically; turns the progress engine.
  std::int64_t read(MPI_Aint disp) const {
    std::int64_t ignored = 0;
    std::int64_t value = 0;
    check_mpi(MPI_Fetch_and_op(&ignored, &value, MPI_INT64_T, rank_, disp, MPI_NO_OP, win_),
              "MPI_Fetch_and_op");
    check_mpi(MPI_Win_flush(rank_, win_), "MPI_Win_flush");
    int flag = 0;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet_.get(), &flag, MPI_STATUS_IGNORE),
              "MPI_Iprobe");
    return value;
  }

  /// Sets `target`'s counter at `disp` atomically and completes it there.
  void write(int target, MPI_Aint disp, std::int64_t value) const {
    check_mpi(
        MPI_Accumulate(&value, 1, MPI_INT64_T, target, disp, 1, MPI_INT64_T, MPI_REPLACE, win_),
        "MPI_Accumulate");
    check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush");
  }

  par::Comm comm_;
  par::Comm quiet_;
  int rank_ = 0;
  int partners_;
  std::size_t block_;
  std::int64_t count_ = 0;
  double* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

}  // namespace

std::unique_ptr<SpinExchange> make_spin_exchange_rma(const par::Comm& comm, int partners,
                                                     std::size_t block, bool notify) {
  if (notify) return std::make_unique<RmaNotifySpinExchange>(comm, partners, block);
  return std::make_unique<RmaSpinExchange>(comm, partners, block);
}

}  // namespace asyncsolve::kernels::detail
