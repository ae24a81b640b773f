#include "embedded_options.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"

namespace asyncsolve::app {

namespace {

/// Options that say where the system comes from or what grid it is on, and
/// those a matrix always refuses: not keywords.
constexpr std::array<std::string_view, 17> not_keywords{
    "--problem", "--offset",  "--global",         "--local",    "--dims",          "--matrix",
    "--rhs",     "--x0",      "--write-solution", "--assemble", "--matrix-memory", "--json",
    "--hybrid",  "--threads", "--copy",           "--shift",    "--kernel"};

/// The configurations a matrix in memory can be solved in: every method but
/// lanczos, every variant, the MPI transports, no hybrid scheme, a matrix
/// and no model problem. An option whose row holds in none of them is no
/// keyword.
Context matrix_context() {
  std::vector<std::string> methods = embedded_methods();
  std::vector<std::string> variants;
  for (const Variant v : values<Variant>()) variants.emplace_back(name(v));
  return Context{{{"--problem", {}},
                  {"--method", methods},
                  {"--variant", variants},
                  {"--transport", {"mpi", "rma", "shmem"}},
                  {"--hybrid", {"none"}},
                  {"--matrix", {"FILE"}},
                  {"--assemble", {""}},
                  {"--pc", names<precond::PcKind>()}}};
}

/// The long name of a row ("-i,--iterations" -> "--iterations").
std::string long_name(const OptionRow& row) {
  for (std::size_t at = 0; at < row.names.size();) {
    const std::size_t end = std::min(row.names.find(',', at), row.names.size());
    const std::string_view n = std::string_view(row.names).substr(at, end - at);
    if (n.starts_with("--")) return std::string(n);
    at = end + 1;
  }
  return row.name;
}

}  // namespace

std::vector<std::string> embedded_methods() {
  std::vector<std::string> out;
  for (const Method m : values<Method>())
    if (m != Method::lanczos) out.emplace_back(name(m));
  return out;
}

std::string option_of_keyword(std::string_view keyword) {
  std::string out = "--";
  for (const char c : keyword) out += c == '_' ? '-' : c;
  return out;
}

namespace {

/// The solve table's rows that are keywords, each with its keyword:
/// "--max-iters" -> "max_iters". Views into `rows`.
std::vector<std::pair<std::string, const OptionRow*>> keyword_rows(
    const std::vector<std::pair<std::string, OptionRow>>& rows) {
  const Context context = matrix_context();
  std::vector<std::pair<std::string, const OptionRow*>> out;
  for (const auto& [command, row] : rows) {
    if (command != "solve" || row.hidden) continue;
    const std::string option = long_name(row);
    if (std::find(not_keywords.begin(), not_keywords.end(), option) != not_keywords.end()) continue;
    if (!holds(row.applies, context)) continue;
    std::string keyword = option.substr(2);
    std::replace(keyword.begin(), keyword.end(), '-', '_');
    out.emplace_back(std::move(keyword), &row);
  }
  return out;
}

}  // namespace

std::vector<std::string> embedded_keywords() {
  std::vector<std::string> out;
  for (auto& [keyword, row] : keyword_rows(option_rows())) out.push_back(std::move(keyword));
  return out;
}

Command parse_embedded(const std::vector<NamedOption>& options, std::string_view matrix_name,
                       std::vector<std::string>* args_out) {
  const std::vector<std::pair<std::string, OptionRow>> rows = option_rows();
  const std::vector<std::pair<std::string, const OptionRow*>> known = keyword_rows(rows);
  std::vector<std::string> args{"asyncsolve", "solve", "--matrix", std::string(matrix_name)};
  for (const NamedOption& o : options) {
    const auto it = std::find_if(known.begin(), known.end(),
                                 [&](const auto& k) { return k.first == o.keyword; });
    if (it == known.end()) {
      std::vector<std::string_view> names;
      names.reserve(known.size());
      for (const auto& k : known) names.emplace_back(k.first);
      throw core::InputError(fmt::format("unexpected keyword '{}': expected one of {}",
                                         core::printable(o.keyword), fmt::join(names, ", ")));
    }
    const std::string option = option_of_keyword(o.keyword);
    if (o.flag) {
      // True or False: a flag's value. Given to an option that takes a
      // value, "--max-iters" would take the next option as its value.
      if (!it->second->value.empty()) {
        throw core::InputError(fmt::format(
            "{}={}: a bool: expected a value of {} ({}; True and False are for flags)", o.keyword,
            o.value == "False" ? "False" : "True", option, it->second->value));
      }
      if (o.value != "False") args.push_back(option);
      continue;
    }
    if (it->second->value.empty()) {  // a flag given a number or text
      throw core::InputError(fmt::format("{}={}: expected True or False ({} is a flag)", o.keyword,
                                         core::printable(o.value), option));
    }
    // --name=value: a value that starts with '-' stays a value.
    args.push_back(fmt::format("{}={}", option, o.value));
  }
  if (args_out != nullptr) *args_out = args;
  return parse_command_line(args);
}

}  // namespace asyncsolve::app
