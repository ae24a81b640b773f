#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

TEST(JsonFile, OpenRegularFileRefusesFifosAndDevicesWithoutWaiting) {
  const fs::path dir = scratch_dir();
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  OpenedFile f = open_regular_file(fifo);  // would wait for a writer if opened plainly
  EXPECT_EQ(f.fd, -1);
  EXPECT_EQ(f.kind, "a FIFO");
  EXPECT_EQ(open_regular_file("/dev/null").kind, "a device");
  EXPECT_EQ(open_regular_file(dir).kind, "a directory");
  f = open_regular_file(dir / "missing");
  EXPECT_EQ(f.fd, -1);
  EXPECT_EQ(f.error, ENOENT);
  { std::ofstream(dir / "a") << "x"; }
  f = open_regular_file(dir / "a");
  ASSERT_GE(f.fd, 0);
  char c = 0;
  EXPECT_EQ(::read(f.fd, &c, 1), 1);
  EXPECT_EQ(c, 'x');
  ::close(f.fd);
  try {
    read_input_file(fifo, 100);
    FAIL() << "no error for a FIFO";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(JsonFile, DistinctFilesAreComparedByIdentityNotSpelling) {
  const fs::path dir = scratch_dir();
  fs::create_directories(dir / "sub");
  { std::ofstream(dir / "a.mtx") << "x"; }
  fs::create_symlink(dir / "a.mtx", dir / "link.mtx");
  fs::create_hard_link(dir / "a.mtx", dir / "hard.mtx");
  fs::create_directory_symlink(dir / "sub", dir / "sublink");
  const auto error = [](std::vector<NamedPath> in, std::vector<NamedPath> out) {
    try {
      check_distinct_files(in, out);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const fs::path a = dir / "a.mtx";
  // An output naming an input, however spelt.
  for (const fs::path& same :
       {a, dir / "." / "a.mtx", dir / "sub" / ".." / "a.mtx", dir / "link.mtx", dir / "hard.mtx"}) {
    const std::string e = error({{"--matrix", a}}, {{"--write-solution", same}});
    EXPECT_NE(e.find("--write-solution '" + same.string() + "': is the same file as --matrix '" +
                     a.string() + "'"),
              std::string::npos)
        << e;
  }
  // Two outputs that do not exist yet, spelt differently.
  std::string e =
      error({}, {{"--json", dir / "sub" / "x"}, {"--write-solution", dir / "sublink" / "x"}});
  EXPECT_NE(e.find("--write-solution"), std::string::npos) << e;
  EXPECT_NE(e.find("is the same file as --json"), std::string::npos) << e;
  e = error({{"--rhs", a}}, {{"--json", dir / "x"}, {"--write-solution", dir / "hard.mtx"}});
  EXPECT_NE(e.find("--write-solution"), std::string::npos) << e;
  // Distinct files, empty paths and missing inputs pass.
  EXPECT_EQ(error({{"--matrix", a}, {"--rhs", dir / "missing.mtx"}, {"--x0", ""}},
                  {{"--json", dir / "x"}, {"--write-solution", dir / "sub" / "x"}, {"--json", ""}}),
            "");
  // Two inputs may be one file (read twice).
  EXPECT_EQ(error({{"--rhs", a}, {"--x0", dir / "link.mtx"}}, {}), "");
  fs::remove_all(dir);
}
