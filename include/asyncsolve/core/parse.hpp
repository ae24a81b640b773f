#pragma once
/// Small parsers shared by the commands and the benchmarks.
#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace asyncsolve::core {

/// Parses all of `text` as a number (std::from_chars); false if it is empty,
/// malformed, out of range or followed by anything.
template <typename T>
bool parse_whole(std::string_view text, T& value) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && ec == std::errc{} && ptr == text.data() + text.size();
}

/// OSU's `-m MIN:MAX` (or `MAX`, from `min_bytes`): every power of two from
/// MIN to MAX bytes. Throws InputError naming the text and what was expected
/// unless both bounds are powers of two with min_bytes <= MIN <= MAX <= max_bytes.
std::vector<std::size_t> parse_message_sizes(std::string_view text, std::size_t min_bytes,
                                             std::size_t max_bytes);

/// Splits a comma-separated list. Throws InputError naming `option`, the
/// text and `expected` for an empty item or an item listed twice.
std::vector<std::string> split_list(std::string_view option, const std::string& text,
                                    std::string_view expected);

/// Throws InputError("OPTION VALUE: expected an integer >= MIN{note}")
/// unless value >= min: the one-line format of a bad number.
void expect_at_least(std::string_view option, long long value, long long min,
                     std::string_view note = {});

/// Checks -i (>= 1), -x (>= 0) and --repeats (>= 1) of a benchmark.
void expect_repetitions(long iterations, long warmup, int repeats);

}  // namespace asyncsolve::core
