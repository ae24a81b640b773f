#pragma once
// The command line: the subcommands of `asyncsolve`, each with its options
// (solve_options, bench_allreduce_options, bench_stencil2d_options,
// model_hybrid_options), parsed and validated into typed configs. Pure: no
// MPI, no output.
#include <iosfwd>
#include <string>
#include <utility>
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
/// `asyncsolve --options-table` gives options_markdown() as help text.
Command parse_command_line(const std::vector<std::string>& args);

/// `asyncsolve --check-command-lines` (hidden; for asyncsolve-lab's suite
/// check): reads one command line per line of `in`, a JSON array of its
/// arguments after the program's name (["solve", "--method", "cg"]), and
/// writes one line per command line to `out`: "ok", or "error: " and the
/// one line parse_command_line refuses it with. Pure: no MPI. Returns 0.
int check_command_lines(std::istream& in, std::ostream& out);

/// What to try after running out of memory, for the one-line error of a
/// rank that did: " (try ...)", or "" when nothing the command takes helps.
std::string out_of_memory_hint(const Command& command);

/// Every option of every subcommand, as its table declares it (the
/// subcommand, "solve" or "bench allreduce", and the row; rows carry no
/// CLI11 option). For tests and the fuzzers' dictionaries.
std::vector<std::pair<std::string, OptionRow>> option_rows();

/// The option reference's table of every option (range, default, where it applies),
/// in Markdown, header included.
std::string options_markdown();

}  // namespace asyncsolve::app
