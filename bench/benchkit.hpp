#pragma once
// The C++ half of the benchmark kit (bench/benchkit.py is the Python half):
// what the bench/ drivers share beyond the library's statistics
// (core/statistics.hpp), rank reductions (par/stats.hpp) and documents
// (core/document.hpp, par/document.hpp): the command line's common options
// and its errors, and main() with its start of MPI and its exit codes.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/environment.hpp"

namespace asyncsolve::bench {

/// Gives `app` the options every driver has: --version, printing
/// "PROGRAM (asyncsolve VERSION, git COMMIT)", and defaults shown in --help.
void add_common_options(CLI::App& app, std::string_view program);

/// Parses the command line into the options of `app`. Returns the text of
/// --help or --version when one was asked for (print it, run nothing), else
/// nothing. Throws core::InputError "CLI11'S MESSAGE (see --help)" for a
/// command line CLI11 refuses. Pure: call it before MPI starts.
std::optional<std::string> parse_options(CLI::App& app, int argc, char** argv);

/// How a driver starts and what it says when it fails.
struct Driver {
  std::string_view program;       ///< the name its messages start with, e.g. "beff"
  par::ThreadLevel thread_level;  ///< asked of MPI_Init_thread
  std::string_view memory_hint;   ///< after "out of memory", e.g. "(try a smaller --grid)"
};

/// What a driver's run gets: the world (errors returned, not fatal), the
/// MPI environment and the command line as given.
struct DriverRun {
  const par::Comm& world;
  const par::Environment& env;
  const std::vector<std::string>& args;
};

/// The main() of a bench/ driver. Calls `parse` before MPI starts (pure and
/// identical on every rank: it fills the driver's configuration, throws
/// core::InputError for bad input, or returns the text of --help/--version),
/// starts MPI at the driver's thread level, then prints that text on rank 0
/// or calls `run`, whose value is the exit code. Exceptions become exit codes
/// alike in every driver:
///  - core::InputError (found identically on every rank): one line
///    "PROGRAM: error: WHY" on stderr from rank 0; exit 2;
///  - core::RuntimeFailure (agreed on by every rank, e.g. a failed
///    validation): the same line; exit 4;
///  - anything else (rank-local: out of memory, an MPI error): the failing
///    rank prints "PROGRAM: rank R: error: WHY" and, since other ranks may
///    wait for it, MPI_Abort ends every rank with 4 (on one rank: exit 4).
/// MPI is finalized before it returns.
int driver_main(int argc, char** argv, const Driver& driver,
                const std::function<std::optional<std::string>()>& parse,
                const std::function<int(const DriverRun&)>& run);

}  // namespace asyncsolve::bench
