// The strict Matrix Market reader (see matrix_market.hpp for the rules).
//
// One pass over the lines: banner, comments, size line, entries. The
// entries are kept as coordinates (16 bytes each), then turned into CSR:
// rows counted (a symmetric entry off the diagonal counts in both rows),
// entries placed, each row sorted by column and its duplicates summed.
#include "asyncsolve/sparse/matrix_market.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "matrix_market_lines.hpp"

namespace asyncsolve::sparse {
namespace {

using detail::LineSource;
using detail::MemorySource;
using detail::StreamSource;

constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int32_t>::max();

/// Splits a line at blanks and tabs into at most `max` tokens; returns how
/// many there were (counting beyond `max`).
std::size_t split(std::string_view line, std::string_view* tokens, std::size_t max) {
  std::size_t n = 0;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) break;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (n < max) tokens[n] = line.substr(i, j - i);
    ++n;
    i = j;
  }
  return n;
}

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; });
}

bool is_comment(std::string_view line) {
  const std::size_t i = line.find_first_not_of(" \t");
  return i != std::string_view::npos && line[i] == '%';
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// A token shown in a message: quoted, cut to 40 characters, non-printing
/// characters as '?'.
std::string shown(std::string_view token) {
  std::string out;
  for (char c : token.substr(0, 40))
    out.push_back(static_cast<unsigned char>(c) >= 32 && static_cast<unsigned char>(c) < 127 ? c
                                                                                             : '?');
  if (token.size() > 40) out += "...";
  return "'" + out + "'";
}

class Parser {
 public:
  Parser(LineSource& source, std::string_view name, const ReadLimits& limits)
      : source_(source), name_(name), limits_(limits) {}

  MatrixMarketFile run() {
    MatrixMarketFile out;
    read_banner(out.info);
    read_size(out.info);
    read_entries(out.info);
    out.matrix = build(out.info);
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw core::InputError(fmt::format("{}:{}: {}", name_, line_no_, what));
  }

  bool next(std::string_view& line) {
    try {
      if (!source_.next(line)) return false;
    } catch (const core::InputError& e) {
      ++line_no_;
      fail(e.what());
    }
    ++line_no_;
    return true;
  }

  /// The next line that is neither a comment nor blank; false at the end.
  bool next_content(std::string_view& line) {
    while (next(line))
      if (!is_blank(line) && !is_comment(line)) return true;
    return false;
  }

  void read_banner(MatrixMarketInfo& info) {
    std::string_view line;
    if (!next(line)) {
      line_no_ = 1;
      fail("empty file: expected the banner '%%MatrixMarket matrix coordinate real general'");
    }
    std::string_view t[6];
    const std::size_t n = split(line, t, 6);
    if (n == 0 || t[0] != "%%MatrixMarket") {
      fail(
          fmt::format("found {}: expected the banner '%%MatrixMarket matrix <format> <field> "
                      "<symmetry>'",
                      shown(line)));
    }
    if (n != 5) {
      // A file with CR-only line endings is one long first line.
      const bool cr = line.find('\r') != std::string_view::npos;
      fail(
          fmt::format("the banner has {} words: expected 5 ('%%MatrixMarket matrix "
                      "<format> <field> <symmetry>'){}",
                      n,
                      cr ? "; the line holds carriage returns: expected LF or CRLF line "
                           "endings, not CR alone"
                         : ""));
    }
    const std::string object = lower(t[1]);
    if (object != "matrix") fail(fmt::format("object {}: expected 'matrix'", shown(t[1])));
    const std::string format = lower(t[2]);
    if (format == "coordinate") {
      info.format = MmFormat::coordinate;
    } else if (format == "array") {
      info.format = MmFormat::array;
    } else {
      fail(fmt::format("format {}: expected 'coordinate' or 'array'", shown(t[2])));
    }
    const std::string field = lower(t[3]);
    if (field == "real" || field == "double") {
      info.field = MmField::real;
    } else if (field == "integer") {
      info.field = MmField::integer;
    } else if (field == "pattern") {
      info.field = MmField::pattern;
    } else if (field == "complex") {
      fail("field 'complex' is not supported: expected 'real', 'integer' or 'pattern'");
    } else {
      fail(fmt::format("field {}: expected 'real', 'integer' or 'pattern'", shown(t[3])));
    }
    const std::string symmetry = lower(t[4]);
    if (symmetry == "general") {
      info.symmetry = MmSymmetry::general;
    } else if (symmetry == "symmetric") {
      info.symmetry = MmSymmetry::symmetric;
    } else if (symmetry == "skew-symmetric") {
      info.symmetry = MmSymmetry::skew_symmetric;
    } else if (symmetry == "hermitian") {
      fail(
          "symmetry 'hermitian' is not supported (no complex values): expected 'general', "
          "'symmetric' or 'skew-symmetric'");
    } else {
      fail(fmt::format("symmetry {}: expected 'general', 'symmetric' or 'skew-symmetric'",
                       shown(t[4])));
    }
    if (info.format == MmFormat::array && info.field == MmField::pattern)
      fail("'array pattern' has no values: expected 'coordinate pattern' or an array of numbers");
  }

  std::int64_t parse_count(std::string_view token, std::string_view what) const {
    std::int64_t v = 0;
    if (token.size() > 1 && token[0] == '+') token.remove_prefix(1);
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    const bool digits = !token.empty() && token.find_first_not_of("0123456789") == token.npos;
    if (ec == std::errc::result_out_of_range && digits)
      fail(fmt::format("{} {}: too large, expected at most {}", what, shown(token),
                       std::numeric_limits<std::int64_t>::max()));
    if (ec != std::errc{} || ptr != token.data() + token.size() || v < 0)
      fail(fmt::format("{} {}: expected a non-negative integer", what, shown(token)));
    return v;
  }

  void read_size(MatrixMarketInfo& info) {
    std::string_view line;
    if (!next_content(line)) {
      ++line_no_;
      fail("end of file: expected the size line ('rows columns entries')");
    }
    std::string_view t[4];
    const std::size_t n = split(line, t, 4);
    const std::size_t want = info.format == MmFormat::coordinate ? 3 : 2;
    if (n != want) {
      fail(fmt::format("size line {} has {} values: expected {}", shown(line), n,
                       want == 3 ? "3 (rows, columns, entries)" : "2 (rows, columns)"));
    }
    info.rows = parse_count(t[0], "rows");
    info.cols = parse_count(t[1], "columns");
    if (info.rows < 1 || info.cols < 1)
      fail(fmt::format("a {} x {} matrix: expected at least one row and one column", info.rows,
                       info.cols));
    if (info.rows > kMaxIndex || info.cols > kMaxIndex)
      fail(fmt::format("a {} x {} matrix: expected at most {} rows and columns", info.rows,
                       info.cols, kMaxIndex));
    if (info.symmetry != MmSymmetry::general && info.rows != info.cols)
      fail(fmt::format("a {} matrix of {} x {}: expected a square matrix", name(info.symmetry),
                       info.rows, info.cols));
    if (info.format == MmFormat::coordinate) {
      info.entries = parse_count(t[2], "entries");
    } else if (info.symmetry == MmSymmetry::general) {
      info.entries = info.rows * info.cols;
    } else if (info.symmetry == MmSymmetry::symmetric) {
      info.entries = info.rows * (info.rows + 1) / 2;
    } else {
      info.entries = info.rows * (info.rows - 1) / 2;
    }
    const double need = read_bytes_estimate(info);
    if (need > limits_.max_bytes) {
      fail(
          fmt::format("{} {} entries of a {} x {} matrix need about {:.3g} GiB to read; the "
                      "limit is {:.3g} GiB ({}): expected a smaller matrix",
                      info.entries, name(info.format), info.rows, info.cols, need / 1073741824.0,
                      limits_.max_bytes / 1073741824.0, limits_.max_bytes_source));
    }
  }

  double parse_value(std::string_view token, MmField field) const {
    if (field == MmField::integer) {
      std::int64_t v = 0;
      std::string_view t = token;
      if (t.size() > 1 && t[0] == '+') t.remove_prefix(1);
      const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec == std::errc::result_out_of_range)
        fail(fmt::format("value {} is out of range: expected a 64-bit integer", shown(token)));
      if (ec != std::errc{} || ptr != t.data() + t.size())
        fail(fmt::format("value {}: expected an integer (the field is 'integer')", shown(token)));
      return static_cast<double>(v);
    }
    std::string_view t = token;
    if (t.size() > 1 && t[0] == '+' && t[1] != '-' && t[1] != '+') t.remove_prefix(1);
    double v = 0.0;
    const auto [ptr, ec] =
        std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::general);
    if (ptr != t.data() + t.size() || (ec != std::errc{} && ec != std::errc::result_out_of_range))
      fail(fmt::format("value {}: expected a real number", shown(token)));
    if (ec == std::errc::result_out_of_range) {
      // Underflow reads as zero or a subnormal, as strtod and scipy read it;
      // overflow is refused below.
      const std::string copy(t);
      v = std::strtod(copy.c_str(), nullptr);
    }
    if (!std::isfinite(v))
      fail(fmt::format("value {} is not a finite number: expected a finite real number",
                       shown(token)));
    return v;
  }

  std::int64_t parse_index(std::string_view token, std::string_view what, std::int64_t size) const {
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec != std::errc{} || ptr != token.data() + token.size() || v < 1 || v > size) {
      fail(fmt::format("{} index {}: expected an integer from 1 to {}", what, shown(token), size));
    }
    return v - 1;
  }

  void read_entries(MatrixMarketInfo& info) {
    const bool coordinate = info.format == MmFormat::coordinate;
    const std::size_t want = !coordinate ? 1 : info.field == MmField::pattern ? 2 : 3;
    // Reserve up to 1 Mi entries: a header may promise more than the file holds.
    const auto reserve = static_cast<std::size_t>(std::min<std::int64_t>(info.entries, 1 << 20));
    rows_.reserve(reserve);
    cols_.reserve(reserve);
    vals_.reserve(reserve);
    // Array position: column j, row i (column by column; a symmetric array
    // holds rows j..n-1 of column j, a skew-symmetric one rows j+1..n-1).
    std::int64_t ai = info.symmetry == MmSymmetry::skew_symmetric ? 1 : 0;
    std::int64_t aj = 0;
    std::string_view line;
    std::string_view t[4];
    for (std::int64_t e = 0; e < info.entries; ++e) {
      if (!next_content(line)) {
        ++line_no_;
        fail(fmt::format("end of file after {} of the {} {} the size line declares", e,
                         info.entries, coordinate ? "entries" : "values"));
      }
      const std::size_t n = split(line, t, 4);
      if (n != want) {
        fail(fmt::format("{} values on an entry line: expected {}", n,
                         !coordinate                      ? "1 (one value per line)"
                         : info.field == MmField::pattern ? "2 (row, column)"
                                                          : "3 (row, column, value)"));
      }
      std::int64_t i = 0;
      std::int64_t j = 0;
      double v = 1.0;
      if (coordinate) {
        i = parse_index(t[0], "row", info.rows);
        j = parse_index(t[1], "column", info.cols);
        if (info.field != MmField::pattern) v = parse_value(t[2], info.field);
        if (info.symmetry == MmSymmetry::symmetric && i < j) {
          fail(
              fmt::format("entry ({}, {}) lies above the diagonal: a symmetric file holds the "
                          "lower triangle (expected row >= column)",
                          i + 1, j + 1));
        }
        if (info.symmetry == MmSymmetry::skew_symmetric && i <= j) {
          fail(
              fmt::format("entry ({}, {}) lies {} the diagonal: a skew-symmetric file holds the "
                          "strict lower triangle (expected row > column)",
                          i + 1, j + 1, i == j ? "on" : "above"));
        }
      } else {
        v = parse_value(t[0], info.field);
        i = ai;
        j = aj;
        if (++ai == info.rows) {
          ++aj;
          ai = info.symmetry == MmSymmetry::general     ? 0
               : info.symmetry == MmSymmetry::symmetric ? aj
                                                        : aj + 1;
        }
        if (v == 0.0) {
          ++info.zeros_dropped;
          continue;
        }
      }
      rows_.push_back(static_cast<std::int32_t>(i));
      cols_.push_back(static_cast<std::int32_t>(j));
      vals_.push_back(v);
    }
    if (next_content(line)) {
      fail(fmt::format("more {} than the {} the size line declares: expected the end of the file",
                       coordinate ? "entries" : "values", info.entries));
    }
  }

  CsrMatrix build(MatrixMarketInfo& info) {
    CsrMatrix a;
    a.rows = info.rows;
    a.cols = info.cols;
    const bool mirror = info.symmetry != MmSymmetry::general;
    const double sign = info.symmetry == MmSymmetry::skew_symmetric ? -1.0 : 1.0;
    a.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
    for (std::size_t e = 0; e < rows_.size(); ++e) {
      ++a.row_ptr[rows_[e] + 1];
      if (mirror && rows_[e] != cols_[e]) ++a.row_ptr[cols_[e] + 1];
    }
    for (std::int64_t i = 0; i < a.rows; ++i) a.row_ptr[i + 1] += a.row_ptr[i];
    const auto total = static_cast<std::size_t>(a.row_ptr.back());
    a.col.resize(total);
    a.val.resize(total);
    {
      std::vector<std::int64_t> next(a.row_ptr.begin(), a.row_ptr.end() - 1);
      for (std::size_t e = 0; e < rows_.size(); ++e) {
        const std::int64_t k = next[rows_[e]]++;
        a.col[k] = cols_[e];
        a.val[k] = vals_[e];
        if (mirror && rows_[e] != cols_[e]) {
          const std::int64_t m = next[cols_[e]]++;
          a.col[m] = rows_[e];
          a.val[m] = sign * vals_[e];
          ++info.mirrored;
        }
      }
    }
    // Sort each row by column and sum duplicates, compacting in place. The
    // coordinates stay until the sums are checked (no higher peak than while
    // placing), to name the entry whose sum overflows.
    std::vector<std::pair<std::int32_t, double>> row;
    std::int64_t out = 0;
    std::int64_t begin = 0;
    for (std::int64_t i = 0; i < a.rows; ++i) {
      const std::int64_t end = a.row_ptr[i + 1];
      row.clear();
      for (std::int64_t k = begin; k < end; ++k) row.emplace_back(a.col[k], a.val[k]);
      std::stable_sort(row.begin(), row.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      const std::int64_t row_start = out;
      for (const auto& [c, v] : row) {
        if (out > row_start && a.col[out - 1] == c) {
          a.val[out - 1] += v;
          if (!std::isfinite(a.val[out - 1])) overflow(i, c, mirror, sign);
          // Count a duplicate once, in the triangle the file holds.
          if (!mirror || c <= i) ++info.duplicates;
        } else {
          a.col[out] = c;
          a.val[out] = v;
          ++out;
        }
      }
      begin = end;
      a.row_ptr[i + 1] = out;
    }
    std::vector<std::int32_t>().swap(rows_);
    std::vector<std::int32_t>().swap(cols_);
    std::vector<double>().swap(vals_);
    a.col.resize(static_cast<std::size_t>(out));
    a.val.resize(static_cast<std::size_t>(out));
    a.col.shrink_to_fit();
    a.val.shrink_to_fit();
    return a;
  }

  /// The duplicates summed into (i, c) overflow: refuses the entry whose
  /// addition did (summed again in the file order the row followed), with
  /// its line.
  [[noreturn]] void overflow(std::int64_t i, std::int64_t c, bool mirror, double sign) {
    double sum = 0.0;
    std::size_t e = 0;
    for (; e < rows_.size(); ++e) {
      if (rows_[e] == i && cols_[e] == c) {
        sum += vals_[e];
      } else if (mirror && i != c && rows_[e] == c && cols_[e] == i) {
        sum += sign * vals_[e];
      } else {
        continue;
      }
      if (!std::isfinite(sum)) break;
    }
    const bool found = e < rows_.size();
    const std::int64_t r = found ? rows_[e] : i;
    const std::int64_t k = found ? cols_[e] : c;
    const std::string what = fmt::format(
        "the duplicate entries at ({}, {}) sum to more than 1.8e308 in magnitude (overflow): "
        "expected duplicates whose sum is a finite number",
        r + 1, k + 1);
    line_no_ = found ? entry_line(static_cast<std::int64_t>(e)) : 0;
    if (line_no_ > 0) fail(what);
    throw core::InputError(fmt::format("{}: {}", name_, what));
  }

  /// The line of the file's entry `e` (0-based), read again from the start;
  /// 0 where the input cannot be read again.
  long long entry_line(std::int64_t e) {
    if (!source_.rewind()) return 0;
    line_no_ = 0;
    std::string_view line;
    next(line);          // the banner
    next_content(line);  // the size line
    for (std::int64_t k = 0; k <= e; ++k) next_content(line);
    return line_no_;
  }

  LineSource& source_;
  std::string name_;
  const ReadLimits& limits_;
  long long line_no_ = 0;
  std::vector<std::int32_t> rows_;
  std::vector<std::int32_t> cols_;
  std::vector<double> vals_;
};

}  // namespace

