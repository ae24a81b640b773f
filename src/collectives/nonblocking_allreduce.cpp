// The NonblockingAllreduce factory: checks the arguments, then builds the
// algorithm (one file each under allreduce/).
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "algorithms.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "nonblocking_base.hpp"

namespace asyncsolve::collectives {
namespace {

/// Throws std::length_error for a size an MPI count cannot hold; checks
/// (debug builds, collectively) that every rank passed the same size and op.
void check_arguments(const par::Comm& comm, std::size_t size, ReduceOp op) {
  if (size > static_cast<std::size_t>(INT_MAX))
    throw std::length_error(
        fmt::format("non-blocking allreduce of {} doubles: more than an MPI "
                    "count can hold",
                    size));
  detail::check_same_arguments(comm, size, op);
}

}  // namespace

namespace detail {

MPI_Op to_mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return MPI_SUM;
    case ReduceOp::min:
      return MPI_MIN;
    case ReduceOp::max:
      return MPI_MAX;
  }
  return MPI_SUM;
}

void copy_for_mpi(std::span<const double> values, double* out, ReduceOp op) {
  if (op == ReduceOp::sum) {
    std::copy(values.begin(), values.end(), out);
  } else {
    std::transform(values.begin(), values.end(), out, [](double v) { return v == 0.0 ? 0.0 : v; });
  }
}

par::Comm split_node(const par::Comm& comm, int node_color) {
  if (node_color < 0) return comm.split_shared();
  MPI_Comm node = MPI_COMM_NULL;
  par::check_mpi(MPI_Comm_split(comm.get(), node_color, comm.rank(), &node), "MPI_Comm_split");
  par::check_mpi(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return par::Comm::adopt(node);
}

std::unique_ptr<NonblockingAllreduce> make_leaders_allreduce(const par::Comm& comm, bool is_leader,
                                                             const AllreduceAlgorithm& algorithm,
                                                             std::size_t size, ReduceOp op) {
  MPI_Comm leaders = MPI_COMM_NULL;
  par::check_mpi(MPI_Comm_split(comm.get(), is_leader ? 0 : MPI_UNDEFINED, comm.rank(), &leaders),
                 "MPI_Comm_split");
  par::Comm owned = par::Comm::adopt(leaders);
  std::unique_ptr<NonblockingAllreduce> out;
  if (is_leader && owned.size() > 1) out = make_nonblocking_allreduce(algorithm, owned, size, op);
  owned.free();  // collective over the leaders; no-op elsewhere
  return out;
}

void check_same_arguments([[maybe_unused]] const par::Comm& comm, [[maybe_unused]] std::size_t size,
                          [[maybe_unused]] ReduceOp op) {
#ifndef NDEBUG
  const auto n = static_cast<long long>(size);
  const auto o = static_cast<long long>(op);
  long long v[4] = {n, -n, o, -o};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_LONG_LONG, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  if (v[0] != -v[1] || v[2] != -v[3])
    throw std::logic_error(
        fmt::format("NonblockingAllreduce: ranks disagree on the arguments "
                    "(size {} to {}, op {} to {})",
                    -v[1], v[0], -v[3], v[2]));
#endif
}

}  // namespace detail

std::vector<std::string> nonblocking_allreduce_names() {
  return {"tree", "impi", "mpi", "rd", "shm"};
}

void check_allreduce_name(std::string_view name) { (void)parse_allreduce(name); }

std::unique_ptr<NonblockingAllreduce> make_nonblocking_allreduce(std::string_view name,
                                                                 const par::Comm& comm,
                                                                 std::size_t size, ReduceOp op) {
  return make_nonblocking_allreduce(parse_allreduce(name), comm, size, op);
}

std::unique_ptr<NonblockingAllreduce> make_nonblocking_allreduce(
    const AllreduceAlgorithm& algorithm, const par::Comm& comm, std::size_t size, ReduceOp op) {
  using Kind = AllreduceAlgorithm::Kind;
  check_arguments(comm, size, op);
  switch (algorithm.kind) {
    case Kind::tree:
      return detail::make_tree_allreduce(comm, size, op);
    case Kind::mpi:
      return detail::make_blocking_allreduce(comm, size, op);
    case Kind::impi:
      return detail::make_impi_allreduce(comm, size, op);
    case Kind::rd:
      return detail::make_schedule_allreduce(
          algorithm.name(), comm, size, op,
          [&](int rank, int ranks) { return detail::recursive_doubling(rank, ranks, size, op); });
    case Kind::knomial:
      return detail::make_schedule_allreduce(
          algorithm.name(), comm, size, op, [&](int rank, int ranks) {
            return detail::knomial(rank, ranks, algorithm.degree, size, op);
          });
    case Kind::twolevel:
      if (algorithm.shm_node) return detail::make_shm_allreduce(algorithm, comm, size, op, -1);
      return detail::make_two_level(algorithm, comm, size, op, -1);
    case Kind::shm:
      return detail::make_shm_allreduce(algorithm, comm, size, op, -1);
  }
  throw std::logic_error("make_nonblocking_allreduce: unhandled algorithm");
}

std::unique_ptr<NonblockingAllreduce> make_two_level_allreduce(const par::Comm& comm,
                                                               std::size_t size,
                                                               std::string_view leader_algorithm,
                                                               ReduceOp op, int node_color) {
  const AllreduceAlgorithm algorithm =
      parse_allreduce(fmt::format("twolevel:{}", leader_algorithm));
  check_arguments(comm, size, op);
  if (algorithm.shm_node) return detail::make_shm_allreduce(algorithm, comm, size, op, node_color);
  return detail::make_two_level(algorithm, comm, size, op, node_color);
}

}  // namespace asyncsolve::collectives
