#include "asyncsolve/core/document.hpp"

#include "asyncsolve/version.hpp"

namespace asyncsolve::core {

nlohmann::ordered_json document_header(std::string_view schema,
                                       const std::vector<std::string>& command,
                                       const std::string& started) {
  nlohmann::ordered_json doc;
  doc["schema"] = schema;
  doc["version"] = version;
  doc["git"] = git_commit;
  doc["started"] = started;
  doc["command"] = command;
  return doc;
}

}  // namespace asyncsolve::core
