#pragma once
// What the sparse layer's setup collectives share (internal): the owner of a
// global index, the receive side of a plan from ascending ghosts, and a
// sparse all-to-all of per-rank lists.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::sparse::detail {

/// The rank whose range of `offsets` (ranks + 1 ascending row offsets)
/// holds `global`.
inline int owner_of(const std::vector<std::int64_t>& offsets, std::int64_t global) {
  return static_cast<int>(std::upper_bound(offsets.begin(), offsets.end(), global) -
                          offsets.begin()) -
         1;
}

/// The receive side of a plan whose ghosts are `ghosts` (ascending, so
/// grouped by owner): one link per owner, one block of the ghost array each.
inline std::vector<RecvLink> recv_links(const std::vector<std::int64_t>& offsets,
                                        const std::vector<std::int64_t>& ghosts) {
  std::vector<RecvLink> out;
  for (std::size_t g = 0; g < ghosts.size();) {
    const int owner = owner_of(offsets, ghosts[g]);
    std::size_t e = g;
    while (e < ghosts.size() && ghosts[e] < offsets[owner + 1]) ++e;
    out.push_back({owner, static_cast<int>(g), static_cast<int>(e - g)});
    g = e;
  }
  return out;
}

template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<std::int64_t>() {
  return MPI_INT64_T;
}
template <>
inline MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}

/// Collective over `comm`: sends out[r] to rank r and returns what arrived,
/// concatenated by source rank, with each source's count in `counts` (as an
/// MPI_Alltoallv would). Only the non-empty lists travel, by the
/// non-blocking consensus of Hoefler, Siebert and Lumsdaine ("Scalable
/// communication protocols for dynamic sparse data exchange", PPoPP 2010):
/// one MPI_Issend per non-empty list, received by MPI_Iprobe on any source,
/// and an MPI_Ibarrier entered once every send has been matched; when the
/// barrier completes every message has arrived. Its cost follows the number
/// of neighbours, not of ranks: a dense MPI_Alltoall of the counts is O(ranks)
/// messages a rank (and under SimGrid, quadratic bookkeeping per message).
/// A closing MPI_Barrier keeps every rank from starting the next exchange
/// (same tag) while another still probes for this one's messages. No
/// MPI_Comm_idup of `comm` may be pending meanwhile (Open MPI 4.1 hung; see
/// DistMatrix::from_rows).
template <class T>
std::vector<T> alltoallv(const par::Comm& comm, const std::vector<std::vector<T>>& out,
                         std::vector<int>& counts) {
  constexpr int tag = 7119;
  const int ranks = comm.size();
  const int me = comm.rank();
  const MPI_Comm c = comm.get();
  std::vector<MPI_Request> sends;
  for (int r = 0; r < ranks; ++r) {
    if (r == me || out[r].empty()) continue;
    sends.push_back(MPI_REQUEST_NULL);
    par::check_mpi(MPI_Issend(out[r].data(), static_cast<int>(out[r].size()), mpi_type<T>(), r, tag,
                              c, &sends.back()),
                   "MPI_Issend");
  }
  std::vector<std::vector<T>> in(static_cast<std::size_t>(ranks));
  in[me] = out[me];
  MPI_Request barrier = MPI_REQUEST_NULL;
  for (bool done = false; !done;) {
    int arrived = 0;
    MPI_Status status;
    par::check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, c, &arrived, &status), "MPI_Iprobe");
    if (arrived != 0) {
      int count = 0;
      par::check_mpi(MPI_Get_count(&status, mpi_type<T>(), &count), "MPI_Get_count");
      std::vector<T>& to = in[status.MPI_SOURCE];
      to.resize(static_cast<std::size_t>(count));
      par::check_mpi(
          MPI_Recv(to.data(), count, mpi_type<T>(), status.MPI_SOURCE, tag, c, MPI_STATUS_IGNORE),
          "MPI_Recv");
      continue;
    }
    int flag = 0;
    if (barrier == MPI_REQUEST_NULL) {
      par::check_mpi(
          MPI_Testall(static_cast<int>(sends.size()), sends.data(), &flag, MPI_STATUSES_IGNORE),
          "MPI_Testall");
      if (flag != 0) par::check_mpi(MPI_Ibarrier(c, &barrier), "MPI_Ibarrier");
    } else {
      par::check_mpi(MPI_Test(&barrier, &flag, MPI_STATUS_IGNORE), "MPI_Test");
      done = flag != 0;
    }
  }
  par::check_mpi(MPI_Barrier(c), "MPI_Barrier");
  counts.assign(static_cast<std::size_t>(ranks), 0);
  std::vector<T> all;
  for (int r = 0; r < ranks; ++r) {
    counts[r] = static_cast<int>(in[r].size());
    all.insert(all.end(), in[r].begin(), in[r].end());
  }
  return all;
}

}  // namespace asyncsolve::sparse::detail
