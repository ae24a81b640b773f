// AllreduceAlgorithm: the --allreduce names, parsed once into a type.
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <optional>
#include <string>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"

namespace asyncsolve::collectives {
namespace {

/// The largest k of knomial:k (a k-nomial tree of more children than any
/// machine has ranks per level is a flat tree).
constexpr int max_degree = 1024;

[[noreturn]] void bad_name(std::string_view name) {
  throw core::InputError(
      fmt::format("--allreduce '{}': expected one of mpi, impi, tree, rd, shm, "
                  "knomial:K (K >= 2), twolevel:ALG or twolevel:shm+ALG (ALG: rd, "
                  "knomial:K, mpi, impi); K at most {}",
                  core::printable(name), max_degree));
}

/// A decimal integer from 2 to max_degree and nothing else, or nothing.
std::optional<int> parse_degree(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 2 || value > max_degree) {
    return std::nullopt;
  }
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
  } else if (name == "shm" && !leader) {
    out.kind = Kind::shm;
  } else if (name.starts_with("knomial:")) {
    const auto degree = parse_degree(name.substr(8));
    if (!degree) bad_name(whole);
    out.kind = Kind::knomial;
    out.degree = *degree;
  } else if (name.starts_with("twolevel:") && !leader) {
    std::string_view rest = name.substr(9);
    out.shm_node = rest.starts_with("shm+");
    if (out.shm_node) rest.remove_prefix(4);
    const AllreduceAlgorithm inner = parse(whole, rest, true);
    out.kind = Kind::twolevel;
    out.leader = inner.kind;
    out.leader_degree = inner.degree;
  } else {
    bad_name(whole);
  }
  return out;
}

std::string_view plain_name(AllreduceAlgorithm::Kind kind) {
  static constexpr std::array<std::string_view, 7> names{"mpi",     "impi",     "tree", "rd",
                                                         "knomial", "twolevel", "shm"};
  return core::enum_name(names, kind);
}

}  // namespace

std::string AllreduceAlgorithm::name() const {
  switch (kind) {
    case Kind::knomial:
      return fmt::format("knomial:{}", degree);
    case Kind::twolevel:
      return fmt::format("twolevel:{}{}", shm_node ? "shm+" : "", leader_algorithm().name());
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
