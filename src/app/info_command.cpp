#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "asyncsolve/par/shmem.hpp"
#include "asyncsolve/version.hpp"
#include "commands.hpp"

namespace asyncsolve::app {
namespace {

/// Path of `program` on PATH, or "" when it is not there.
std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

}  // namespace

core::ExitCode run_info(const InfoConfig& /*config*/, const par::Comm& world,
                        const par::Environment& env) {
  if (!world.is_root()) return core::ExitCode::success;
  const std::string oshrun = find_on_path("oshrun");
  std::string out;
  auto line = [&out](std::string_view key, const std::string& value) {
    out += fmt::format("{:<16} {}\n", key, value);
  };
  line("asyncsolve", fmt::format("{} (git {})", version, git_commit));
  line("mpi library", par::mpi_library_version());
  line("mpi standard", par::mpi_standard_version());
  line("thread level", fmt::format("{} (requested {})", par::to_string(env.provided()),
                                   par::to_string(env.requested())));
  line("ranks", std::to_string(world.size()));
  line("host", par::processor_name());
  line("openshmem", oshrun.empty() ? std::string("no oshrun on PATH")
                                   : fmt::format("oshrun at {} (shmem transport {})", oshrun,
                                                 par::shmem_available() ? "built" : "not built"));
  line("openmp", fmt::format("version {}, max threads {}", _OPENMP, omp_get_max_threads()));
  line("cores", std::to_string(std::max(1U, std::thread::hardware_concurrency())));
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  return core::ExitCode::success;
}

}  // namespace asyncsolve::app
