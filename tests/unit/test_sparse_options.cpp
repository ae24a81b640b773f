// The sparse options of `asyncsolve solve` (--matrix and its companions,
// --assemble): parsed into SparseConfig, and every combination refused with
// one line.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "app/cli.hpp"
#include "asyncsolve/core/error.hpp"
#include "cli_support.hpp"

using asyncsolve::app::Command;
using asyncsolve::app::parse_command_line;
using asyncsolve::app::Scale;
using asyncsolve::core::InputError;
namespace sparse = asyncsolve::sparse;

namespace {

using asyncsolve_test::error_of;
using asyncsolve_test::parse;

}  // namespace

TEST(SparseOptions, ParsedIntoTheConfig) {
  const Command c = parse({"solve", "--matrix", "a.mtx", "--rhs", "b.mtx", "--x0", "x.mtx",
                           "--write-solution", "s.mtx", "--scale", "unit-diagonal", "--force",
                           "--matrix-memory", "2.5", "--method", "pcg-overlap"});
  const auto& s = c.solve.sparse;
  EXPECT_EQ(s.matrix_path, "a.mtx");
  EXPECT_EQ(s.rhs_path, "b.mtx");
  EXPECT_EQ(s.x0_path, "x.mtx");
  EXPECT_EQ(s.write_solution_path, "s.mtx");
  EXPECT_EQ(s.scale, Scale::unit_diagonal);
  EXPECT_TRUE(s.force);
  EXPECT_DOUBLE_EQ(s.matrix_memory_gib, 2.5);
  EXPECT_EQ(s.partition.method, sparse::Partitioner::block);
  EXPECT_TRUE(s.is_sparse());
  EXPECT_TRUE(parse({"solve", "--problem", "laplace27", "--assemble", "--method", "jacobi"})
                  .solve.sparse.assemble);
  EXPECT_FALSE(parse({"solve"}).solve.sparse.is_sparse());
  if (sparse::partitioner_available(sparse::Partitioner::metis)) {
    const auto p =
        parse({"solve", "--matrix", "a.mtx", "--partition", "metis:nnz"}).solve.sparse.partition;
    EXPECT_EQ(p.method, sparse::Partitioner::metis);
    EXPECT_EQ(p.weight, sparse::PartWeight::nnz);
  } else {
    EXPECT_NE(error_of({"solve", "--matrix", "a.mtx", "--partition", "metis"})
                  .find("this build has no METIS"),
              std::string::npos);
  }
}

TEST(SparseOptions, CombinationsAreRefused) {
  const auto refused = [](std::vector<std::string> args, const std::string& what) {
    const std::string e = error_of(std::move(args));
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  refused({"solve", "--matrix", "a.mtx", "--problem", "ones"}, "expected one of them");
  refused({"solve", "--matrix", "a.mtx", "--global", "4,4,4"}, "--matrix with --global");
  refused({"solve", "--matrix", "a.mtx", "--local", "4,4,4"}, "--matrix with --local");
  refused({"solve", "--matrix", "a.mtx", "--dims", "1,1,1"}, "--matrix with --dims");
  refused({"solve", "--matrix", "a.mtx", "--assemble"}, "--assemble with --matrix");
  refused({"solve", "--rhs", "b.mtx"}, "--rhs b.mtx: applies to --matrix");
  refused({"solve", "--x0", "b.mtx"}, "--x0 b.mtx: applies to --matrix");
  refused({"solve", "--write-solution", "x.mtx"}, "applies to --matrix");
  refused({"solve", "--partition", "metis"}, "--partition metis: applies to --matrix");
  refused({"solve", "--matrix-memory", "1"}, "--matrix-memory: applies to --matrix");
  refused({"solve", "--matrix", "a.mtx", "--matrix-memory", "0"},
          "--matrix-memory 0: expected a positive number from 1e-9 to 1e6");
  refused({"solve", "--matrix", "a.mtx", "--partition", "parmetis"}, "--partition 'parmetis'");
  refused({"solve", "--matrix", "a.mtx", "--partition", "block:edges"}, "expected rows or nnz");
  refused({"solve", "--matrix", "a.mtx", "--scale", "diag"}, "--scale 'diag'");
  refused({"solve", "--scale", "unit-diagonal"}, "applies to --matrix or --assemble");
  refused({"solve", "--force"}, "--force: applies to --matrix or --assemble");
  refused({"solve", "--matrix", "a.mtx", "--transport", "omp"}, "--transport omp");
  refused({"solve", "--matrix", "a.mtx", "--hybrid", "funneled"}, "--hybrid funneled");
  refused({"solve", "--matrix", "a.mtx", "--method", "lanczos"}, "Lanczos");
  refused({"solve", "--matrix", "a.mtx", "--copy"}, "--copy");
  refused({"solve", "--matrix", "a.mtx", "--method", "cg", "--shift", "1"}, "--shift 1");
  refused({"solve", "--assemble", "--transport", "omp"}, "--assemble with --transport omp");
}

// Out of memory: the hint suits the run. With --matrix, the grid sizes
// (--local, --global) do not apply; more ranks, a partition balancing the
// non-zeros and --matrix-memory (rank 0 reads the whole matrix) do.
TEST(SparseOptions, OutOfMemoryHintSuitsTheMatrix) {
  const std::string matrix =
      asyncsolve::app::out_of_memory_hint(parse({"solve", "--matrix", "a.mtx", "--method", "cg"}));
  EXPECT_NE(matrix.find("more ranks"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find("--partition"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find("--matrix-memory"), std::string::npos) << matrix;
  EXPECT_EQ(matrix.find("--local"), std::string::npos) << matrix;
  const std::string grid =
      asyncsolve::app::out_of_memory_hint(parse({"solve", "--local", "8,8,8"}));
  EXPECT_NE(grid.find("--local"), std::string::npos) << grid;
  EXPECT_EQ(grid.find("--restart"), std::string::npos) << grid;
}

// The GMRES family's basis is what --restart sizes: the hint names it, with
// the vectors it keeps (fgmres twice as many).
TEST(SparseOptions, OutOfMemoryHintNamesTheRestartOfTheGmresFamily) {
  const std::string fgmres = asyncsolve::app::out_of_memory_hint(
      parse({"solve", "--local", "8,8,8", "--method", "fgmres", "--restart", "1000"}));
  EXPECT_NE(fgmres.find("a smaller --restart (1000 keeps 2001 vectors of the basis)"),
            std::string::npos)
      << fgmres;
  const std::string gmres = asyncsolve::app::out_of_memory_hint(
      parse({"solve", "--matrix", "a.mtx", "--method", "gmres", "--restart", "40"}));
  EXPECT_NE(gmres.find("--restart (40 keeps 41 vectors"), std::string::npos) << gmres;
}
