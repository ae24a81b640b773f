// The header every result document starts with (core/document.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/version.hpp"

TEST(Document, HeaderHoldsSchemaProvenanceAndCommandInOrder) {
  const std::vector<std::string> command{"hybrid_mvm", "--nk", "2:8"};
  const auto doc =
      asyncsolve::core::document_header("asyncsolve.test/1", command, "2026-01-02T03:04:05Z");
  std::vector<std::string> keys;
  for (auto it = doc.begin(); it != doc.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "version", "git", "started", "command"}));
  EXPECT_EQ(doc["schema"], "asyncsolve.test/1");
  EXPECT_EQ(doc["version"].get<std::string>(), std::string(asyncsolve::version));
  // The commit is baked in when the library is compiled, which an incremental
  // build may do in another run than this file: a non-empty string is enough.
  EXPECT_FALSE(doc["git"].get<std::string>().empty());
  EXPECT_EQ(doc["started"], "2026-01-02T03:04:05Z");
  EXPECT_EQ(doc["command"].get<std::vector<std::string>>(), command);
}
