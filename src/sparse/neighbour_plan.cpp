// Neighbour plans from a list of ghosts, a setup-time exchange through one,
// and agreeing on a rank's error. The distributed matrix builds its plan
// here, and so do the Schwarz subdomains (subdomain.cpp) theirs.
//
// A plan's receive side follows from the ghosts alone (ascending, so
// grouped by owner, the owner found by a binary search in the row offsets
// every rank knows). One sparse all-to-all (detail::alltoallv: a message
// to each owner, none to other ranks) tells every owner which of its
// entries each rank needs; the owner's send list to a rank is that rank's
// request, in the order the requester stores the ghosts. The counts take
// O(ranks) memory per rank.
#include <stdexcept>
#include <utility>

#include "alltoallv_impl.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::sparse {

NeighbourPlan plan_for_ghosts(const par::Comm& comm, const std::vector<std::int64_t>& offsets,
                              const std::vector<std::int64_t>& ghost_globals) {
  NeighbourPlan plan;
  plan.ghosts = static_cast<int>(ghost_globals.size());
  plan.recvs = detail::recv_links(offsets, ghost_globals);
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::vector<std::int64_t>> want(ranks);
  for (const RecvLink& r : plan.recvs) {
    want[r.rank].assign(ghost_globals.begin() + r.offset,
                        ghost_globals.begin() + r.offset + r.count);
  }
  std::vector<int> counts;
  const std::vector<std::int64_t> asked = detail::alltoallv(comm, want, counts);
  const std::int64_t first = offsets[comm.rank()];
  const std::int64_t last = offsets[comm.rank() + 1];
  std::size_t at = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (counts[r] == 0) continue;
    SendLink link{static_cast<int>(r), {}};
    link.indices.reserve(static_cast<std::size_t>(counts[r]));
    for (int k = 0; k < counts[r]; ++k, ++at) {
      if (asked[at] < first || asked[at] >= last)
        throw std::logic_error("plan_for_ghosts: a rank asked for an entry this rank does not own");
      link.indices.push_back(static_cast<int>(asked[at] - first));
    }
    plan.sends.push_back(std::move(link));
  }
  return plan;
}

void exchange_plan(const par::Comm& comm, const NeighbourPlan& plan, std::span<const double> owned,
                   std::span<double> ghosts) {
  constexpr int tag = 7118;
  std::vector<MPI_Request> requests;
  requests.reserve(plan.recvs.size() + plan.sends.size());
  for (const RecvLink& r : plan.recvs) {
    requests.push_back(MPI_REQUEST_NULL);
    par::check_mpi(MPI_Irecv(ghosts.data() + r.offset, r.count, MPI_DOUBLE, r.rank, tag, comm.get(),
                             &requests.back()),
                   "MPI_Irecv");
  }
  std::vector<std::vector<double>> buffers;
  buffers.reserve(plan.sends.size());
  for (const SendLink& l : plan.sends) {
    std::vector<double>& b = buffers.emplace_back();
    b.reserve(l.indices.size());
    for (const int i : l.indices) b.push_back(owned[i]);
    requests.push_back(MPI_REQUEST_NULL);
    par::check_mpi(MPI_Isend(b.data(), static_cast<int>(b.size()), MPI_DOUBLE, l.rank, tag,
                             comm.get(), &requests.back()),
                   "MPI_Isend");
  }
  par::check_mpi(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
      "MPI_Waitall");
}

std::string first_error(const par::Comm& comm, const std::string& local_error) {
  int first = local_error.empty() ? comm.size() : comm.rank();
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm.get()),
                 "MPI_Allreduce");
  if (first == comm.size()) return {};
  std::string message = local_error;
  int length = static_cast<int>(message.size());
  par::check_mpi(MPI_Bcast(&length, 1, MPI_INT, first, comm.get()), "MPI_Bcast");
  message.resize(static_cast<std::size_t>(length));
  par::check_mpi(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm.get()), "MPI_Bcast");
  return message;
}

void raise_together(const par::Comm& comm, const std::string& local_error) {
  const std::string message = first_error(comm, local_error);
  if (!message.empty()) throw core::InputError(message);
}

}  // namespace asyncsolve::sparse
