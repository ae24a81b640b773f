#pragma once
// What the sparse layer's setup collectives share (internal): the owner of a
// global index, the receive side of a plan from ascending ghosts, and an
// MPI_Alltoallv of per-rank lists.
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

/// Collective over `comm`: sends out[r] to rank r (one MPI_Alltoall of the
/// counts, one MPI_Alltoallv of the values); returns what arrived,
/// concatenated by source rank, with each source's count in `counts`.
template <class T>
std::vector<T> alltoallv(const par::Comm& comm, const std::vector<std::vector<T>>& out,
                         std::vector<int>& counts) {
  const int ranks = comm.size();
  std::vector<int> send_counts(static_cast<std::size_t>(ranks));
  std::vector<int> send_displs(static_cast<std::size_t>(ranks), 0);
  std::vector<T> send;
  for (int r = 0; r < ranks; ++r) {
    send_displs[r] = static_cast<int>(send.size());
    send_counts[r] = static_cast<int>(out[r].size());
    send.insert(send.end(), out[r].begin(), out[r].end());
  }
  counts.assign(static_cast<std::size_t>(ranks), 0);
  par::check_mpi(
      MPI_Alltoall(send_counts.data(), 1, MPI_INT, counts.data(), 1, MPI_INT, comm.get()),
      "MPI_Alltoall");
  std::vector<int> displs(static_cast<std::size_t>(ranks), 0);
  for (int r = 1; r < ranks; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<T> in(static_cast<std::size_t>(displs.back() + counts.back()) + 1);
  send.push_back(T{});  // never empty: data() must be a valid pointer
  par::check_mpi(MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), mpi_type<T>(),
                               in.data(), counts.data(), displs.data(), mpi_type<T>(), comm.get()),
                 "MPI_Alltoallv");
  in.pop_back();
  return in;
}

}  // namespace asyncsolve::sparse::detail
