#pragma once
/// Bookkeeping shared by the NonblockingAllreduce implementations (internal).
#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>

#include "asyncsolve/collectives/nonblocking_allreduce.hpp"

namespace asyncsolve::collectives::detail {

/// True once MPI_Finalize has been called (destructors must not call MPI then).
bool mpi_finalized();

/// dst[i] = a[i] op b[i] for i < n (dst may alias a or b). min and max keep
/// the left operand on ties, so the order of the operands matters for
/// signed zeros: callers that need the same bits on several ranks pass the
/// operands in the same order there.
void combine(const double* a, const double* b, double* dst, std::size_t n, ReduceOp op);

/// MPI_SUM, MPI_MIN or MPI_MAX.
MPI_Op to_mpi_op(ReduceOp op);

/// Copies `values` to `out` (which may be `values` itself) as the operand of
/// MPI's own reduction with to_mpi_op(op): for min and max, zeros enter as
/// +0. MPI's MPI_MIN and MPI_MAX may keep either of two operands that compare
/// equal, and MPICH keeps the one of the rank doing the combine, so +0 on one
/// rank and -0 on another gave different bits on different ranks; with every
/// zero +0, any order gives the same bits (NaN contributions excepted).
void copy_for_mpi(std::span<const double> values, double* out, ReduceOp op);

/// Collective over `comm`: the node communicator of the two-level schemes,
/// the ranks that share memory (node_color < 0 on every rank) or those of one
/// colour, with MPI_ERRORS_RETURN.
par::Comm split_node(const par::Comm& comm, int node_color);

/// Collective over `comm`: on the node leaders (`is_leader`), `algorithm`
/// built over a communicator of the leaders, which lives only as long as it
/// takes the algorithm to duplicate it; null elsewhere.
std::unique_ptr<NonblockingAllreduce> make_leaders_allreduce(const par::Comm& comm, bool is_leader,
                                                             const AllreduceAlgorithm& algorithm,
                                                             std::size_t size, ReduceOp op);

/// Debug builds: collective over `comm`; throws std::logic_error on every
/// rank if the ranks passed different sizes or operations (an MPI_Allreduce
/// of (size, -size, op, -op) with MPI_MAX). Release builds: does nothing.
void check_same_arguments(const par::Comm& comm, std::size_t size, ReduceOp op);

/// The owned duplicate, the size and operation, the round counter, the
/// precondition checks, and test()/wait() over one progress step: what every
/// implementation shares. Not copyable (it owns requests and buffers in flight).
class NonblockingBase : public NonblockingAllreduce {
 public:
  NonblockingBase(const par::Comm& comm, std::size_t size, ReduceOp op)
      : comm_(comm.dup()), size_(size), op_(op) {}
  NonblockingBase(const NonblockingBase&) = delete;
  NonblockingBase& operator=(const NonblockingBase&) = delete;
  bool test(std::span<double> result) final {
    check_complete(result);
    if (!advance(false)) return false;
    finish(result);
    return true;
  }
  void wait(std::span<double> result) final {
    check_complete(result);
    advance(true);
    finish(result);
  }
  std::size_t size() const override { return size_; }
  ReduceOp op() const override { return op_; }
  long completed() const override { return completed_; }
  const par::Comm& comm() const override { return comm_; }
  void free() override {
    if (active()) throw std::logic_error("NonblockingAllreduce::free with a reduction active");
    free_resources();
    comm_.free();
  }

 protected:
  /// Collective part of free() beyond the duplicate (other communicators).
  virtual void free_resources() {}
  /// Moves the active reduction on as far as its completed requests allow
  /// (blocking: until it completes). True once it has completed: no request
  /// left, !active(), and its result in reduced().
  virtual bool advance(bool blocking) = 0;
  /// The result of the reduction advance() completed (size() doubles).
  virtual std::span<const double> reduced() const = 0;
  void check_start(std::span<const double> values) const {
    if (active()) throw std::logic_error("NonblockingAllreduce::start with a reduction active");
    if (comm_.get() == MPI_COMM_NULL)
      throw std::logic_error("NonblockingAllreduce used after free");
    check_size(values.size());
  }
  void check_complete(std::span<double> result) const {
    if (!active()) throw std::logic_error("NonblockingAllreduce: no reduction active");
    check_size(result.size());
  }
  int count() const { return static_cast<int>(size_); }

  par::Comm comm_;
  std::size_t size_;
  ReduceOp op_;
  long completed_ = 0;

 private:
  /// Writes the completed round's result to `result` and counts the round.
  void finish(std::span<double> result) {
    assert(!active() && outstanding_requests() == 0);
    const std::span<const double> r = reduced();
    std::copy(r.begin(), r.end(), result.begin());
    ++completed_;
  }
  void check_size(std::size_t n) const {
    if (n != size_)
      throw std::logic_error(
          fmt::format("NonblockingAllreduce: span of {} doubles, expected {}", n, size_));
  }
};

}  // namespace asyncsolve::collectives::detail
