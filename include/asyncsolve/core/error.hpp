#pragma once
/// Errors and exit codes shared by every layer of asyncsolve.
#include <stdexcept>
#include <string>

namespace asyncsolve::core {

/// Process exit codes of the `asyncsolve` command (documented in the README).
enum class ExitCode : int {
  success = 0,         ///< converged, or the command did what was asked
  bad_input = 2,       ///< options or files the user gave are wrong
  not_converged = 3,   ///< the solver stopped before reaching the tolerance, or broke down
  runtime_failure = 4  ///< MPI/SHMEM error, timeout, or another failure at run time
};

/// Bad user input. Thrown identically on every rank (all ranks see the same
/// argv), so every rank can stop together; the message names the value and
/// what was expected, without a trailing newline.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A failure at run time that is not the user's input (I/O, communication).
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Integer value of an exit code, for `return` from main.
constexpr int to_int(ExitCode code) noexcept { return static_cast<int>(code); }

/// Human-readable name of an exit code ("bad input", ...).
const char* describe(ExitCode code) noexcept;

}  // namespace asyncsolve::core
