#include "options_common.hpp"

#include <mpi.h>  // OPEN_MPI

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/par/environment.hpp"

namespace asyncsolve::app {

using core::InputError;

void throw_not_one_of(std::string_view option, std::string_view text,
                      const std::vector<std::string>& allowed, std::string_view note) {
  throw InputError(fmt::format("{} '{}': expected {}{}{}", option, text,
                               allowed.size() == 1 ? "" : "one of ", fmt::join(allowed, ", "),
                               note));
}

void expect_one_of(std::string_view option, std::string_view text,
                   const std::vector<std::string>& allowed, std::string_view note) {
  if (std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
    throw_not_one_of(option, text, allowed, note);
  }
}

void expect_finite(std::string_view option, double value) {
  expect(std::isfinite(value), option, value, "a finite number");
}

void expect_monitor_every(bool monitor, double every_s, double default_s) {
  expect(every_s >= 0.0 && std::isfinite(every_s), "--monitor-every", every_s,
         "a number of seconds >= 0");
  if (!monitor && every_s != default_s) {
    throw InputError(fmt::format(
        "--monitor-every {} without --monitor: it does nothing alone; expected --monitor too",
        every_s));
  }
}

void refuse(bool refused, std::string_view what, std::string_view context, std::string_view tail) {
  if (refused) throw InputError(fmt::format("{} with {}: {}", what, context, tail));
}

bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

void add_json_option(CLI::App& app, std::string& path, const std::string& help) {
  app.add_option("--json", path, help)->default_str("");
}

collectives::AllreduceAlgorithm parse_allreduce_option(std::string_view option,
                                                       std::string_view text) {
  try {
    return collectives::parse_allreduce(text);
  } catch (const InputError& e) {
    // The parser names --allreduce; another option gets its own name.
    const std::string_view message = e.what();
    constexpr std::string_view own = "--allreduce ";
    if (!message.starts_with(own)) throw;
    throw InputError(fmt::format("{} {}", option, message.substr(own.size())));
  }
}

namespace {

/// Whether an MCA component list ("a,b", without a leading '^') names `name`.
bool lists(std::string_view list, std::string_view name) {
  for (;;) {
    const std::size_t comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) return false;
    list.remove_prefix(comma + 1);
  }
}

}  // namespace

bool mca_osc_is_ucx() {
  // "ucx", or a list of components that includes ucx ("sm,ucx": osc/sm
  // then keeps the shared-memory windows, which osc/ucx cannot allocate)
  const char* osc = std::getenv("OMPI_MCA_osc");
  return osc != nullptr && *osc != '^' && lists(osc, "ucx");
}

bool mca_osc_allows_shared_windows() {
#ifdef OPEN_MPI
  const char* osc = std::getenv("OMPI_MCA_osc");
  if (osc == nullptr || *osc == '\0') return true;
  if (*osc == '^') return !lists(osc + 1, "sm");
  return lists(osc, "sm");
#else
  return true;
#endif
}

std::string rma_crowded_warning(const par::Comm& world) {
  // The library is the same on every rank, so every rank skips the
  // collective check alike where it is not MPICH.
  if (par::mpi_library_version().find("MPICH") == std::string::npos) return {};
  if (!world.node_oversubscribed()) return {};
  return "--transport rma with MPICH and more ranks than cores on a node: MPICH completes a "
         "one-sided operation only while its target runs, and spins while it waits, so each "
         "flush can wait for a time slice of the scheduler (milliseconds); expected "
         "--transport mpi, or at most one rank per core";
}

void warn_of_rma_crowding(const par::Comm& comm, std::vector<std::string>* warnings) {
  std::string warning = rma_crowded_warning(comm);
  if (warning.empty()) return;
  if (comm.is_root()) std::fprintf(stderr, "asyncsolve: warning: %s\n", warning.c_str());
  if (warnings != nullptr) warnings->push_back(std::move(warning));
}

namespace {

/// The modes' names, in Progress::Mode's order.
constexpr std::array<std::string_view, 3> progress_modes{"none", "poll", "thread"};

}  // namespace

std::string Progress::name() const {
  switch (mode) {
    case Mode::poll:
      return fmt::format("poll:{}", every);
    case Mode::thread:
      if (sleep_us) return fmt::format("thread:{}", *sleep_us);
      break;
    case Mode::none:
      break;
  }
  return std::string(core::enum_name(progress_modes, mode));
}

std::optional<Progress> parse_progress(std::string_view text) {
  constexpr std::string_view poll = "poll:";
  const std::string_view thread = core::enum_name(progress_modes, Progress::Mode::thread);
  Progress p;
  if (text == core::enum_name(progress_modes, Progress::Mode::none)) return p;
  if (text.starts_with(poll)) {
    p.mode = Progress::Mode::poll;
    if (!core::parse_whole(text.substr(poll.size()), p.every) || p.every < 1 ||
        p.every > progress_max) {
      return std::nullopt;
    }
    return p;
  }
  if (!text.starts_with(thread)) return std::nullopt;
  p.mode = Progress::Mode::thread;
  text.remove_prefix(thread.size());
  if (text.empty()) return p;
  int us = -1;
  if (!text.starts_with(':') || !core::parse_whole(text.substr(1), us) || us < 0 ||
      us > progress_max) {
    return std::nullopt;
  }
  p.sleep_us = us;
  return p;
}

}  // namespace asyncsolve::app
