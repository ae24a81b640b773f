// The halos of asynchronous iterations (see async_halo.hpp): the exchange
// written once over the channels, and its two halos (a structured block's
// faces, a sparse plan's ghosts).
#include "asyncsolve/comm/async_halo.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

#include "asyncsolve/grid/decomposition.hpp"

namespace asyncsolve::comm {

double AsyncHalo::receive(std::vector<long>& batch_sizes) {
  double change_sq = 0.0;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    const int n = channels_.channel(i).recv();
    const auto batch = static_cast<std::size_t>(n);
    if (batch >= batch_sizes.size()) batch_sizes.resize(batch + 1, 0);
    ++batch_sizes[batch];
    if (n == 0) continue;  // async: nothing new; racy: nothing arrived since the last recv
    change_sq += unpack(i, channels_.recv_buffer(i));
  }
  return change_sq;
}

long AsyncHalo::send() {
  long skipped = 0;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    if (!sends_to(i)) continue;
    pack(i, channels_.send_buffer(i));
    unsent_[i] = !channels_.channel(i).try_send();
    if (unsent_[i]) ++skipped;  // R messages in flight
  }
  return skipped;
}

void AsyncHalo::retry_unsent() {
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    if (!unsent_[i] || !channels_.channel(i).can_send()) continue;
    pack(i, channels_.send_buffer(i));
    channels_.channel(i).send();
    unsent_[i] = false;
  }
}

namespace {

/// A structured block's faces (make_async_face_halo).
class AsyncFaceHalo final : public AsyncHalo {
 public:
  AsyncFaceHalo(NeighbourChannels channels, std::vector<grid::Face> faces, grid::Field& u,
                grid::Field& u_new)
      : AsyncHalo(std::move(channels)), faces_(std::move(faces)), u_(u), u_new_(u_new) {}

 protected:
  void pack(std::size_t link, double* out) override {
    grid::pack(u_, u_.send_box(faces_[link]), out);
  }

  // The halo `in` into the face's halo of both fields. A face halo value
  // enters exactly one interior point's 7-point residual, with coefficient
  // 1: the residual's change is at most the norm of the change returned.
  double unpack(std::size_t link, const double* in) override {
    const grid::Box box = u_.recv_box(faces_[link]);
    const int nx = box.hi[0] - box.lo[0];
    grid::Field& u = u_;
    double change_sq = 0.0;
    for (int k = box.lo[2]; k < box.hi[2]; ++k)
      for (int j = box.lo[1]; j < box.hi[1]; ++j) {
        double* a = u.origin() + u.index(box.lo[0], j, k);
        double* b = u_new_.origin() + u_new_.index(box.lo[0], j, k);
        for (int i = 0; i < nx; ++i) {
          const double d = in[i] - a[i];
          change_sq += d * d;
          a[i] = in[i];
          b[i] = in[i];
        }
        in += nx;
      }
    return change_sq;
  }

 private:
  std::vector<grid::Face> faces_;
  grid::Field& u_;
  grid::Field& u_new_;
};

/// A sparse neighbour plan's ghosts (make_async_sparse_halo).
class AsyncSparseHalo final : public AsyncHalo {
 public:
  AsyncSparseHalo(NeighbourChannels channels, const sparse::NeighbourPlan& plan,
                  const grid::Field& x, std::span<double> ghosts, double change_scale)
      : AsyncHalo(std::move(channels)),
        x_(x),
        ghosts_(ghosts),
        change_scale_sq_(change_scale * change_scale) {
    const std::vector<int> ranks = plan.neighbours();
    for (std::size_t i = 0; i < neighbours(); ++i) {
      Link l;
      const int rank = ranks[i];
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

 protected:
  bool sends_to(std::size_t link) const override { return links_[link].send_indices != nullptr; }

  void pack(std::size_t link, double* out) override {
    const std::vector<int>& idx = *links_[link].send_indices;
    const double* x = x_.origin();
    for (std::size_t k = 0; k < idx.size(); ++k) out[k] = x[idx[k]];
  }

  double unpack(std::size_t link, const double* in) override {
    const Link& l = links_[link];
    assert(static_cast<std::size_t>(l.recv_offset + l.recv_count) <= ghosts_.size());
    double* g = ghosts_.data() + l.recv_offset;
    double change_sq = 0.0;
    for (int k = 0; k < l.recv_count; ++k) {
      const double d = in[k] - g[k];
      change_sq += d * d;
      g[k] = in[k];
    }
    return change_scale_sq_ * change_sq;
  }

 private:
  struct Link {
    const std::vector<int>* send_indices = nullptr;  ///< null: nothing to send
    int recv_offset = 0;
    int recv_count = 0;
  };
  std::vector<Link> links_;
  const grid::Field& x_;
  std::span<double> ghosts_;
  double change_scale_sq_;
};

}  // namespace

std::unique_ptr<AsyncHalo> make_async_face_halo(const grid::Decomposition& decomposition,
                                                grid::Field& u, grid::Field& u_new,
                                                const ChannelSettings& settings) {
  std::vector<grid::Face> faces;
  std::vector<ChannelLink> links;
  for (const grid::Face face : grid::all_faces) {
    if (decomposition.is_physical_boundary(face)) continue;
    // Both ends of a face have the same face size (blocks of one process
    // row share their extents), so the message sizes match.
    faces.push_back(face);
    links.push_back(
        {decomposition.neighbour(face), static_cast<std::size_t>(u.send_box(face).size())});
  }
  NeighbourChannels channels(decomposition.comm(), links, settings);
  return std::make_unique<AsyncFaceHalo>(std::move(channels), std::move(faces), u, u_new);
}

std::vector<ChannelLink> sparse_channel_links(const sparse::NeighbourPlan& plan) {
  const std::vector<int> ranks = plan.neighbours();
  std::vector<ChannelLink> links;
  links.reserve(ranks.size());
  for (const int rank : ranks) {
    std::size_t sends = 0;
    std::size_t recvs = 0;
    for (const sparse::SendLink& s : plan.sends)
      if (s.rank == rank) sends = s.indices.size();
    for (const sparse::RecvLink& r : plan.recvs)
      if (r.rank == rank) recvs = static_cast<std::size_t>(r.count);
    // Rank a sends b what b needs, b sends a what a needs: the two counts
    // differ for an unsymmetric pattern, so both directions use the larger.
    links.push_back({rank, std::max(sends, recvs)});
  }
  return links;
}

std::unique_ptr<AsyncHalo> make_async_sparse_halo(const sparse::DistMatrix& matrix,
                                                  const grid::Field& x, std::span<double> ghosts,
                                                  const ChannelSettings& settings) {
  return make_async_sparse_halo(matrix.plan(), matrix.comm(), x, ghosts, settings,
                                sparse::ghost_block_norm(matrix));
}

std::unique_ptr<AsyncHalo> make_async_sparse_halo(const sparse::NeighbourPlan& plan,
                                                  const par::Comm& comm, const grid::Field& x,
                                                  std::span<double> ghosts,
                                                  const ChannelSettings& settings,
                                                  double change_scale) {
  NeighbourChannels channels(comm, sparse_channel_links(plan), settings);
  return std::make_unique<AsyncSparseHalo>(std::move(channels), plan, x, ghosts, change_scale);
}

}  // namespace asyncsolve::comm
