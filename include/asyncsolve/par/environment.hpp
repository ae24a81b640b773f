#pragma once
/// The MPI environment: initialisation with an explicit thread level.
#include <string>
#include <string_view>

namespace asyncsolve::par {

/// MPI thread support levels, in increasing order.
enum class ThreadLevel { single, funneled, serialized, multiple };

/// "single", "funneled", "serialized" or "multiple".
std::string_view to_string(ThreadLevel level) noexcept;

/// Owns MPI initialisation. Construct exactly one, in main, before any other
/// asyncsolve object; call finalize() at the end of main on every rank (the
/// destructor finalizes as a fallback). Not copyable or movable.
class Environment {
 public:
  Environment(int& argc, char**& argv, ThreadLevel requested);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  /// Collective: MPI_Finalize. Idempotent.
  void finalize();

  ThreadLevel requested() const noexcept { return requested_; }
  ThreadLevel provided() const noexcept { return provided_; }

  /// Terminates every rank with `exit_code` (MPI_Abort on the world).
  [[noreturn]] static void abort(int exit_code) noexcept;

 private:
  ThreadLevel requested_;
  ThreadLevel provided_ = ThreadLevel::single;
  bool finalized_ = false;
};

/// The MPI library's own version line (first line of MPI_Get_library_version).
std::string mpi_library_version();

/// MPI standard version implemented, e.g. "3.1".
std::string mpi_standard_version();

/// Name of the host this rank runs on.
std::string processor_name();

}  // namespace asyncsolve::par
