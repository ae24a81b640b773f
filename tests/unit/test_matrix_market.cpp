// The Matrix Market reader on small hand-checkable texts: every format,
// field and symmetry, the line-level details, and every refusal with the
// file, the line and what was expected.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"

namespace fs = std::filesystem;
using namespace asyncsolve::sparse;
using asyncsolve::core::InputError;

namespace {

/// Dense copy of a CSR matrix, row-major.
std::vector<double> dense(const CsrMatrix& a) {
  std::vector<double> d(static_cast<std::size_t>(a.rows * a.cols), 0.0);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      d[i * a.cols + a.col[k]] = a.val[k];
  return d;
}

/// The error message parse_matrix_market gives `text`, or "" if it reads.
std::string error_of(const std::string& text, const ReadLimits& limits = {}) {
  try {
    parse_matrix_market(text, "m.mtx", limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::string& text, const std::string& where, const std::string& what) {
  const std::string e = error_of(text);
  EXPECT_EQ(e.rfind(where, 0), 0u) << "message: " << e;
  EXPECT_NE(e.find(what), std::string::npos) << "message: " << e;
}

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("asyncsolve_mm_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

}  // namespace

TEST(MatrixMarket, CoordinateRealGeneral) {
  const auto f = parse_matrix_market(
      "%%MatrixMarket matrix coordinate real general\n% a comment\n2 3 3\n1 1 1.5\n2 3 -2e1\n"
      "1 2 .25\n",
      "m.mtx");
  EXPECT_EQ(f.info.rows, 2);
  EXPECT_EQ(f.info.cols, 3);
  EXPECT_EQ(f.info.entries, 3);
  EXPECT_EQ(dense(f.matrix), (std::vector<double>{1.5, 0.25, 0, 0, 0, -20}));
  EXPECT_EQ(f.matrix.col, (std::vector<std::int32_t>{0, 1, 2}));  // sorted within rows
}

TEST(MatrixMarket, DuplicatesAreSummedAndCounted) {
  const auto f = parse_matrix_market(
      "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n2 2 2\n1 1 3\n1 1 4\n", "m");
  EXPECT_EQ(f.info.duplicates, 2);
  EXPECT_EQ(dense(f.matrix), (std::vector<double>{8, 0, 0, 2}));
  EXPECT_EQ(f.matrix.nnz(), 2);
}

TEST(MatrixMarket, SymmetricIsExpanded) {
  const auto f = parse_matrix_market(
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n3 2 -2\n3 3 5\n",
      "m");
  EXPECT_EQ(f.info.mirrored, 2);
  EXPECT_EQ(dense(f.matrix), (std::vector<double>{4, -1, 0, -1, 0, -2, 0, -2, 5}));
  EXPECT_TRUE(is_symmetric(f.matrix));
}

TEST(MatrixMarket, SymmetricDuplicatesCountOnce) {
  const auto f = parse_matrix_market(
      "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n2 1 1\n2 1 2\n1 1 1\n", "m");
  EXPECT_EQ(f.info.duplicates, 1);
  EXPECT_EQ(dense(f.matrix), (std::vector<double>{1, 3, 3, 0}));
}

TEST(MatrixMarket, SkewSymmetricIsExpandedWithSign) {
  const auto f = parse_matrix_market(
      "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n", "m");
  EXPECT_EQ(dense(f.matrix), (std::vector<double>{0, -3, 3, 0}));
}

TEST(MatrixMarket, PatternAndIntegerFields) {
  const auto p = parse_matrix_market(
      "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n", "m");
  EXPECT_EQ(dense(p.matrix), (std::vector<double>{1, 1, 1, 0}));
  const auto i = parse_matrix_market(
      "%%MatrixMarket matrix coordinate integer general\n1 2 2\n1 1 -7\n1 2 +3\n", "m");
  EXPECT_EQ(dense(i.matrix), (std::vector<double>{-7, 3}));
}

TEST(MatrixMarket, ArrayFormatIsColumnMajor) {
  const auto g =
      parse_matrix_market("%%MatrixMarket matrix array real general\n2 2\n1\n2\n0\n4\n", "m");
  EXPECT_EQ(dense(g.matrix), (std::vector<double>{1, 0, 2, 4}));
  EXPECT_EQ(g.info.zeros_dropped, 1);
  const auto s =
      parse_matrix_market("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n", "m");
  EXPECT_EQ(dense(s.matrix), (std::vector<double>{1, 2, 2, 3}));
  const auto k = parse_matrix_market(
      "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n", "m");
  EXPECT_EQ(dense(k.matrix), (std::vector<double>{0, -1, -2, 1, 0, -3, 2, 3, 0}));
}

TEST(MatrixMarket, CaseCrlfBlanksTabsAndNoFinalNewline) {
  const auto f = parse_matrix_market(
      "%%MatrixMarket MATRIX Coordinate REAL General\r\n%c\r\n\r\n  2\t2 2 \r\n\r\n1 1 1\r\n"
      "% in between\r\n2\t2\t2",
      "m");
  EXPECT_EQ(dense(f.matrix), (std::vector<double>{1, 0, 0, 2}));
}

TEST(MatrixMarket, UnderflowReadsAsZeroLikeStrtod) {
  const auto f = parse_matrix_market(
      "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e-400\n", "m");
  EXPECT_EQ(f.matrix.val.at(0), 0.0);
}

TEST(MatrixMarket, RefusesBadBanners) {
  expect_error("", "m.mtx:1:", "empty file");
  expect_error("hello\n", "m.mtx:1:", "expected the banner");
  expect_error("%%MatrixMarket matrix coordinate real\n1 1 0\n", "m.mtx:1:", "expected 5");
  expect_error("%%MatrixMarket vector coordinate real general\n", "m.mtx:1:", "expected 'matrix'");
  expect_error("%%MatrixMarket matrix sparse real general\n",
               "m.mtx:1:", "expected 'coordinate' or 'array'");
  expect_error("%%MatrixMarket matrix coordinate complex general\n",
               "m.mtx:1:", "'complex' is not supported");
  expect_error("%%MatrixMarket matrix coordinate real hermitian\n",
               "m.mtx:1:", "'hermitian' is not supported");
  expect_error("%%MatrixMarket matrix coordinate real upper\n",
               "m.mtx:1:", "expected 'general', 'symmetric' or 'skew-symmetric'");
  expect_error("%%MatrixMarket matrix array pattern general\n", "m.mtx:1:", "no values");
}

TEST(MatrixMarket, RefusesBadSizeLines) {
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  expect_error(banner, "m.mtx:2:", "expected the size line");
  expect_error(banner + "% only a comment\n", "m.mtx:3:", "expected the size line");
  expect_error(banner + "2 2\n", "m.mtx:2:", "expected 3 (rows, columns, entries)");
  expect_error(banner + "2 x 1\n", "m.mtx:2:", "columns 'x': expected a non-negative integer");
  expect_error(banner + "-2 2 1\n", "m.mtx:2:", "expected a non-negative integer");
  expect_error(banner + "0 2 0\n", "m.mtx:2:", "expected at least one row");
  expect_error(banner + "3000000000 2 0\n", "m.mtx:2:", "expected at most 2147483647");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n",
               "m.mtx:2:", "expected a square matrix");
  expect_error("%%MatrixMarket matrix array real general\n2 2 4\n",
               "m.mtx:2:", "expected 2 (rows, columns)");
}

TEST(MatrixMarket, RefusesBadEntries) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n2 2 2\n";
  expect_error(head + "1 1 1\n", "m.mtx:4:", "end of file after 1 of the 2 entries");
  expect_error(head + "1 1 1\n2 2 2\n1 2 3\n", "m.mtx:5:", "more entries than the 2");
  expect_error(head + "1 1\n", "m.mtx:3:", "expected 3 (row, column, value)");
  expect_error(head + "1 1 1 1\n", "m.mtx:3:", "expected 3 (row, column, value)");
  expect_error(head + "3 1 1\n", "m.mtx:3:", "row index '3': expected an integer from 1 to 2");
  expect_error(head + "1 0 1\n", "m.mtx:3:", "column index '0': expected an integer from 1 to 2");
  expect_error(head + "1 1.0 1\n", "m.mtx:3:", "column index '1.0'");
  expect_error(head + "1 1 abc\n", "m.mtx:3:", "value 'abc': expected a real number");
  expect_error(head + "1 1 nan\n", "m.mtx:3:", "not a finite number");
  expect_error(head + "1 1 inf\n", "m.mtx:3:", "not a finite number");
  expect_error(head + "1 1 1e999\n", "m.mtx:3:", "not a finite number");
  expect_error(head + "1 1 1.5x\n", "m.mtx:3:", "expected a real number");
  expect_error("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n",
               "m.mtx:3:", "expected an integer");
  expect_error(
      "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 99999999999999999999\n",
      "m.mtx:3:", "out of range");
  expect_error("%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1 1\n",
               "m.mtx:3:", "expected 2 (row, column)");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n",
               "m.mtx:3:", "above the diagonal");
  expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 2 1\n",
               "m.mtx:3:", "on the diagonal");
  expect_error("%%MatrixMarket matrix array real general\n1 2\n1\n",
               "m.mtx:4:", "end of file after 1 of the 2 values");
  expect_error("%%MatrixMarket matrix array real general\n1 1\n1 2\n",
               "m.mtx:3:", "expected 1 (one value per line)");
}

