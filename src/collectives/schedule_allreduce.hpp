#pragma once
/// Allreduce algorithms on the schedule engine, and the parsing of
/// algorithm names (internal).
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "asyncsolve/collectives/nonblocking_allreduce.hpp"

namespace asyncsolve::collectives::detail {

/// A parsed --allreduce name.
struct AllreduceName {
  enum class Kind { tree, impi, mpi, rd, knomial, twolevel };
  Kind kind = Kind::mpi;
  std::string name;    ///< the whole name, e.g. "twolevel:knomial:3"
  int degree = 0;      ///< knomial: K
  std::string leader;  ///< twolevel: the leaders' algorithm, e.g. "knomial:3"
};

/// Parses `name`; throws core::InputError (check_allreduce_name's message)
/// if it is not a valid algorithm name.
AllreduceName parse_allreduce_name(std::string_view name);

/// Collective: `rd` or `knomial:K` on a duplicate of `comm`.
std::unique_ptr<NonblockingAllreduce> make_schedule_allreduce(const AllreduceName& name,
                                                              const par::Comm& comm,
                                                              std::size_t size, ReduceOp op);

/// Collective: `twolevel:ALG`; nodes by shared memory if node_color < 0 on
/// every rank, else by colour.
std::unique_ptr<NonblockingAllreduce> make_two_level(const AllreduceName& name,
                                                     const par::Comm& comm, std::size_t size,
                                                     ReduceOp op, int node_color);

}  // namespace asyncsolve::collectives::detail
