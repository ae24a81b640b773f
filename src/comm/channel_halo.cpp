// Synchronous halo exchange of a structured block over asynchronous
// channels: one per face with a neighbour, in lockstep (channel_lockstep.hpp).
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "channel_lockstep.hpp"

namespace asyncsolve::comm {
namespace {

std::vector<grid::Face> neighbour_faces(const grid::Decomposition& decomposition) {
  std::vector<grid::Face> faces;
  for (const grid::Face face : grid::all_faces)
    if (!decomposition.is_physical_boundary(face)) faces.push_back(face);
  return faces;
}

std::vector<ChannelLink> face_links(const grid::Decomposition& decomposition,
                                    const grid::Field& shape,
                                    const std::vector<grid::Face>& faces) {
  std::vector<ChannelLink> links;
  links.reserve(faces.size());
  for (const grid::Face face : faces) {
    links.push_back(
        {decomposition.neighbour(face), static_cast<std::size_t>(shape.send_box(face).size())});
  }
  return links;
}

class ChannelHalo final : public HaloExchange {
 public:
  ChannelHalo(const grid::Decomposition& decomposition, const grid::Field& shape, int transport)
      : faces_(neighbour_faces(decomposition)),
        lockstep_(NeighbourChannels(decomposition.comm(), face_links(decomposition, shape, faces_),
                                    detail::lockstep_settings(transport))) {}

  std::string_view name() const override { return "channel"; }

  void start(grid::Field& field) override {
    for (std::size_t i = 0; i < faces_.size(); ++i)
      grid::pack(field, field.send_box(faces_[i]), lockstep_.send_buffer(i));
    lockstep_.send_all();
  }

  void finish(grid::Field& field) override {
    for (std::size_t i = 0; i < faces_.size(); ++i)
      grid::unpack(field, field.recv_box(faces_[i]), lockstep_.wait(i));
  }

  int messages_per_exchange() const override { return static_cast<int>(faces_.size()); }
  std::size_t bytes_per_exchange() const override { return lockstep_.bytes_per_exchange(); }

  void close() override { lockstep_.close(); }

 protected:
  bool do_test() override { return lockstep_.test(); }

 private:
  std::vector<grid::Face> faces_;
  detail::ChannelLockstep lockstep_;
};

}  // namespace

std::unique_ptr<HaloExchange> make_channel_halo_exchange(const grid::Decomposition& decomposition,
                                                         const grid::Field& shape, int transport) {
  return std::make_unique<ChannelHalo>(decomposition, shape, transport);
}

}  // namespace asyncsolve::comm
