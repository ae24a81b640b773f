#pragma once
// The options of `asyncsolve solve` for a general sparse system: --matrix
// and its companions, and --assemble (issue 15). Pure: no MPI, no output.
#include <string>

#include "asyncsolve/sparse/partition.hpp"
#include "option_table.hpp"
#include "options_common.hpp"

namespace CLI {
class Option;
}  // namespace CLI

namespace asyncsolve::app {

/// --scale.
enum class Scale { none, unit_diagonal };
template <>
struct EnumNames<Scale> {
  static constexpr std::array<std::string_view, 2> names{"none", "unit-diagonal"};
};

/// What the solve takes for a sparse system, validated.
struct SparseConfig {
  std::string matrix_path;          ///< --matrix FILE.mtx; empty: a model problem
  std::string rhs_path;             ///< --rhs FILE.mtx; empty: b = A * 1
  std::string x0_path;              ///< --x0 FILE.mtx; empty: x0 = 0
  std::string write_solution_path;  ///< --write-solution FILE.mtx; empty: none
  sparse::PartitionSpec partition;  ///< --partition block|metis|scotch[:rows|:nnz]
  Scale scale = Scale::none;        ///< --scale
  bool force = false;     ///< --force: async/racy Jacobi although rho >= 1; CG on a nonsymmetric A
  bool assemble = false;  ///< --assemble: the model problem as a CSR matrix
  double matrix_memory_gib = 0.0;  ///< --matrix-memory: rank 0's reading limit (0: half its memory)

  /// True for --matrix or --assemble: the solve runs on a distributed CSR matrix.
  bool is_sparse() const { return !matrix_path.empty() || assemble; }
};

/// The sparse options as given (text where validation makes a type).
struct SparseArgs {
  SparseConfig values;
  std::string partition = "block";
  std::string scale = "none";
  CLI::Option* problem = nullptr;  ///< --problem, to refuse it beside --matrix
  CLI::Option* matrix_memory = nullptr;
};

/// Declares --matrix, --rhs, --x0, --write-solution, --partition, --scale,
/// --force, --assemble and --matrix-memory on `solve`.
void add_sparse_options(OptionTable& table, SparseArgs& args);

/// What the solve options around them mean for the sparse options.
struct SparseContext {
  bool lanczos = false;     ///< --method lanczos
  bool tfim = false;        ///< --problem tfim
  bool omp = false;         ///< --transport omp
  bool hybrid = false;      ///< --hybrid other than none (or not a mode at all)
  std::string problem;      ///< --problem as given
  std::string hybrid_text;  ///< --hybrid as given
  bool grid_given = false;  ///< --global, --local or --dims given
  std::string grid_option;  ///< the first of them given
  bool copy = false;
  double shift = 0.0;
  double offset = 0.0;
};

/// The validated sparse config. Throws core::InputError (one line) for a
/// combination that does not go (--matrix with --problem, --rhs without
/// --matrix, --matrix with --transport omp, ...) and for a partitioner this
/// build lacks.
SparseConfig validate_sparse(const SparseArgs& args, const SparseContext& context);

}  // namespace asyncsolve::app
