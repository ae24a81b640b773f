#include "halo_strategies.hpp"

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {

WaitallHalo::WaitallHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                         Neighbourhood neighbourhood)
    : LinkedHalo(decomposition, shape, neighbourhood), comm_(decomposition.comm().get()) {}

void WaitallHalo::post() {
  // Every receive before any send.
  for (Link& l : links_) {
    par::check_mpi(MPI_Irecv(l.recv_buffer.data(), l.link.recv_count, MPI_DOUBLE, l.link.rank,
                             l.link.recv_tag, comm_, requests_.add()),
                   "MPI_Irecv");
  }
  for (Link& l : links_) {
    par::check_mpi(MPI_Isend(l.send_buffer.data(), l.link.send_count, MPI_DOUBLE, l.link.rank,
                             l.link.send_tag, comm_, requests_.add()),
                   "MPI_Isend");
  }
}

}  // namespace asyncsolve::comm
