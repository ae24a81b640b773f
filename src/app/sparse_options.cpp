#include "sparse_options.hpp"

#include <utility>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"

namespace asyncsolve::app {

using core::InputError;

void add_sparse_options(OptionTable& t, SparseArgs& a) {
  SparseConfig& c = a.values;
  // "--matrix FILE" in a context: a matrix file was given (solve_context).
  const Applies with_matrix = applies_when({{"--matrix", {"FILE"}}});
  const Applies on_csr = Applies{{{{"--matrix", {"FILE"}}}, {{"--assemble", {"given"}}}}};
  t.text("--matrix", c.matrix_path,
         {.help = "Solve A x = b for the square matrix of this Matrix Market file (read on "
                  "rank 0, distributed by rows; instead of --problem)",
          .sample = "a.mtx",
          .value = "FILE",
          .limits = "a regular file within --matrix-memory"});
  t.text("--rhs", c.rhs_path,
         {.help = "--matrix: b from this Matrix Market file (N x 1); default b = A * 1, whose "
                  "solution is all ones",
          .applies = with_matrix,
          .sample = "b.mtx",
          .value = "FILE"});
  t.text("--x0", c.x0_path,
         {.help = "--matrix: the initial guess from this file (default 0)",
          .applies = with_matrix,
          .sample = "x0.mtx",
          .value = "FILE"});
  t.path("--write-solution", c.write_solution_path,
         {.help = "--matrix: write x to this Matrix Market file (N x 1, the file's row order)",
          .applies = with_matrix,
          .sample = "x.mtx"});
  t.text("--partition", a.partition,
         {.help = "--matrix: block (contiguous rows), metis or scotch (graph partitioning of "
                  "the symmetrised pattern); :rows or :nnz balances rows or non-zeros",
          .applies = with_matrix,
          .sample = "block:nnz",
          .value = "NAME[:rows|:nnz]"});
  t.choice("--scale", a.scale, {"none", "unit-diagonal"},
           {.help = "--matrix or --assemble: none, or unit-diagonal (solve D^-1/2 A D^-1/2 y = "
                    "D^-1/2 b, x = D^-1/2 y)",
            .applies = on_csr});
  t.flag("--force", c.force,
         {.help = "Run async or racy Jacobi even when rho(|D^-1 (A - D)|) >= 1 (no convergence "
                  "guarantee), and the CG family on a matrix that is not symmetric",
          .applies = on_csr});
  t.flag("--assemble", c.assemble,
         {.help = "Assemble the model problem (ones, plume, laplace27) as a distributed CSR "
                  "matrix and solve with the sparse operator"});
  // At least a byte (a GiB is 2^30 bytes); 0, the "not given" default, is no size.
  a.matrix_memory = t.number("--matrix-memory", c.matrix_memory_gib, {1e-9, 1e6},
                             {.help = "--matrix: GiB rank 0 may use to read the file",
                              .applies = with_matrix,
                              .shown_default = "half of rank 0's node memory",
                              .sample = "2"});
}

SparseConfig validate_sparse(const SparseArgs& a, const SparseContext& x) {
  SparseConfig c = a.values;
  const bool matrix = !c.matrix_path.empty();
  const auto check = [](bool refused, const std::string& message) {
    if (refused) throw InputError(message);
  };
  check(matrix && given(a.problem),
        fmt::format("--matrix with --problem {}: expected one of them (a matrix file or a model "
                    "problem)",
                    x.problem));
  check(matrix && x.grid_given, fmt::format("--matrix with {}: the matrix sets the size, "
                                            "expected no {}",
                                            x.grid_option, x.grid_option));
  check(matrix && c.assemble,
        "--assemble with --matrix: --assemble builds a model problem's "
        "matrix, expected one of them");
  for (const auto& [option, value] :
       {std::pair<std::string_view, const std::string&>{"--rhs", c.rhs_path},
        {"--x0", c.x0_path},
        {"--write-solution", c.write_solution_path}}) {
    check(!matrix && !value.empty(),
          fmt::format("{} {}: applies to --matrix, expected --matrix FILE.mtx", option, value));
  }
  check(
      !matrix && a.partition != sparse::name(sparse::Partitioner::block),
      fmt::format("--partition {}: applies to --matrix, expected --matrix FILE.mtx", a.partition));
  check(!matrix && given(a.matrix_memory),
        "--matrix-memory: applies to --matrix, expected --matrix FILE.mtx");
  c.scale = parse_one_of<Scale>("--scale", a.scale);
  check(!c.is_sparse() && c.scale != Scale::none,
        fmt::format("--scale {}: applies to --matrix or --assemble", a.scale));
  check(!c.is_sparse() && c.force,
        "--force: applies to --matrix or --assemble (the model "
        "problems always satisfy rho < 1 and are symmetric)");
  if (!c.is_sparse()) return c;
  // An unknown partitioner, or one this build lacks: exit 2.
  if (matrix) c.partition = sparse::parse_partition(a.partition);
  const std::string what = matrix ? "--matrix" : "--assemble";
  check(x.lanczos || x.tfim,
        fmt::format("{} with {}: Lanczos runs on the TFIM Hamiltonian, expected another method",
                    what, x.lanczos ? "--method lanczos" : "--problem tfim"));
  check(x.omp, fmt::format("{} with --transport omp: OpenMP Jacobi runs on the "
                           "structured problems, expected mpi, rma or shmem",
                           what));
  check(x.hybrid, fmt::format("{} with --hybrid {}: the hybrid schemes run on the "
                              "structured problems, expected --hybrid none",
                              what, x.hybrid_text));
  check(x.copy, fmt::format("{} with --copy: the sparse Jacobi and Schwarz iterations swap "
                            "their vectors, expected no --copy",
                            what));
  check(matrix && x.shift != 0.0,
        fmt::format("--shift {} with --matrix: expected 0 (add the shift to the matrix)", x.shift));
  check(matrix && x.offset != 0.0,
        fmt::format("--offset {} with --matrix: expected 0 (a plume parameter)", x.offset));
  return c;
}

}  // namespace asyncsolve::app
