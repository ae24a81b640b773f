#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"

namespace fs = std::filesystem;
using namespace asyncsolve::core;

namespace {

fs::path scratch_dir() {
  fs::path d = fs::temp_directory_path() / ("asyncsolve_unit_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(JsonFile, WritesAtomicallyAndLeavesNoTemporary) {
  const fs::path dir = scratch_dir();
  const fs::path out = dir / "r.json";
  write_file_atomic(out, "{\"a\": 1}\n");
  std::ifstream in(out);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "{\"a\": 1}\n");
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

TEST(JsonFile, CheckWritableRejectsMissingDirectoryAndDirectories) {
  const fs::path dir = scratch_dir();
  EXPECT_NO_THROW(check_writable(dir / "ok.json", "--json"));
  EXPECT_FALSE(fs::exists(dir / "ok.json"));
  EXPECT_THROW(check_writable(dir / "missing" / "r.json", "--json"), InputError);
  EXPECT_THROW(check_writable(dir, "--json"), InputError);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 0);
  fs::remove_all(dir);
}

TEST(JsonFile, FailedWriteThrowsAndLeavesNothing) {
  EXPECT_THROW(write_file_atomic("/nonexistent-dir/r.json", "{}"), RuntimeFailure);
  EXPECT_FALSE(fs::exists("/nonexistent-dir/r.json"));
}
