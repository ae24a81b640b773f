#pragma once
/// The files a user names: result documents written without ever leaving a
/// partial one behind or replacing what is not a regular file, and inputs
/// read only from regular files of a bounded size.
#include <cstddef>
#include <filesystem>
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

/// Reads all of `path`, which must be a regular file of at most `max_bytes`
/// (a device such as /dev/zero, a FIFO or a directory is refused without
/// reading it). Throws InputError "PATH: WHY" (no such file, is a
/// directory, is not a regular file, is N bytes, more than the M read,
/// cannot be read: REASON); the caller adds the option and what it expects.
std::string read_input_file(const std::filesystem::path& path, std::size_t max_bytes);

}  // namespace asyncsolve::core
