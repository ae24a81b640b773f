#include "halo_bases.hpp"

namespace asyncsolve::comm {

LinkedHalo::LinkedHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                       Neighbourhood neighbourhood) {
  const std::vector<HaloLink> links = halo_links(decomposition, shape, neighbourhood);
  links_.reserve(links.size());
  for (const HaloLink& l : links) {
    links_.push_back({l, std::vector<double>(static_cast<std::size_t>(l.send_count)),
                      std::vector<double>(static_cast<std::size_t>(l.recv_count))});
  }
  bytes_ = send_bytes(links);
}

void LinkedHalo::unpack_all(grid::Field& field) const {
  for (const Link& l : links_) grid::unpack(field, l.link.recv_box, l.recv_buffer.data());
}

}  // namespace asyncsolve::comm
