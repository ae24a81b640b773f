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

/// A reduction algorithm, as --allreduce names it (parse_allreduce turns the
/// name into this; name() turns it back). The algorithms are described in
/// nonblocking_allreduce.hpp and docs/design.md ("Collectives").
struct AllreduceAlgorithm {
  enum class Kind { mpi, impi, tree, rd, knomial, twolevel, shm };
  Kind kind = Kind::mpi;
  int degree = 0;           ///< knomial: K >= 2
  Kind leader = Kind::mpi;  ///< twolevel: the leaders' algorithm (mpi, impi, rd or knomial)
  int leader_degree = 0;    ///< twolevel with a knomial leader: its K
  /// twolevel: the node level over a shared-memory window (twolevel:shm+ALG)
  /// instead of binomial messages (twolevel:ALG).
  bool shm_node = false;
  /// The canonical name: "mpi", "knomial:3", "twolevel:knomial:3",
  /// "twolevel:shm+rd", ...
  std::string name() const;
  /// twolevel: the leaders' algorithm on its own.
  AllreduceAlgorithm leader_algorithm() const;
  bool operator==(const AllreduceAlgorithm&) const = default;
};

/// Local: the algorithm `name` stands for: a plain name (mpi, impi, tree,
/// rd, shm), `knomial:K` with K a decimal integer >= 2 (a K above the rank
/// count acts as the rank count: one flat level), or `twolevel:ALG` or
/// `twolevel:shm+ALG` with ALG one of rd, knomial:K, mpi, impi. Throws
/// core::InputError with the one-line message "--allreduce 'x': expected one
/// of mpi, impi, tree, rd, shm, knomial:K (K >= 2), twolevel:ALG or
/// twolevel:shm+ALG (ALG: rd, knomial:K, mpi, impi); K at most 1024"
/// otherwise.
AllreduceAlgorithm parse_allreduce(std::string_view name);

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
/// "rd", "shm"}; `knomial:K`, `twolevel:ALG` and `twolevel:shm+ALG` are
/// accepted too (see check_allreduce_name in nonblocking_allreduce.hpp).
std::vector<std::string> allreduce_names();

/// Builds the named algorithm over `comm`, which must outlive it. Throws
/// InputError for an unknown name. `mpi` is MPI_Allreduce; every other name
/// is the non-blocking algorithm of that name, built, started, waited for and
/// freed inside each reduce() (collective; a communicator duplicate per call).
std::unique_ptr<Allreduce> make_allreduce(std::string_view name, const par::Comm& comm);
/// The same for a parsed algorithm.
std::unique_ptr<Allreduce> make_allreduce(const AllreduceAlgorithm& algorithm,
                                          const par::Comm& comm);

}  // namespace asyncsolve::collectives
