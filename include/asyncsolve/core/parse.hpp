#pragma once
/// Small parsers shared by the commands and the benchmarks: strict numbers
/// (decimal only, the whole text, finite), OSU's message sizes, and the
/// short form numbers take in messages.
#include <charconv>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace asyncsolve::core {

/// Parses all of `text` as a number (std::from_chars: decimal, no sign but
/// '-', no hexadecimal, no spaces); false if it is empty, malformed, out of
/// range or followed by anything.
template <typename T>
bool parse_whole(std::string_view text, T& value) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && ec == std::errc{} && ptr == text.data() + text.size();
}

/// All of `text` as a finite double (parse_whole; "inf", "nan", "1e-400" and
/// "1e400" are refused), or nullopt.
inline std::optional<double> parse_real(std::string_view text) {
  double value = 0.0;
  if (!parse_whole(text, value) || !std::isfinite(value)) return std::nullopt;
  return value;
}

/// All of `text` as an integer of type T, decimal digits with an optional
/// '-' (no "0x10", no "1e3", no "010" read as octal), or nullopt.
template <typename T>
requires std::is_integral_v<T> std::optional<T> parse_integer(std::string_view text) {
  T value{};
  if (!parse_whole(text, value)) return std::nullopt;
  return value;
}

/// A number as messages, --help and docs/options.md print it: integers below
/// 10^6 in full, anything else in the shortest form that reads back exactly,
/// exponents without '+' or leading zeros ("1e-300", "0.5", "1e12").
std::string format_number(double value);

/// OSU's `-m MIN:MAX` (or `MAX`, from `min_bytes`): every power of two from
/// MIN to MAX bytes. Throws InputError naming the text and what was expected
/// unless both bounds are powers of two with min_bytes <= MIN <= MAX <= max_bytes.
std::vector<std::size_t> parse_message_sizes(std::string_view text, std::size_t min_bytes,
                                             std::size_t max_bytes);

/// `text` made safe for a one-line message: control characters (newlines,
/// escapes) and bytes outside printable ASCII written as \n, \t or \xHH,
/// and cut to `max_chars` with "..." (a message quotes what the user typed).
std::string printable(std::string_view text, std::size_t max_chars = 200);

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
