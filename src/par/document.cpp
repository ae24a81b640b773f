#include "asyncsolve/par/document.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/shmem.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/version.hpp"

namespace asyncsolve::par {

std::string mpi_osc_choice() {
#ifdef OPEN_MPI
  const char* osc = std::getenv("OMPI_MCA_osc");
  return osc != nullptr ? osc : "default";
#else
  return {};
#endif
}

namespace {

std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::string fallback;
  const auto value = [&line]() -> std::string {
    const auto colon = line.find(':');
    const auto start =
        colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string{} : line.substr(start);
  };
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return value();
    if (fallback.empty() && (line.rfind("cpu\t", 0) == 0 || line.rfind("Processor", 0) == 0)) {
      fallback = value();
    }
  }
  return fallback;
}

}  // namespace

std::string cpu_model() {
  static const std::string model = read_cpu_model();  // read once a process
  return model;
}

RunEnvironment describe_environment(const Comm& comm, const Environment& env) {
  RunEnvironment e;
  e.mpi_library = mpi_library_version();
  e.mpi_version = mpi_standard_version();
  e.ranks = comm.size();
  e.threads = 1;
  e.thread_level_requested = std::string(to_string(env.requested()));
  e.thread_level = std::string(to_string(env.provided()));
  e.shmem = shmem_initialized();
  e.hostname = processor_name();
  e.cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  e.mpi_osc = mpi_osc_choice();
  e.cpu_model = cpu_model();
  return e;
}

nlohmann::ordered_json environment_json(const RunEnvironment& env) {
  return {{"mpi_library", env.mpi_library},
          {"mpi_version", env.mpi_version},
          {"ranks", env.ranks},
          {"threads", env.threads},
          {"thread_level_requested", env.thread_level_requested},
          {"thread_level", env.thread_level},
          {"shmem", env.shmem},
          {"hostname", env.hostname},
          {"cores", env.cores},
          {"mpi_osc",
           env.mpi_osc.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(env.mpi_osc)},
          {"cpu_model", env.cpu_model.empty() ? nlohmann::ordered_json()
                                              : nlohmann::ordered_json(env.cpu_model)}};
}

std::string provenance_line(std::string_view program, const RunEnvironment& env) {
  return fmt::format("{} (asyncsolve {}, git {}) on {} ({} core{}): {}, {} rank{} x {} thread{}",
                     program, version, git_commit, env.hostname, env.cores,
                     env.cores == 1 ? "" : "s", env.mpi_library, env.ranks,
                     env.ranks == 1 ? "" : "s", env.threads, env.threads == 1 ? "" : "s");
}

void print_on_root(const Comm& comm, std::string_view text) {
  if (!comm.is_root()) return;
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void check_json_path(const std::string& path, const Comm& comm) {
  if (path.empty()) return;
  std::string error;
  if (comm.is_root()) {
    try {
      core::check_writable(path, "--json");
    } catch (const core::InputError& e) {
      error = e.what();
    }
  }
  error = broadcast_from_root(comm, std::move(error));
  if (!error.empty()) throw core::InputError(error);
}

bool write_document(const Comm& comm, const std::string& path, std::string_view program,
                    std::string_view announce,
                    const std::function<nlohmann::ordered_json()>& make) {
  if (path.empty()) return true;
  bool failed = false;
  if (comm.is_root()) {
    try {
      core::write_file_atomic(path, core::document_text(make()));
      std::puts(fmt::format(fmt::runtime(announce), path).c_str());
      std::fflush(stdout);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(program.size()), program.data(),
                   e.what());
      std::fflush(stderr);
      failed = true;
    }
  }
  return !any_rank(comm, failed);
}

}  // namespace asyncsolve::par
