#pragma once
/// The --pc-option names of each preconditioner (internal to the precond
/// layer): their defaults, values and ranges.
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/precond/preconditioner.hpp"

namespace asyncsolve::precond {

/// One --pc-option name: a choice (choices not empty) or a number.
struct PcOptionSpec {
  std::string_view name;
  std::string_view default_value;
  std::vector<std::string_view> choices;
  bool integer = false;
  double min = 0;
  double max = 0;
  std::string_view help;
  /// The default with a nonsymmetric method (PcSettings::nonsymmetric);
  /// empty: default_value.
  std::string_view nonsymmetric_default = {};
};

/// The options `kind` takes (none for none, jacobi and ilu0).
std::span<const PcOptionSpec> pc_option_specs(PcKind kind);

/// The value of option `name` in `settings` (the last given), or its default
/// (the nonsymmetric one when settings.nonsymmetric).
std::string pc_option_value(const PcSettings& settings, std::string_view name);

}  // namespace asyncsolve::precond
