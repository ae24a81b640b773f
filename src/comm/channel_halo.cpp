// Synchronous halo exchange over asynchronous channels.
//
// With one message in flight per direction, the exchanges of two neighbours
// proceed in lockstep: a rank's n-th send can only complete once the
// neighbour has taken its (n-1)-th message, which the neighbour does in its
// (n-1)-th finish(); and finish() waits for exactly one new message per
// neighbour. So the halo filled by the n-th exchange is the neighbour's n-th
// face: the semantics of MPI_Isend/MPI_Irecv/MPI_Waitall, over any transport.
#include <mpi.h>

#include <vector>

#include "asyncsolve/channel.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"

namespace asyncsolve::comm {
namespace {

class ChannelHalo final : public HaloExchange {
 public:
  ChannelHalo(const grid::Decomposition& decomposition, const grid::Field& shape, int transport) {
    std::vector<as_channel_config> configs;
    for (const grid::Face face : grid::all_faces) {
      if (decomposition.is_physical_boundary(face)) continue;
      Link link{face, shape.send_box(face), shape.recv_box(face), {}, {}, false};
      link.send_buffer.resize(static_cast<std::size_t>(link.send_box.size()));
      link.recv_buffer.resize(static_cast<std::size_t>(link.recv_box.size()));
      links_.push_back(std::move(link));
    }
    for (Link& link : links_) {
      as_channel_config c;
      as_channel_config_init(&c);
      c.transport = transport;
      c.comm = decomposition.comm().get();
      c.peer = decomposition.neighbour(link.face);
      c.tag = 1;  // apart from the asynchronous solver's channels (tag 0)
      c.message_size = link.send_buffer.size() * sizeof(double);
      c.sendbuf = link.send_buffer.data();
      c.recvbuf = link.recv_buffer.data();
      c.max_in_flight = 1;
      c.mode = AS_MODE_ASYNC;
      configs.push_back(c);
      bytes_ += c.message_size;
    }
    if (configs.empty() && transport != AS_TRANSPORT_MPI) {
      // The rma and shmem transports' creation is collective over the communicator: a
      // rank without neighbours takes part with a placeholder.
      as_channel_config c;
      as_channel_config_init(&c);
      c.transport = transport;
      c.comm = decomposition.comm().get();
      c.peer = MPI_PROC_NULL;
      configs.push_back(c);
    }
    channels_ = Channel::create_many(configs);
  }

  std::string_view name() const override { return "channel"; }

  void start(grid::Field& field) override {
    for (std::size_t i = 0; i < links_.size(); ++i) {
      grid::pack(field, links_[i].send_box, links_[i].send_buffer.data());
      channels_[i].send();  // blocks only until the neighbour took the previous one
    }
  }

  void finish(grid::Field& field) override {
    for (std::size_t i = 0; i < links_.size(); ++i) {
      while (!links_[i].received && channels_[i].recv() == 0) {
        for (Channel& other : channels_) other.progress();
      }
      grid::unpack(field, links_[i].recv_box, links_[i].recv_buffer.data());
      links_[i].received = false;
    }
  }

  int messages_per_exchange() const override { return static_cast<int>(links_.size()); }
  std::size_t bytes_per_exchange() const override { return bytes_; }

  void close() override { Channel::destroy_many(channels_); }

 protected:
  // Takes each neighbour's face as soon as it is there; finish() unpacks.
  // The recv buffer is not written again before the next exchange's recv().
  bool do_test() override {
    bool all = true;
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (links_[i].received) continue;
      channels_[i].progress();
      links_[i].received = channels_[i].recv() != 0;
      all = all && links_[i].received;
    }
    return all;
  }

 private:
  struct Link {
    grid::Face face;
    grid::Box send_box;
    grid::Box recv_box;
    std::vector<double> send_buffer;
    std::vector<double> recv_buffer;
    bool received = false;  ///< this exchange's face already taken by test()
  };
  std::vector<Link> links_;
  std::vector<Channel> channels_;
  std::size_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<HaloExchange> make_channel_halo_exchange(const grid::Decomposition& decomposition,
                                                         const grid::Field& shape, int transport) {
  return std::make_unique<ChannelHalo>(decomposition, shape, transport);
}

}  // namespace asyncsolve::comm