TEST(MatrixMarket, RefusesOversizedFilesFromTheHeader) {
  ReadLimits limits;
  limits.max_bytes = 1e6;
  limits.max_bytes_source = "--matrix-memory";
  const std::string e =
      error_of("%%MatrixMarket matrix coordinate real general\n100000 100000 1000000\n", limits);
  EXPECT_EQ(e.rfind("m.mtx:2:", 0), 0u) << e;
  EXPECT_NE(e.find("--matrix-memory"), std::string::npos) << e;
  EXPECT_GT(
      read_bytes_estimate(
          {MmFormat::coordinate, MmField::real, MmSymmetry::symmetric, 10, 10, 100}),
      read_bytes_estimate({MmFormat::coordinate, MmField::real, MmSymmetry::general, 10, 10, 100}));
}

TEST(MatrixMarket, RefusesOverlongLines) {
  std::string text = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 ";
  text += std::string((1 << 20) + 10, '1');
  text += "\n";
  EXPECT_NE(error_of(text).find("m.mtx:3: line longer than 1 MiB"), std::string::npos)
      << error_of(text);
}

TEST(MatrixMarket, FilesStreamsAndTheirErrors) {
  const fs::path p = scratch("a.mtx");
  {
    std::ofstream out(p);
    out << "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 3\n2 2 4\n";
  }
  const auto f = read_matrix_market(p);
  EXPECT_EQ(dense(f.matrix), (std::vector<double>{3, 0, 0, 4}));
  try {
    read_matrix_market(p.parent_path() / "missing.mtx");
    FAIL() << "no error for a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.mtx: cannot open (No such file"),
              std::string::npos)
        << e.what();
  }
  try {
    read_matrix_market(p.parent_path());
    FAIL() << "no error for a directory";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  const fs::path empty = scratch("empty.mtx");
  { std::ofstream out(empty); }
  try {
    read_matrix_market(empty);
    FAIL() << "no error for an empty file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("empty.mtx:1: empty file"), std::string::npos) << e.what();
  }
  fs::remove_all(p.parent_path());
}

