#include "waitall_halo.hpp"

#include <cassert>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {

WaitallHalo::WaitallHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                         Neighbourhood neighbourhood)
    : comm_(decomposition.comm().get()) {
  for (const HaloLink& l : halo_links(decomposition, shape, neighbourhood)) {
    links_.push_back({l, std::vector<double>(static_cast<std::size_t>(l.send_count)),
                      std::vector<double>(static_cast<std::size_t>(l.recv_count))});
    bytes_ += static_cast<std::size_t>(l.send_count) * sizeof(double);
  }
}

WaitallHalo::~WaitallHalo() {
  // A started exchange must be finished before destruction; tell debug builds.
  assert(!in_flight_ && requests_.active() == 0 &&
         "WaitallHalo destroyed with an exchange in flight");
}

void WaitallHalo::start(grid::Field& field) {
  require_idle(in_flight_, name());
  for (Link& l : links_) {
    par::check_mpi(MPI_Irecv(l.recv_buffer.data(), l.link.recv_count, MPI_DOUBLE, l.link.rank,
                             l.link.recv_tag, comm_, requests_.add()),
                   "MPI_Irecv");
  }
  for (Link& l : links_) {
    grid::pack(field, l.link.send_box, l.send_buffer.data());
    par::check_mpi(MPI_Isend(l.send_buffer.data(), l.link.send_count, MPI_DOUBLE, l.link.rank,
                             l.link.send_tag, comm_, requests_.add()),
                   "MPI_Isend");
  }
  in_flight_ = true;
}

void WaitallHalo::finish(grid::Field& field) {
  require_in_flight(in_flight_, name());
  requests_.wait_all();
  in_flight_ = false;
  for (const Link& l : links_) grid::unpack(field, l.link.recv_box, l.recv_buffer.data());
}

}  // namespace asyncsolve::comm
