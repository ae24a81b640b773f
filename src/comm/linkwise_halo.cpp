// The halo exchange one link at a time, for threads that share out the
// links (--hybrid multiple, paper 002's multiple scheme).
#include <cassert>
#include <memory>
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/par/request.hpp"
#include "halo_links.hpp"

namespace asyncsolve::comm {
namespace {

class LinkwiseHalo final : public LinkwiseHaloExchange {
 public:
  LinkwiseHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
               Neighbourhood neighbourhood)
      : comm_(decomposition.comm().get()) {
    const std::vector<HaloLink> links = halo_links(decomposition, shape, neighbourhood);
    links_.reserve(links.size());
    for (const HaloLink& l : links) links_.push_back(std::make_unique<Link>(l));
    bytes_ = send_bytes(links);
  }
  ~LinkwiseHalo() override {
    for ([[maybe_unused]] const auto& l : links_) {
      assert(l->requests.active() == 0 && "LinkwiseHalo destroyed with a link in flight");
    }
  }

  int links() const noexcept override { return static_cast<int>(links_.size()); }
  int messages_per_exchange() const noexcept override { return links(); }
  std::size_t bytes_per_exchange() const noexcept override { return bytes_; }

  void exchange_link(grid::Field& field, int i) override {
    Link& l = *links_.at(static_cast<std::size_t>(i));
    l.post_receive(comm_, l.requests.add());
    l.post_send(field, comm_, l.requests.add());
    l.requests.wait_all();
    l.unpack(field);
  }

 private:
  /// One link with its own buffers and requests; held by pointer so that
  /// links used by different threads do not share a cache line of state.
  struct Link : BufferedLink {
    explicit Link(const HaloLink& l) : BufferedLink(l), requests(2) {}
    par::RequestSet requests;
  };
  MPI_Comm comm_;
  std::vector<std::unique_ptr<Link>> links_;
  std::size_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<LinkwiseHaloExchange> make_linkwise_halo_exchange(
    const grid::Decomposition& decomposition, const grid::Field& shape,
    Neighbourhood neighbourhood) {
  return std::make_unique<LinkwiseHalo>(decomposition, shape, neighbourhood);
}

}  // namespace asyncsolve::comm
