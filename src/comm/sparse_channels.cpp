// The synchronous sparse halo exchange over asynchronous channels: one per
// neighbour rank, in lockstep (channel_lockstep.hpp). Both ends of a
// channel must agree on its message size: both directions carry the larger
// of the two counts (sparse_channel_links), a message padded up to it, and
// a rank with nothing to send to a neighbour sends it the padding, so both
// ends stay in step.
#include <algorithm>
#include <vector>

#include "asyncsolve/comm/async_halo.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "channel_lockstep.hpp"

namespace asyncsolve::comm {
namespace {

class SparseChannelHalo final : public SparseHaloExchange {
 public:
  SparseChannelHalo(const sparse::NeighbourPlan& plan, const par::Comm& comm, int transport)
      : SparseHaloExchange(static_cast<std::size_t>(plan.ghosts)),
        lockstep_(NeighbourChannels(comm, sparse_channel_links(plan),
                                    detail::lockstep_settings(transport))) {
    for (const int rank : plan.neighbours()) {
      Link l;
      for (const sparse::SendLink& s : plan.sends)
        if (s.rank == rank) l.send_indices = &s.indices;
      for (const sparse::RecvLink& r : plan.recvs) {
        if (r.rank == rank) {
          l.recv_offset = r.offset;
          l.recv_count = r.count;
        }
      }
      links_.push_back(l);
    }
  }

  std::string_view name() const override { return "channel"; }

  void start(grid::Field& x) override {
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (links_[i].send_indices == nullptr) continue;
      double* out = lockstep_.send_buffer(i);
      const std::vector<int>& idx = *links_[i].send_indices;
      for (std::size_t k = 0; k < idx.size(); ++k) out[k] = x.origin()[idx[k]];
    }
    lockstep_.send_all();
  }

  void finish(grid::Field&) override {
    for (std::size_t i = 0; i < links_.size(); ++i) {
      const double* in = lockstep_.wait(i);
      std::copy_n(in, links_[i].recv_count, ghost_data() + links_[i].recv_offset);
    }
  }

  int messages_per_exchange() const override { return static_cast<int>(links_.size()); }
  std::size_t bytes_per_exchange() const override { return lockstep_.bytes_per_exchange(); }
  void close() override { lockstep_.close(); }

 protected:
  bool do_test() override { return lockstep_.test(); }

 private:
  struct Link {
    const std::vector<int>* send_indices = nullptr;  ///< null: nothing to send (padding only)
    int recv_offset = 0;
    int recv_count = 0;
  };
  std::vector<Link> links_;
  detail::ChannelLockstep lockstep_;
};

}  // namespace

std::unique_ptr<SparseHaloExchange> make_sparse_channel_halo_exchange(
    const sparse::DistMatrix& matrix, int transport) {
  return make_sparse_channel_halo_exchange(matrix.plan(), matrix.comm(), transport);
}

std::unique_ptr<SparseHaloExchange> make_sparse_channel_halo_exchange(
    const sparse::NeighbourPlan& plan, const par::Comm& comm, int transport) {
  return std::make_unique<SparseChannelHalo>(plan, comm, transport);
}

}  // namespace asyncsolve::comm
