#include "halo_links.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {
namespace {

constexpr long long max_count = std::numeric_limits<int>::max();

[[noreturn]] void too_large() {
  throw core::RuntimeFailure("halo message larger than an MPI count (2^31 - 1 values)");
}

}  // namespace

std::vector<HaloLink> halo_links(const grid::Decomposition& decomposition, const grid::Field& shape,
                                 Neighbourhood neighbourhood) {
  std::vector<HaloLink> links;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const grid::Int3 dir{dx, dy, dz};
        const int nonzero = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if (nonzero == 0 || (neighbourhood == Neighbourhood::faces && nonzero != 1)) continue;
        const int rank = decomposition.neighbour(dir);
        if (rank == MPI_PROC_NULL) continue;
        HaloLink link;
        link.dir = dir;
        link.rank = rank;
        link.send_tag = direction_code(dir);
        link.recv_tag = direction_code({-dx, -dy, -dz});
        link.send_box = shape.send_box(dir);
        link.recv_box = shape.recv_box(dir);
        if (link.send_box.size() > max_count || link.recv_box.size() > max_count) too_large();
        link.send_count = static_cast<int>(link.send_box.size());
        link.recv_count = static_cast<int>(link.recv_box.size());
        links.push_back(link);
      }
  return links;
}

void require_idle(bool in_flight, std::string_view strategy) {
  if (in_flight)
    throw std::logic_error(std::string(strategy) + " halo: start() with an exchange in flight");
}

void require_in_flight(bool in_flight, std::string_view strategy) {
  if (!in_flight) throw std::logic_error(std::string(strategy) + " halo: finish() without start()");
}

std::size_t send_bytes(const std::vector<HaloLink>& links) noexcept {
  std::size_t bytes = 0;
  for (const HaloLink& l : links) bytes += static_cast<std::size_t>(l.send_count) * sizeof(double);
  return bytes;
}

BufferedLink::BufferedLink(const HaloLink& l)
    : link(l),
      send_buffer(static_cast<std::size_t>(l.send_count)),
      recv_buffer(static_cast<std::size_t>(l.recv_count)) {}

void BufferedLink::pack(const grid::Field& field) {
  grid::pack(field, link.send_box, send_buffer.data());
}

void BufferedLink::unpack(grid::Field& field) const {
  grid::unpack(field, link.recv_box, recv_buffer.data());
}

void BufferedLink::post_receive(MPI_Comm comm, MPI_Request* request) {
  par::check_mpi(MPI_Irecv(recv_buffer.data(), link.recv_count, MPI_DOUBLE, link.rank,
                           link.recv_tag, comm, request),
                 "MPI_Irecv");
}

void BufferedLink::post_send(const grid::Field& field, MPI_Comm comm, MPI_Request* request) {
  pack(field);
  par::check_mpi(MPI_Isend(send_buffer.data(), link.send_count, MPI_DOUBLE, link.rank,
                           link.send_tag, comm, request),
                 "MPI_Isend");
}

std::vector<BufferedLink> buffered_halo_links(const grid::Decomposition& decomposition,
                                              const grid::Field& shape,
                                              Neighbourhood neighbourhood) {
  const std::vector<HaloLink> links = halo_links(decomposition, shape, neighbourhood);
  return std::vector<BufferedLink>(links.begin(), links.end());
}

std::size_t send_bytes(const std::vector<BufferedLink>& links) noexcept {
  std::size_t bytes = 0;
  for (const BufferedLink& l : links)
    bytes += static_cast<std::size_t>(l.link.send_count) * sizeof(double);
  return bytes;
}

PackedHalo::PackedHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                       Neighbourhood neighbourhood) {
  const std::vector<HaloLink> links = halo_links(decomposition, shape, neighbourhood);
  links_ = static_cast<int>(links.size());
  bytes_ = send_bytes(links);

  // Peers in the order of their first direction.
  std::vector<int> ranks;
  for (const HaloLink& l : links)
    if (std::find(ranks.begin(), ranks.end(), l.rank) == ranks.end()) ranks.push_back(l.rank);

  // Displacements are ints too: the whole buffer must fit an MPI count.
  long long send_total = 0;
  long long recv_total = 0;
  for (int rank : ranks) {
    // Slabs sent to `rank` ordered by the direction they travel, slabs
    // received from it by the direction they travelled: links are already in
    // send_tag order; the receive side sorts by recv_tag.
    std::vector<const HaloLink*> to;
    for (const HaloLink& l : links)
      if (l.rank == rank) to.push_back(&l);
    std::vector<const HaloLink*> from = to;
    std::sort(from.begin(), from.end(),
              [](const HaloLink* a, const HaloLink* b) { return a->recv_tag < b->recv_tag; });

    Peer peer;
    peer.rank = rank;
    peer.send_displ = static_cast<int>(send_total);
    peer.recv_displ = static_cast<int>(recv_total);
    for (const HaloLink* l : to) {
      send_slabs_.push_back({l->send_box, static_cast<std::size_t>(send_total)});
      send_total += l->send_count;
    }
    for (const HaloLink* l : from) {
      recv_slabs_.push_back({l->recv_box, static_cast<std::size_t>(recv_total)});
      recv_total += l->recv_count;
    }
    if (send_total > max_count || recv_total > max_count) too_large();
    peer.send_count = static_cast<int>(send_total) - peer.send_displ;
    peer.recv_count = static_cast<int>(recv_total) - peer.recv_displ;
    peers_.push_back(peer);
  }
  send_buffer_.resize(static_cast<std::size_t>(std::max(send_total, 1LL)));
  recv_buffer_.resize(static_cast<std::size_t>(std::max(recv_total, 1LL)));
}

PackedHalo::DenseCounts PackedHalo::dense_counts(int ranks) const {
  const auto n = static_cast<std::size_t>(ranks);
  DenseCounts c{std::vector<int>(n, 0), std::vector<int>(n, 0), std::vector<int>(n, 0),
                std::vector<int>(n, 0)};
  for (const Peer& p : peers_) {
    const auto r = static_cast<std::size_t>(p.rank);
    c.send_counts[r] = p.send_count;
    c.send_displs[r] = p.send_displ;
    c.recv_counts[r] = p.recv_count;
    c.recv_displs[r] = p.recv_displ;
  }
  return c;
}

void PackedHalo::pack(const grid::Field& field) {
  for (const Slab& s : send_slabs_) grid::pack(field, s.box, send_buffer_.data() + s.offset);
}

void PackedHalo::unpack(grid::Field& field) const {
  for (const Slab& s : recv_slabs_) grid::unpack(field, s.box, recv_buffer_.data() + s.offset);
}

}  // namespace asyncsolve::comm
