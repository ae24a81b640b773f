#include "alltoallv_halo.hpp"

#include <cassert>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {

AlltoallvHalo::AlltoallvHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                             Neighbourhood neighbourhood, bool nonblocking)
    : PackedHaloBase(decomposition, shape, neighbourhood),
      comm_(decomposition.comm().get()),
      nonblocking_(nonblocking),
      counts_(packed_.dense_counts(decomposition.ranks())) {}

AlltoallvHalo::~AlltoallvHalo() {
  assert(!in_flight_ && "AlltoallvHalo destroyed with an exchange in flight");
  // A collective request cannot be cancelled or dropped while MPI reads the
  // buffers: complete it (this waits for the other ranks to take part).
  if (request_ != MPI_REQUEST_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
}

void AlltoallvHalo::start(grid::Field& field) {
  require_idle(in_flight_, name());
  packed_.pack(field);
  if (nonblocking_) {
    par::check_mpi(
        MPI_Ialltoallv(packed_.send_data(), counts_.send_counts.data(), counts_.send_displs.data(),
                       MPI_DOUBLE, packed_.recv_data(), counts_.recv_counts.data(),
                       counts_.recv_displs.data(), MPI_DOUBLE, comm_, &request_),
        "MPI_Ialltoallv");
  } else {
    par::check_mpi(
        MPI_Alltoallv(packed_.send_data(), counts_.send_counts.data(), counts_.send_displs.data(),
                      MPI_DOUBLE, packed_.recv_data(), counts_.recv_counts.data(),
                      counts_.recv_displs.data(), MPI_DOUBLE, comm_),
        "MPI_Alltoallv");
  }
  in_flight_ = true;
}

bool AlltoallvHalo::do_test() {
  if (request_ == MPI_REQUEST_NULL) return true;  // blocking, or already completed
  int done = 0;
  par::check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

void AlltoallvHalo::finish(grid::Field& field) {
  require_in_flight(in_flight_, name());
  if (request_ != MPI_REQUEST_NULL)
    par::check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
  in_flight_ = false;
  packed_.unpack(field);
}

}  // namespace asyncsolve::comm
