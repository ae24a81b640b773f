// The restarting tree reduction of paper 000 §3.1.2 over asynchronous
// channels. Per round and tree edge: one message up (a partial sum), one
// down (the total). With one message in flight, a child can only send its
// round n+1 partial once the parent has taken its round n partial, and the
// parent takes exactly one partial per child per round, so messages are never
// confused between rounds; the same holds for totals going down.
#include "asyncsolve/collectives/channel_tree.hpp"

#include <mpi.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "asyncsolve/channel.hpp"

namespace asyncsolve::collectives {
namespace {

class ChannelTree final : public collectives::NonblockingAllreduce {
 public:
  ChannelTree(const par::Comm& comm, std::size_t size, int transport)
      : comm_(comm.dup()), size_(size), own_(size), total_(size) {
    const int rank = comm_.rank();
    const int ranks = comm_.size();
    std::vector<as_channel_config> configs;
    auto edge = [&](int peer) {
      Edge e;
      e.peer = peer;
      e.out.resize(size);
      e.in.resize(size);
      edges_.push_back(std::move(e));
    };
    if (rank > 0) edge((rank - 1) / 2);
    for (int child = 2 * rank + 1; child <= 2 * rank + 2 && child < ranks; ++child) edge(child);
    has_parent_ = rank > 0;
    for (Edge& e : edges_) {
      as_channel_config c;
      as_channel_config_init(&c);
      c.transport = transport;
      c.comm = comm_.get();
      c.peer = e.peer;
      c.tag = 0;
      c.message_size = size * sizeof(double);
      c.sendbuf = e.out.data();
      c.recvbuf = e.in.data();
      c.max_in_flight = 1;
      c.mode = AS_MODE_ASYNC;
      configs.push_back(c);
    }
    if (configs.empty() && transport != AS_TRANSPORT_MPI) {
      // Collective transports: a rank without edges (1 rank) joins with a placeholder.
      as_channel_config c;
      as_channel_config_init(&c);
      c.transport = transport;
      c.comm = comm_.get();
      c.peer = MPI_PROC_NULL;
      configs.push_back(c);
    }
    channels_ = Channel::create_many(configs);
  }

  std::string_view name() const override { return "tree"; }
  std::size_t size() const override { return size_; }
  bool active() const override { return state_ != State::idle; }
  long completed() const override { return completed_; }
  int outstanding_requests() const override { return 0; }  // channels complete their own
  const par::Comm& comm() const override { return comm_; }

  void start(std::span<const double> values) override {
    if (active()) throw std::logic_error("ChannelTree::start with a reduction active");
    if (values.size() != size_) throw std::logic_error("ChannelTree::start: wrong size");
    std::copy(values.begin(), values.end(), own_.begin());
    for (Edge& e : edges_) e.got = e.sent = false;
    state_ = State::collecting;
    sent_up_ = false;
  }

  bool test(std::span<double> result) override {
    if (!active()) throw std::logic_error("ChannelTree::test with no reduction active");
    return step(result);
  }

  void wait(std::span<double> result) override {
    if (!active()) throw std::logic_error("ChannelTree::wait with no reduction active");
    while (!step(result)) {
    }
  }

  void free() override {
    if (active()) throw std::logic_error("ChannelTree::free with a reduction active");
    Channel::destroy_many(channels_);
    comm_.free();
  }

 private:
  enum class State { idle, collecting, waiting_for_total, sending_down };
  struct Edge {
    int peer = -1;
    std::vector<double> out;
    std::vector<double> in;
    bool got = false;   // this round's partial arrived (child edges)
    bool sent = false;  // this round's total sent down (child edges)
  };

  std::size_t first_child() const { return has_parent_ ? 1 : 0; }

  /// Progresses the round; true when it completed (result written).
  bool step(std::span<double> result) {
    if (state_ == State::collecting) {
      bool all = true;
      for (std::size_t i = first_child(); i < edges_.size(); ++i) {
        if (!edges_[i].got && channels_[i].recv() > 0) edges_[i].got = true;
        all = all && edges_[i].got;
      }
      if (!all) return false;
      // partial = own + child 2r+1 + child 2r+2, in that order on every rank
      std::copy(own_.begin(), own_.end(), total_.begin());
      for (std::size_t i = first_child(); i < edges_.size(); ++i)
        for (std::size_t k = 0; k < size_; ++k) total_[k] += edges_[i].in[k];
      state_ = has_parent_ ? State::waiting_for_total : State::sending_down;
    }
    if (state_ == State::waiting_for_total) {
      if (!sent_up_) {
        if (!channels_[0].can_send()) return false;
        std::copy(total_.begin(), total_.end(), edges_[0].out.begin());
        channels_[0].send();  // partial sum up
        sent_up_ = true;
      }
      if (channels_[0].recv() == 0) return false;
      std::copy(edges_[0].in.begin(), edges_[0].in.end(), total_.begin());  // the root's total
      state_ = State::sending_down;
    }
    // State::sending_down: forward the total, unchanged, to every child.
    bool all = true;
    for (std::size_t i = first_child(); i < edges_.size(); ++i) {
      if (edges_[i].sent) continue;
      if (!channels_[i].can_send()) {
        all = false;
        continue;
      }
      std::copy(total_.begin(), total_.end(), edges_[i].out.begin());
      channels_[i].send();
      edges_[i].sent = true;
    }
    if (!all) return false;
    std::copy(total_.begin(), total_.end(), result.begin());
    state_ = State::idle;
    ++completed_;
    return true;
  }

  par::Comm comm_;
  std::size_t size_;
  std::vector<double> own_;
  std::vector<double> total_;
  std::vector<Edge> edges_;  // parent first (if any), then children
  std::vector<Channel> channels_;
  bool has_parent_ = false;
  bool sent_up_ = false;
  State state_ = State::idle;
  long completed_ = 0;
};

}  // namespace

std::unique_ptr<collectives::NonblockingAllreduce> make_channel_tree_allreduce(
    const par::Comm& comm, std::size_t size, int transport) {
  return std::make_unique<ChannelTree>(comm, size, transport);
}

std::unique_ptr<collectives::NonblockingAllreduce> make_convergence_allreduce(
    const AllreduceAlgorithm& algorithm, const par::Comm& comm, std::size_t size, int transport) {
  if (algorithm.kind == AllreduceAlgorithm::Kind::tree && transport != AS_TRANSPORT_MPI) {
    return make_channel_tree_allreduce(comm, size, transport);
  }
  return collectives::make_nonblocking_allreduce(algorithm, comm, size);
}

std::unique_ptr<collectives::NonblockingAllreduce> make_convergence_allreduce(std::string_view name,
                                                                              const par::Comm& comm,
                                                                              std::size_t size,
                                                                              int transport) {
  return make_convergence_allreduce(parse_allreduce(name), comm, size, transport);
}

}  // namespace asyncsolve::collectives
