#include "asyncsolve/core/triple.hpp"

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"

namespace asyncsolve::core {

Int3 parse_triple(std::string_view text, std::string_view option, int min_value, int max_value) {
  auto fail = [&](std::string_view why) -> InputError {
    return InputError(fmt::format("{} '{}': {}expected three integers from {} to {} written X,Y,Z",
                                  option, printable(text), why, min_value, max_value));
  };
  Int3 out{};
  std::size_t commas = 0;
  for (const char c : text) commas += c == ',' ? 1 : 0;
  if (commas > 2) throw fail(fmt::format("{} values given, ", commas + 1));
  std::size_t pos = 0;
  for (int d = 0; d < 3; ++d) {
    const std::size_t end = (d < 2) ? text.find(',', pos) : text.size();
    if (end == std::string_view::npos) throw fail("");
    const std::string_view part = text.substr(pos, end - pos);
    const std::optional<long long> value = parse_integer<long long>(part);
    const bool digits = !part.empty() && part.find_first_not_of("-0123456789") == part.npos;
    if (!value && !digits) {
      throw fail(part.empty() ? "" : fmt::format("'{}' is not an integer, ", printable(part)));
    }
    if (!value || *value < min_value || *value > max_value) {
      throw fail(fmt::format("{} is out of range, ", printable(part)));
    }
    out[d] = static_cast<int>(*value);
    pos = end + 1;
  }
  return out;
}

std::string format_triple(const Int3& v) { return fmt::format("{},{},{}", v[0], v[1], v[2]); }

}  // namespace asyncsolve::core