std::string_view name(MmFormat format) noexcept {
  return format == MmFormat::coordinate ? "coordinate" : "array";
}

std::string_view name(MmField field) noexcept {
  static constexpr std::array<std::string_view, 3> names{"real", "integer", "pattern"};
  return core::enum_name(names, field);
}

std::string_view name(MmSymmetry symmetry) noexcept {
  static constexpr std::array<std::string_view, 3> names{"general", "symmetric", "skew-symmetric"};
  return core::enum_name(names, symmetry);
}

double read_bytes_estimate(const MatrixMarketInfo& info) noexcept {
  const auto entries = static_cast<double>(info.entries);
  const double expanded = info.symmetry == MmSymmetry::general ? entries : 2.0 * entries;
  return 16.0 * entries + 12.0 * expanded + 16.0 * static_cast<double>(info.rows);
}

MatrixMarketFile read_matrix_market(std::FILE* in, std::string_view name,
                                    const ReadLimits& limits) {
  StreamSource source(in);
  return Parser(source, name, limits).run();
}

MatrixMarketFile parse_matrix_market(std::string_view text, std::string_view name,
                                     const ReadLimits& limits) {
  MemorySource source(text);
  return Parser(source, name, limits).run();
}

MatrixMarketFile read_matrix_market(const std::filesystem::path& path, const ReadLimits& limits) {
  const std::string name = path.string();
  // A FIFO, a device or a directory is refused before anything waits on it.
  const core::OpenedFile file = core::open_regular_file(path);
  if (!file.kind.empty()) {
    throw core::InputError(
        fmt::format("{}: is {}, expected a Matrix Market file (a regular file)", name, file.kind));
  }
  if (file.fd < 0)
    throw core::InputError(fmt::format("{}: cannot open ({})", name, std::strerror(file.error)));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(::fdopen(file.fd, "rb"), &std::fclose);
  if (!in) {
    const int err = errno;
    ::close(file.fd);
    throw core::InputError(fmt::format("{}: cannot open ({})", name, std::strerror(err)));
  }
  return read_matrix_market(in.get(), name, limits);
}

}  // namespace asyncsolve::sparse
