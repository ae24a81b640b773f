#pragma once
// What the options of every subcommand share: the names of their enums (one
// table per enum, read by name() and parse<E>()), the one-line error format,
// "expected one of" lists, comma-separated lists, and --progress. Pure: no
// MPI, no output.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/par/comm.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace asyncsolve::app {

/// The spelling of every value of an option's enum E, indexed by the value
/// (0, 1, ...): specialise it, beside the enum, with a `static constexpr
/// std::array<std::string_view, N> names`. name() and parse<E>() read it;
/// nothing else spells the values.
template <class E>
struct EnumNames;

/// An enum with an EnumNames table.
template <class E>
concept NamedEnum = requires {
  EnumNames<E>::names;
};

/// How the command line spells `value`.
template <NamedEnum E>
constexpr std::string_view name(E value) {
  return EnumNames<E>::names[static_cast<std::size_t>(value)];
}

/// The value `text` spells, or nullopt. Past validation nothing parses.
template <NamedEnum E>
constexpr std::optional<E> parse(std::string_view text) {
  const auto& names = EnumNames<E>::names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == text) return static_cast<E>(i);
  return std::nullopt;
}

/// Every value of E, in order.
template <NamedEnum E>
std::vector<E> values() {
  std::vector<E> out;
  for (std::size_t i = 0; i < EnumNames<E>::names.size(); ++i) out.push_back(static_cast<E>(i));
  return out;
}

/// Every spelling of E, in the order of its values.
template <NamedEnum E>
std::vector<std::string> names() {
  return {EnumNames<E>::names.begin(), EnumNames<E>::names.end()};
}

/// The value that leaves a choice to asyncsolve (--pc auto, --allreduce
/// auto, bench stencil2d --transport auto).
inline constexpr std::string_view auto_choice = "auto";

/// True when `text` is auto_choice.
constexpr bool is_auto(std::string_view text) { return text == auto_choice; }

/// A switch (--idle on|off).
enum class OnOff { on, off };
template <>
struct EnumNames<OnOff> {
  static constexpr std::array<std::string_view, 2> names{"on", "off"};
};

/// True when the environment selects Open MPI's UCX one-sided component
/// (OMPI_MCA_osc=ucx, or a list that names it, such as sm,ucx), which Open
/// MPI's OSHMEM needs.
bool mca_osc_is_ucx();

/// False when the environment leaves out Open MPI's osc/sm (OMPI_MCA_osc=ucx,
/// or ^sm), the one component that allocates shared-memory windows
/// (MPI_Win_allocate_shared: the shm reduction's slots); true otherwise and
/// under other MPI libraries.
bool mca_osc_allows_shared_windows();

/// Collective over `world`: the warning for --transport rma under MPICH on
/// a node with more ranks than cores (par::Comm::node_oversubscribed), or
/// empty. MPICH (4.0, ch4:ucx) completes a one-sided operation only while
/// its target runs, and spins without yielding meanwhile, so on such a node
/// each flush can wait for a scheduler's time slice.
std::string rma_crowded_warning(const par::Comm& world);

/// Collective over `comm`, for a run over the rma transport: rank 0 prints
/// rma_crowded_warning, if any, on stderr, and it is added to `warnings`
/// (the document's), if given. Said with the summary of a run, once the
/// input is known good: a refusal stays one line.
void warn_of_rma_crowding(const par::Comm& comm, std::vector<std::string>* warnings);

/// The result of `parse` (a library's parser, which throws core::InputError
/// for text it does not know), or nullopt for such text.
template <class Parse>
auto try_parse(Parse parse) -> std::optional<decltype(parse())> {
  try {
    return parse();
  } catch (const core::InputError&) {
    return std::nullopt;
  }
}

/// Throws core::InputError, one line: "OPTION 'TEXT': expected one of A, B,
/// C{note}" ("expected A{note}" for a single choice).
[[noreturn]] void throw_not_one_of(std::string_view option, std::string_view text,
                                   const std::vector<std::string>& allowed,
                                   std::string_view note = {});

/// throw_not_one_of unless `allowed` holds `text`.
void expect_one_of(std::string_view option, std::string_view text,
                   const std::vector<std::string>& allowed, std::string_view note = {});

/// The value `text` spells; throws as expect_one_of with all of E's names otherwise.
template <NamedEnum E>
E parse_one_of(std::string_view option, std::string_view text, std::string_view note = {}) {
  if (const auto value = parse<E>(text)) return *value;
  throw_not_one_of(option, text, names<E>(), note);
}

/// Throws core::InputError("OPTION VALUE: expected EXPECTED") unless `ok`:
/// the one-line format of a bad number.
template <class T>
void expect(bool ok, std::string_view option, const T& value, std::string_view expected) {
  if (!ok) throw core::InputError(fmt::format("{} {}: expected {}", option, value, expected));
}

/// expect() for integers: "OPTION VALUE: expected an integer >= MIN{note}".
using core::expect_at_least;

/// expect() for numbers: "OPTION VALUE: expected a finite number".
void expect_finite(std::string_view option, double value);

/// --monitor-every `every_s`: seconds >= 0, and other than its default
/// `default_s` only with --monitor (alone it would do nothing).
void expect_monitor_every(bool monitor, double every_s, double default_s);

/// Throws core::InputError("WHAT with CONTEXT: TAIL") when `refused`: an
/// option that does not go with another one (TAIL says what was expected).
void refuse(bool refused, std::string_view what, std::string_view context, std::string_view tail);

/// Checks -i (>= 1), -x (>= 0) and --repeats (>= 1) of a benchmark.
using core::expect_repetitions;

/// Splits a comma-separated list (core::split_list).
using core::split_list;

/// True when the command line gave `option` (null: never declared).
bool given(const CLI::Option* option);

/// Declares --json PATH on `app` (shown with an empty default).
void add_json_option(CLI::App& app, std::string& path,
                     const std::string& help = "Write the result document to this file");

/// The reduction algorithm `text` names, for `option` (--allreduce,
/// --algorithms, --noise-allreduce): collectives::parse_allreduce, its
/// message naming `option`.
collectives::AllreduceAlgorithm parse_allreduce_option(std::string_view option,
                                                       std::string_view text);

/// --progress: how communication is progressed (MPI's meaning of the word):
/// only inside the solver's own MPI calls, polled every K pieces of work, or
/// by a progress thread.
struct Progress {
  enum class Mode { none, poll, thread };
  Mode mode = Mode::none;
  int every = 0;                ///< poll:K: K >= 1; 0 otherwise
  std::optional<int> sleep_us;  ///< thread:US: US >= 0; empty for a plain `thread` and the others
  /// "none", "poll:K", "thread" or "thread:US", as the command line spells it.
  std::string name() const;
  /// thread: microseconds the thread sleeps between passes (0 for a plain `thread`).
  int thread_sleep_us() const { return sleep_us.value_or(0); }
  bool operator==(const Progress&) const = default;
};

/// The largest K of poll:K and US of thread:US (a second between passes).
inline constexpr int progress_max = 1000000;

/// The progress `text` spells (none, poll:K with 1 <= K <= progress_max,
/// thread, thread:US with 0 <= US <= progress_max), or nullopt. Which of
/// them a command takes is its own check.
std::optional<Progress> parse_progress(std::string_view text);

}  // namespace asyncsolve::app
