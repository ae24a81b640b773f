// Point-to-point sparse halo exchanges: waitall (MPI_Irecv/MPI_Isend per
// neighbour, one MPI_Waitall) and persistent (the same messages set up once
// with MPI_Recv_init/MPI_Send_init, MPI_Startall per exchange). Receives
// land directly in the ghost array.
#include <cassert>
#include <stdexcept>

#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/request.hpp"
#include "sparse_halo_impl.hpp"

namespace asyncsolve::comm {
namespace {

class SparseWaitall final : public SparseHaloBase {
 public:
  SparseWaitall(const sparse::NeighbourPlan& route, const par::Comm& on)
      : SparseHaloBase(route, on, "waitall") {}
  ~SparseWaitall() override {
    assert(!in_flight() && requests_.active() == 0 &&
           "sparse waitall halo destroyed with an exchange in flight");
  }
  void start(grid::Field& x) override {
    begin();
    for (const sparse::RecvLink& r : plan().recvs) {
      par::check_mpi(MPI_Irecv(ghost_data() + r.offset, r.count, MPI_DOUBLE, r.rank, kSparseHaloTag,
                               comm(), requests_.add()),
                     "MPI_Irecv");
    }
    pack(x);
    for (std::size_t i = 0; i < plan().sends.size(); ++i) {
      par::check_mpi(
          MPI_Isend(send_data() + send_offset(i), static_cast<int>(plan().sends[i].indices.size()),
                    MPI_DOUBLE, plan().sends[i].rank, kSparseHaloTag, comm(), requests_.add()),
          "MPI_Isend");
    }
  }
  void finish(grid::Field&) override {
    end();
    requests_.wait_all();
  }

 protected:
  bool do_test() override { return requests_.test_all(); }

 private:
  par::RequestSet requests_;
};

class SparsePersistent final : public SparseHaloBase {
 public:
  SparsePersistent(const sparse::NeighbourPlan& route, const par::Comm& on)
      : SparseHaloBase(route, on, "persistent") {
    try {
      for (const sparse::RecvLink& r : plan().recvs) {
        requests_.push_back(MPI_REQUEST_NULL);
        par::check_mpi(MPI_Recv_init(ghost_data() + r.offset, r.count, MPI_DOUBLE, r.rank,
                                     kSparseHaloTag, comm(), &requests_.back()),
                       "MPI_Recv_init");
      }
      for (std::size_t i = 0; i < plan().sends.size(); ++i) {
        requests_.push_back(MPI_REQUEST_NULL);
        par::check_mpi(
            MPI_Send_init(send_data() + send_offset(i),
                          static_cast<int>(plan().sends[i].indices.size()), MPI_DOUBLE,
                          plan().sends[i].rank, kSparseHaloTag, comm(), &requests_.back()),
            "MPI_Send_init");
      }
    } catch (...) {
      free_requests();  // none was started
      throw;
    }
  }
  ~SparsePersistent() override {
    assert(!in_flight() && "sparse persistent halo destroyed with an exchange in flight");
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) return;
    if (in_flight() && !requests_.empty())
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    free_requests();
  }
  void start(grid::Field& x) override {
    if (closed_) throw std::logic_error("persistent halo: start() after close()");
    begin();
    pack(x);
    if (!requests_.empty())
      par::check_mpi(MPI_Startall(static_cast<int>(requests_.size()), requests_.data()),
                     "MPI_Startall");
  }
  void finish(grid::Field&) override {
    end();
    if (!requests_.empty())
      par::check_mpi(
          MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
  }
  void close() override {
    if (in_flight()) throw std::logic_error("persistent halo: close() with an exchange in flight");
    free_requests();
    closed_ = true;
  }

 protected:
  bool do_test() override {
    if (requests_.empty()) return true;
    int done = 0;
    par::check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done,
                               MPI_STATUSES_IGNORE),
                   "MPI_Testall");
    return done != 0;
  }

 private:
  void free_requests() noexcept {
    for (MPI_Request& r : requests_)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  std::vector<MPI_Request> requests_;
  bool closed_ = false;
};

}  // namespace

std::unique_ptr<SparseHaloExchange> make_sparse_waitall(const sparse::NeighbourPlan& plan,
                                                        const par::Comm& comm) {
  return std::make_unique<SparseWaitall>(plan, comm);
}

std::unique_ptr<SparseHaloExchange> make_sparse_persistent(const sparse::NeighbourPlan& plan,
                                                           const par::Comm& comm) {
  return std::make_unique<SparsePersistent>(plan, comm);
}

}  // namespace asyncsolve::comm
