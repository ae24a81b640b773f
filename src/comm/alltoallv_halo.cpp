#include "halo_strategies.hpp"

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {

AlltoallvHalo::AlltoallvHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                             Neighbourhood neighbourhood, bool nonblocking)
    : PackedHaloBase(decomposition, shape, neighbourhood),
      comm_(decomposition.comm().get()),
      nonblocking_(nonblocking),
      counts_(packed_.dense_counts(decomposition.ranks())) {}

void AlltoallvHalo::post() {
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
}

}  // namespace asyncsolve::comm
