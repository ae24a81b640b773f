#include "waitall_halo.hpp"

#include <cassert>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {

WaitallHalo::WaitallHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                         Neighbourhood neighbourhood)
    : LinkedHalo(decomposition, shape, neighbourhood), comm_(decomposition.comm().get()) {}

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
  unpack_all(field);
}

}  // namespace asyncsolve::comm