TEST(MatrixMarket, RefusesWhatIsNotARegularFileWithoutWaiting) {
  // Opening a FIFO for reading waits for a writer: it must be refused at once.
  const fs::path fifo = scratch("pipe.mtx");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path link = scratch("link.mtx");
  fs::create_symlink(fifo, link);
  for (const auto& [path, kind] : {std::pair<fs::path, std::string>{fifo, "is a FIFO"},
                                   {link, "is a FIFO"},
                                   {"/dev/null", "is a device"},
                                   {"/dev/zero", "is a device"}}) {
    try {
      read_matrix_market(path);
      FAIL() << "no error for " << path;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path.string() + ": " + kind), std::string::npos)
          << e.what();
    }
  }
  fs::remove_all(fifo.parent_path());
}

TEST(MatrixMarket, RefusesDuplicatesWhoseSumOverflows) {
  const std::string general = "%%MatrixMarket matrix coordinate real general\n2 2 3\n";
  expect_error(general + "1 1 1.5e308\n2 2 1\n1 1 1.5e308\n",
               "m.mtx:5:", "the duplicate entries at (1, 1) sum to more than 1.8e308");
  expect_error(general + "1 2 -1.5e308\n% a comment\n\n1 2 -1.5e308\n2 2 1\n",
               "m.mtx:6:", "(1, 2)");
  // The sum is checked in file order: the fourth entry is the one that overflows.
  expect_error(
      "%%MatrixMarket matrix coordinate real general\n2 2 4\n2 1 1e308\n2 1 -1e308\n"
      "2 1 1e308\n2 1 1e308\n",
      "m.mtx:6:", "(2, 1)");
  // Mirrored entries of a symmetric or skew-symmetric file: the file's own line and entry.
  for (const char* symmetry : {"symmetric", "skew-symmetric"}) {
    expect_error(std::string("%%MatrixMarket matrix coordinate real ") + symmetry +
                     "\n3 3 3\n3 1 1.5e308\n2 1 1\n3 1 1.5e308\n",
                 "m.mtx:5:", "(3, 1)");
  }
  // A sum that comes back into range after each step is fine.
  const auto f = parse_matrix_market(general + "1 1 1e308\n1 1 -1e308\n1 1 1e308\n", "m.mtx");
  EXPECT_EQ(f.matrix.val[0], 1e308);
  // A stream is read again for the line; a pipe, which cannot be, names the file alone.
  std::string text = general + "1 1 1.5e308\n2 2 1\n1 1 1.5e308\n";
  std::FILE* in = fmemopen(text.data(), text.size(), "rb");
  ASSERT_NE(in, nullptr);
  try {
    read_matrix_market(in, "mem");
    FAIL() << "no error for an overflowing sum";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("mem:5: ", 0), 0u) << e.what();
  }
  std::fclose(in);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  in = ::fdopen(fds[0], "rb");
  try {
    read_matrix_market(in, "pipe");
    FAIL() << "no error for an overflowing sum";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("pipe: the duplicate entries at (1, 1)", 0), 0u)
        << e.what();
  }
  std::fclose(in);
}

