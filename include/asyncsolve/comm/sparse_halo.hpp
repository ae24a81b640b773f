#pragma once
/// Halo exchanges of distributed CSR vectors, over the neighbour plan of a
/// sparse::DistMatrix: the same strategies as for the structured fields
/// (--halo waitall, alltoallv, ialltoallv, neighbor, persistent), a
/// synchronous exchange over asynchronous channels, and the asynchronous
/// channels themselves (one per neighbour) for asynchronous Jacobi.
///
/// The vector is a one-row grid::Field without halo holding this rank's
/// local_rows() entries; the ghosts it needs land in the exchange's own
/// ghost array (ghosts(), in the matrix's ghost numbering), which every
/// receive writes directly: each neighbour's ghosts are one contiguous block.
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "asyncsolve/channel.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::comm {

/// A halo exchange whose halo is a separate ghost array. start(x) packs the
/// owned entries each neighbour needs and starts the transfers; finish(x)
/// completes them, after which ghosts() holds the neighbours' entries of
/// the same exchange (until the next start()).
class SparseHaloExchange : public HaloExchange {
 public:
  /// The ghost array (never empty: one spare value when there is no ghost).
  std::span<double> ghosts() noexcept { return {ghosts_.data(), count_}; }
  std::span<const double> ghosts() const noexcept { return {ghosts_.data(), count_}; }

 protected:
  explicit SparseHaloExchange(std::size_t ghosts) : ghosts_(ghosts + 1, 0.0), count_(ghosts) {}
  double* ghost_data() noexcept { return ghosts_.data(); }

 private:
  std::vector<double> ghosts_;
  std::size_t count_;
};

/// Builds `strategy` for vectors of `matrix` (which must outlive it; the
/// exchange runs on the matrix's communicator). Collective over it for
/// `neighbor` (it creates a distributed-graph communicator whose sources are
/// the ranks this one receives from and whose destinations those it sends
/// to); call close() before the matrix is freed.
std::unique_ptr<SparseHaloExchange> make_sparse_halo_exchange(HaloStrategy strategy,
                                                              const sparse::DistMatrix& matrix);

/// The same over any neighbour plan on `comm` (both borrowed, outliving
/// the exchange): e.g. a Schwarz subdomain's overlap or extended-halo plan
/// (sparse/subdomain.hpp). The vector start() packs from holds the entries
/// the plan's send indices name.
std::unique_ptr<SparseHaloExchange> make_sparse_halo_exchange(HaloStrategy strategy,
                                                              const sparse::NeighbourPlan& plan,
                                                              const par::Comm& comm);

/// A synchronous exchange over asynchronous channels of `transport` (enum
/// as_transport), one per neighbour, one message in flight: every exchange
/// sends one message on every channel and waits for one from each (a rank
/// with nothing to send to a neighbour sends it an empty message, so both
/// ends stay in step). Runs synchronous Jacobi over rma and shmem.
/// Collective as channel creation is (over the communicator for rma and
/// shmem); close() destroys the channels.
std::unique_ptr<SparseHaloExchange> make_sparse_channel_halo_exchange(
    const sparse::DistMatrix& matrix, int transport);

/// Settings of the asynchronous channels.
struct SparseChannelSettings {
  int transport = AS_TRANSPORT_MPI;  ///< enum as_transport
  bool racy = false;                 ///< AS_MODE_RACY instead of AS_MODE_ASYNC
  int max_in_flight = 1;             ///< R: unacknowledged messages per direction
};

/// Asynchronous halo channels over a neighbour plan (paper 000 §3.1.2-3.1.3
/// on a general matrix): one channel per neighbour rank; a message carries
/// the owned entries the neighbour needs (both directions of a channel have
/// the larger of the two counts as their fixed size). send() never waits,
/// recv() takes the newest message of each channel (async) or whatever
/// landed (racy). Creation and destroy() are collective as channels are
/// (between neighbours for mpi; over the communicator for rma and shmem).
class SparseHaloChannels {
 public:
  /// Collective (see above).
  SparseHaloChannels(const sparse::DistMatrix& matrix, const SparseChannelSettings& settings);
  /// Collective: the same over any neighbour plan on `comm` (both borrowed,
  /// outliving the channels), e.g. a Schwarz subdomain's extended-halo plan.
  SparseHaloChannels(const sparse::NeighbourPlan& plan, const par::Comm& comm,
                     const SparseChannelSettings& settings);
  SparseHaloChannels(const SparseHaloChannels&) = delete;
  SparseHaloChannels& operator=(const SparseHaloChannels&) = delete;
  ~SparseHaloChannels();

  /// Packs and sends x's entries to every neighbour that needs some and has
  /// a free slot; returns how many such sends were skipped (channel full).
  int send(const double* x);
  /// Writes into `ghosts` what arrived (async: the newest whole message of
  /// each neighbour that sent one; racy: every neighbour's landing buffer),
  /// and counts each channel's batch size in `batch_sizes` (index = messages
  /// that arrived since the last recv). Returns the messages that arrived.
  int recv(std::span<double> ghosts, std::vector<long>& batch_sizes);
  /// Progresses every channel without sending or receiving.
  void progress();
  /// Collective: completes everything in flight and destroys the channels.
  void destroy();

  /// Neighbour channels (placeholders excluded).
  int channels() const noexcept { return static_cast<int>(links_.size()); }
  /// Messages and bytes (message sizes, padding included) sent so far.
  long messages_sent() const;
  double bytes_sent() const;

 private:
  struct Link {
    int rank = 0;
    const std::vector<int>* send_indices = nullptr;  ///< null: nothing to send
    int recv_offset = 0;
    int recv_count = 0;
    std::size_t message = 0;  ///< values per message
    std::vector<double> send_buffer;
    std::vector<double> recv_buffer;
  };
  std::vector<Link> links_;
  std::vector<Channel> channels_;
  bool racy_ = false;
};

}  // namespace asyncsolve::comm
