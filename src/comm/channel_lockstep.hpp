#pragma once
// Internal to comm: the synchronous exchange over channels that the
// structured and the sparse channel halos share (channel_halo.cpp,
// sparse_channels.cpp). With one message in flight per direction, the
// exchanges of two neighbours proceed in lockstep: a rank's n-th send can
// only complete once the neighbour has taken its (n-1)-th message, which
// the neighbour does in its (n-1)-th exchange; and each exchange takes
// exactly one new message per neighbour. So the halo filled by the n-th
// exchange is the neighbour's n-th message: the semantics of
// MPI_Isend/MPI_Irecv/MPI_Waitall, over any transport.
#include <cstddef>
#include <utility>
#include <vector>

#include "asyncsolve/comm/neighbour_channels.hpp"

namespace asyncsolve::comm::detail {

/// Channel settings of the synchronous exchanges: one message in flight,
/// tagged apart from the asynchronous halos' channels (tag 0).
inline ChannelSettings lockstep_settings(int transport) {
  return ChannelSettings{transport, false, 1, 1};
}

class ChannelLockstep {
 public:
  explicit ChannelLockstep(NeighbourChannels channels)
      : channels_(std::move(channels)), received_(channels_.size(), false) {}

  std::size_t size() const noexcept { return channels_.size(); }
  /// Link i's message to fill before send_all().
  double* send_buffer(std::size_t i) noexcept { return channels_.send_buffer(i); }
  /// Sends every link's message (blocks only until the neighbour took the previous one).
  void send_all() {
    for (std::size_t i = 0; i < channels_.size(); ++i) channels_.channel(i).send();
  }
  /// Waits for link i's message of this exchange (progressing every
  /// channel meanwhile) and returns it; valid until the next exchange's.
  const double* wait(std::size_t i) {
    while (!received_[i] && channels_.channel(i).recv() == 0) channels_.progress();
    received_[i] = false;
    return channels_.recv_buffer(i);
  }
  /// Takes each link's message of this exchange as soon as it is there
  /// (the landing buffer is not written again before the next exchange);
  /// true when every link's has come.
  bool test() {
    bool all = true;
    for (std::size_t i = 0; i < channels_.size(); ++i) {
      if (received_[i]) continue;
      channels_.channel(i).progress();
      received_[i] = channels_.channel(i).recv() != 0;
      all = all && received_[i];
    }
    return all;
  }
  std::size_t bytes_per_exchange() const noexcept { return channels_.bytes_per_round(); }
  /// Collective: destroys the channels.
  void close() { channels_.destroy(); }

 private:
  NeighbourChannels channels_;
  std::vector<bool> received_;  ///< this exchange's message already taken by test()
};

}  // namespace asyncsolve::comm::detail