TEST(MatrixMarket, StreamReaderHandlesLinesAcrossChunks) {
  // More than one 1 MiB chunk, so some lines straddle two reads.
  std::string text = "%%MatrixMarket matrix coordinate real general\n100000 1 100000\n";
  for (int i = 1; i <= 100000; ++i)
    text += std::to_string(i) + " 1 " + std::to_string(i) + ".5\r\n";
  std::FILE* in = fmemopen(text.data(), text.size(), "rb");
  ASSERT_NE(in, nullptr);
  const auto f = read_matrix_market(in, "mem");
  std::fclose(in);
  ASSERT_EQ(f.matrix.nnz(), 100000);
  for (int i = 0; i < 100000; ++i) ASSERT_EQ(f.matrix.val[i], i + 1.5);
}

TEST(MatrixMarket, VectorsRoundTripBitForBit) {
  const std::vector<double> v = {1.0 / 3.0, -2.5e-300, 0.0, 1e300, 7};
  const fs::path p = scratch("v.mtx");
  {
    std::ofstream out(p);
    out << format_vector(v);
  }
  EXPECT_EQ(read_vector(p, 5, "--rhs"), v);
  try {
    read_vector(p, 4, "--rhs");
    FAIL() << "no error for the wrong length";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--rhs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a vector of 5 values: expected 4"), std::string::npos)
        << e.what();
  }
  {
    std::ofstream out(p);
    out << "%%MatrixMarket matrix coordinate real general\n3 1 1\n2 1 5\n";
  }
  EXPECT_EQ(read_vector(p, 3, "--x0"), (std::vector<double>{0, 5, 0}));
  {
    std::ofstream out(p);
    out << "%%MatrixMarket matrix coordinate real general\n3 2 1\n2 1 5\n";
  }
  EXPECT_THROW(read_vector(p, 3, "--x0"), InputError);
  fs::remove_all(p.parent_path());
}

TEST(MatrixMarket, FormatMatrixReadsBack) {
  const auto f = parse_matrix_market(
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n3 2 -2\n3 3 5\n",
      "m");
  const auto g = parse_matrix_market(format_matrix(f.matrix), "again");
  EXPECT_EQ(dense(g.matrix), dense(f.matrix));
  EXPECT_EQ(first_zero_diagonal(f.matrix), 1);
}
