#include "option_table.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"

namespace asyncsolve::app {

using core::InputError;

namespace {

/// "|"-joined values of a condition.
std::string alternatives(const std::vector<std::string>& values) {
  return fmt::format("{}", fmt::join(values, "|"));
}

/// The first name of a CLI11 name list ("-i,--iterations" -> "-i").
std::string first_name(const std::string& names) { return names.substr(0, names.find(',')); }

/// docs/options.md's spelling of a name list ("-i,--iterations" -> "-i, --iterations").
std::string shown_names(const std::string& names) {
  std::string out = names;
  for (std::size_t at = out.find(','); at != std::string::npos; at = out.find(',', at + 2)) {
    out.replace(at, 1, ", ");
  }
  return out;
}

/// The range as --help and docs/options.md print it: "MIN to MAX".
std::string range_text(const Range& r) {
  return fmt::format("{} to {}", core::format_number(r.min), core::format_number(r.max));
}

/// A table cell: '|' escaped.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += "\\";
    out += c;
  }
  return out;
}

}  // namespace

std::string Applies::text() const {
  if (everywhere()) return "everywhere";
  std::vector<std::string> parts;
  parts.reserve(any.size());
  for (const auto& all : any) {
    std::vector<std::string> conditions;
    conditions.reserve(all.size());
    for (const Condition& c : all) {
      conditions.push_back(fmt::format("{} {}", c.dimension, alternatives(c.values)));
    }
    parts.push_back(fmt::format("{}", fmt::join(conditions, ", ")));
  }
  const std::string out = fmt::format("{}", fmt::join(parts, " or "));
  return except.empty() ? out : fmt::format("{} ({})", out, except);
}

Applies applies_when(std::vector<Condition> all) { return Applies{{std::move(all)}}; }

const std::vector<std::string>* Context::find(std::string_view dimension) const {
  for (const Dimension& d : dimensions)
    if (d.name == dimension) return &d.values;
  return nullptr;
}

namespace {

/// True when `condition` holds in `context` (an unknown dimension holds).
bool holds(const Condition& condition, const Context& context) {
  const std::vector<std::string>* values = context.find(condition.dimension);
  if (values == nullptr) return true;
  return std::any_of(values->begin(), values->end(), [&](const std::string& v) {
    return std::find(condition.values.begin(), condition.values.end(), v) != condition.values.end();
  });
}

}  // namespace

bool holds(const Applies& applies, const Context& context) {
  if (applies.everywhere()) return true;
  return std::any_of(applies.any.begin(), applies.any.end(), [&](const auto& all) {
    return std::all_of(all.begin(), all.end(),
                       [&](const Condition& c) { return holds(c, context); });
  });
}

std::string quote_value(std::string_view text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("._,:/+-=").find(c) != std::string_view::npos;
  });
  return plain ? std::string(text) : fmt::format("'{}'", core::printable(text));
}

std::string number_message(const OptionRow& row, std::string_view text) {
  const Range& r = *row.range;
  std::string what;
  if (!row.noun.empty()) {
    what = fmt::format("{} from {}", row.noun, range_text(r));
  } else if (row.integer) {
    what = fmt::format("an integer from {}", range_text(r));
  } else {
    what = fmt::format("a {}number from {}", r.min > 0.0 ? "positive " : "", range_text(r));
  }
  std::string why;
  double any = 0.0;
  if (row.integer && !core::parse_integer<long long>(text)) {
    const bool digits = !text.empty() && text.find_first_not_of("-0123456789") == text.npos;
    if (!digits) why = " (decimal digits)";
  } else if (!row.integer && core::parse_whole(text, any) && !std::isfinite(any)) {
    why = " (a finite number)";
  }
  return fmt::format("{} {}: expected {}{}{}", row.name, quote_value(text), what, why, row.note);
}

std::string check_number(const OptionRow& row, std::string_view text) {
  const Range& r = *row.range;
  if (row.integer) {
    const std::optional<long long> v = core::parse_integer<long long>(text);
    if (!v || static_cast<double>(*v) < r.min || static_cast<double>(*v) > r.max) {
      throw InputError(number_message(row, text));
    }
    return fmt::format("{}", *v);
  }
  const std::optional<double> v = core::parse_real(text);
  if (!v || *v < r.min || *v > r.max) throw InputError(number_message(row, text));
  // Shortest text that reads back to the same double: CLI11 converts it again.
  return fmt::format("{}", *v);
}

