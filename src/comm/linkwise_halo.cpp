// The halo exchange one link at a time, for threads that share out the
// links (--hybrid multiple, paper 002's multiple scheme).
#include <cassert>
#include <memory>
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/request.hpp"
#include "halo_links.hpp"

namespace asyncsolve::comm {
namespace {

class LinkwiseHalo final : public LinkwiseHaloExchange {
 public:
  LinkwiseHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
               Neighbourhood neighbourhood)
      : comm_(decomposition.comm().get()) {
    for (const HaloLink& l : halo_links(decomposition, shape, neighbourhood)) {
      links_.push_back(std::make_unique<Link>(l));
      bytes_ += static_cast<std::size_t>(l.send_count) * sizeof(double);
    }
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
    par::check_mpi(MPI_Irecv(l.recv_buffer.data(), l.link.recv_count, MPI_DOUBLE, l.link.rank,
                             l.link.recv_tag, comm_, l.requests.add()),
                   "MPI_Irecv");
    grid::pack(field, l.link.send_box, l.send_buffer.data());
    par::check_mpi(MPI_Isend(l.send_buffer.data(), l.link.send_count, MPI_DOUBLE, l.link.rank,
                             l.link.send_tag, comm_, l.requests.add()),
                   "MPI_Isend");
    l.requests.wait_all();
    grid::unpack(field, l.link.recv_box, l.recv_buffer.data());
  }

 private:
  /// One link with its own buffers and requests; held by pointer so that
  /// links used by different threads do not share a cache line of state.
  struct Link {
    explicit Link(const HaloLink& l)
        : link(l),
          send_buffer(static_cast<std::size_t>(l.send_count)),
          recv_buffer(static_cast<std::size_t>(l.recv_count)),
          requests(2) {}
    HaloLink link;
    std::vector<double> send_buffer;
    std::vector<double> recv_buffer;
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
