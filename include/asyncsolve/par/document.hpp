#pragma once
/// What every result document shares beyond its header (core/document.hpp),
/// for the asyncsolve commands and the bench/ drivers alike: where the run
/// happened (the `environment` object and the provenance line printed first),
/// and writing the document (the --json path checked on every rank before
/// any work, then written atomically by rank 0).
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/environment.hpp"

namespace asyncsolve::par {

/// Where a run happens: the `environment` object of every document.
struct RunEnvironment {
  std::string mpi_library;  ///< mpi_library_version()
  std::string mpi_version;  ///< mpi_standard_version()
  int ranks = 1;
  int threads = 1;  ///< OpenMP threads per rank (1 unless the program uses more; it sets it)
  std::string thread_level_requested;
  std::string thread_level;
  bool shmem = false;    ///< OpenSHMEM started
  std::string hostname;  ///< rank 0's, where the description is made on rank 0
  int cores = 1;         ///< hardware threads of this rank's node
  /// Open MPI's one-sided component choice, OMPI_MCA_osc as MPI started
  /// ("default" when unset); empty under another MPI.
  std::string mpi_osc;
  std::string cpu_model;  ///< cpu_model() of the describing rank; empty when not known
};

/// Local: the processor's model name as the operating system reports it
/// (Linux: /proc/cpuinfo's "model name", else its "cpu" or "Processor"
/// line); empty where none is found.
std::string cpu_model();

/// Local: RunEnvironment::mpi_osc as this process sees it now.
std::string mpi_osc_choice();

/// Local: the environment of a run over `comm` (MPI library, thread level,
/// host, cores), with threads = 1.
RunEnvironment describe_environment(const Comm& comm, const Environment& env);

/// The `environment` object: mpi_library, mpi_version, ranks, threads,
/// thread_level_requested, thread_level, shmem, hostname, cores, mpi_osc
/// (null under an MPI other than Open MPI), cpu_model (null when not known).
nlohmann::ordered_json environment_json(const RunEnvironment& env);

/// The provenance line a program prints first (without a newline):
/// "PROGRAM (asyncsolve VERSION, git COMMIT) on HOST (N cores): MPI LIBRARY,
/// P ranks x T threads".
std::string provenance_line(std::string_view program, const RunEnvironment& env);

/// Local: prints `text` on stdout, as it is, on rank 0 of `comm` only, and
/// flushes it (so that lines from rank 0 appear in order under mpirun).
void print_on_root(const Comm& comm, std::string_view text);

/// Collective over `comm`: rank 0 checks that `path` (a --json option) can be
/// written; every rank learns the verdict and throws the same
/// core::InputError, so a bad path stops all ranks together before any work.
/// An empty path is accepted (no document).
void check_json_path(const std::string& path, const Comm& comm);

/// Collective over `comm`. With a non-empty `path`, rank 0 builds the
/// document with `make` (called on rank 0 only), writes it atomically
/// (core::write_file_atomic: never a partial file), then prints `announce`
/// with "{}" replaced by the path as a line on stdout; if that fails it
/// prints "PROGRAM: error: WHY" on stderr instead. Returns, on every rank,
/// whether the document could be written (true when none was asked for).
bool write_document(const Comm& comm, const std::string& path, std::string_view program,
                    std::string_view announce, const std::function<nlohmann::ordered_json()>& make);

}  // namespace asyncsolve::par
