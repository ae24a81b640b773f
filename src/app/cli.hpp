#pragma once
// The command line: the subcommands of `asyncsolve`, each with its options
// (solve_options, bench_allreduce_options, bench_stencil2d_options,
// model_hybrid_options), parsed and validated into typed configs. Pure: no
// MPI, no output.
#include <string>
#include <vector>

#include "bench_allreduce_options.hpp"
#include "bench_stencil2d_options.hpp"
#include "model_hybrid_options.hpp"
#include "solve_options.hpp"

namespace asyncsolve::app {

/// What `asyncsolve info` takes.
struct InfoConfig {};

/// A parsed command line.
struct Command {
  enum class Kind { help, version, solve, info, bench_allreduce, bench_stencil2d, model_hybrid };
  Kind kind = Kind::help;
  std::string text;  ///< help or version text to print
  SolveConfig solve;
  InfoConfig info;
  BenchAllreduceConfig bench_allreduce;
  BenchStencil2dConfig bench_stencil2d;
  ModelHybridConfig model_hybrid;
};

/// Parses and validates `args` (args[0] is the program name). Throws
/// core::InputError with one line naming the bad value and what was expected.
Command parse_command_line(const std::vector<std::string>& args);

}  // namespace asyncsolve::app
