// Sparse halos over asynchronous channels: one channel per neighbour rank.
//
// Both ends of a channel must agree on its message size. Rank a sends b
// the entries b needs (a's send list to b), b sends a what a needs; the
// two counts differ for an unsymmetric pattern, so both directions use the
// larger one, which both ends know (a's send count to b is b's receive
// count from a). A message is padded up to it.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <span>

#include "asyncsolve/comm/sparse_halo.hpp"
#include "halo_links.hpp"

namespace asyncsolve::comm {
namespace {

constexpr int kSyncTag = 1;   // the synchronous exchange (MPI tags 2 and 3)
constexpr int kAsyncTag = 0;  // the asynchronous channels (MPI tags 0 and 1)

/// One neighbour: what goes each way and the message size.
struct NeighbourLink {
  int rank = 0;
  const std::vector<int>* send_indices = nullptr;
  int recv_offset = 0;
  int recv_count = 0;
  std::size_t message = 0;
};

std::vector<NeighbourLink> neighbour_links(const sparse::NeighbourPlan& plan) {
  std::vector<NeighbourLink> out;
  for (const int rank : plan.neighbours()) {
    NeighbourLink l;
    l.rank = rank;
    for (const sparse::SendLink& s : plan.sends)
      if (s.rank == rank) l.send_indices = &s.indices;
    for (const sparse::RecvLink& r : plan.recvs) {
      if (r.rank == rank) {
        l.recv_offset = r.offset;
        l.recv_count = r.count;
      }
    }
    const std::size_t sends = l.send_indices == nullptr ? 0 : l.send_indices->size();
    l.message = std::max(sends, static_cast<std::size_t>(l.recv_count));
    out.push_back(l);
  }
  return out;
}

/// The channel configs of `links` with the given buffers (links.size()
/// each), or one placeholder when an rma/shmem rank has no neighbour (their
/// creation is collective over the communicator).
std::vector<as_channel_config> channel_configs(MPI_Comm comm, const SparseChannelSettings& settings,
                                               int tag, std::span<const NeighbourLink> links,
                                               const std::vector<double*>& send_buffers,
                                               const std::vector<double*>& recv_buffers) {
  std::vector<as_channel_config> configs;
  for (std::size_t i = 0; i < links.size(); ++i) {
    as_channel_config c;
    as_channel_config_init(&c);
    c.transport = settings.transport;
    c.comm = comm;
    c.peer = links[i].rank;
    c.tag = tag;
    c.message_size = links[i].message * sizeof(double);
    c.sendbuf = send_buffers[i];
    c.recvbuf = recv_buffers[i];
    c.max_in_flight = settings.max_in_flight;
    c.mode = settings.racy ? AS_MODE_RACY : AS_MODE_ASYNC;
    configs.push_back(c);
  }
  if (configs.empty() && settings.transport != AS_TRANSPORT_MPI) {
    as_channel_config c;
    as_channel_config_init(&c);
    c.transport = settings.transport;
    c.comm = comm;
    c.peer = MPI_PROC_NULL;
    configs.push_back(c);
  }
  return configs;
}

void pack_link(const NeighbourLink& l, const double* x, double* out) {
  if (l.send_indices == nullptr) return;
  const int* idx = l.send_indices->data();
  const std::size_t n = l.send_indices->size();
  for (std::size_t k = 0; k < n; ++k) out[k] = x[idx[k]];
}

/// The synchronous exchange over channels (see sparse_halo.hpp).
class SparseChannelHalo final : public SparseHaloExchange {
 public:
  SparseChannelHalo(const sparse::DistMatrix& matrix, int transport)
      : SparseHaloExchange(static_cast<std::size_t>(matrix.plan().ghosts)),
        links_(neighbour_links(matrix.plan())) {
    send_buffers_.resize(links_.size());
    recv_buffers_.resize(links_.size());
    for (std::size_t i = 0; i < links_.size(); ++i) {
      send_buffers_[i].assign(links_[i].message, 0.0);
      recv_buffers_[i].assign(links_[i].message, 0.0);
      bytes_ += links_[i].message * sizeof(double);
    }
    received_.assign(links_.size(), false);
    std::vector<double*> sends;
    std::vector<double*> recvs;
    for (std::size_t i = 0; i < links_.size(); ++i) {
      sends.push_back(send_buffers_[i].data());
      recvs.push_back(recv_buffers_[i].data());
    }
    const SparseChannelSettings settings{transport, false, 1};
    channels_ = Channel::create_many(
        channel_configs(matrix.comm().get(), settings, kSyncTag, links_, sends, recvs));
  }

  std::string_view name() const override { return "channel"; }

  void start(grid::Field& x) override {
    for (std::size_t i = 0; i < links_.size(); ++i) {
      pack_link(links_[i], x.origin(), send_buffers_[i].data());
      channels_[i].send();  // blocks only until the neighbour took the previous one
    }
  }

