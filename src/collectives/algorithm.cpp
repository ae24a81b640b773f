// AllreduceAlgorithm: the --allreduce names, parsed once into a type.
#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <string>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/error.hpp"

namespace asyncsolve::collectives {
namespace {

[[noreturn]] void bad_name(std::string_view name) {
  throw core::InputError(
      fmt::format("--allreduce '{}': expected one of mpi, impi, tree, rd, "
                  "knomial:K (K >= 2), twolevel:ALG (ALG: rd, knomial:K, mpi, "
                  "impi)",
                  name));
}

/// A decimal integer >= 2 and nothing else, or nothing.
std::optional<int> parse_degree(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 2) return std::nullopt;
  return value;
}

/// Parses `name` (a part of `whole`); `leader` restricts it to the
/// algorithms allowed among node leaders.
AllreduceAlgorithm parse(std::string_view whole, std::string_view name, bool leader) {
  using Kind = AllreduceAlgorithm::Kind;
  AllreduceAlgorithm out;
  if (name == "rd") {
    out.kind = Kind::rd;
  } else if (name == "mpi") {
    out.kind = Kind::mpi;
  } else if (name == "impi") {
    out.kind = Kind::impi;
  } else if (name == "tree" && !leader) {
    out.kind = Kind::tree;
  } else if (name.starts_with("knomial:")) {
    const auto degree = parse_degree(name.substr(8));
    if (!degree) bad_name(whole);
    out.kind = Kind::knomial;
    out.degree = *degree;
  } else if (name.starts_with("twolevel:") && !leader) {
    const AllreduceAlgorithm inner = parse(whole, name.substr(9), true);
    out.kind = Kind::twolevel;
    out.leader = inner.kind;
    out.leader_degree = inner.degree;
  } else {
    bad_name(whole);
  }
  return out;
}

std::string_view plain_name(AllreduceAlgorithm::Kind kind) {
  using Kind = AllreduceAlgorithm::Kind;
  switch (kind) {
    case Kind::mpi:
      return "mpi";
    case Kind::impi:
      return "impi";
    case Kind::tree:
      return "tree";
    case Kind::rd:
      return "rd";
    case Kind::knomial:
      return "knomial";
    case Kind::twolevel:
      return "twolevel";
  }
  return "?";
}

}  // namespace

std::string AllreduceAlgorithm::name() const {
  switch (kind) {
    case Kind::knomial:
      return fmt::format("knomial:{}", degree);
    case Kind::twolevel:
      return fmt::format("twolevel:{}", leader_algorithm().name());
    default:
      return std::string(plain_name(kind));
  }
}

AllreduceAlgorithm AllreduceAlgorithm::leader_algorithm() const {
  AllreduceAlgorithm a;
  a.kind = leader;
  a.degree = leader_degree;
  return a;
}

AllreduceAlgorithm parse_allreduce(std::string_view name) { return parse(name, name, false); }

}  // namespace asyncsolve::collectives
