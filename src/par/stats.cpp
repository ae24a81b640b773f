#include "asyncsolve/par/stats.hpp"

#include <unistd.h>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::par {

RankStats rank_stats(const Comm& comm, double value) {
  // One reduction: min(x) = -max(-x), so max over {-x, x} gives both, plus a sum.
  double mm[2] = {-value, value};
  double sum = value;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm.get()), "MPI_Allreduce");
  return RankStats{-mm[0], mm[1], sum / comm.size()};
}

double max_over_ranks(const Comm& comm, double value) {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
            "MPI_Allreduce");
  return value;
}

double min_over_ranks(const Comm& comm, double value) {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MIN, comm.get()),
            "MPI_Allreduce");
  return value;
}

void max_over_ranks(const Comm& comm, std::span<double> values) {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                          MPI_MAX, comm.get()),
            "MPI_Allreduce");
}

bool any_rank(const Comm& comm, bool flag) {
  int value = flag ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, comm.get()), "MPI_Allreduce");
  return value != 0;
}

std::vector<double> gather_to_root(const Comm& comm, double value) {
  std::vector<double> out(comm.is_root() ? static_cast<std::size_t>(comm.size()) : 0);
  check_mpi(MPI_Gather(&value, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, 0, comm.get()),
            "MPI_Gather");
  return out;
}

std::string broadcast_from_root(const Comm& comm, std::string text) {
  int length = static_cast<int>(text.size());
  check_mpi(MPI_Bcast(&length, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
  text.resize(static_cast<std::size_t>(length));
  check_mpi(MPI_Bcast(text.data(), length, MPI_CHAR, 0, comm.get()), "MPI_Bcast");
  return text;
}

NodeMemory node_memory(const Comm& comm, double rank_bytes) {
  double bytes = rank_bytes;
  Comm node = comm.split_shared();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_DOUBLE, MPI_SUM, node.get()),
            "MPI_Allreduce");
  node.free();
  const double pages = static_cast<double>(::sysconf(_SC_PHYS_PAGES));
  const double page = static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  // need[0]: the most any node needs; need[1]: minus the least memory of a node.
  double need[2] = {bytes, -(pages > 0 && page > 0 ? pages * page : 1e300)};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, need, 2, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  return NodeMemory{need[0], -need[1]};
}

}  // namespace asyncsolve::par
