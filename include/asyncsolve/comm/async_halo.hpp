#pragma once
/// The halos of asynchronous iterations (paper 000 §3.1.2-3.1.3): one
/// channel per neighbour (NeighbourChannels), sends that never wait, and
/// receives that take the newest message of each neighbour (racy: its
/// landing buffer, whatever has landed in it) into the iterate's halo.
/// Written once over the channels; what a link packs and where its news
/// lands is the halo's: the faces of a structured block
/// (make_async_face_halo), the ghosts of a sparse neighbour plan
/// (make_async_sparse_halo), and, for a later method, its own overlap.
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "asyncsolve/comm/neighbour_channels.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::comm {

/// An asynchronous halo over one channel per neighbour. Not copyable;
/// destroy() is collective (as channel destruction is) and must come before
/// the object goes away.
class AsyncHalo {
 public:
  virtual ~AsyncHalo() = default;
  AsyncHalo(const AsyncHalo&) = delete;
  AsyncHalo& operator=(const AsyncHalo&) = delete;

  /// Neighbours (0: no news can ever come).
  std::size_t neighbours() const noexcept { return channels_.size(); }
  /// Takes what arrived from every neighbour: async, the newest whole
  /// message of each that sent one; racy, the landing buffer of each whose
  /// recv reports an arrival. Counts each channel's batch (batch_sizes[n]:
  /// recv calls that found n messages). Returns the squared 2-norm of the
  /// change of the halo values (the ghosts) it wrote.
  double receive(std::vector<long>& batch_sizes);
  /// Packs the current iterate for every neighbour and sends where the
  /// channel has room (R messages in flight, else skipped, as paper 000
  /// does); returns the sends skipped, which retry_unsent() makes later.
  long send();
  /// Sends, packed anew, what send() skipped, where a channel now has room.
  void retry_unsent();
  /// Progresses every channel without sending or receiving.
  void progress() { channels_.progress(); }
  /// Waits up to timeout_s seconds for news (NeighbourChannels::wait_for_news).
  bool wait_for_news(double timeout_s) { return channels_.wait_for_news(timeout_s); }
  long messages_sent() const { return channels_.messages_sent(); }
  double bytes_sent() const { return channels_.bytes_sent(); }
  /// Collective: completes every message in both directions and destroys
  /// the channels (nothing is left in flight).
  void destroy() { channels_.destroy(); }

 protected:
  explicit AsyncHalo(NeighbourChannels channels)
      : channels_(std::move(channels)), unsent_(channels_.size(), false) {}
  /// Whether link i has anything to send (a neighbour may only send to this rank).
  virtual bool sends_to(std::size_t /*link*/) const { return true; }
  /// Link i's message (its ChannelLink::doubles values) from the current iterate.
  virtual void pack(std::size_t link, double* out) = 0;
  /// Link i's message into the halo; returns a bound of the change it makes
  /// to the squared 2-norm of this rank's residual (the face halo: the
  /// squared 2-norm of the change; the sparse halo of a matrix: that times
  /// sparse::ghost_block_norm squared).
  virtual double unpack(std::size_t link, const double* in) = 0;

 private:
  NeighbourChannels channels_;
  std::vector<bool> unsent_;
};

/// The faces of `decomposition`'s block (6 at most): a message per face
/// with a neighbouring rank, packed from u and unpacked into the face halos
/// of both u and u_new (a Jacobi sweep writes no halo, so the next sweep,
/// whichever field it reads, finds the news). `u` and `u_new` are borrowed
/// and may have their storage swapped between calls. Collective as
/// NeighbourChannels (two ranks of a non-periodic grid share at most one
/// face, so one channel each).
std::unique_ptr<AsyncHalo> make_async_face_halo(const grid::Decomposition& decomposition,
                                                grid::Field& u, grid::Field& u_new,
                                                const ChannelSettings& settings);

/// The neighbour plan of `matrix`: a message per neighbour rank carrying
/// the entries of x it needs (both directions sized to the larger count,
/// which both ends know), unpacked into `ghosts` (the matrix's ghost
/// numbering: each neighbour's ghosts one block). `matrix`, `x` (a one-row
/// field of the local rows, whose storage may be swapped between calls)
/// and `ghosts` are borrowed. Collective as NeighbourChannels. unpack
/// bounds the residual's change by the ghost block's norm
/// (sparse::ghost_block_norm) times the ghosts' change.
std::unique_ptr<AsyncHalo> make_async_sparse_halo(const sparse::DistMatrix& matrix,
                                                  const grid::Field& x, std::span<double> ghosts,
                                                  const ChannelSettings& settings);

/// The same over any neighbour plan on `comm` (both borrowed): a Schwarz
/// subdomain's extended halo (sparse/subdomain.hpp), `x` holding the
/// entries the plan's send indices name. unpack returns `change_scale`^2
/// times the squared 2-norm of the ghosts' change.
std::unique_ptr<AsyncHalo> make_async_sparse_halo(const sparse::NeighbourPlan& plan,
                                                  const par::Comm& comm, const grid::Field& x,
                                                  std::span<double> ghosts,
                                                  const ChannelSettings& settings,
                                                  double change_scale = 1.0);

/// The links of a neighbour plan: one per neighbour rank, each message the
/// larger of the two counts (the synchronous sparse exchange over channels
/// uses them too).
std::vector<ChannelLink> sparse_channel_links(const sparse::NeighbourPlan& plan);

}  // namespace asyncsolve::comm