OptionTable::OptionTable(CLI::App& app, std::string command)
    : app_(app), command_(std::move(command)) {}

OptionRow& OptionTable::add_row(const std::string& names, OptionSpec spec) {
  OptionRow row;
  row.names = names;
  row.name = first_name(names);
  row.value = std::move(spec.value);
  row.default_text = std::move(spec.shown_default);
  row.applies = std::move(spec.applies);
  row.sample = std::move(spec.sample);
  row.help = std::move(spec.help);
  row.limits = std::move(spec.limits);
  row.noun = std::move(spec.noun);
  row.note = std::move(spec.note);
  row.hidden = spec.hidden;
  rows_.push_back(std::move(row));
  return rows_.back();
}

OptionRow& OptionTable::add_number_row(const std::string& names, double initial, Range range,
                                       bool integer, const OptionSpec& spec) {
  OptionSpec s = spec;
  if (s.value.empty()) s.value = integer ? "N" : "X";
  const bool has_default = initial >= range.min && initial <= range.max;
  if (s.shown_default.empty() && has_default) s.shown_default = core::format_number(initial);
  OptionRow& row = add_row(names, std::move(s));
  row.range = range;
  row.integer = integer;
  if (has_default)
    row.unchanged =
        integer ? fmt::format("{}", static_cast<long long>(initial)) : fmt::format("{}", initial);
  if (row.sample.empty()) {
    // The end of the range farther from the default.
    const double far =
        std::abs(range.max - initial) >= std::abs(initial - range.min) ? range.max : range.min;
    row.sample = integer ? fmt::format("{}", static_cast<long long>(far)) : fmt::format("{}", far);
  }
  return row;
}

CLI::Option* OptionTable::bind(const std::string& names, int& target, const std::string& help) {
  return app_.add_option(names, target, help);
}
CLI::Option* OptionTable::bind(const std::string& names, long& target, const std::string& help) {
  return app_.add_option(names, target, help);
}
CLI::Option* OptionTable::bind(const std::string& names, double& target, const std::string& help) {
  return app_.add_option(names, target, help);
}

CLI::Option* OptionTable::declare(OptionRow& row, CLI::Option* option) {
  row.option = option;
  // --help: the help text, then the range and where the option applies.
  std::vector<std::string> notes;
  if (row.range) notes.push_back(range_text(*row.range));
  if (!row.limits.empty()) notes.push_back(row.limits);
  if (!row.applies.everywhere()) notes.push_back("applies to " + row.applies.text());
  std::string description = row.help;
  if (!notes.empty()) description += fmt::format(" [{}]", fmt::join(notes, "; "));
  option->description(description);
  if (!row.default_text.empty()) option->default_str(row.default_text);
  if (row.hidden) option->group("");
  if (row.range) {
    // Strict parse and range check of every value given, before CLI11
    // converts the (canonical) text. The row lives as long as the table.
    const std::size_t index = rows_.size() - 1;
    option->transform(CLI::Validator(
        [this, index](std::string& text) {
          text = check_number(rows_[index], text);
          return std::string();
        },
        "", ""));
  }
  return option;
}

CLI::Option* OptionTable::text(const std::string& names, std::string& target, OptionSpec spec) {
  if (spec.value.empty()) spec.value = "TEXT";
  if (spec.shown_default.empty()) spec.shown_default = target;
  OptionRow& row = add_row(names, std::move(spec));
  row.unchanged = target;
  CLI::Option* option = declare(row, app_.add_option(names, target, row.help));
  // An empty value is never the default given on purpose: "--dims ''" is
  // refused like "--json ''", not taken as "not given".
  option->check(CLI::Validator(
      [name = row.name, form = row.value](const std::string& text) {
        if (text.empty()) throw InputError(fmt::format("{} '': expected {} {}", name, name, form));
        return std::string();
      },
      "", ""));
  return option;
}

