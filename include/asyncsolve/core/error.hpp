#pragma once
/// Errors and exit codes shared by every layer of asyncsolve.
#include <stdexcept>
#include <string>

namespace asyncsolve::core {

/// Process exit codes of the `asyncsolve` command (documented in docs/results.md, "Exit codes").
enum class ExitCode : int {
  success = 0,         ///< converged, or the command did what was asked
  bad_input = 2,       ///< options or files the user gave are wrong
  not_converged = 3,   ///< the solver stopped before reaching the tolerance, or broke down
  runtime_failure = 4  ///< MPI/SHMEM error, timeout, or another failure at run time
};

/// Bad user input. Thrown identically on every rank (all ranks see the same
/// argv), so every rank can stop together; the message names the value and
/// what was expected, without a trailing newline. Control characters in the
/// message (a newline or an escape sequence the user typed) are written as
/// \n, \t or \xHH, so the message is always one line.
class InputError : public std::runtime_error {
 public:
  /// Holds `message` as one line (control characters escaped).
  explicit InputError(const std::string& message);
  /// Holds `message` as one line (control characters escaped).
  explicit InputError(const char* message) : InputError(std::string(message)) {}
};

/// `text` with control characters written as \n, \t or \xHH: one line.
std::string one_line(const std::string& text);

/// A failure at run time that is not the user's input (I/O, communication).
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A runtime failure decided identically on every rank (from reduced or
/// replicated values, e.g. LAPACK on the same tridiagonal matrix
/// everywhere): every rank throws it alike, so all can stop together
/// without MPI_Abort; rank 0 reports it once, and the exit code is
/// runtime_failure.
class CollectiveFailure : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

/// A breakdown decided identically on every rank before or outside an
/// iteration (a subdomain's factorisation failed on some rank, agreed by a
/// reduction): every rank throws it alike; rank 0 reports it once and the
/// exit code is not_converged.
class CollectiveBreakdown : public CollectiveFailure {
 public:
  using CollectiveFailure::CollectiveFailure;
};

/// Integer value of an exit code, for `return` from main.
constexpr int to_int(ExitCode code) noexcept { return static_cast<int>(code); }

/// Human-readable name of an exit code ("bad input", ...).
const char* describe(ExitCode code) noexcept;

}  // namespace asyncsolve::core
