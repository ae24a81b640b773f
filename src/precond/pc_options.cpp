// --pc and --pc-option: parsing and validation, identical on every rank
// (they read only the command line).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "pc_option_specs.hpp"

namespace asyncsolve::precond {

using core::InputError;

namespace {

constexpr int max_degree = 100;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// The integer `text` (digits with an optional '-'), or nullopt.
std::optional<long> to_integer(std::string_view text) {
  long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

/// The finite decimal number `text`, or nullopt.
std::optional<double> to_real(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::string expected_text(const PcOptionSpec& spec) {
  if (!spec.choices.empty()) return fmt::format("one of {}", fmt::join(spec.choices, ", "));
  return fmt::format("{} from {} to {}", spec.integer ? "an integer" : "a number", spec.min,
                     spec.max);
}

/// The canonical spelling of `value` for `spec`; throws InputError.
std::string checked_value(const PcOptionSpec& spec, std::string_view value, PcKind kind) {
  const auto refuse = [&] {
    throw InputError(fmt::format("--pc-option {}={}: expected {} (--pc {})", spec.name, value,
                                 expected_text(spec), pc_kind_name(kind)));
  };
  if (!spec.choices.empty()) {
    const auto it = std::find(spec.choices.begin(), spec.choices.end(), value);
    if (it == spec.choices.end()) refuse();
    return std::string(value);
  }
  if (spec.integer) {
    const auto v = to_integer(value);
    if (!v || static_cast<double>(*v) < spec.min || static_cast<double>(*v) > spec.max) refuse();
    return fmt::format("{}", *v);
  }
  const auto v = to_real(value);
  if (!v || *v < spec.min || *v > spec.max) refuse();
  return fmt::format("{}", *v);
}

}  // namespace

std::span<const PcOptionSpec> pc_option_specs(PcKind kind) {
  static const std::array<PcOptionSpec, 2> chebyshev{{
      {"lanczos_steps",
       "10",
       {},
       true,
       2,
       200,
       "CG (Lanczos) steps that estimate the eigenvalue bounds at setup"},
      {"lambda_max_factor",
       "1.1",
       {},
       false,
       1,
       10,
       "safety factor on the largest eigenvalue estimate"},
  }};
  static const std::array<PcOptionSpec, 10> boomeramg{{
      {"coarsen",
       "hmis",
       {"hmis", "pmis", "falgout", "cljp", "rs"},
       false,
       0,
       0,
       "coarsening (HYPRE_BoomerAMGSetCoarsenType)"},
      {"interp",
       "ext+i",
       {"ext+i", "ext", "standard", "classical", "direct"},
       false,
       0,
       0,
       "interpolation (HYPRE_BoomerAMGSetInterpType)"},
      {"relax",
       "l1-sym-gs",
       {"l1-sym-gs", "sym-gs", "jacobi", "l1-jacobi", "chebyshev", "gs", "l1-gs"},
       false,
       0,
       0,
       "smoother (HYPRE_BoomerAMGSetRelaxType): CG needs a symmetric one; the nonsymmetric "
       "methods default to l1-gs, forward hybrid Gauss-Seidel",
       "l1-gs"},
      {"cycle", "v", {"v", "w"}, false, 0, 0, "cycle type"},
      {"cycles", "1", {}, true, 1, 10, "cycles per apply"},
      {"sweeps", "1", {}, true, 1, 10, "smoothing sweeps down and up"},
      {"strong_threshold", "0.25", {}, false, 0, 1, "strength threshold"},
      {"agg_levels", "0", {}, true, 0, 10, "levels of aggressive coarsening"},
      {"max_levels", "25", {}, true, 2, 50, "most levels"},
      {"pmax", "4", {}, true, 0, 20, "most interpolation elements per row (0: no limit)"},
  }};
  switch (kind) {
    case PcKind::chebyshev:
      return chebyshev;
    case PcKind::boomeramg:
      return boomeramg;
    case PcKind::none:
    case PcKind::jacobi:
    case PcKind::ilu0:
      break;
  }
  return {};
}

std::string pc_option_value(const PcSettings& settings, std::string_view name) {
  // the last one given wins
  std::string given;
  bool found = false;
  for (const auto& [key, value] : settings.options) {
    if (key == name) {
      given = value;
      found = true;
    }
  }
  if (found) return given;
  for (const PcOptionSpec& spec : pc_option_specs(settings.kind)) {
    if (spec.name != name) continue;
    if (settings.nonsymmetric && !spec.nonsymmetric_default.empty())
      return std::string(spec.nonsymmetric_default);
    return std::string(spec.default_value);
  }
  return {};
}

std::string_view pc_kind_name(PcKind kind) {
  // In PcKind's order.
  constexpr std::array<std::string_view, 5> names{"none", "jacobi", "chebyshev", "boomeramg",
                                                  "ilu0"};
  const auto index = static_cast<std::size_t>(kind);
  return index < names.size() ? names[index] : "unknown";
}

std::string pc_text(const PcSettings& settings) {
  if (settings.kind == PcKind::chebyshev && settings.degree != 3)
    return fmt::format("chebyshev:{}", settings.degree);
  return std::string(pc_kind_name(settings.kind));
}

void parse_pc(std::string_view text, PcSettings& settings) {
  const std::string expected =
      "none, jacobi, chebyshev, chebyshev:DEGREE (DEGREE from 1 to 100), boomeramg or ilu0";
  for (const PcKind kind :
       {PcKind::none, PcKind::jacobi, PcKind::boomeramg, PcKind::chebyshev, PcKind::ilu0}) {
    if (text == pc_kind_name(kind)) {
      settings.kind = kind;
      if (kind == PcKind::chebyshev) settings.degree = 3;
      return;
    }
  }
  constexpr std::string_view prefix = "chebyshev:";
  if (text.substr(0, prefix.size()) == prefix) {
    const auto degree = to_integer(text.substr(prefix.size()));
    if (!degree || *degree < 1 || *degree > max_degree) {
      throw InputError(
          fmt::format("--pc {}: expected chebyshev:DEGREE with DEGREE an integer from 1 to {}",
                      text, max_degree));
    }
    settings.kind = PcKind::chebyshev;
    settings.degree = static_cast<int>(*degree);
    return;
  }
  throw InputError(fmt::format("--pc '{}': expected {}", text, expected));
}

void parse_pc_options(std::string_view text, PcSettings& settings) {
  settings.options.clear();
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t cut = rest.find_first_of(",\n");
    const std::string_view item = trim(rest.substr(0, cut));
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
    if (item.empty()) continue;
    const std::span<const PcOptionSpec> specs = pc_option_specs(settings.kind);
    if (specs.empty()) {
      throw InputError(
          fmt::format("--pc-option '{}' with --pc {}: {} takes no options, expected no --pc-option",
                      item, pc_kind_name(settings.kind), pc_kind_name(settings.kind)));
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      throw InputError(fmt::format("--pc-option '{}': expected name=value ({})", item,
                                   pc_option_summary(settings.kind)));
    }
    const std::string_view name = trim(item.substr(0, eq));
    const std::string_view value = trim(item.substr(eq + 1));
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&](const PcOptionSpec& s) { return s.name == name; });
    if (spec == specs.end()) {
      std::vector<std::string_view> names;
      for (const PcOptionSpec& s : specs) names.push_back(s.name);
      throw InputError(fmt::format("--pc-option '{}': {} has no option '{}', expected one of {}",
                                   item, pc_kind_name(settings.kind), name,
                                   fmt::join(names, ", ")));
    }
    settings.options.emplace_back(std::string(name), checked_value(*spec, value, settings.kind));
  }
}

std::string pc_options_text(const PcSettings& settings) {
  std::vector<std::string> pairs;
  pairs.reserve(settings.options.size());
  for (const auto& [name, value] : settings.options)
    pairs.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(pairs, ","));
}

std::string pc_option_summary(PcKind kind) {
  std::vector<std::string> parts;
  for (const PcOptionSpec& spec : pc_option_specs(kind)) {
    const std::string values = !spec.choices.empty()
                                   ? fmt::format("{}", fmt::join(spec.choices, "|"))
                                   : fmt::format("{} to {}", spec.min, spec.max);
    parts.push_back(
        fmt::format("{}={} ({}, default {})", spec.name, values, spec.help, spec.default_value));
  }
  if (parts.empty()) return "none";
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace asyncsolve::precond
