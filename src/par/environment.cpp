#include "asyncsolve/par/environment.hpp"

#include <mpi.h>

#include <cstdlib>

#include <fmt/format.h>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::par {
namespace {

int to_mpi(ThreadLevel level) {
  switch (level) {
    case ThreadLevel::single:
      return MPI_THREAD_SINGLE;
    case ThreadLevel::funneled:
      return MPI_THREAD_FUNNELED;
    case ThreadLevel::serialized:
      return MPI_THREAD_SERIALIZED;
    case ThreadLevel::multiple:
      return MPI_THREAD_MULTIPLE;
  }
  return MPI_THREAD_SINGLE;
}

ThreadLevel from_mpi(int level) {
  if (level >= MPI_THREAD_MULTIPLE) return ThreadLevel::multiple;
  if (level >= MPI_THREAD_SERIALIZED) return ThreadLevel::serialized;
  if (level >= MPI_THREAD_FUNNELED) return ThreadLevel::funneled;
  return ThreadLevel::single;
}

}  // namespace

std::string_view to_string(ThreadLevel level) noexcept {
  switch (level) {
    case ThreadLevel::single:
      return "single";
    case ThreadLevel::funneled:
      return "funneled";
    case ThreadLevel::serialized:
      return "serialized";
    case ThreadLevel::multiple:
      return "multiple";
  }
  return "unknown";
}

Environment::Environment(int& argc, char**& argv, ThreadLevel requested) : requested_(requested) {
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Init_thread(&argc, &argv, to_mpi(requested), &provided), "MPI_Init_thread");
  provided_ = from_mpi(provided);
}

Environment::~Environment() {
  try {
    finalize();
  } catch (...) {
    // A destructor must not throw; MPI_Finalize failing at exit is reported by MPI itself.
  }
}

void Environment::finalize() {
  if (finalized_) return;
  finalized_ = true;
  // OpenSHMEM's finalize (par::Shmem, Open MPI's OSHMEM) may have finalized MPI already.
  int done = 0;
  MPI_Finalized(&done);
  if (done != 0) return;
  check_mpi(MPI_Finalize(), "MPI_Finalize");
}

void Environment::abort(int exit_code) noexcept {
  // Library code holds no MPI_COMM_WORLD; MPI_Abort needs a communicator, and
  // aborting the world is exactly what is meant here.
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  std::string s(text, static_cast<std::size_t>(length));
  if (const auto nl = s.find_first_of("\n,"); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

std::string mpi_standard_version() {
  int major = 0;
  int minor = 0;
  MPI_Get_version(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  if (MPI_Get_processor_name(name, &length) != MPI_SUCCESS) return "unknown";
  return std::string(name, static_cast<std::size_t>(length));
}

}  // namespace asyncsolve::par
