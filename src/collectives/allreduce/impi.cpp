// `impi`: MPI_Iallreduce on a duplicate of the caller's communicator.
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

/// MPI_Iallreduce; test() is MPI_Test.
class ImpiAllreduce final : public NonblockingBase {
 public:
  ImpiAllreduce(const par::Comm& comm, std::size_t size, ReduceOp op)
      : NonblockingBase(comm, size, op), send_(size), recv_(size) {}
  ImpiAllreduce(const ImpiAllreduce&) = delete;
  ImpiAllreduce& operator=(const ImpiAllreduce&) = delete;
  ~ImpiAllreduce() override {
    assert(!active() && "NonblockingAllreduce destroyed with a reduction active");
    // A collective request cannot be cancelled: complete it (this waits for
    // the other ranks to join the reduction).
    if (active() && !mpi_finalized()) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }

  std::string_view name() const override { return "impi"; }
  bool active() const override { return request_ != MPI_REQUEST_NULL; }
  int outstanding_requests() const override { return active() ? 1 : 0; }

  void start(std::span<const double> values) override {
    check_start(values);
    std::copy(values.begin(), values.end(), send_.begin());
    par::check_mpi(MPI_Iallreduce(send_.data(), recv_.data(), count(), MPI_DOUBLE, to_mpi_op(op_),
                                  comm_.get(), &request_),
                   "MPI_Iallreduce");
  }

  bool test(std::span<double> result) override {
    check_complete(result);
    int done = 0;
    par::check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done == 0) return false;
    finish(result);
    return true;
  }

  void wait(std::span<double> result) override {
    check_complete(result);
    par::check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
    finish(result);
  }

 private:
  void finish(std::span<double> result) {
    std::copy(recv_.begin(), recv_.end(), result.begin());
    ++completed_;
  }

  std::vector<double> send_;
  std::vector<double> recv_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace

std::unique_ptr<NonblockingAllreduce> make_impi_allreduce(const par::Comm& comm, std::size_t size,
                                                          ReduceOp op) {
  return std::make_unique<ImpiAllreduce>(comm, size, op);
}

}  // namespace asyncsolve::collectives::detail
