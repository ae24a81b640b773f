#pragma once
// Spelling the values of a dense enum (0, 1, ...) from one table of names, so
// that no layer writes a switch of string literals. Pure, header-only.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace asyncsolve::core {

/// names[value] for an enum whose values are 0, 1, ..., N-1 (the table's
/// order); `fallback` for a value outside the table.
template <class E, std::size_t N>
constexpr std::string_view enum_name(const std::array<std::string_view, N>& names, E value,
                                     std::string_view fallback = "?") noexcept {
  const auto index = static_cast<std::size_t>(value);
  return index < N ? names[index] : fallback;
}

/// The value whose name is `text`, or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> enum_parse(const std::array<std::string_view, N>& names,
                                      std::string_view text) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace asyncsolve::core