  void finish(grid::Field&) override {
    for (std::size_t i = 0; i < links_.size(); ++i) {
      while (!received_[i] && channels_[i].recv() == 0)
        for (Channel& other : channels_) other.progress();
      std::copy_n(recv_buffers_[i].begin(), links_[i].recv_count,
                  ghost_data() + links_[i].recv_offset);
      received_[i] = false;
    }
  }

  int messages_per_exchange() const override { return static_cast<int>(links_.size()); }
  std::size_t bytes_per_exchange() const override { return bytes_; }
  void close() override { Channel::destroy_many(channels_); }

 protected:
  bool do_test() override {
    bool all = true;
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (received_[i]) continue;
      channels_[i].progress();
      received_[i] = channels_[i].recv() != 0;
      all = all && received_[i];
    }
    return all;
  }

 private:
  std::vector<NeighbourLink> links_;
  std::vector<std::vector<double>> send_buffers_;
  std::vector<std::vector<double>> recv_buffers_;
  std::vector<bool> received_;
  std::vector<Channel> channels_;
  std::size_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<SparseHaloExchange> make_sparse_channel_halo_exchange(
    const sparse::DistMatrix& matrix, int transport) {
  return std::make_unique<SparseChannelHalo>(matrix, transport);
}

SparseHaloChannels::SparseHaloChannels(const sparse::DistMatrix& matrix,
                                       const SparseChannelSettings& settings)
    : SparseHaloChannels(matrix.plan(), matrix.comm(), settings) {}

SparseHaloChannels::SparseHaloChannels(const sparse::NeighbourPlan& plan, const par::Comm& comm,
                                       const SparseChannelSettings& settings)
    : racy_(settings.racy) {
  const std::vector<NeighbourLink> links = neighbour_links(plan);
  links_.resize(links.size());
  std::vector<double*> sends;
  std::vector<double*> recvs;
  for (std::size_t i = 0; i < links.size(); ++i) {
    Link& l = links_[i];
    l.rank = links[i].rank;
    l.send_indices = links[i].send_indices;
    l.recv_offset = links[i].recv_offset;
    l.recv_count = links[i].recv_count;
    l.message = links[i].message;
    // The buffers never move after this: the channels hold their addresses.
    l.send_buffer.assign(l.message, 0.0);
    l.recv_buffer.assign(l.message, 0.0);
    sends.push_back(l.send_buffer.data());
    recvs.push_back(l.recv_buffer.data());
  }
  channels_ =
      Channel::create_many(channel_configs(comm.get(), settings, kAsyncTag, links, sends, recvs));
}

SparseHaloChannels::~SparseHaloChannels() = default;

int SparseHaloChannels::send(const double* x) {
  int skipped = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    Link& l = links_[i];
    if (l.send_indices == nullptr) continue;
    if (!channels_[i].can_send()) {
      ++skipped;  // R messages in flight: skip, as paper 000 does
      continue;
    }
    const int* idx = l.send_indices->data();
    const std::size_t n = l.send_indices->size();
    for (std::size_t k = 0; k < n; ++k) l.send_buffer[k] = x[idx[k]];
    channels_[i].send();
  }
  return skipped;
}

int SparseHaloChannels::recv(std::span<double> ghosts, std::vector<long>& batch_sizes) {
  int arrived = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    const int n = channels_[i].recv();
    arrived += n;
    if (static_cast<std::size_t>(n) >= batch_sizes.size())
      batch_sizes.resize(static_cast<std::size_t>(n) + 1, 0);
    ++batch_sizes[static_cast<std::size_t>(n)];
    // Async: a new whole message; racy: whatever has landed so far.
    if (l.recv_count > 0 && (n > 0 || racy_)) {
      assert(static_cast<std::size_t>(l.recv_offset + l.recv_count) <= ghosts.size());
      std::memcpy(ghosts.data() + l.recv_offset, l.recv_buffer.data(),
                  static_cast<std::size_t>(l.recv_count) * sizeof(double));
    }
  }
  return arrived;
}

void SparseHaloChannels::progress() {
  for (Channel& c : channels_) c.progress();
}

void SparseHaloChannels::destroy() { Channel::destroy_many(channels_); }

long SparseHaloChannels::messages_sent() const {
  long sent = 0;
  for (std::size_t i = 0; i < links_.size(); ++i)
    sent += static_cast<long>(channels_[i].stats().sent);
  return sent;
}

double SparseHaloChannels::bytes_sent() const {
  double bytes = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    bytes += static_cast<double>(channels_[i].stats().sent) *
             static_cast<double>(links_[i].message * sizeof(double));
  }
  return bytes;
}

}  // namespace asyncsolve::comm
