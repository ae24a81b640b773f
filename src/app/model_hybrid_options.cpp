#include "model_hybrid_options.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/model/hybrid.hpp"

namespace asyncsolve::app {
namespace {

using core::InputError;

/// "X" or "A/B", finite and >= 0.
std::optional<double> parse_ratio(const std::string& text) {
  const std::size_t slash = text.find('/');
  double value = 0.0;
  if (slash == std::string::npos) {
    if (!core::parse_whole(std::string_view(text), value)) return std::nullopt;
  } else {
    double a = 0.0;
    double b = 0.0;
    if (!core::parse_whole(std::string_view(text).substr(0, slash), a) ||
        !core::parse_whole(std::string_view(text).substr(slash + 1), b) || !(b > 0.0)) {
      return std::nullopt;
    }
    value = a / b;
  }
  if (!(value >= 0.0) || !(value <= 1e6)) return std::nullopt;
  return value;
}

void expect_fraction(std::string_view option, double value) {
  expect(value >= 0.0 && value <= 1.0, option, value, "a fraction of T_masteronly in [0, 1]");
}

void expect_reserved_below_threads(const ModelHybridConfig& c) {
  if (c.reserved >= c.threads) {
    throw InputError(
        fmt::format("--reserved {} with --threads {}: expected 1 <= reserved < "
                    "threads",
                    c.reserved, c.threads));
  }
}

/// --fit: the fractions come from the file; --non-ratio may be fixed.
void validate_fit(const ModelHybridArgs& a, ModelHybridConfig& c) {
  for (const CLI::Option* o : {a.f_comm, a.f_comp_non, a.f_comp_overlap_option}) {
    if (given(o)) {
      throw InputError(
          fmt::format("{} with --fit: the fit finds the fractions from the "
                      "measured times, expected either --fit FILE or the fractions",
                      o->get_name()));
    }
  }
  if (!a.non_ratio.empty()) {
    c.non_ratio = parse_ratio(a.non_ratio);
    if (!c.non_ratio) {
      throw InputError(
          fmt::format("--non-ratio '{}': expected a number from 0 to 1e6 or A/B (the "
                      "paper's 1/6)",
                      core::printable(a.non_ratio)));
    }
  }
  if (given(a.threads) && given(a.reserved)) expect_reserved_below_threads(c);
}

}  // namespace

void add_model_hybrid_options(OptionTable& t, ModelHybridArgs& a) {
  ModelHybridConfig& c = a.values;
  const Applies quantities = applies_when({Condition{"--fit", {"none"}}});
  const Applies fitting = applies_when({Condition{"--fit", {"FILE"}}});
  // Each shown with what leaving it out means.
  a.threads = t.number("--threads", c.threads, {2, 4096},
                       {.help = "n: threads per SMP node (with --fit: overrides the file's "
                                "threads)",
                        .shown_default = "required; with --fit the file's",
                        .sample = "8",
                        .note = " (threads per SMP node: one communicating, at least one "
                                "computing)"});
  a.reserved = t.number("--reserved", c.reserved, {1, 4095},
                        {.help = "m: threads reserved for communication, m < n (with --fit: "
                                 "overrides the file's reserved)",
                         .shown_default = "1; with --fit the file's",
                         .sample = "2",
                         .note = " (threads reserved for communication)"});
  a.f_comm = t.number("--f-comm", c.f_comm, {0, 1},
                      {.help = "f_comm: fraction of T_masteronly spent communicating (master "
                               "thread)",
                       .applies = quantities,
                       .shown_default = "required without --fit",
                       .sample = "0.4",
                       .noun = "a fraction of T_masteronly"});
  a.f_comp_non = t.number("--f-comp-non", c.f_comp_non, {0, 1},
                          {.help = "f_comp,non: fraction of T_masteronly in computation that "
                                   "cannot overlap communication",
                           .applies = quantities,
                           .shown_default = "required without --fit",
                           .sample = "0.2",
                           .noun = "a fraction of T_masteronly"});
  a.f_comp_overlap_option =
      t.number("--f-comp-overlap", a.f_comp_overlap, {0, 1},
               {.help = "f_comp,overlap: optional; if given, the three fractions must sum to 1 "
                        "(eq. 1)",
                .applies = quantities,
                .shown_default = "1 - f_comm - f_comp,non",
                .sample = "0.4",
                .noun = "a fraction of T_masteronly"});
  t.path("--fit", c.fit_path,
         {.help = fmt::format("Fit eq. 14 to a measured MVM sweep (schema "
                              "asyncsolve.bench.hybrid_mvm/1, a regular file of at most {} "
                              "bytes) and print measured next to predicted epsilon",
                              model::mvm_sweep_max_bytes),
          .sample = "sweep.json",
          .limits = fmt::format("a regular file, at most {} bytes", model::mvm_sweep_max_bytes)});
  t.text("--non-ratio", a.non_ratio,
         {.help = "With --fit: hold x_MVM,non / x_MVM,overlap at this value (a number from 0 "
                  "to 1e6 or A/B; the paper's 1/6) and fit only x_comm / x_MVM,overlap",
          .applies = fitting,
          .shown_default = "fitted",
          .sample = "1/6",
          .value = "R",
          .limits = "0 to 1e6"});
  t.path("--json", c.json_path,
         {.help = "Write the document (schema asyncsolve.model.hybrid/1) to this file"});
}

ModelHybridConfig validate_model_hybrid(const ModelHybridArgs& a, const OptionTable& table) {
  ModelHybridConfig c = a.values;
  if (given(a.threads)) {
    expect_at_least("--threads", c.threads, 2,
                    " (threads per SMP node: one communicating, at least one computing)");
  }
  if (given(a.reserved)) {
    expect_at_least("--reserved", c.reserved, 1, " (threads reserved for communication)");
  }
  const Context context{{{"--fit", {c.is_fit() ? "FILE" : "none"}}}};
  if (c.is_fit()) {
    validate_fit(a, c);
    table.refuse_inapplicable(context);
    return c;
  }
  if (!a.non_ratio.empty()) {
    throw InputError(fmt::format("--non-ratio {} without --fit: expected --fit FILE with it",
                                 quote_value(a.non_ratio)));
  }
  if (!given(a.threads)) {
    throw InputError(
        "--threads: missing, expected the threads per SMP node (n >= 2), or "
        "--fit FILE");
  }
  if (!given(a.f_comm) || !given(a.f_comp_non)) {
    throw InputError(
        fmt::format("{}: missing, expected --f-comm F and --f-comp-non F "
                    "(fractions of T_masteronly), or --fit FILE",
                    given(a.f_comm) ? "--f-comp-non" : "--f-comm"));
  }
  if (!given(a.reserved)) c.reserved = 1;
  expect_reserved_below_threads(c);
  expect_fraction("--f-comm", c.f_comm);
  expect_fraction("--f-comp-non", c.f_comp_non);
  if (c.f_comm + c.f_comp_non > 1.0 + 1e-12) {
    throw InputError(
        fmt::format("--f-comm {} + --f-comp-non {} = {:.6g}: expected a sum <= 1 "
                    "(f_comp,overlap = 1 - f_comm - f_comp,non, eq. 1)",
                    c.f_comm, c.f_comp_non, c.f_comm + c.f_comp_non));
  }
  if (given(a.f_comp_overlap_option)) {
    const double o = a.f_comp_overlap;
    expect_fraction("--f-comp-overlap", o);
    const double sum = c.f_comm + c.f_comp_non + o;
    if (std::abs(sum - 1.0) > 1e-9) {
      throw InputError(
          fmt::format("--f-comm {} + --f-comp-non {} + --f-comp-overlap {} = {:.6g}: "
                      "expected the three fractions to sum to 1 (eq. 1)",
                      c.f_comm, c.f_comp_non, o, sum));
    }
    c.f_comp_overlap = o;
  }
  table.refuse_inapplicable(context);
  return c;
}

}  // namespace asyncsolve::app
