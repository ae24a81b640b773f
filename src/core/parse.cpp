#include "asyncsolve/core/parse.hpp"

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"

namespace asyncsolve::core {

std::vector<std::size_t> parse_message_sizes(std::string_view text, std::size_t min_bytes,
                                             std::size_t max_bytes) {
  const auto fail = [&] {
    return InputError(
        fmt::format("-m '{}': expected MIN:MAX (or MAX) message sizes in bytes, "
                    "powers of two with {} <= MIN <= MAX <= {}",
                    text, min_bytes, max_bytes));
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

}  // namespace asyncsolve::core
