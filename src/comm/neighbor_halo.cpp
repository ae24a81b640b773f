#include "halo_strategies.hpp"

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {

NeighborHalo::NeighborHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                           Neighbourhood neighbourhood)
    : PackedHaloBase(decomposition, shape, neighbourhood) {
  std::vector<int> ranks;
  for (const PackedHalo::Peer& p : packed_.peers()) {
    ranks.push_back(p.rank);
    send_counts_.push_back(p.send_count);
    send_displs_.push_back(p.send_displ);
    recv_counts_.push_back(p.recv_count);
    recv_displs_.push_back(p.recv_displ);
  }
  // The neighbour relation is symmetric (A is B's neighbour in direction d
  // exactly when B is A's in -d), so sources and destinations are one list.
  // A rank without neighbours (one rank) passes empty lists; keep the arrays
  // non-empty so that no null pointer reaches MPI.
  const int degree = static_cast<int>(ranks.size());
  for (std::vector<int>* v : {&ranks, &send_counts_, &send_displs_, &recv_counts_, &recv_displs_})
    if (v->empty()) v->push_back(0);
  MPI_Comm graph = MPI_COMM_NULL;
  par::check_mpi(MPI_Dist_graph_create_adjacent(
                     decomposition.comm().get(), degree, ranks.data(), MPI_UNWEIGHTED, degree,
                     ranks.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, /*reorder=*/0, &graph),
                 "MPI_Dist_graph_create_adjacent");
  graph_ = par::Comm::adopt(graph);
  par::check_mpi(MPI_Comm_set_errhandler(graph, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

void NeighborHalo::post() {
  par::check_mpi(
      MPI_Ineighbor_alltoallv(packed_.send_data(), send_counts_.data(), send_displs_.data(),
                              MPI_DOUBLE, packed_.recv_data(), recv_counts_.data(),
                              recv_displs_.data(), MPI_DOUBLE, graph_.get(), &request_),
      "MPI_Ineighbor_alltoallv");
}

}  // namespace asyncsolve::comm
