#pragma once
// Internal: the halo-exchange strategies of --halo on the structured grid,
// one class each, declared together (halo_exchange.cpp makes them; each has
// its own .cpp): waitall and persistent (LinkedHalo), alltoallv/ialltoallv
// and neighbor (PackedHaloBase). What they share is in halo_bases.hpp.
#include <mpi.h>

#include <vector>

#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/request.hpp"
#include "halo_bases.hpp"

namespace asyncsolve::comm {

/// Paper 000 §3.1.1: post a receive and a send per neighbour, then one
/// MPI_Waitall. Buffers are allocated once and reused.
class WaitallHalo final : public LinkedHalo {
 public:
  WaitallHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
              Neighbourhood neighbourhood);
  std::string_view name() const override { return "waitall"; }

 protected:
  void post() override;
  void complete() override { requests_.wait_all(); }
  bool do_test() override { return requests_.test_all(); }

 private:
  MPI_Comm comm_;
  par::RequestSet requests_;
};

/// The messages of waitall (one per neighbour direction, same tags), set up
/// once: MPI_Recv_init/MPI_Send_init at construction, MPI_Startall in
/// start(), MPI_Testall in test(), MPI_Waitall in finish(). The requests are
/// managed here, not by par::RequestSet, which assumes requests that become
/// MPI_REQUEST_NULL on completion; a completed persistent request stays
/// allocated (inactive) until MPI_Request_free.
///
/// Point-to-point among neighbours. close() frees the requests (finish() must
/// come first: a persistent request is never freed while active); the
/// destructor frees them too if close() was not called and MPI is not
/// finalized.
class PersistentHalo final : public LinkedHalo {
 public:
  PersistentHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                 Neighbourhood neighbourhood);
  ~PersistentHalo() override;
  std::string_view name() const override { return "persistent"; }

 protected:
  void post() override;
  void complete() override;
  bool do_test() override;
  void release() override { free_requests(); }

 private:
  void free_requests() noexcept;

  std::vector<MPI_Request> requests_;  ///< receives, then sends; inactive between exchanges
};

/// Paper 001 Listing 4: every send slab packed into one buffer, exchanged by
/// one all-to-all over the decomposition's communicator with a count and
/// displacement per rank (zero for ranks that are not neighbours).
///
/// Blocking ("alltoallv", the else-branch of Listing 4): start() performs the
/// whole exchange, test() is true at once, finish() unpacks.
/// Non-blocking ("ialltoallv", the NBC_Ialltoallv branch; Open MPI's
/// MPI_Ialltoallv is LibNBC itself): start() starts the collective, test() is
/// MPI_Test on its request, finish() is MPI_Wait then unpack.
///
/// Collective over the decomposition's communicator: every rank of it calls
/// start() and finish() the same number of times (in the same order as any
/// other collective on that communicator). Holds no communicator of its own.
class AlltoallvHalo final : public PackedHaloBase {
 public:
  AlltoallvHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                Neighbourhood neighbourhood, bool nonblocking);
  std::string_view name() const override { return nonblocking_ ? "ialltoallv" : "alltoallv"; }

 protected:
  void post() override;

 private:
  MPI_Comm comm_;
  bool nonblocking_;
  PackedHalo::DenseCounts counts_;
};

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
  std::string_view name() const override { return "neighbor"; }

 protected:
  void post() override;
  void release() override { graph_.free(); }

 private:
  // Per peer, in the order of the graph's sources (= destinations).
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  par::Comm graph_;
};

}  // namespace asyncsolve::comm
