#include "halo_strategies.hpp"

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {

PersistentHalo::PersistentHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                               Neighbourhood neighbourhood)
    : LinkedHalo(decomposition, shape, neighbourhood) {
  const MPI_Comm comm = decomposition.comm().get();
  // The buffers never move after construction: the requests hold their addresses.
  requests_.assign(2 * links_.size(), MPI_REQUEST_NULL);
  try {
    for (std::size_t i = 0; i < links_.size(); ++i) {
      Link& l = links_[i];
      par::check_mpi(MPI_Recv_init(l.recv_buffer.data(), l.link.recv_count, MPI_DOUBLE, l.link.rank,
                                   l.link.recv_tag, comm, &requests_[i]),
                     "MPI_Recv_init");
      par::check_mpi(MPI_Send_init(l.send_buffer.data(), l.link.send_count, MPI_DOUBLE, l.link.rank,
                                   l.link.send_tag, comm, &requests_[links_.size() + i]),
                     "MPI_Send_init");
    }
  } catch (...) {
    free_requests();  // none was started
    throw;
  }
}

PersistentHalo::~PersistentHalo() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  // Release builds: complete an exchange left in flight before freeing (an
  // active persistent request must not be freed while MPI uses the buffers).
  if (in_flight_ && !requests_.empty())
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  free_requests();
}

void PersistentHalo::free_requests() noexcept {
  for (MPI_Request& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
}

void PersistentHalo::post() {
  // Receives first (array order), then sends. (Open MPI rejects
  // MPI_Startall with no requests, as on a single rank.)
  if (!requests_.empty())
    par::check_mpi(MPI_Startall(static_cast<int>(requests_.size()), requests_.data()),
                   "MPI_Startall");
}

bool PersistentHalo::do_test() {
  // Completed persistent requests become inactive, and MPI_Testall counts
  // inactive requests as complete, so testing again after completion is fine.
  if (requests_.empty()) return true;
  int done = 0;
  par::check_mpi(
      MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE),
      "MPI_Testall");
  return done != 0;
}

void PersistentHalo::complete() {
  if (!requests_.empty())
    par::check_mpi(
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall");
}

}  // namespace asyncsolve::comm
