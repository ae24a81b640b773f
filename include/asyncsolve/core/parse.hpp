#pragma once
/// Small parsers shared by the commands and the benchmarks.
#include <charconv>
#include <cstddef>
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

}  // namespace asyncsolve::core
