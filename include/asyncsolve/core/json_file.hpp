#pragma once
/// The files a user names: result documents written without ever leaving a
/// partial one behind or replacing what is not a regular file, and inputs
/// read only from regular files of a bounded size.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace asyncsolve::core {

/// Checks that `path` (the value of `option`, e.g. --json) may be written:
/// not empty, a name the file system takes, not an existing symbolic link,
/// directory, device, FIFO or socket, not a read-only file, in an existing
/// directory that accepts a new file (probed with a short temporary name,
/// removed again). Throws InputError "OPTION 'PATH': WHY, expected ...".
/// Local (not collective).
void check_writable(const std::filesystem::path& path, std::string_view option);

/// Writes `content` to `path` atomically: to a temporary file with a short
/// name in the same directory, flushed to disk, given the mode the target
/// has (or 0666 less the umask), then renamed over `path`. On any failure
/// (a full disk included) the temporary is removed and RuntimeFailure is
/// thrown; `path` is never left half-written. Refuses (RuntimeFailure) a
/// target that is no longer a regular file.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// A file opened for reading by open_regular_file: `fd` (the caller closes
/// it), or -1 with `kind` naming what the path is when it is not a regular
/// file ("a directory", "a FIFO", "a device", "a socket"), else `error`, the
/// errno of open().
struct OpenedFile {
  int fd = -1;
  std::string_view kind;
  int error = 0;
};

/// Opens `path` for reading, blocking on nothing: a FIFO (whose open would
/// wait for a writer), a device, a socket or a directory is refused before
/// anything is read from it. Links are followed. Local.
OpenedFile open_regular_file(const std::filesystem::path& path);

/// A file a command reads or writes, and the option that names it.
struct NamedPath {
  std::string_view option;  ///< "--matrix", "--json", ...
  std::filesystem::path path;
};

/// Refuses an output that is the same file as an input or as another
/// output, compared by identity, not by spelling: device and inode, links
/// followed; for an output that does not exist yet, its directory's device
/// and inode and its name. Throws InputError "OUTPUT 'P': is the same file
/// as OTHER 'Q', expected a file of its own". Empty paths and inputs that do
/// not exist (reading them fails later, with its own message) are skipped.
/// Local (rank 0 checks, then broadcasts the verdict).
void check_distinct_files(std::span<const NamedPath> inputs, std::span<const NamedPath> outputs);

/// Reads all of `path`, which must be a regular file of at most `max_bytes`
/// (a device such as /dev/zero, a FIFO or a directory is refused without
/// reading it). Throws InputError "PATH: WHY" (no such file, is a
/// directory, is not a regular file, is N bytes, more than the M read,
/// cannot be read: REASON); the caller adds the option and what it expects.
std::string read_input_file(const std::filesystem::path& path, std::size_t max_bytes);

}  // namespace asyncsolve::core
