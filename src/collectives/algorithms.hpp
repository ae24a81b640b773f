#pragma once
/// The allreduce and barrier algorithms behind the factories (internal): one
/// file each under src/collectives/allreduce/ and src/collectives/barrier/.
///
/// The schedule builders are pure functions of (rank, ranks, parameters), so
/// tests can inspect them without communication; message counts are in
/// docs/design.md ("Collectives").
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/collectives/schedule.hpp"

namespace asyncsolve::collectives::detail {

/// A schedule plus where the caller's input goes and where the result lies
/// (offsets into its buffer, `count` doubles each).
struct BuiltSchedule {
  Schedule schedule;
  std::size_t input = 0;
  std::size_t result = 0;
};

/// allreduce/recursive_doubling.cpp. Recursive doubling over the largest
/// power of two pof2 <= ranks; rank p >= pof2 first hands its values to
/// p - pof2 and receives the result from it at the end. Every combine puts
/// the lower rank's operand first.
BuiltSchedule recursive_doubling(int rank, int ranks, std::size_t count, ReduceOp op);

/// allreduce/knomial.cpp. k-nomial reduce to rank 0, then k-nomial
/// broadcast of rank 0's result.
BuiltSchedule knomial(int rank, int ranks, int degree, std::size_t count, ReduceOp op);

/// allreduce/knomial.cpp. Appends the k-nomial reduce to rank 0 of
/// buffer[acc, acc+count) (rank 0 ends with the total in acc), receiving into
/// degree-1 areas from `tmp` on. A non-root rank's last round (the send to
/// its parent) is left open, so that the caller may add actions to it.
void append_knomial_reduce(Schedule& s, int rank, int ranks, int degree, std::size_t acc,
                           std::size_t tmp, std::size_t count, ReduceOp op);

/// allreduce/knomial.cpp. Appends the k-nomial broadcast from rank 0 of
/// buffer[offset, offset+count): a non-root rank receives it from its parent
/// (into the round left open, if any), then every rank forwards it to its
/// children.
void append_knomial_bcast(Schedule& s, int rank, int ranks, int degree, std::size_t offset,
                          std::size_t count);

/// barrier/dissemination.cpp. The n-way dissemination barrier (paper 001
/// §2.2): in round r rank p sends to (p + i(n+1)^r) mod P and receives from
/// (p - i(n+1)^r) mod P for i = 1..n with i(n+1)^r < P; ceil(log_{n+1} P)
/// rounds of empty messages.
Schedule dissemination_barrier(int rank, int ranks, int ways);

/// Builds a schedule for (rank, ranks) of the communicator it will run on.
using ScheduleBuilder = std::function<BuiltSchedule(int rank, int ranks)>;

// The algorithms, each collective over `comm` and owning a duplicate of it
// (the factory in nonblocking_allreduce.cpp checks the arguments first).

/// allreduce/blocking.cpp: `mpi`, MPI_Allreduce inside start().
std::unique_ptr<NonblockingAllreduce> make_blocking_allreduce(const par::Comm& comm,
                                                              std::size_t size, ReduceOp op);
/// allreduce/impi.cpp: `impi`, MPI_Iallreduce.
std::unique_ptr<NonblockingAllreduce> make_impi_allreduce(const par::Comm& comm, std::size_t size,
                                                          ReduceOp op);
/// allreduce/tree.cpp: `tree`, paper 000's asynchronous binary tree.
std::unique_ptr<NonblockingAllreduce> make_tree_allreduce(const par::Comm& comm, std::size_t size,
                                                          ReduceOp op);
/// allreduce/schedule_run.cpp: any schedule-engine allreduce (`rd`,
/// `knomial:K`), its schedule built once by `build` on the duplicate.
std::unique_ptr<NonblockingAllreduce> make_schedule_allreduce(std::string name,
                                                              const par::Comm& comm,
                                                              std::size_t size, ReduceOp op,
                                                              const ScheduleBuilder& build);
/// allreduce/twolevel.cpp: `twolevel:ALG`; nodes by shared memory if
/// node_color < 0 on every rank, else by colour.
std::unique_ptr<NonblockingAllreduce> make_two_level(const AllreduceAlgorithm& algorithm,
                                                     const par::Comm& comm, std::size_t size,
                                                     ReduceOp op, int node_color);
/// allreduce/shm.cpp: `shm` and `twolevel:shm+ALG` over a shared-memory
/// window per node (nodes by shared memory if node_color < 0 on every rank,
/// else by colour). Throws core::InputError in the simulation build, and on
/// every rank if `shm` spans several nodes or a colour's ranks do not share
/// memory.
std::unique_ptr<NonblockingAllreduce> make_shm_allreduce(const AllreduceAlgorithm& algorithm,
                                                         const par::Comm& comm, std::size_t size,
                                                         ReduceOp op, int node_color);

}  // namespace asyncsolve::collectives::detail
