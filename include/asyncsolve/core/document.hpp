#pragma once
/// The start every result document shares, whichever program writes it
/// (the asyncsolve commands and the bench/ drivers alike).
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace asyncsolve::core {

/// {"schema", "version", "git", "started", "command"}: the document's schema
/// name, this build's version and git commit, the start time (ISO 8601, see
/// iso8601_now()) and the command line as given. Callers add their fields
/// after these.
nlohmann::ordered_json document_header(std::string_view schema,
                                       const std::vector<std::string>& command,
                                       const std::string& started);

}  // namespace asyncsolve::core
