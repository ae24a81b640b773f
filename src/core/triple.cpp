#include "asyncsolve/core/triple.hpp"

#include <charconv>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"

namespace asyncsolve::core {

Int3 parse_triple(std::string_view text, std::string_view option, int min_value) {
  auto fail = [&]() -> InputError {
    return InputError(fmt::format("{} '{}': expected three integers >= {} written X,Y,Z", option,
                                  text, min_value));
  };
  Int3 out{};
  std::size_t pos = 0;
  for (int d = 0; d < 3; ++d) {
    const std::size_t end = (d < 2) ? text.find(',', pos) : text.size();
    if (end == std::string_view::npos) throw fail();
    const std::string_view part = text.substr(pos, end - pos);
    if (part.empty()) throw fail();
    int value = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc{} || ptr != part.data() + part.size() || value < min_value) throw fail();
    out[d] = value;
    pos = end + 1;
  }
  return out;
}

std::string format_triple(const Int3& v) { return fmt::format("{},{},{}", v[0], v[1], v[2]); }

}  // namespace asyncsolve::core
