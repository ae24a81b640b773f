#pragma once
/// One asynchronous channel per neighbour, with its send and landing
/// buffers: what the structured halo and the sparse halo over channels
/// (synchronous, make_channel_halo_exchange and
/// make_sparse_channel_halo_exchange) and the asynchronous halos of
/// asynchronous iterations (async_halo.hpp) are built on.
#include <cstddef>
#include <span>
#include <vector>

#include "asyncsolve/channel.hpp"
#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::comm {

/// One neighbour: its rank and the doubles a message carries. Both ends of
/// a channel must give the same size (a rank with less to send pads).
struct ChannelLink {
  int peer = 0;
  std::size_t doubles = 0;
};

/// How the channels of a NeighbourChannels are made.
struct ChannelSettings {
  int transport = AS_TRANSPORT_MPI;  ///< enum as_transport
  bool racy = false;                 ///< AS_MODE_RACY instead of AS_MODE_ASYNC
  int max_in_flight = 1;             ///< R: unacknowledged messages per direction
  /// Keeps the channels of one exchange apart from another's between the
  /// same two ranks: 0 for the asynchronous halos, 1 for the synchronous
  /// exchanges over channels (channel.h: MPI tags 2 tag and 2 tag + 1).
  int tag = 0;
};

/// A channel per link and its two buffers (owned; they never move, the
/// channels hold their addresses). Move-only; destroy() is collective.
class NeighbourChannels {
 public:
  NeighbourChannels() = default;
  /// Collective as channel creation is: between neighbours for mpi; over
  /// `comm` for rma and shmem, where a rank without links takes part with a
  /// placeholder channel (channel.h).
  NeighbourChannels(const par::Comm& comm, std::span<const ChannelLink> links,
                    const ChannelSettings& settings);
  NeighbourChannels(NeighbourChannels&&) noexcept = default;
  NeighbourChannels& operator=(NeighbourChannels&&) noexcept = default;

  /// Links (the placeholder, if any, excluded).
  std::size_t size() const noexcept { return links_.size(); }
  const ChannelLink& link(std::size_t i) const noexcept { return links_[i]; }
  Channel& channel(std::size_t i) noexcept { return channels_[i]; }
  /// Link i's message to send (link(i).doubles values) and its landing buffer.
  double* send_buffer(std::size_t i) noexcept { return send_[i].data(); }
  const double* recv_buffer(std::size_t i) const noexcept { return recv_[i].data(); }

  /// Progresses every channel without sending or receiving.
  void progress();
  /// Waits up to timeout_s seconds for a message on any channel (with
  /// back-off, progressing them all: Channel::wait_any); true if one came.
  bool wait_for_news(double timeout_s);
  /// Messages sent so far, and their bytes (message sizes, padding included).
  long messages_sent() const;
  double bytes_sent() const;
  /// Bytes of one message on every link (one exchange's worth).
  std::size_t bytes_per_round() const noexcept;
  /// Collective: completes everything in flight and destroys the channels.
  void destroy();

 private:
  std::vector<ChannelLink> links_;
  std::vector<std::vector<double>> send_;
  std::vector<std::vector<double>> recv_;
  std::vector<Channel> channels_;  ///< one per link, or the one placeholder
};

}  // namespace asyncsolve::comm
