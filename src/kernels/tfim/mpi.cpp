// The mpi transport of the TFIM mat-vec's remote part: paper 004's Opt_MPI,
// multiple round-robin buffers with MPI_Isend/MPI_Irecv.
//
// The m blocks a rank receives form one stream of messages j = 0 .. M-1,
// M = m * chunks: message j is chunk c = j % chunks of the block of partner
// k = j / chunks (rank ^ 2^k). Both ends of every pair walk the same stream
// in the same order, so each pair's messages match in order (MPI's
// non-overtaking rule; tag k).
//
// start(): MPI_Irecv of messages 0 .. K-1 into the K buffers, MPI_Isend of
// messages 0 .. K-1 straight from x (x is read-only until finish returns,
// so no send buffer is needed).
// finish(): for j = 0 .. M-1: wait for receive j (buffer j % K), add
// gamma * buffer into y, post receive j + K into the freed buffer, complete
// send j and post send j + K. While chunk j is added, K - 1 further
// messages are in flight; K = 2 is double buffering.
//
// Deadlock freedom: every rank posts send j + K and receive j + K only after
// consuming message j, and waits on message j only after all of them have
// consumed message j - K or less (induction over j; ranks consume in the
// same order). Per mat-vec: M receives and M sends of at most `chunk`
// doubles; no request is left active when finish() returns.
#include <mpi.h>

#include <algorithm>
#include <cassert>
#include <vector>

#include "asyncsolve/kernels/spin_exchange.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::kernels::detail {
namespace {

using par::check_mpi;

class MpiSpinExchange final : public SpinExchange {
 public:
  MpiSpinExchange(const SpinExchangeOptions& options, const par::Comm& comm, int partners,
                  std::size_t block)
      : comm_(comm.dup()), partners_(partners), block_(block), buffers_(options.buffers) {
    rank_ = comm_.rank();
    chunk_ = std::max<std::size_t>(1, std::min({options.chunk, block, max_message_doubles}));
    chunks_ = (block_ + chunk_ - 1) / chunk_;
    messages_ = static_cast<std::size_t>(partners_) * chunks_;
    if (partners_ > 0) {
      buffer_.assign(static_cast<std::size_t>(buffers_) * chunk_, 0.0);
      recv_.assign(static_cast<std::size_t>(buffers_), MPI_REQUEST_NULL);
      send_.assign(static_cast<std::size_t>(buffers_), MPI_REQUEST_NULL);
    }
  }

  ~MpiSpinExchange() override {
    // A request destroyed while active is a bug: finish() completes all.
    for ([[maybe_unused]] const MPI_Request r : recv_) assert(r == MPI_REQUEST_NULL);
    for ([[maybe_unused]] const MPI_Request r : send_) assert(r == MPI_REQUEST_NULL);
  }

  std::string_view name() const override { return "mpi"; }

  void start(std::span<const double> x) override {
    x_ = x;
    const std::size_t first = std::min<std::size_t>(messages_, static_cast<std::size_t>(buffers_));
    for (std::size_t j = 0; j < first; ++j) {
      post_recv(j);
      post_send(j);
    }
  }

  void finish(std::span<double> y, double gamma) override {
    const auto k_ring = static_cast<std::size_t>(buffers_);
    for (std::size_t j = 0; j < messages_; ++j) {
      const std::size_t slot = j % k_ring;
      check_mpi(MPI_Wait(&recv_[slot], MPI_STATUS_IGNORE), "MPI_Wait");
      // y[chunk c] += gamma * x_{rank ^ 2^k}[chunk c]
      const std::size_t offset = (j % chunks_) * chunk_;
      const std::size_t n = std::min(chunk_, block_ - offset);
      const double* in = buffer_.data() + slot * chunk_;
      double* out = y.data() + offset;
      for (std::size_t i = 0; i < n; ++i) out[i] += gamma * in[i];
      if (j + k_ring < messages_) post_recv(j + k_ring);
      check_mpi(MPI_Wait(&send_[slot], MPI_STATUS_IGNORE), "MPI_Wait");
      if (j + k_ring < messages_) post_send(j + k_ring);
    }
    // Sends of the last K messages whose receives were consumed first.
    check_mpi(MPI_Waitall(static_cast<int>(send_.size()), send_.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall");
    x_ = {};
  }

  void free() override { comm_.free(); }

  std::size_t messages_per_matvec() const override { return messages_; }
  int partners() const override { return partners_; }
  std::size_t block() const override { return block_; }
  std::size_t buffer_bytes() const override { return buffer_.size() * sizeof(double); }

 private:
  int peer(std::size_t j) const { return rank_ ^ (1 << static_cast<int>(j / chunks_)); }
  int count(std::size_t j) const {
    const std::size_t offset = (j % chunks_) * chunk_;
    return static_cast<int>(std::min(chunk_, block_ - offset));
  }

  void post_recv(std::size_t j) {
    const std::size_t slot = j % static_cast<std::size_t>(buffers_);
    check_mpi(MPI_Irecv(buffer_.data() + slot * chunk_, count(j), MPI_DOUBLE, peer(j),
                        static_cast<int>(j / chunks_), comm_.get(), &recv_[slot]),
              "MPI_Irecv");
  }

  void post_send(std::size_t j) {
    const std::size_t slot = j % static_cast<std::size_t>(buffers_);
    const std::size_t offset = (j % chunks_) * chunk_;
    check_mpi(MPI_Isend(x_.data() + offset, count(j), MPI_DOUBLE, peer(j),
                        static_cast<int>(j / chunks_), comm_.get(), &send_[slot]),
              "MPI_Isend");
  }

  par::Comm comm_;
  int rank_ = 0;
  int partners_;
  std::size_t block_;
  int buffers_;
  std::size_t chunk_ = 1;
  std::size_t chunks_ = 1;
  std::size_t messages_ = 0;
  std::vector<double> buffer_;
  std::vector<MPI_Request> recv_;
  std::vector<MPI_Request> send_;
  std::span<const double> x_;
};

}  // namespace

std::unique_ptr<SpinExchange> make_spin_exchange_mpi(const SpinExchangeOptions& options,
                                                     const par::Comm& comm, int partners,
                                                     std::size_t block) {
  return std::make_unique<MpiSpinExchange>(options, comm, partners, block);
}

}  // namespace asyncsolve::kernels::detail
