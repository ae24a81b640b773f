#include "asyncsolve/collectives/allreduce.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::collectives {
namespace {

/// Blocking MPI_Allreduce (paper 000 §3.1.1's global residual).
class MpiAllreduce final : public Allreduce {
 public:
  explicit MpiAllreduce(const par::Comm& comm) : comm_(comm.get()) {}
  std::string_view name() const override { return "mpi"; }
  void reduce(std::span<double> values, ReduceOp op) override {
    const MPI_Op mpi_op = op == ReduceOp::sum ? MPI_SUM : op == ReduceOp::min ? MPI_MIN : MPI_MAX;
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                                 MPI_DOUBLE, mpi_op, comm_),
                   "MPI_Allreduce");
  }

 private:
  MPI_Comm comm_;
};

}  // namespace

std::vector<std::string> allreduce_names() { return {"mpi"}; }

std::unique_ptr<Allreduce> make_allreduce(std::string_view name, const par::Comm& comm) {
  if (name == "mpi") return std::make_unique<MpiAllreduce>(comm);
  throw core::InputError(fmt::format("--allreduce '{}': expected one of {}", name,
                                     fmt::join(allreduce_names(), ", ")));
}

}  // namespace asyncsolve::collectives
