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
#include <mpi.h>

#include <algorithm>

#include "asyncsolve/comm/spin_exchange.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm::detail {
namespace {

using par::check_mpi;

class RmaSpinExchange final : public SpinExchange {
 public:
  RmaSpinExchange(const par::Comm& comm, int partners, std::size_t block)
      : comm_(comm.dup()), partners_(partners), block_(block) {
    rank_ = comm_.rank();
    if (partners_ == 0) return;  // one rank: no window (every rank agrees)
    const auto bytes = static_cast<MPI_Aint>(static_cast<std::size_t>(partners_) * block_ *
                                             sizeof(double));
    check_mpi(MPI_Win_allocate(bytes, static_cast<int>(sizeof(double)), MPI_INFO_NULL,
                               comm_.get(), &base_, &win_),
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

}  // namespace

std::unique_ptr<SpinExchange> make_spin_exchange_rma(const par::Comm& comm, int partners,
                                                     std::size_t block) {
  return std::make_unique<RmaSpinExchange>(comm, partners, block);
}

}  // namespace asyncsolve::comm::detail
