#pragma once
// Internal: halo exchange by MPI_Ineighbor_alltoallv on a graph communicator.
#include <mpi.h>

#include <vector>

#include "asyncsolve/par/comm.hpp"
#include "halo_bases.hpp"

namespace asyncsolve::comm {

/// The operation paper 001 §3.6 wished for ("an operation like
/// MPI_CART_NEIGHBOR_ALLTOALL"), standardised in MPI-3 as the neighbourhood
/// collectives: a non-blocking all-to-all among topology neighbours only, so
/// counts and displacements grow with the neighbours, not the communicator.
///
/// Owns a distributed-graph communicator (MPI_Dist_graph_create_adjacent,
/// reorder = 0) whose sources and destinations are this rank's neighbour
/// ranks in direction order: the 6 face neighbours, or all 26 for
/// Neighbourhood::full (a Cartesian communicator only knows the faces, so one
/// graph path serves both). start() packs and calls MPI_Ineighbor_alltoallv,
/// test() is MPI_Test, finish() is MPI_Wait then unpack.
///
/// Construction and close() are collective over the decomposition's
/// communicator; start()/finish() involve the neighbours only. Call close()
/// (after the last finish()) before MPI is finalized.
class NeighborHalo final : public PackedHaloBase {
 public:
  NeighborHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
               Neighbourhood neighbourhood);
  ~NeighborHalo() override;
  std::string_view name() const override { return "neighbor"; }
  void start(grid::Field& field) override;
  void finish(grid::Field& field) override;
  void close() override;

 protected:
  bool do_test() override;

 private:
  // Per peer, in the order of the graph's sources (= destinations).
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  par::Comm graph_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace asyncsolve::comm