CLI::Option* OptionTable::choice(const std::string& names, std::string& target,
                                 const std::vector<std::string>& choices, OptionSpec spec) {
  if (spec.value.empty()) spec.value = alternatives(choices);
  if (spec.sample.empty()) {
    for (const std::string& c : choices) {
      if (c != target) {
        spec.sample = c;
        break;
      }
    }
  }
  return text(names, target, std::move(spec));
}

CLI::Option* OptionTable::path(const std::string& names, std::string& target, OptionSpec spec) {
  if (spec.value.empty()) spec.value = "FILE";
  if (spec.sample.empty()) spec.sample = "out.json";
  OptionRow& row = add_row(names, std::move(spec));
  CLI::Option* option = declare(row, app_.add_option(names, target, row.help));
  option->default_str("");
  const std::string name = row.name;
  option->check(CLI::Validator(
      [name](std::string& text) {
        if (text.empty()) throw InputError(fmt::format("{} '': expected a file path", name));
        return std::string();
      },
      "", ""));
  return option;
}

CLI::Option* OptionTable::flag(const std::string& names, bool& target, OptionSpec spec) {
  OptionRow& row = add_row(names, std::move(spec));
  // --force alone (or --force=true): a flag given another value (--force=2,
  // --force=off, which CLI11 would read as true or false) is refused.
  return declare(row, app_.add_flag(names, target, row.help)->disable_flag_override());
}

bool OptionTable::changed(const OptionRow& row) const {
  if (row.option == nullptr || row.option->count() == 0) return false;
  if (!row.unchanged) return true;
  const std::vector<std::string>& results = row.option->results();
  if (results.empty()) return true;
  std::string given = results.back();
  if (row.range) given = check_number(row, given);
  return given != *row.unchanged;
}

const OptionRow* OptionTable::find(std::string_view name) const {
  for (const OptionRow& row : rows_) {
    if (row.name == name) return &row;
    for (std::size_t at = 0; at < row.names.size();) {
      const std::size_t end = std::min(row.names.find(',', at), row.names.size());
      if (std::string_view(row.names).substr(at, end - at) == name) return &row;
      at = end + 1;
    }
  }
  return nullptr;
}

void OptionTable::refuse_inapplicable(const Context& context) const {
  for (const OptionRow& row : rows_) {
    if (holds(row.applies, context) || !changed(row)) continue;
    // Name the first dimension that rules the option out.
    std::string with = "this configuration";
    for (const Condition& c : row.applies.any.front()) {
      if (const auto* values = context.find(c.dimension)) {
        if (!holds(Applies{{{c}}}, context)) {
          const std::string given_values = fmt::format("{}", fmt::join(*values, ","));
          with = given_values.empty() ? fmt::format("no {}", c.dimension)
                                      : fmt::format("{} {}", c.dimension, given_values);
          break;
        }
      }
    }
    const std::string given =
        row.value.empty()
            ? row.name
            : fmt::format("{} {}", row.name, quote_value(row.option->results().back()));
    throw InputError(fmt::format(
        "{} with {}: {} applies to {}, expected no {}{}", given, with, row.name, row.applies.text(),
        row.name,
        row.unchanged && !row.unchanged->empty() ? fmt::format(" (or {})", *row.unchanged) : ""));
  }
}

std::string markdown_header() {
  return "| Command | Option | Range | Default | Applies to |\n"
         "|---|---|---|---|---|\n";
}

std::string OptionTable::markdown() const {
  std::string out;
  for (const OptionRow& row : rows_) {
    if (row.hidden) continue;
    const std::string option = row.value.empty()
                                   ? shown_names(row.names)
                                   : fmt::format("{} {}", shown_names(row.names), row.value);
    std::string range = row.limits.empty() ? "-" : cell(row.limits);
    if (row.range) {
      range = fmt::format("{}{}", row.integer ? "integer " : "", range_text(*row.range));
    }
    out += fmt::format("| {} | `{}` | {} | {} | {} |\n", command_, cell(option), range,
                       row.default_text.empty() ? "-" : cell(row.default_text),
                       cell(row.applies.text()));
  }
  return out;
}

}  // namespace asyncsolve::app
