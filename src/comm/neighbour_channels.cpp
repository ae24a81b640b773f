// One asynchronous channel per neighbour (see neighbour_channels.hpp).
#include "asyncsolve/comm/neighbour_channels.hpp"

#include <mpi.h>

namespace asyncsolve::comm {

NeighbourChannels::NeighbourChannels(const par::Comm& comm, std::span<const ChannelLink> links,
                                     const ChannelSettings& settings)
    : links_(links.begin(), links.end()) {
  send_.resize(links_.size());
  recv_.resize(links_.size());
  std::vector<as_channel_config> configs;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    send_[i].assign(links_[i].doubles, 0.0);
    recv_[i].assign(links_[i].doubles, 0.0);
    as_channel_config c;
    as_channel_config_init(&c);
    c.transport = settings.transport;
    c.comm = comm.get();
    c.peer = links_[i].peer;
    c.tag = settings.tag;
    c.message_size = links_[i].doubles * sizeof(double);
    c.sendbuf = send_[i].data();
    c.recvbuf = recv_[i].data();
    c.max_in_flight = settings.max_in_flight;
    c.mode = settings.racy ? AS_MODE_RACY : AS_MODE_ASYNC;
    configs.push_back(c);
  }
  if (configs.empty() && settings.transport != AS_TRANSPORT_MPI) {
    // rma and shmem creation is collective over the communicator: a rank
    // without neighbours takes part with a placeholder.
    as_channel_config c;
    as_channel_config_init(&c);
    c.transport = settings.transport;
    c.comm = comm.get();
    c.peer = MPI_PROC_NULL;
    configs.push_back(c);
  }
  channels_ = Channel::create_many(configs);
}

void NeighbourChannels::progress() {
  for (Channel& c : channels_) c.progress();
}

bool NeighbourChannels::wait_for_news(double timeout_s) {
  return Channel::wait_any(channels_, timeout_s) >= 0;
}

long NeighbourChannels::messages_sent() const {
  long sent = 0;
  for (std::size_t i = 0; i < links_.size(); ++i)
    sent += static_cast<long>(channels_[i].stats().sent);
  return sent;
}

double NeighbourChannels::bytes_sent() const {
  double bytes = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    bytes += static_cast<double>(channels_[i].stats().sent) *
             static_cast<double>(links_[i].doubles * sizeof(double));
  }
  return bytes;
}

std::size_t NeighbourChannels::bytes_per_round() const noexcept {
  std::size_t bytes = 0;
  for (const ChannelLink& l : links_) bytes += l.doubles * sizeof(double);
  return bytes;
}

void NeighbourChannels::destroy() { Channel::destroy_many(channels_); }

}  // namespace asyncsolve::comm
