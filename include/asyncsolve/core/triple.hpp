#pragma once
/// Three-component integer sizes ("X,Y,Z") as the command line spells them.
#include <array>
#include <string>
#include <string_view>

namespace asyncsolve::core {

/// A size or index in three dimensions, x first (x varies fastest in memory).
using Int3 = std::array<int, 3>;

/// The largest component parse_triple takes unless told otherwise.
inline constexpr int triple_max = 1000000000;

/// Parses "X,Y,Z" into three decimal integers, each from `min_value` to
/// `max_value`. Throws InputError naming `option`, the text (as typed) and
/// the limits.
Int3 parse_triple(std::string_view text, std::string_view option, int min_value = 1,
                  int max_value = triple_max);

/// Formats a triple as "X,Y,Z" (the inverse of parse_triple).
std::string format_triple(const Int3& v);

/// Product of the three components, as a 64-bit count.
constexpr long long product(const Int3& v) noexcept {
  return static_cast<long long>(v[0]) * v[1] * v[2];
}

}  // namespace asyncsolve::core
