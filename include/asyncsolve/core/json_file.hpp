#pragma once
/// Writing result files without ever leaving a partial one behind.
#include <filesystem>
#include <string_view>

namespace asyncsolve::core {

/// Checks that `path` can be written: its directory exists and accepts a new
/// file. Creates and removes a probe file beside it. Throws InputError naming
/// the path and the reason. Local (not collective).
void check_writable(const std::filesystem::path& path, std::string_view option);

/// Writes `content` to `path` atomically: to a temporary file in the same
/// directory, flushed, then renamed over `path`. On failure the temporary is
/// removed and RuntimeFailure is thrown; `path` is never left half-written.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

}  // namespace asyncsolve::core
