#include "asyncsolve/par/comm.hpp"

#include <algorithm>
#include <thread>
#include <utility>

#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/simulation.hpp"

namespace asyncsolve::par {

Comm::Comm(Comm&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      owned_(std::exchange(other.owned_, false)) {}

// Not noexcept: freeing an owned target is collective and may throw (comm.hpp).
// NOLINTNEXTLINE(performance-noexcept-move-constructor,bugprone-exception-escape)
Comm& Comm::operator=(Comm&& other) {
  if (this != &other) {
    // Assigning over an owned communicator frees it: collective, like free().
    free();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

Comm::~Comm() {
  if (!owned_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0 && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Comm Comm::dup() const {
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm_, &out), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return adopt(out);
}

Comm Comm::split_shared() const {
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &out),
            "MPI_Comm_split_type");
  check_mpi(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return adopt(out);
}

bool exceeds_cores(int load) noexcept {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores != 0 && load > 0 && static_cast<unsigned>(load) > cores;
}

bool Comm::node_oversubscribed(int threads_per_rank) const {
  if (is_simulated()) return false;
  Comm node = split_shared();
  const int load = node.size() * std::max(1, threads_per_rank);
  node.free();
  return exceeds_cores(load);
}

void Comm::free() {
  if (owned_ && comm_ != MPI_COMM_NULL) check_mpi(MPI_Comm_free(&comm_), "MPI_Comm_free");
  comm_ = MPI_COMM_NULL;
  owned_ = false;
}

int Comm::rank() const {
  int r = 0;
  check_mpi(MPI_Comm_rank(comm_, &r), "MPI_Comm_rank");
  return r;
}

int Comm::size() const {
  int s = 0;
  check_mpi(MPI_Comm_size(comm_, &s), "MPI_Comm_size");
  return s;
}

void Comm::barrier() const { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

}  // namespace asyncsolve::par
