#include "waitall_halo.hpp"

#include <cassert>
#include <cstdlib>
#include <limits>

#include "asyncsolve/core/error.hpp"

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {
namespace {

int direction_code(const grid::Int3& dir) {
  return (dir[0] + 1) + 3 * (dir[1] + 1) + 9 * (dir[2] + 1);
}

}  // namespace

WaitallHalo::WaitallHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                         Neighbourhood neighbourhood)
    : comm_(decomposition.comm().get()) {
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const grid::Int3 dir{dx, dy, dz};
        const int nonzero = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if (nonzero == 0 || (neighbourhood == Neighbourhood::faces && nonzero != 1)) continue;
        const int rank = decomposition.neighbour(dir);
        if (rank == MPI_PROC_NULL) continue;
        Link link{rank,
                  // A message travelling in direction d carries tag code(d); what
                  // arrives from direction d travelled in direction -d.
                  direction_code(dir),
                  direction_code({-dx, -dy, -dz}),
                  shape.send_box(dir),
                  shape.recv_box(dir),
                  {},
                  {}};
        if (link.send_box.size() > std::numeric_limits<int>::max() ||
            link.recv_box.size() > std::numeric_limits<int>::max()) {
          throw core::RuntimeFailure("halo message larger than an MPI count (2^31 - 1 values)");
        }
        link.send_buffer.resize(static_cast<std::size_t>(link.send_box.size()));
        link.recv_buffer.resize(static_cast<std::size_t>(link.recv_box.size()));
        bytes_ += link.send_buffer.size() * sizeof(double);
        links_.push_back(std::move(link));
      }
}

WaitallHalo::~WaitallHalo() {
  // A started exchange must be finished before destruction; tell debug builds.
  assert(requests_.active() == 0 && "WaitallHalo destroyed with an exchange in flight");
}

void WaitallHalo::start(grid::Field& field) {
  for (Link& l : links_) {
    par::check_mpi(MPI_Irecv(l.recv_buffer.data(), static_cast<int>(l.recv_buffer.size()),
                             MPI_DOUBLE, l.rank, l.recv_tag, comm_, requests_.add()),
                   "MPI_Irecv");
  }
  for (Link& l : links_) {
    grid::pack(field, l.send_box, l.send_buffer.data());
    par::check_mpi(MPI_Isend(l.send_buffer.data(), static_cast<int>(l.send_buffer.size()),
                             MPI_DOUBLE, l.rank, l.send_tag, comm_, requests_.add()),
                   "MPI_Isend");
  }
}

void WaitallHalo::finish(grid::Field& field) {
  requests_.wait_all();
  for (const Link& l : links_) grid::unpack(field, l.recv_box, l.recv_buffer.data());
}

}  // namespace asyncsolve::comm
