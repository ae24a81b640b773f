#include "asyncsolve/core/json_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"

namespace asyncsolve::core {
namespace {

/// The directory `path` lives in ("." for a bare name).
std::filesystem::path directory_of(const std::filesystem::path& path) {
  const std::filesystem::path dir = path.parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

/// A short temporary name beside `path`: "DIR/.asyncsolve-XXXXXX" for mkstemp.
std::string temporary_template(const std::filesystem::path& path) {
  return (directory_of(path) / ".asyncsolve-XXXXXX").string();
}

/// What lstat says `path` is, for a message; empty for a regular file.
std::string_view what_it_is(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (!S_ISREG(mode)) return "not a regular file";
  return {};
}

/// The mode a new file gets: 0666 less the process's umask.
mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

}  // namespace

void check_writable(const std::filesystem::path& path, std::string_view option) {
  const std::string shown = printable(path.string());
  const auto refuse = [&](std::string_view why, std::string_view expected) {
    throw InputError(fmt::format("{} '{}': {}, expected {}", option, shown, why, expected));
  };
  if (path.empty()) refuse("an empty name", "a file path");
  const std::filesystem::path name = path.filename();
  if (name.empty() || name == "." || name == "..") refuse("names a directory", "a file path");
  const std::filesystem::path dir = directory_of(path);
  const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  const std::size_t limit = name_max > 0 ? static_cast<std::size_t>(name_max) : NAME_MAX;
  if (name.string().size() > limit) {
    refuse(fmt::format("the file name is {} bytes long", name.string().size()),
           fmt::format("a name of at most {} bytes", limit));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    const std::string_view kind = what_it_is(st.st_mode);
    if (!kind.empty()) {
      refuse(fmt::format("is {}", kind),
             S_ISDIR(st.st_mode) ? "a file path" : "a regular file or a new file name");
    }
    // Root may write anything: judge by the mode bits as well as by access().
    if ((st.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0) {
      refuse("is read-only", "a writable file or a new file name");
    }
  } else if (errno != ENOENT) {
    refuse(fmt::format("cannot be examined ({})", std::strerror(errno)), "a writable path");
  }
  struct stat dir_st {};
  if (::stat(dir.c_str(), &dir_st) != 0 || !S_ISDIR(dir_st.st_mode)) {
    refuse(fmt::format("its directory '{}' does not exist", printable(dir.string())),
           "a path in an existing directory");
  }
  std::string probe = temporary_template(path);
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    refuse(fmt::format("cannot write there ({})", std::strerror(errno)), "a writable path");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  struct stat st {};
  mode_t mode = 0;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      throw RuntimeFailure(fmt::format("'{}' is {} now: not replaced", printable(path.string()),
                                       what_it_is(st.st_mode)));
    }
    mode = st.st_mode & 07777;
  } else {
    mode = new_file_mode();
  }
  std::string tmp = temporary_template(path);
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    throw RuntimeFailure(fmt::format("cannot create a temporary file beside '{}': {}",
                                     printable(path.string()), std::strerror(errno)));
  }
  const auto fail = [&](int err, std::string_view what) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw RuntimeFailure(
        fmt::format("cannot {} '{}': {}", what, printable(path.string()), std::strerror(err)));
  };
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? errno : ENOSPC, "write");
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, mode) != 0) fail(errno, "set the mode of");
  if (::fsync(fd) != 0) fail(errno, "write");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw RuntimeFailure(
        fmt::format("cannot write '{}': {}", printable(path.string()), std::strerror(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw RuntimeFailure(fmt::format("cannot rename the temporary file to '{}': {}",
                                     printable(path.string()), std::strerror(err)));
  }
}

OpenedFile open_regular_file(const std::filesystem::path& path) {
  OpenedFile out;
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    out.error = errno;
    // What cannot be opened at all (a socket: ENXIO) is named for what it is.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) out.kind = what_it_is(st.st_mode);
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    out.error = errno;
    ::close(fd);
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.kind = what_it_is(st.st_mode);
    ::close(fd);
    return out;
  }
  // Back to blocking reads of a regular file.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  out.fd = fd;
  return out;
}

namespace {

/// Where a path leads: device and inode of the file, links followed, or, for
/// a name that does not exist yet, of its directory, with the name.
struct Identity {
  dev_t device = 0;
  ino_t inode = 0;
  std::string name;  ///< empty for an existing file
  bool operator==(const Identity&) const = default;
};

std::optional<Identity> identity_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return Identity{st.st_dev, st.st_ino, {}};
  if (errno != ENOENT || path.filename().empty()) return std::nullopt;
  if (::stat(directory_of(path).c_str(), &st) != 0) return std::nullopt;
  return Identity{st.st_dev, st.st_ino, path.filename().string()};
}

}  // namespace

void check_distinct_files(std::span<const NamedPath> inputs, std::span<const NamedPath> outputs) {
  std::vector<std::pair<const NamedPath*, Identity>> seen;
  for (const NamedPath& in : inputs) {
    if (in.path.empty()) continue;
    const auto id = identity_of(in.path);
    if (id && id->name.empty()) seen.emplace_back(&in, *id);
  }
  for (const NamedPath& out : outputs) {
    if (out.path.empty()) continue;
    const auto id = identity_of(out.path);
    if (!id) continue;  // check_writable says why it cannot be written
    for (const auto& [other, other_id] : seen) {
      if (other_id == *id) {
        throw InputError(
            fmt::format("{} '{}': is the same file as {} '{}', expected a file "
                        "of its own",
                        out.option, printable(out.path.string()), other->option,
                        printable(other->path.string())));
      }
    }
    seen.emplace_back(&out, *id);
  }
}

std::string read_input_file(const std::filesystem::path& path, std::size_t max_bytes) {
  const std::string shown = printable(path.string());
  const OpenedFile file = open_regular_file(path);
  if (!file.kind.empty()) throw InputError(fmt::format("{}: is {}", shown, file.kind));
  if (file.fd < 0) {
    throw InputError(fmt::format(
        "{}: {}", shown,
        file.error == ENOENT ? std::string("no such file")
                             : fmt::format("cannot be read ({})", std::strerror(file.error))));
  }
  const int fd = file.fd;
  struct stat st {};
  ::fstat(fd, &st);
  const auto too_large = [&](double bytes) {
    ::close(fd);
    return InputError(fmt::format("{}: is {} bytes, more than the {} read from such a file", shown,
                                  format_number(bytes),
                                  format_number(static_cast<double>(max_bytes))));
  };
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    throw too_large(static_cast<double>(st.st_size));
  }
  // Reading stops past max_bytes (a file that grows while it is read is
  // refused too).
  std::string content;
  char chunk[65536];
  while (content.size() <= max_bytes) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(fmt::format("{}: cannot be read ({})", shown, std::strerror(err)));
    }
    if (n == 0) break;
    content.append(chunk, static_cast<std::size_t>(n));
  }
  if (content.size() > max_bytes) throw too_large(static_cast<double>(content.size()));
  ::close(fd);
  return content;
}

}  // namespace asyncsolve::core
