// `mpi`: the blocking MPI_Allreduce behind the non-blocking interface.
#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <stdexcept>
#include <vector>

#include "../algorithms.hpp"
#include "../nonblocking_base.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::collectives::detail {
namespace {

/// The blocking reduction behind the non-blocking interface: start() runs
/// MPI_Allreduce to completion and test() returns the result at once. What
/// solvers use when nothing should overlap (PCG-Algorithm1 and 2 of paper 003).
class BlockingAllreduce final : public NonblockingBase {
 public:
  BlockingAllreduce(const par::Comm& comm, std::size_t size, ReduceOp op)
      : NonblockingBase(comm, size, op), result_(size) {}
  std::string_view name() const override { return "mpi"; }
  bool active() const override { return active_; }
  int outstanding_requests() const override { return 0; }

  void start(std::span<const double> values) override {
    check_start(values);
    copy_for_mpi(values, result_.data(), op_);
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, result_.data(), count(), MPI_DOUBLE, to_mpi_op(op_),
                                 comm_.get()),
                   "MPI_Allreduce");
    active_ = true;
  }

 private:
  /// Complete since start(): test() succeeds at once.
  bool advance(bool /*blocking*/) override {
    active_ = false;
    return true;
  }
  std::span<const double> reduced() const override { return result_; }

  std::vector<double> result_;
  bool active_ = false;
};

}  // namespace

std::unique_ptr<NonblockingAllreduce> make_blocking_allreduce(const par::Comm& comm,
                                                              std::size_t size, ReduceOp op) {
  return std::make_unique<BlockingAllreduce>(comm, size, op);
}

}  // namespace asyncsolve::collectives::detail
