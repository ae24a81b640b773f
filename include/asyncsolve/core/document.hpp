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

/// A document as the file holds it: indented by 2, a newline at the end. A
/// string that is not UTF-8 (a file name on Linux may be any bytes) is
/// written with U+FFFD for each byte that is not, rather than failing once
/// the run is over.
template <class Json>
std::string document_text(const Json& doc, int indent = 2) {
  return doc.dump(indent, ' ', false, Json::error_handler_t::replace) + (indent >= 0 ? "\n" : "");
}

}  // namespace asyncsolve::core
