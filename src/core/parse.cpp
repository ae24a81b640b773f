#include "asyncsolve/core/parse.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"

namespace asyncsolve::core {

std::string format_number(double value) {
  if (value == std::trunc(value) && std::abs(value) < 1e6) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  // The shorter of the shortest fixed text that reads back and the shortest
  // scientific one, with the exponent written "1e6", "1e-300".
  std::string best = fmt::format("{}", value);
  for (int digits = 0; digits <= 17; ++digits) {
    std::string text = fmt::format("{:.{}e}", value, digits);
    double back = 0.0;
    if (!parse_whole(std::string_view(text), back) || back != value) continue;
    const std::size_t e = text.find('e');
    std::string exponent = text.substr(e + 1);
    const bool negative = exponent[0] == '-';
    exponent.erase(0, 1);
    while (exponent.size() > 1 && exponent[0] == '0') exponent.erase(0, 1);
    text.resize(e);
    text += negative ? "e-" : "e";
    text += exponent;
    if (text.size() < best.size() || best.find('e') != std::string::npos) best = text;
    break;
  }
  return best;
}

std::vector<std::size_t> parse_message_sizes(std::string_view text, std::size_t min_bytes,
                                             std::size_t max_bytes) {
  const auto fail = [&] {
    return InputError(
        fmt::format("-m '{}': expected MIN:MAX (or MAX) message sizes in bytes, "
                    "powers of two with {} <= MIN <= MAX <= {}",
                    printable(text), min_bytes, max_bytes));
  };
  const std::size_t colon = text.find(':');
  std::size_t lo = min_bytes;
  std::size_t hi = 0;
  if (colon == std::string_view::npos) {
    if (!parse_whole(text, hi)) throw fail();
  } else if (!parse_whole(text.substr(0, colon), lo) || !parse_whole(text.substr(colon + 1), hi)) {
    throw fail();
  }
  const auto power_of_two = [](std::size_t v) { return v != 0 && (v & (v - 1)) == 0; };
  if (lo < min_bytes || hi > max_bytes || lo > hi || !power_of_two(lo) || !power_of_two(hi)) {
    throw fail();
  }
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = lo; bytes <= hi; bytes *= 2) sizes.push_back(bytes);
  return sizes;
}

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (const char ch : text) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;  // printable ASCII, and UTF-8 sequences as they are
    }
  }
  return out;
}

std::vector<std::string> split_list(std::string_view option, const std::string& text,
                                    std::string_view expected) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(',', begin);
    std::string item =
        text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (item.empty()) {
      throw InputError(fmt::format("{} '{}': empty item, expected {}", option, text, expected));
    }
    if (std::find(items.begin(), items.end(), item) != items.end()) {
      throw InputError(
          fmt::format("{} '{}': '{}' listed twice, expected {}", option, text, item, expected));
    }
    items.push_back(std::move(item));
    if (end == std::string::npos) return items;
    begin = end + 1;
  }
}

void expect_at_least(std::string_view option, long long value, long long min,
                     std::string_view note) {
  if (value < min) {
    throw InputError(fmt::format("{} {}: expected an integer >= {}{}", option, value, min, note));
  }
}

void expect_repetitions(long iterations, long warmup, int repeats) {
  expect_at_least("-i", iterations, 1);
  expect_at_least("-x", warmup, 0);
  expect_at_least("--repeats", repeats, 1);
}

}  // namespace asyncsolve::core
