// The options of solve --method lanczos --problem tfim (src/app/spin_options.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/cli.hpp"
#include "asyncsolve/core/error.hpp"

using asyncsolve::app::Command;
using asyncsolve::app::parse_command_line;
using asyncsolve::core::InputError;

namespace {

Command parse(std::vector<std::string> args) {
  args.insert(args.begin(), "asyncsolve");
  args.insert(args.begin() + 1, {"solve", "--method", "lanczos", "--problem", "tfim"});
  return parse_command_line(args);
}

std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(SpinOptions, Defaults) {
  const Command c = parse({});
  ASSERT_EQ(c.kind, Command::Kind::solve);
  EXPECT_TRUE(asyncsolve::app::is_lanczos(c.solve));
  EXPECT_FALSE(asyncsolve::app::is_krylov(c.solve));
  EXPECT_EQ(c.solve.spin.sites, 16);
  EXPECT_EQ(c.solve.spin.coupling, 1.0);
  EXPECT_EQ(c.solve.spin.field, 1.0);
  EXPECT_EQ(c.solve.spin.lattice, asyncsolve::app::Lattice::chain);
  EXPECT_EQ(c.solve.spin.buffers, 2);
  EXPECT_EQ(c.solve.spin.chunk, 32768);
  EXPECT_EQ(c.solve.tol, 1e-10);
  EXPECT_EQ(c.solve.transport, asyncsolve::app::Transport::mpi);
  EXPECT_EQ(c.solve.spin.rma_sync, asyncsolve::app::RmaSync::fence);
  EXPECT_EQ(c.solve.allreduce, asyncsolve::collectives::AllreduceAlgorithm{});  // auto: mpi
}

TEST(SpinOptions, SquareLatticeSetsTheSites) {
  const Command c = parse({"--lattice", "square:3x4", "--tol", "1e-6", "--transport", "rma"});
  EXPECT_EQ(c.solve.spin.sites, 12);
  EXPECT_EQ(c.solve.spin.lattice, asyncsolve::app::Lattice::square);
  EXPECT_EQ(c.solve.spin.length, 3);
  EXPECT_EQ(c.solve.spin.width, 4);
  EXPECT_EQ(c.solve.tol, 1e-6);
  EXPECT_EQ(parse({"--lattice", "square:3x4", "--sites", "12"}).solve.spin.sites, 12);
}

TEST(SpinOptions, BadInputNamesTheValue) {
  EXPECT_NE(error_of({"--sites", "1"}).find("--sites 1"), std::string::npos);
  EXPECT_NE(error_of({"--sites", "35"}).find("at most 34"), std::string::npos);
  EXPECT_NE(error_of({"--buffers", "1"}).find("--buffers 1"), std::string::npos);
  EXPECT_NE(error_of({"--chunk", "0"}).find("--chunk 0"), std::string::npos);
  EXPECT_NE(error_of({"--rma-sync", "lock"}).find("lock"), std::string::npos);
  EXPECT_NE(error_of({"--lattice", "square:3"}).find("square:3"), std::string::npos);
  EXPECT_NE(error_of({"--lattice", "square:3x4", "--sites", "10"}).find("--sites 10"),
            std::string::npos);
  EXPECT_NE(error_of({"--transport", "omp"}).find("omp"), std::string::npos);
  EXPECT_NE(error_of({"--max-iters", "0"}).find("--max-iters 0"), std::string::npos);
  EXPECT_NE(error_of({"--global", "8,8,8"}).find("--sites"), std::string::npos);
}
