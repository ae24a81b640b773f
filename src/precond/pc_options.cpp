// --pc and --pc-option: parsing and validation, identical on every rank
// (they read only the command line).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "pc_option_specs.hpp"

namespace asyncsolve::precond {

using core::InputError;

namespace {

constexpr int max_degree = 100;

/// The integer `text` (digits with an optional '-', no leading zero), or nullopt.
std::optional<long> to_integer(std::string_view text) {
  const std::string_view digits = text.starts_with('-') ? text.substr(1) : text;
  if (digits.size() > 1 && digits.front() == '0') return std::nullopt;
  long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

/// Whether `c` may appear in a NAME=VALUE item: printable, not a blank.
bool is_item_char(char c) { return c > ' ' && c < 0x7f; }

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

/// Checks `value` for `spec` and stores it into the typed settings; returns
/// its canonical spelling. Throws InputError naming the option and the range.
std::string store_checked(const PcOptionSpec& spec, std::string_view value, PcSettings& settings) {
  const auto refuse = [&] {
    throw InputError(fmt::format("--pc-option {}={}: expected {} (--pc {})", spec.name, value,
                                 expected_text(spec), pc_kind_name(settings.kind)));
  };
  if (!spec.choices.empty()) {
    const auto it = std::find(spec.choices.begin(), spec.choices.end(), value);
    if (it == spec.choices.end()) refuse();
    spec.store(settings, static_cast<std::size_t>(it - spec.choices.begin()), 0.0);
    return std::string(value);
  }
  if (spec.integer) {
    const auto v = to_integer(value);
    if (!v || static_cast<double>(*v) < spec.min || static_cast<double>(*v) > spec.max) refuse();
    spec.store(settings, 0, static_cast<double>(*v));
    return fmt::format("{}", *v);
  }
  const auto v = to_real(value);
  if (!v || *v < spec.min || *v > spec.max) refuse();
  spec.store(settings, 0, *v);
  return fmt::format("{}", *v);
}

// Where each option goes: Group is the member of PcSettings holding the
// kind's settings, Field the member of that.
template <auto Group, auto Field>
void store_choice(PcSettings& s, std::size_t choice, double) {
  auto& field = (s.*Group).*Field;
  field = static_cast<std::remove_reference_t<decltype(field)>>(choice);
}

template <auto Group, auto Field>
void store_number(PcSettings& s, std::size_t, double number) {
  auto& field = (s.*Group).*Field;
  field = static_cast<std::remove_reference_t<decltype(field)>>(number);
}

template <auto Group, auto Field>
std::string show_choice(const PcOptionSpec& spec, const PcSettings& s) {
  return std::string(spec.choices.at(static_cast<std::size_t>((s.*Group).*Field)));
}

template <auto Group, auto Field>
std::string show_number(const PcOptionSpec&, const PcSettings& s) {
  return fmt::format("{}", (s.*Group).*Field);
}

/// A number option: Field of the settings Group (PcSettings::chebyshev or boomeramg).
template <auto Group, auto Field>
PcOptionSpec number_spec(std::string_view name, bool integer, double min, double max,
                         std::string_view help) {
  return {name, {}, integer, min, max, help, store_number<Group, Field>, show_number<Group, Field>};
}

/// A choice option: `choices` name Field's enum values in their order.
template <auto Group, auto Field>
PcOptionSpec choice_spec(std::string_view name, std::vector<std::string_view> choices,
                         std::string_view help) {
  return {name,
          std::move(choices),
          false,
          0,
          0,
          help,
          store_choice<Group, Field>,
          show_choice<Group, Field>};
}

}  // namespace

std::span<const PcOptionSpec> pc_option_specs(PcKind kind) {
  constexpr auto cheb = &PcSettings::chebyshev;
  constexpr auto amg = &PcSettings::boomeramg;
  using C = ChebyshevSettings;
  using B = BoomerAmgSettings;
  static const std::array<PcOptionSpec, 2> chebyshev{{
      number_spec<cheb, &C::lanczos_steps>(
          "lanczos_steps", true, 2, 200,
          "CG (Lanczos) steps that estimate the eigenvalue bounds at setup"),
      number_spec<cheb, &C::lambda_max_factor>("lambda_max_factor", false, 1, 10,
                                               "safety factor on the largest eigenvalue estimate"),
  }};
  // The choices in the order of the enums' values.
  static const std::array<PcOptionSpec, 10> boomeramg{{
      choice_spec<amg, &B::coarsen>("coarsen", {"hmis", "pmis", "falgout", "cljp", "rs"},
                                    "coarsening (HYPRE_BoomerAMGSetCoarsenType)"),
      choice_spec<amg, &B::interp>("interp", {"ext+i", "ext", "standard", "classical", "direct"},
                                   "interpolation (HYPRE_BoomerAMGSetInterpType)"),
      choice_spec<amg, &B::relax>(
          "relax", {"l1-sym-gs", "sym-gs", "jacobi", "l1-jacobi", "chebyshev", "gs", "l1-gs"},
          "smoother (HYPRE_BoomerAMGSetRelaxType): CG needs a symmetric one; the nonsymmetric "
          "methods default to l1-gs, forward hybrid Gauss-Seidel"),
      choice_spec<amg, &B::cycle>("cycle", {"v", "w"}, "cycle type"),
      number_spec<amg, &B::cycles>("cycles", true, 1, 10, "cycles per apply"),
      number_spec<amg, &B::sweeps>("sweeps", true, 1, 10, "smoothing sweeps down and up"),
      number_spec<amg, &B::strong_threshold>("strong_threshold", false, 0, 1, "strength threshold"),
      number_spec<amg, &B::agg_levels>("agg_levels", true, 0, 10,
                                       "levels of aggressive coarsening"),
      number_spec<amg, &B::max_levels>("max_levels", true, 2, 50, "most levels"),
      number_spec<amg, &B::pmax>("pmax", true, 0, 20,
                                 "most interpolation elements per row (0: no limit)"),
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

std::string_view pc_kind_name(PcKind kind) {
  return core::enum_name(pc_kind_names, kind, "unknown");
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
      throw InputError(fmt::format(
          "--pc {}: expected chebyshev:DEGREE with DEGREE an integer from 1 to {} (digits, "
          "no leading zero)",
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
  settings.chebyshev = {};
  settings.boomeramg = {};
  // Items are separated by commas, and by the newlines that join repeated
  // --pc-option values; every item is NAME=VALUE, exactly as typed.
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t cut = std::min(text.find_first_of(",\n", at), text.size());
    const std::string_view item = text.substr(at, cut - at);
    at = cut + 1;
    if (item.empty()) {
      throw InputError(
          fmt::format("--pc-option '{}': an empty item (two commas, or a comma at an end), "
                      "expected NAME=VALUE[,NAME=VALUE...]",
                      text));
    }
    if (!std::all_of(item.begin(), item.end(), is_item_char)) {
      throw InputError(
          fmt::format("--pc-option '{}': holds a blank, a control or a non-ASCII character, "
                      "expected NAME=VALUE without spaces",
                      item));
    }
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
    const std::string_view name = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&](const PcOptionSpec& s) { return s.name == name; });
    if (spec == specs.end()) {
      std::vector<std::string_view> names;
      for (const PcOptionSpec& s : specs) names.push_back(s.name);
      throw InputError(fmt::format("--pc-option '{}': {} has no option '{}', expected one of {}",
                                   item, pc_kind_name(settings.kind), name,
                                   fmt::join(names, ", ")));
    }
    for (const auto& [given, _] : settings.options) {
      if (given == name) {
        throw InputError(fmt::format(
            "--pc-option '{}': {} is given twice, expected each option once", item, name));
      }
    }
    settings.options.emplace_back(std::string(name), store_checked(*spec, value, settings));
  }
}

void use_nonsymmetric_defaults(PcSettings& settings) {
  const auto given = [&](std::string_view name) {
    return std::any_of(settings.options.begin(), settings.options.end(),
                       [&](const auto& option) { return option.first == name; });
  };
  if (!given("relax")) settings.boomeramg.relax = BoomerAmgSettings::Relax::l1_gs;
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
  PcSettings defaults;
  defaults.kind = kind;
  for (const PcOptionSpec& spec : pc_option_specs(kind)) {
    const std::string values = !spec.choices.empty()
                                   ? fmt::format("{}", fmt::join(spec.choices, "|"))
                                   : fmt::format("{} to {}", spec.min, spec.max);
    parts.push_back(fmt::format("{}={} ({}, default {})", spec.name, values, spec.help,
                                pc_option_value(spec, defaults)));
  }
  if (parts.empty()) return "none";
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace asyncsolve::precond
