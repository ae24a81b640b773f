#pragma once
// The lines the Matrix Market reader parses (matrix_market.cpp): from a
// stream read in 1 MiB chunks, or from text in memory. Internal to sparse.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"

namespace asyncsolve::sparse::detail {

constexpr std::size_t kMaxLine = std::size_t{1} << 20;  // 1 MiB

/// Where the lines come from: a stream read in chunks, or text in memory.
class LineSource {
 public:
  virtual ~LineSource() = default;
  /// The next line without its end (LF, or CRLF); false at the end of the
  /// input. Throws InputError for a line longer than kMaxLine.
  virtual bool next(std::string_view& line) = 0;
  /// Back to the first line; false where the input cannot go back (a pipe).
  virtual bool rewind() = 0;
};

class MemorySource final : public LineSource {
 public:
  explicit MemorySource(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) override {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = text_.find('\n', pos_);
    const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
    line = text_.substr(pos_, stop - pos_);
    pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    if (line.size() > kMaxLine) throw core::InputError("line longer than 1 MiB");
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }
  bool rewind() override {
    pos_ = 0;
    return true;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

class StreamSource final : public LineSource {
 public:
  explicit StreamSource(std::FILE* in) : in_(in), buffer_(new char[kChunk]) {}
  bool next(std::string_view& line) override {
    carry_.clear();
    for (;;) {
      if (pos_ == end_ && !fill()) {
        if (carry_.empty()) return false;
        line = carry_;  // the last line, without a line end
        return finish(line);
      }
      const char* start = buffer_.get() + pos_;
      const void* nl = std::memchr(start, '\n', end_ - pos_);
      if (nl == nullptr) {
        carry_.append(start, end_ - pos_);
        pos_ = end_;
        if (carry_.size() > kMaxLine) throw core::InputError("line longer than 1 MiB");
        continue;
      }
      const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      pos_ += len + 1;
      if (carry_.empty()) {
        line = std::string_view(start, len);
      } else {
        carry_.append(start, len);
        line = carry_;
      }
      return finish(line);
    }
  }
  bool rewind() override {
    if (std::fseek(in_, 0, SEEK_SET) != 0) return false;
    pos_ = end_ = 0;
    eof_ = false;
    carry_.clear();
    return true;
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;
  /// Reads the next chunk; false at the end of the input.
  bool fill() {
    if (eof_) return false;
    end_ = std::fread(buffer_.get(), 1, kChunk, in_);
    pos_ = 0;
    if (end_ < kChunk) {
      if (std::ferror(in_) != 0)
        throw core::InputError(fmt::format("cannot read ({})", std::strerror(errno)));
      eof_ = true;
    }
    return end_ > 0;
  }
  static bool finish(std::string_view& line) {
    if (line.size() > kMaxLine) throw core::InputError("line longer than 1 MiB");
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }
  std::FILE* in_;
  std::unique_ptr<char[]> buffer_;
  std::string carry_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
};

}  // namespace asyncsolve::sparse::detail
