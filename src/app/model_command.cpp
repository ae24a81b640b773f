// NAME     asyncsolve model hybrid
// PURPOSE  Paper 002 §7.2: how much a funneled/multiple hybrid scheme with m
//          threads reserved for communication gains over masteronly (eqs.
//          1-9), and the fit of the sparse-MVM form of the model (eq. 14) to
//          a measured sweep over n_k^loc.
// USAGE    asyncsolve model hybrid --threads N [--reserved M] --f-comm F
//          --f-comp-non F [--f-comp-overlap F] [--json FILE]
//          asyncsolve model hybrid --fit SWEEP.json [--threads N] [--reserved M]
//          [--non-ratio R] [--json FILE]
// OUTPUT   the quantities, or the fit table and the fitted parameters, on
//          rank 0; with --json the document asyncsolve.model.hybrid/1.
//
// No communication beyond agreeing on errors: rank 0 computes and prints, and
// the others learn its verdict so that every rank exits alike (it needs no
// mpirun, and runs the same under one).
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/model/hybrid.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/version.hpp"
#include "commands.hpp"
#include "result_document.hpp"

namespace asyncsolve::app {
namespace {

/// A number for the document; null where it is not finite.
nlohmann::ordered_json number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json number(const std::optional<double>& v) {
  return v ? number(*v) : nlohmann::ordered_json(nullptr);
}

std::string fixed(double v, int width, int precision) {
  return std::isfinite(v) ? fmt::format("{:>{}.{}f}", v, width, precision)
                          : fmt::format("{:>{}}", v > 0 ? "inf" : "-", width);
}

std::string fixed(const std::optional<double>& v, int width, int precision) {
  return v ? fixed(*v, width, precision) : fmt::format("{:>{}}", "-", width);
}

std::string seconds(const std::optional<double>& v, int width) {
  return v ? fmt::format("{:>{}.4e}", *v, width) : fmt::format("{:>{}}", "-", width);
}

struct Output {  // NOLINT(bugprone-exception-escape): moves a string and a json, both noexcept
  std::string text;
  nlohmann::ordered_json doc;
};

Output quantities(const ModelHybridConfig& c) {
  const model::HybridQuantities q = model::evaluate(c.threads, c.reserved, c.f_comm, c.f_comp_non);
  std::string out = fmt::format(
      "asyncsolve {}: model hybrid (paper 002 §7.2.1), n = {} threads per SMP node, m = {} "
      "reserved for communication\n",
      version, q.threads, q.reserved);
  const auto line = [&](const char* name, double v, const std::string& what) {
    out += fmt::format("  {:<16}{}  {}\n", name, fixed(v, 7, 4), what);
  };
  line("f_comm", q.f_comm, "given: communication (by the master thread in masteronly)");
  line("f_comp,non", q.f_comp_non, "given: computation that cannot overlap communication");
  line("f_comp,overlap", q.f_comp_overlap, "1 - f_comm - f_comp,non (eq. 1)");
  line("epsilon", q.epsilon,
       fmt::format("T_masteronly / T_funneled (eq. 3); the funneled time is set by {}",
                   q.limited_by == model::LimitedBy::balanced ? "both terms alike (eq. 4)"
                   : q.limited_by == model::LimitedBy::communication
                       ? "communication, f_comm/m"
                       : "the overlapped computation, f_comp,overlap n/(n-m)"));
  line("epsilon_max", q.epsilon_max, "the best for this f_comp,non, at f_comm,best (eq. 5)");
  line("f_comm,best", q.f_comm_best, "both terms of eq. 3 equal (eq. 6)");
  line("epsilon bound", q.epsilon_bound, "1 + m(1 - 1/n): above epsilon for any fractions (eq. 7)");
  line("epsilon_min", q.epsilon_min, "the worst for this f_comp,non, at f_comm = 0 (eq. 9)");
  line("epsilon floor", q.epsilon_floor, "1 - m/n: below epsilon for any fractions (eq. 9)");
  line("f_comm,equiv", q.f_comm_equiv, "(m/n)(1 - f_comp,non): epsilon = 1 here, > 1 above");
  line("m_min", q.m_min, "f_comm / (f_comp,overlap + f_comm)");
  const double gain = q.epsilon;
  out += fmt::format(
      "  {:<16} {}\n", "verdict",
      std::abs(gain - 1.0) <= 1e-12 ? std::string("masteronly and funneled take the same time")
      : gain > 1.0 ? fmt::format("funneled is {:.2f}x faster than masteronly", gain)
                   : fmt::format("masteronly is {:.2f}x faster than funneled", 1.0 / gain));

  nlohmann::ordered_json doc;
  doc["mode"] = "quantities";
  doc["quantities"] = {{"threads", q.threads},
                       {"reserved", q.reserved},
                       {"f_comm", q.f_comm},
                       {"f_comp_non", q.f_comp_non},
                       {"f_comp_overlap", q.f_comp_overlap},
                       {"epsilon", number(q.epsilon)},
                       {"limited_by", model::limited_by_name(q.limited_by)},
                       {"epsilon_max", number(q.epsilon_max)},
                       {"f_comm_best", number(q.f_comm_best)},
                       {"epsilon_bound", number(q.epsilon_bound)},
                       {"epsilon_min", number(q.epsilon_min)},
                       {"epsilon_floor", number(q.epsilon_floor)},
                       {"f_comm_equiv", number(q.f_comm_equiv)},
                       {"m_min", number(q.m_min)}};
  return {out, doc};
}

Output fit(const ModelHybridConfig& c) {
  model::MvmSweep sweep;
  try {
    sweep = model::load_mvm_sweep(c.fit_path);
  } catch (const core::InputError& e) {
    throw core::InputError(fmt::format("--fit {}", e.what()));
  }
  const int n = c.threads > 0 ? c.threads : sweep.threads;
  const int m = c.reserved > 0 ? c.reserved : sweep.reserved;
  if (m >= n) {
    throw core::InputError(
        fmt::format("reserved = {} with threads = {} ({}, {}): expected 1 <= reserved < threads", m,
                    n, c.reserved > 0 ? "--reserved" : "from the file",
                    c.threads > 0 ? "--threads" : "from the file"));
  }
  const model::MvmFit f = model::fit_mvm(sweep, n, m, c.non_ratio);

  std::string out = fmt::format(
      "asyncsolve {}: model hybrid --fit {} (paper 002 §7.2.2, eq. 14)\n"
      "  n = {} threads per SMP node{}, m = {} reserved{}, ni x nj = {} x {}, {} rank{}, {} "
      "records\n",
      version, c.fit_path, n, n == sweep.threads ? "" : fmt::format(" (file: {})", sweep.threads),
      m, m == sweep.reserved ? "" : fmt::format(" (file: {})", sweep.reserved), sweep.ni, sweep.nj,
      sweep.ranks, sweep.ranks == 1 ? "" : "s", sweep.records.size());
  out += fmt::format("  {:>8}  {:>12}  {:>12}  {:>12}  {:>7}  {:>8}  {:>8}  {:>8}\n", "nk_local",
                     "masteronly_s", "funneled_s", "multiple_s", "f_comm", "eps", "eps_eq14",
                     "eps_mult");
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < f.rows.size(); ++i) {
    const auto& row = f.rows[i];
    const auto& rec = sweep.records[i];
    out += fmt::format("  {:>8}  {}  {}  {}  {}  {}  {}  {}\n", row.nk_local,
                       seconds(rec.masteronly_s, 12), seconds(rec.funneled_s, 12),
                       seconds(rec.multiple_s, 12), fixed(row.f_comm_measured, 7, 4),
                       fixed(row.epsilon_measured, 8, 4), fixed(row.epsilon_predicted, 8, 4),
                       fixed(row.epsilon_multiple, 8, 4));
    records.push_back({{"nk_local", row.nk_local},
                       {"masteronly_s", rec.masteronly_s},
                       {"funneled_s", rec.funneled_s},
                       {"multiple_s", number(rec.multiple_s)},
                       {"masteronly_comm_s", number(rec.masteronly_comm_s)},
                       {"masteronly_compute_s", number(rec.masteronly_compute_s)},
                       {"f_comm_measured", number(row.f_comm_measured)},
                       {"f_comm_predicted", number(row.f_comm_predicted)},
                       {"epsilon_measured", number(row.epsilon_measured)},
                       {"epsilon_predicted", number(row.epsilon_predicted)},
                       {"epsilon_multiple", number(row.epsilon_multiple)}});
  }
  const char* source =
      f.masteronly_source == model::MasteronlySource::split
          ? "x_comm and x_MVM from the split masteronly times, x_MVM,non/x_MVM from epsilon"
      : f.masteronly_source == model::MasteronlySource::regression
          ? "x_comm and x_MVM from a line through masteronly_s, x_MVM,non/x_MVM from epsilon"
          : "x_comm/x_MVM,overlap from epsilon with x_MVM,non/x_MVM,overlap fixed, scaled to "
            "masteronly_s";
  out += fmt::format("  fitted ({}; x in seconds per point of an ni x nj plane)\n", source);
  const auto line = [&](const char* name, const std::string& value, const std::string& what) {
    out += fmt::format("  {:<27}{:>11}  {}\n", name, value, what);
  };
  line("x_comm", fmt::format("{:.4e}", f.x.x_comm), "communication per MVM (eq. 11)");
  line("x_MVM,non", fmt::format("{:.4e}", f.x.x_mvm_non),
       "per local plane, cannot overlap (eq. 12)");
  line("x_MVM,overlap", fmt::format("{:.4e}", f.x.x_mvm_overlap),
       "per local plane, overlaps communication (eq. 13)");
  line("x_comm / x_MVM,overlap", fixed(f.comm_over_overlap, 0, 4), "(paper: 4.57 on the SR8000)");
  line("x_MVM,non / x_MVM,overlap", fixed(f.non_over_overlap, 0, 4),
       f.non_ratio_fixed ? "given (--non-ratio)" : "(paper: 1/6)");
  line("nk_local at epsilon = 1", fixed(f.nk_crossover, 0, 2),
       "(x_comm/x_MVM,overlap)(n-m)/m: funneled wins below it");
  line("nk_local at epsilon_max", fixed(f.nk_best, 0, 2),
       fmt::format("(x_comm/x_MVM,overlap)(n-m)/(mn), where eq. 14 gives {}",
                   fixed(f.epsilon_at_best, 0, 4)));
  line("rms eps_eq14 - eps", fmt::format("{:.4f}", f.rms_epsilon_error), "over the records");

