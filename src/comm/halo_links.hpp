#pragma once
// Internal: what every halo-exchange strategy sends where, computed once.
//
// A link is one (direction, neighbour) pair: the slab sent in direction d and
// the halo slab filled from the neighbour in direction d. Point-to-point
// strategies send one message per link; collective strategies pack the links
// of one neighbour rank into one block of a single buffer (PackedHalo).
#include <mpi.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"

namespace asyncsolve::comm {

/// Index 0..26 of a direction in {-1,0,1}^3, x fastest (13 is {0,0,0}).
constexpr int direction_code(const grid::Int3& dir) noexcept {
  return (dir[0] + 1) + 3 * (dir[1] + 1) + 9 * (dir[2] + 1);
}

/// One neighbour direction of this rank.
struct HaloLink {
  grid::Int3 dir{};
  int rank = 0;      ///< neighbour in direction `dir` (never MPI_PROC_NULL)
  int send_tag = 0;  ///< direction_code(dir): a message is tagged with the direction it travels
  int recv_tag = 0;  ///< direction_code(-dir): what arrives from `dir` travelled in -dir
  grid::Box send_box;
  grid::Box recv_box;
  int send_count = 0;  ///< values in send_box
  int recv_count = 0;  ///< values in recv_box
};

/// The links of `neighbourhood` that have a neighbour, in direction_code
/// order. Throws core::RuntimeFailure when a slab exceeds an int count.
std::vector<HaloLink> halo_links(const grid::Decomposition& decomposition, const grid::Field& shape,
                                 Neighbourhood neighbourhood);

/// Throws std::logic_error unless `in_flight` is false: a strategy's start()
/// while an exchange of it is in flight.
void require_idle(bool in_flight, std::string_view strategy);
/// Throws std::logic_error unless `in_flight`: finish() without start().
void require_in_flight(bool in_flight, std::string_view strategy);

/// Sum of send_count over `links`, in bytes.
std::size_t send_bytes(const std::vector<HaloLink>& links) noexcept;

/// One link with a send and a receive buffer of its own: what the
/// point-to-point strategies (waitall, persistent, linkwise) send from and
/// receive into, one message per link. The buffers are sized once; moving a
/// BufferedLink keeps their addresses, which MPI may hold.
struct BufferedLink {
  explicit BufferedLink(const HaloLink& l);
  /// Copies the send slab of `field` into send_buffer.
  void pack(const grid::Field& field);
  /// Copies recv_buffer into the halo slab of `field`.
  void unpack(grid::Field& field) const;
  /// MPI_Irecv of recv_buffer from the neighbour (tag recv_tag) on `comm`.
  void post_receive(MPI_Comm comm, MPI_Request* request);
  /// pack(), then MPI_Isend of send_buffer to the neighbour (tag send_tag) on `comm`.
  void post_send(const grid::Field& field, MPI_Comm comm, MPI_Request* request);

  HaloLink link;
  std::vector<double> send_buffer;  ///< link.send_count values
  std::vector<double> recv_buffer;  ///< link.recv_count values
};

/// halo_links(), each with its buffers.
std::vector<BufferedLink> buffered_halo_links(const grid::Decomposition& decomposition,
                                              const grid::Field& shape,
                                              Neighbourhood neighbourhood);
/// send_bytes() of the links.
std::size_t send_bytes(const std::vector<BufferedLink>& links) noexcept;

/// The layout of the collective strategies: one send buffer and one receive
/// buffer holding, per distinct neighbour rank ("peer"), one contiguous block
/// (its counts and displacements are what MPI_Alltoallv and
/// MPI_Neighbor_alltoallv take).
///
/// On a non-periodic Cartesian grid every direction leads to a different rank,
/// so a block holds exactly one slab; the constructor still groups by rank, so
/// that a decomposition where one rank is the neighbour in several directions
/// would also work: the sender orders the slabs of a block by the direction
/// they travel (send_tag), the receiver by the direction they travelled
/// (recv_tag), which is the same order on both sides.
class PackedHalo {
 public:
  struct Peer {
    int rank = 0;
    int send_count = 0;  ///< values in this peer's send block
    int send_displ = 0;  ///< offset of the block in the send buffer
    int recv_count = 0;
    int recv_displ = 0;
  };

  PackedHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
             Neighbourhood neighbourhood);

  /// Distinct neighbour ranks, in the order of the first direction
  /// (direction_code) in which each appears.
  const std::vector<Peer>& peers() const noexcept { return peers_; }
  /// Messages (links) and bytes this rank sends per exchange; as for waitall.
  int links() const noexcept { return links_; }
  std::size_t bytes() const noexcept { return bytes_; }
  /// True if some rank is the neighbour in more than one direction (never on
  /// a non-periodic Cartesian grid).
  bool has_shared_peers() const noexcept { return static_cast<int>(peers_.size()) != links_; }

  /// Counts and displacements over every rank of a communicator of `ranks`
  /// ranks (zero for non-neighbours), as MPI_Alltoallv takes them.
  struct DenseCounts {
    std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  };
  DenseCounts dense_counts(int ranks) const;

  /// Copies every send slab of `field` into the send buffer.
  void pack(const grid::Field& field);
  /// Copies the receive buffer into the halo slabs of `field`.
  void unpack(grid::Field& field) const;

  /// Buffers handed to MPI. Never empty (one spare value when there is no
  /// neighbour), so data() is a valid pointer even with all counts zero.
  double* send_data() noexcept { return send_buffer_.data(); }
  double* recv_data() noexcept { return recv_buffer_.data(); }

 private:
  struct Slab {
    grid::Box box;
    std::size_t offset;  ///< in values, into the buffer
  };
  std::vector<Peer> peers_;
  std::vector<Slab> send_slabs_;
  std::vector<Slab> recv_slabs_;
  std::vector<double> send_buffer_;
  std::vector<double> recv_buffer_;
  int links_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace asyncsolve::comm
