#include "asyncsolve/collectives/allreduce.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <stdexcept>

#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "nonblocking_base.hpp"

namespace asyncsolve::collectives {
namespace {

/// Blocking MPI_Allreduce (paper 000 §3.1.1's global residual).
class MpiAllreduce final : public Allreduce {
 public:
  explicit MpiAllreduce(const par::Comm& comm) : comm_(comm.get()) {}
  std::string_view name() const override { return "mpi"; }
  void reduce(std::span<double> values, ReduceOp op) override {
    if (values.size() > static_cast<std::size_t>(INT_MAX))
      throw std::length_error("MPI_Allreduce of more doubles than an MPI count can hold");
    detail::copy_for_mpi(values, values.data(), op);  // zeros as +0 for min and max
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                                 MPI_DOUBLE, detail::to_mpi_op(op), comm_),
                   "MPI_Allreduce");
  }

 private:
  MPI_Comm comm_;
};

/// Any non-blocking algorithm used blocking: every reduce() builds the
/// algorithm for that size and op, starts it, waits and frees it, all
/// collective. Simple and correct, at the price of a communicator duplicate
/// (and the schedule's construction) per call; solvers that reduce often
/// keep a NonblockingAllreduce instead.
class NonblockingAdapter final : public Allreduce {
 public:
  NonblockingAdapter(const AllreduceAlgorithm& algorithm, const par::Comm& comm)
      : algorithm_(algorithm), name_(algorithm.name()), comm_(par::Comm::view(comm.get())) {}
  std::string_view name() const override { return name_; }
  void reduce(std::span<double> values, ReduceOp op) override {
    auto reduction = make_nonblocking_allreduce(algorithm_, comm_, values.size(), op);
    reduction->start(values);
    reduction->wait(values);
    reduction->free();
  }

 private:
  AllreduceAlgorithm algorithm_;
  std::string name_;
  par::Comm comm_;
};

}  // namespace

std::vector<std::string> allreduce_names() { return {"mpi", "impi", "tree", "rd", "shm"}; }

std::unique_ptr<Allreduce> make_allreduce(std::string_view name, const par::Comm& comm) {
  return make_allreduce(parse_allreduce(name), comm);  // InputError for a bad name
}

std::unique_ptr<Allreduce> make_allreduce(const AllreduceAlgorithm& algorithm,
                                          const par::Comm& comm) {
  if (algorithm.kind == AllreduceAlgorithm::Kind::mpi) return std::make_unique<MpiAllreduce>(comm);
  return std::make_unique<NonblockingAdapter>(algorithm, comm);
}

}  // namespace asyncsolve::collectives
