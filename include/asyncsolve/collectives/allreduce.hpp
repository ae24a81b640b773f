#pragma once
/// The reduction interface every solver uses for global sums.
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::collectives {

/// Element-wise reduction operations.
enum class ReduceOp { sum, min, max };

/// Reduces vectors of doubles over a communicator. Implementations differ in
/// algorithm and in whether the reduction can be overlapped with other work.
class Allreduce {
 public:
  virtual ~Allreduce() = default;
  /// Algorithm name as given to --allreduce.
  virtual std::string_view name() const = 0;
  /// Collective: replaces `values` on every rank by their element-wise
  /// reduction over all ranks. Blocks until the result is known.
  virtual void reduce(std::span<double> values, ReduceOp op) = 0;
  /// Collective: the sum of one value over all ranks.
  double sum(double value) {
    reduce({&value, 1}, ReduceOp::sum);
    return value;
  }
  /// Collective: the maximum of one value over all ranks.
  double max(double value) {
    reduce({&value, 1}, ReduceOp::max);
    return value;
  }
};

/// The plain names accepted by make_allreduce: {"mpi", "impi", "tree",
/// "rd"}; `knomial:K` and `twolevel:ALG` are accepted too (see
/// check_allreduce_name in nonblocking_allreduce.hpp).
std::vector<std::string> allreduce_names();

/// Builds the named algorithm over `comm`, which must outlive it. Throws
/// InputError for an unknown name. `mpi` is MPI_Allreduce; every other name
/// is the non-blocking algorithm of that name, built, started, waited for and
/// freed inside each reduce() (collective; a communicator duplicate per call).
std::unique_ptr<Allreduce> make_allreduce(std::string_view name, const par::Comm& comm);

}  // namespace asyncsolve::collectives
