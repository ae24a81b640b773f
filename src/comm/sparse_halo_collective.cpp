// Collective sparse halo exchanges: alltoallv (MPI_Alltoallv over the
// matrix's communicator, counts for every rank, zero for non-neighbours),
// ialltoallv (MPI_Ialltoallv, progressed by test()), and neighbor
// (MPI_Ineighbor_alltoallv on a distributed-graph communicator of the
// neighbours only, which this strategy owns). The receive displacements are
// the ghost offsets: the ghosts are grouped by owner in rank order, so the
// ghost array is the receive buffer.
#include <cassert>
#include <stdexcept>

#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/comm.hpp"
#include "sparse_halo_impl.hpp"

namespace asyncsolve::comm {
namespace {

/// The nonblocking collectives' request, completed before destruction.
void complete_on_destruction(MPI_Request& request) noexcept {
  if (request == MPI_REQUEST_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) MPI_Wait(&request, MPI_STATUS_IGNORE);
}

bool test_request(MPI_Request& request) {
  if (request == MPI_REQUEST_NULL) return true;
  int done = 0;
  par::check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

class SparseAlltoallv final : public SparseHaloBase {
 public:
  SparseAlltoallv(const sparse::NeighbourPlan& route, const par::Comm& on, bool nonblocking)
      : SparseHaloBase(route, on, nonblocking ? "ialltoallv" : "alltoallv"),
        nonblocking_(nonblocking) {
    const auto ranks = static_cast<std::size_t>(on.size());
    send_counts_.assign(ranks, 0);
    send_displs_.assign(ranks, 0);
    recv_counts_.assign(ranks, 0);
    recv_displs_.assign(ranks, 0);
    for (std::size_t i = 0; i < plan().sends.size(); ++i) {
      send_counts_[plan().sends[i].rank] = static_cast<int>(plan().sends[i].indices.size());
      send_displs_[plan().sends[i].rank] = send_offset(i);
    }
    for (const sparse::RecvLink& r : plan().recvs) {
      recv_counts_[r.rank] = r.count;
      recv_displs_[r.rank] = r.offset;
    }
  }
  ~SparseAlltoallv() override {
    assert(!in_flight() && "sparse alltoallv halo destroyed with an exchange in flight");
    complete_on_destruction(request_);
  }
  void start(grid::Field& x) override {
    begin();
    pack(x);
    if (nonblocking_) {
      par::check_mpi(MPI_Ialltoallv(send_data(), send_counts_.data(), send_displs_.data(),
                                    MPI_DOUBLE, ghost_data(), recv_counts_.data(),
                                    recv_displs_.data(), MPI_DOUBLE, comm(), &request_),
                     "MPI_Ialltoallv");
    } else {
      par::check_mpi(
          MPI_Alltoallv(send_data(), send_counts_.data(), send_displs_.data(), MPI_DOUBLE,
                        ghost_data(), recv_counts_.data(), recv_displs_.data(), MPI_DOUBLE, comm()),
          "MPI_Alltoallv");
    }
  }
  void finish(grid::Field&) override {
    end();
    if (request_ != MPI_REQUEST_NULL)
      par::check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
  }

 protected:
  bool do_test() override { return test_request(request_); }

 private:
  bool nonblocking_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

class SparseNeighbor final : public SparseHaloBase {
 public:
  SparseNeighbor(const sparse::NeighbourPlan& route, const par::Comm& on)
      : SparseHaloBase(route, on, "neighbor") {
    std::vector<int> sources;
    std::vector<int> destinations;
    for (const sparse::RecvLink& r : plan().recvs) {
      sources.push_back(r.rank);
      recv_counts_.push_back(r.count);
      recv_displs_.push_back(r.offset);
    }
    for (std::size_t i = 0; i < plan().sends.size(); ++i) {
      destinations.push_back(plan().sends[i].rank);
      send_counts_.push_back(static_cast<int>(plan().sends[i].indices.size()));
      send_displs_.push_back(send_offset(i));
    }
    const int indegree = static_cast<int>(sources.size());
    const int outdegree = static_cast<int>(destinations.size());
    // Never pass a null pointer to MPI (a rank without neighbours).
    for (std::vector<int>* v :
         {&sources, &destinations, &recv_counts_, &recv_displs_, &send_counts_, &send_displs_})
      if (v->empty()) v->push_back(0);
    MPI_Comm graph = MPI_COMM_NULL;
    par::check_mpi(MPI_Dist_graph_create_adjacent(comm(), indegree, sources.data(), MPI_UNWEIGHTED,
                                                  outdegree, destinations.data(), MPI_UNWEIGHTED,
                                                  MPI_INFO_NULL, /*reorder=*/0, &graph),
                   "MPI_Dist_graph_create_adjacent");
    graph_ = par::Comm::adopt(graph);
    par::check_mpi(MPI_Comm_set_errhandler(graph, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
  ~SparseNeighbor() override {
    assert(!in_flight() && "sparse neighbor halo destroyed with an exchange in flight");
    complete_on_destruction(request_);
  }
  void start(grid::Field& x) override {
    if (graph_.get() == MPI_COMM_NULL)
      throw std::logic_error("neighbor halo: start() after close()");
    begin();
    pack(x);
    par::check_mpi(
        MPI_Ineighbor_alltoallv(send_data(), send_counts_.data(), send_displs_.data(), MPI_DOUBLE,
                                ghost_data(), recv_counts_.data(), recv_displs_.data(), MPI_DOUBLE,
                                graph_.get(), &request_),
        "MPI_Ineighbor_alltoallv");
  }
  void finish(grid::Field&) override {
    end();
    if (request_ != MPI_REQUEST_NULL)
      par::check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  void close() override {
    if (in_flight()) throw std::logic_error("neighbor halo: close() with an exchange in flight");
    graph_.free();
  }

 protected:
  bool do_test() override { return test_request(request_); }

 private:
  par::Comm graph_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace

std::unique_ptr<SparseHaloExchange> make_sparse_alltoallv(const sparse::NeighbourPlan& plan,
                                                          const par::Comm& comm, bool nonblocking) {
  return std::make_unique<SparseAlltoallv>(plan, comm, nonblocking);
}

std::unique_ptr<SparseHaloExchange> make_sparse_neighbor(const sparse::NeighbourPlan& plan,
                                                         const par::Comm& comm) {
  return std::make_unique<SparseNeighbor>(plan, comm);
}

}  // namespace asyncsolve::comm
