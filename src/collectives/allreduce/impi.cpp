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
    copy_for_mpi(values, send_.data(), op_);
    par::check_mpi(MPI_Iallreduce(send_.data(), recv_.data(), count(), MPI_DOUBLE, to_mpi_op(op_),
                                  comm_.get(), &request_),
                   "MPI_Iallreduce");
  }

 private:
  bool advance(bool blocking) override {
    if (blocking) {
      par::check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
      return true;
    }
    int done = 0;
    par::check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }
  std::span<const double> reduced() const override { return recv_; }

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
