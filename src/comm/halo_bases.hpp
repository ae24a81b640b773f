#pragma once
// Internal: the state the halo-exchange strategies share, by the way they
// move the slabs: one message per link with buffers of its own
// (LinkedHalo: waitall, persistent), or every link packed into one buffer
// for a collective (PackedHaloBase: alltoallv, ialltoallv, neighbor).
#include <cstddef>
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "halo_links.hpp"

namespace asyncsolve::comm {

/// A point-to-point strategy: one send and one receive buffer per link,
/// allocated once at construction and never moved after (requests may hold
/// their addresses). Messages per exchange: one per link. Not copyable.
class LinkedHalo : public HaloExchange {
 public:
  LinkedHalo(const LinkedHalo&) = delete;
  LinkedHalo& operator=(const LinkedHalo&) = delete;
  ~LinkedHalo() override = default;
  int messages_per_exchange() const final { return static_cast<int>(links_.size()); }
  std::size_t bytes_per_exchange() const final { return bytes_; }

 protected:
  /// One link and its buffers (send_count and recv_count values).
  struct Link {
    HaloLink link;
    std::vector<double> send_buffer;
    std::vector<double> recv_buffer;
  };

  /// The links of `neighbourhood` (halo_links) with their buffers. Not
  /// collective.
  LinkedHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
             Neighbourhood neighbourhood);

  /// Copies every receive buffer into its halo slab of `field`.
  void unpack_all(grid::Field& field) const;

  std::vector<Link> links_;  ///< in direction_code order; never resized after construction
  bool in_flight_ = false;   ///< between start() and finish()

 private:
  std::size_t bytes_ = 0;
};

/// A collective strategy: every link packed into one send and one receive
/// buffer (PackedHalo). Messages and bytes per exchange as for waitall. Not
/// copyable.
class PackedHaloBase : public HaloExchange {
 public:
  PackedHaloBase(const PackedHaloBase&) = delete;
  PackedHaloBase& operator=(const PackedHaloBase&) = delete;
  ~PackedHaloBase() override = default;
  int messages_per_exchange() const final { return packed_.links(); }
  std::size_t bytes_per_exchange() const final { return packed_.bytes(); }

 protected:
  /// The packed layout of `neighbourhood`. Not collective.
  PackedHaloBase(const grid::Decomposition& decomposition, const grid::Field& shape,
                 Neighbourhood neighbourhood)
      : packed_(decomposition, shape, neighbourhood) {}

  PackedHalo packed_;
  bool in_flight_ = false;  ///< between start() and finish()
};

}  // namespace asyncsolve::comm
