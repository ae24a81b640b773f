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

/// The names of the kinds, in Kind's order (knomial and twolevel take a
/// parameter after a colon).
constexpr std::array<std::string_view, 7> kind_names{"mpi",     "impi",     "tree", "rd",
                                                     "knomial", "twolevel", "shm"};

std::string_view plain_name(AllreduceAlgorithm::Kind kind) {
  return core::enum_name(kind_names, kind);
}

/// Parses `name` (a part of `whole`); `leader` restricts it to the
/// algorithms allowed among node leaders.
AllreduceAlgorithm parse(std::string_view whole, std::string_view name, bool leader) {
  using Kind = AllreduceAlgorithm::Kind;
  const std::size_t colon = name.find(':');
  const bool parameter = colon != std::string_view::npos;
  const auto kind = core::enum_parse<Kind>(kind_names, name.substr(0, colon));
  if (!kind) bad_name(whole);
  AllreduceAlgorithm out;
  out.kind = *kind;
  switch (*kind) {
    case Kind::mpi:
    case Kind::impi:
    case Kind::rd:
      if (parameter) bad_name(whole);
      break;
    case Kind::tree:
    case Kind::shm:
      if (parameter || leader) bad_name(whole);
      break;
    case Kind::knomial: {
      const auto degree = parameter ? parse_degree(name.substr(colon + 1)) : std::nullopt;
      if (!degree) bad_name(whole);
      out.degree = *degree;
      break;
    }
    case Kind::twolevel: {
      if (!parameter || leader) bad_name(whole);
      std::string_view rest = name.substr(colon + 1);
      out.shm_node = rest.starts_with("shm+");
      if (out.shm_node) rest.remove_prefix(4);
      const AllreduceAlgorithm inner = parse(whole, rest, true);
      out.leader = inner.kind;
      out.leader_degree = inner.degree;
      break;
    }
  }
  return out;
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
