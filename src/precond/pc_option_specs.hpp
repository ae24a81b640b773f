#pragma once
/// The --pc-option names of each preconditioner (internal to the precond
/// layer): their values and ranges, and where each goes in the typed
/// settings (PcSettings::chebyshev, PcSettings::boomeramg), whose member
/// initialisers are the defaults.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/precond/preconditioner.hpp"

namespace asyncsolve::precond {

/// One --pc-option name: a choice (choices not empty, in the order of the
/// typed field's enum values) or a number.
struct PcOptionSpec {
  std::string_view name;
  std::vector<std::string_view> choices;
  bool integer = false;
  double min = 0;
  double max = 0;
  std::string_view help;
  /// Stores a checked value into the typed settings: the index of a choice,
  /// or a number (within [min, max], integral when `integer`).
  void (*store)(PcSettings& settings, std::size_t choice, double number) = nullptr;
  /// The typed field's value, spelled as the option spells it.
  std::string (*show)(const PcOptionSpec& spec, const PcSettings& settings) = nullptr;
};

/// The options `kind` takes (none for none, jacobi and ilu0).
std::span<const PcOptionSpec> pc_option_specs(PcKind kind);

/// The value of the option `spec` in `settings`, as the option spells it
/// (its default when not given).
inline std::string pc_option_value(const PcOptionSpec& spec, const PcSettings& settings) {
  return spec.show(spec, settings);
}

}  // namespace asyncsolve::precond