  nlohmann::ordered_json doc;
  doc["mode"] = "fit";
  doc["fit"] = {{"input", c.fit_path},
                {"input_schema", std::string(model::mvm_sweep_schema)},
                {"threads", n},
                {"reserved", m},
                {"threads_in_file", sweep.threads},
                {"reserved_in_file", sweep.reserved},
                {"ni", sweep.ni},
                {"nj", sweep.nj},
                {"ranks", sweep.ranks},
                {"masteronly_source", model::to_string(f.masteronly_source)},
                {"non_ratio_fixed", f.non_ratio_fixed},
                {"parameters",
                 {{"x_comm_s", number(f.x.x_comm)},
                  {"x_mvm_non_s", number(f.x.x_mvm_non)},
                  {"x_mvm_overlap_s", number(f.x.x_mvm_overlap)},
                  {"comm_over_overlap", number(f.comm_over_overlap)},
                  {"non_over_overlap", number(f.non_over_overlap)}}},
                {"nk_crossover", number(f.nk_crossover)},
                {"nk_best", number(f.nk_best)},
                {"epsilon_at_best", number(f.epsilon_at_best)},
                {"rms_epsilon_error", number(f.rms_epsilon_error)},
                {"records", records}};
  return {out, doc};
}

}  // namespace

core::ExitCode run_model_hybrid(const ModelHybridConfig& config, const par::Comm& world,
                                const std::vector<std::string>& command) {
  const std::string started = core::iso8601_now();
  check_json_path(config.json_path, world);
  // Rank 0 reads the file and computes; everything is checked before anything
  // is printed, and every rank learns the verdict.
  Output output;
  std::string error;
  if (world.is_root()) {
    try {
      const core::NamedPath inputs[] = {{"--fit", config.fit_path}};
      const core::NamedPath outputs[] = {{"--json", config.json_path}};
      core::check_distinct_files(inputs, outputs);
      output = config.is_fit() ? fit(config) : quantities(config);
    } catch (const core::InputError& e) {
      error = e.what();
    }
  }
  error = par::broadcast_from_root(world, std::move(error));
  if (!error.empty()) throw core::InputError(error);

  int write_failed = 0;
  if (world.is_root()) {
    std::fputs(output.text.c_str(), stdout);
    if (!config.json_path.empty()) {
      try {
        nlohmann::ordered_json doc = document_header("asyncsolve.model.hybrid/1", command, started);
        doc["paper"] = "002 §7.2";
        for (auto& [key, value] : output.doc.items()) doc[key] = value;
        core::write_file_atomic(config.json_path, core::document_text(doc));
        std::printf("  %-10s %s\n", "json", config.json_path.c_str());
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "asyncsolve: error: %s\n", ex.what());
        write_failed = 1;
      }
    }
    std::fflush(stdout);
  }
  par::check_mpi(MPI_Bcast(&write_failed, 1, MPI_INT, 0, world.get()), "MPI_Bcast");
  return write_failed != 0 ? core::ExitCode::runtime_failure : core::ExitCode::success;
}

}  // namespace asyncsolve::app
