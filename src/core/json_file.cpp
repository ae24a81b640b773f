#include "asyncsolve/core/json_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"

namespace asyncsolve::core {
namespace {

std::filesystem::path temporary_for(const std::filesystem::path& path) {
  auto tmp = path;
  tmp += fmt::format(".tmp.{}", static_cast<long>(::getpid()));
  return tmp;
}

}  // namespace

void check_writable(const std::filesystem::path& path, std::string_view option) {
  std::error_code ec;
  if (path.empty()) throw InputError(fmt::format("{} '': expected a file path", option));
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(
        fmt::format("{} '{}': is a directory, expected a file path", option, path.string()));
  }
  const auto probe = temporary_for(path);
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr) {
    throw InputError(fmt::format("{} '{}': cannot write there ({}), expected a writable path",
                                 option, path.string(), std::strerror(errno)));
  }
  std::fclose(f);
  std::filesystem::remove(probe, ec);
}

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  const auto tmp = temporary_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    throw RuntimeFailure(fmt::format("cannot create '{}': {}", tmp.string(), std::strerror(errno)));
  }
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool flushed = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const bool closed = std::fclose(f) == 0;
  std::error_code ec;
  if (!(written && flushed && closed)) {
    const int err = errno;
    std::filesystem::remove(tmp, ec);
    throw RuntimeFailure(fmt::format("cannot write '{}': {}", path.string(), std::strerror(err)));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw RuntimeFailure(
        fmt::format("cannot rename '{}' to '{}': {}", tmp.string(), path.string(), ec.message()));
  }
}

}  // namespace asyncsolve::core
