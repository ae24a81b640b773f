#include "result_document.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/ops/stencil7.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/sparse/partition.hpp"
#include "asyncsolve/version.hpp"

namespace asyncsolve::app {
namespace {

nlohmann::ordered_json stats_json(const par::RankStats& s) {
  return {{"max", s.max}, {"mean", s.mean}, {"min", s.min}};
}

nlohmann::json triple_json(const grid::Int3& v) {
  return nlohmann::json::array({v[0], v[1], v[2]});
}

/// The summary's residual line: the estimate, the true residual (with
/// --scale, the scaled system's beside it) and the tolerance.
std::string residual_text(const RunSummary& s, double tol) {
  const std::string scaled =
      s.scaled_true_residual ? fmt::format("; the scaled system's {:.3e}", *s.scaled_true_residual)
                             : std::string();
  // NaN: the solve stopped before its first estimate (a breakdown at iteration 0).
  const std::string estimate = std::isnan(s.residual_estimate)
                                   ? std::string("none")
                                   : fmt::format("{:.3e}", s.residual_estimate);
  return fmt::format("{} (true {:.3e}{}), tolerance {:.1e}", estimate, s.true_residual, scaled,
                     tol);
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

/// The solvers' method of a Krylov config, cg for Jacobi and Lanczos (which
/// are neither restarted nor nonsymmetric).
solvers::KrylovMethod krylov_or_cg(const SolveConfig& c) {
  return is_krylov(c) ? krylov_method(c.method) : solvers::KrylovMethod::cg;
}

/// "N restarts (reasons), true residual at the last X", for the summary.
std::string restarts_text(const std::vector<solvers::RestartPoint>& restarts) {
  std::vector<std::pair<solvers::RestartReason, int>> reasons;
  for (const solvers::RestartPoint& r : restarts) {
    auto at = std::find_if(reasons.begin(), reasons.end(),
                           [&](const auto& p) { return p.first == r.reason; });
    if (at == reasons.end()) {
      reasons.emplace_back(r.reason, 1);
    } else {
      ++at->second;
    }
  }
  std::string kinds;
  for (const auto& [reason, count] : reasons)
    kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", count,
                         solvers::restart_reason_name(reason));
  const solvers::RestartPoint& last = restarts.back();
  return fmt::format(
      "{} ({}); at the last, after iteration {}: true residual {:.3e}, estimate "
      "{:.3e}",
      restarts.size(), kinds, last.iteration, last.true_residual, last.estimate);
}

/// result.repeat_solves: every solve after the one setup (--repeat-solve).
nlohmann::ordered_json repeats_json(const SolveConfig& c,
                                    const std::vector<solvers::RepeatedSolve>& repeats) {
  nlohmann::ordered_json time_s = nlohmann::ordered_json::array();
  nlohmann::ordered_json iterations = nlohmann::ordered_json::array();
  nlohmann::ordered_json converged = nlohmann::ordered_json::array();
  nlohmann::ordered_json true_residual = nlohmann::ordered_json::array();
  nlohmann::ordered_json change_inf = nlohmann::ordered_json::array();
  double total_s = 0.0;
  for (const solvers::RepeatedSolve& r : repeats) {
    time_s.push_back(r.time_s);
    iterations.push_back(r.iterations);
    converged.push_back(r.converged);
    true_residual.push_back(r.true_residual);
    change_inf.push_back(r.change_inf);
    total_s += r.time_s;
  }
  nlohmann::ordered_json out;
  out["requested"] = c.repeat_solves;
  out["count"] = repeats.size();
  out["time_s"] = time_s;
  out["total_time_s"] = total_s;
  out["iterations"] = iterations;
  out["converged"] = converged;
  out["true_residual"] = true_residual;
  out["change_inf"] = change_inf;
  return out;
}

/// problem.operator as one line: "CSR, interior rows in sell8 on 4 ranks,
/// boundary rows in csr on 3 ranks and blocks on 1" (the layouts some rank uses).
std::string operator_line(const nlohmann::json& op) {
  const auto layouts = [](const nlohmann::json& ranks) {
    std::vector<std::string> used;
    for (const auto& [layout, count] : ranks.items()) {
      const long long n = count.get<long long>();
      if (n > 0) used.push_back(fmt::format("{} on {} rank{}", layout, n, n == 1 ? "" : "s"));
    }
    return fmt::format("{}", fmt::join(used, " and "));
  };
  return fmt::format("CSR, interior rows in {}, boundary rows in {}",
                     layouts(op["interior_layout"]), layouts(op["boundary_layout"]));
}

}  // namespace

std::vector<std::string> kernels_used(const par::Comm& comm) {
  const std::vector<ops::Stencil7Kernel> all = values<ops::Stencil7Kernel>();
  std::vector<double> used(all.size(), 0.0);
  for (const ops::Stencil7Kernel k : ops::stencil7_kernels_used())
    used[static_cast<std::size_t>(k)] = 1.0;
  par::max_over_ranks(comm, used);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (used[i] > 0.0) out.emplace_back(name(all[i]));
  return out;
}

std::vector<solvers::RepeatedSolve> repeats_over_ranks(
    const par::Comm& comm, std::vector<solvers::RepeatedSolve> repeats) {
  std::vector<double> time_s;
  time_s.reserve(repeats.size());
  for (const solvers::RepeatedSolve& r : repeats) time_s.push_back(r.time_s);
  par::max_over_ranks(comm, time_s);
  for (std::size_t i = 0; i < repeats.size(); ++i) repeats[i].time_s = time_s[i];
  return repeats;
}

nlohmann::ordered_json make_result_document(const std::vector<std::string>& command,
                                            const std::string& started, const RunEnvironment& env,
                                            const RunProblem& problem, const SolveConfig& c,
                                            const RunSummary& s) {
  nlohmann::ordered_json doc = document_header("asyncsolve.result/1", command, started);
  doc["environment"] = environment_json(env);
  nlohmann::ordered_json prob = {{"name", problem.name},
                                 {"global", triple_json(problem.global)},
                                 {"local", triple_json(problem.local)},
                                 {"local_min", triple_json(problem.local_min)},
                                 {"local_max", triple_json(problem.local_max)},
                                 {"dims", triple_json(problem.dims)},
                                 {"offset", c.offset}};
  for (const auto& [key, value] : problem.parameters.items()) prob[key] = value;
  doc["problem"] = prob;
  doc["method"] = {
      {"name", name(c.method)},
      {"variant", name(c.variant)},
      {"transport", name(c.transport)},
      {"halo", s.halo},
      {"allreduce", s.allreduce},
      {"max_in_flight", c.max_in_flight},
      {"final_sync", c.final_sync},
      {"threads", env.threads},
      {"hybrid", comm::hybrid_mode_name(c.hybrid)},
      {"slow_rank", c.slow_rank},
      {"slow_factor", c.slow_factor},
      {"noise_us", c.noise_us},
      {"noise_hz", c.noise_hz},
      {"noise_seed", c.noise_seed},
      {"progress", c.progress.name()},
      {"tol", c.tol},
      {"max_iters", c.max_iters},
      {"max_time", c.max_time_s > 0.0 ? nlohmann::json(c.max_time_s) : nlohmann::json(nullptr)},
      {"kernel", name(c.kernel)},
      {"kernels_used", s.kernels},
      {"idle", c.method == Method::jacobi && c.variant != Variant::sync
                   ? nlohmann::json(c.idle ? "on" : "off")
                   : nlohmann::json(nullptr)},
      {"check_every", c.check_every},
      {"halo_every", c.halo_every},
      {"copy", c.copy},
      {"monitor", c.monitor},
      {"monitor_every", c.monitor_every_s},
      {"decomposition_input", c.decomposition.global ? "global" : "local"},
      {"test_every", c.test_every},
      {"pc", name(c.pc.kind)},
      {"pc_degree", c.pc.degree},
      {"pc_options", precond::pc_options_text(c.pc)},
      {"overlap", c.pc.schwarz.overlap},
      {"local_solver", precond::local_solver_name(c.pc.schwarz.local_solver)},
      {"coarse", precond::coarse_name(c.pc.schwarz.coarse)},
      {"block_size", c.schwarz.block_size},  // as given (0: the file's comment, else 1)
      {"coordinates", c.schwarz.coordinates},
      {"shift", c.shift},
      {"repeat_solves", c.repeat_solves},
      {"restart", solvers::is_restarted(krylov_or_cg(c)) ? nlohmann::json(c.restart)
                                                         : nlohmann::json(nullptr)},
      {"cgs_refinement", c.method == Method::gmres || c.method == Method::fgmres
                             ? nlohmann::json(name(c.refinement))
                             : nlohmann::json(nullptr)},
      {"matrix", c.sparse.matrix_path},
      {"rhs", c.sparse.rhs_path},
      {"x0", c.sparse.x0_path},
      {"write_solution", c.sparse.write_solution_path},
      {"partition", sparse::format_partition(c.sparse.partition)},
      {"scale", name(c.sparse.scale)},
      {"force", c.sparse.force},
      {"assemble", c.sparse.assemble},
      {"matrix_memory_gib", c.sparse.matrix_memory_gib}};
  std::vector<long long> per_rank;
  for (const double it : s.iterations_per_rank) per_rank.push_back(std::llround(it));
  nlohmann::ordered_json iterations = {{"min", std::llround(s.iterations.min)},
                                       {"mean", s.iterations.mean},
                                       {"max", std::llround(s.iterations.max)},
                                       {"per_rank", per_rank}};
  // OpenMP Jacobi: min/mean/max are over the threads, per_rank holds the one
  // rank's count (its busiest thread) and per_thread every thread's.
  if (!s.iterations_per_thread.empty()) iterations["per_thread"] = s.iterations_per_thread;
  doc["result"] = {
      {"converged", s.converged},
      {"reason", solvers::stop_reason_name(s.reason)},
      {"iterations", iterations},
      {"time_s", s.time_s.max},
      {"time_s_ranks", stats_json(s.time_s)},
      {"time_per_iteration_s", s.iterations.max > 0 ? s.time_s.max / s.iterations.max : 0.0},
      {"detail", s.detail},
      {"residual_estimate", s.residual_estimate},
      {"true_residual", s.true_residual},
      {"error_inf", optional_number(s.error_inf)},
      {"sweep_bandwidth_gbs", s.sweep_bandwidth_gbs},
      {"final_sync_iterations", s.final_sync_iterations},
      {"unconfirmed_stops", s.unconfirmed_stops},
      {"injected_s", stats_json(s.injected_s)}};
  if (s.scaled_true_residual) doc["result"]["scaled_true_residual"] = *s.scaled_true_residual;
  doc["result"]["warnings"] = s.warnings;
  doc["result"]["hints"] = s.hints;
  if (!s.repeats.empty()) doc["result"]["repeat_solves"] = repeats_json(c, s.repeats);
  if (is_krylov(c)) {
    nlohmann::ordered_json restarts = nlohmann::ordered_json::array();
    for (const solvers::RestartPoint& r : s.restarts) {
      restarts.push_back({{"iteration", r.iteration},
                          {"reason", solvers::restart_reason_name(r.reason)},
                          {"true_residual", r.true_residual},
                          {"estimate", r.estimate}});
    }
    doc["result"]["restarts"] = restarts;
    doc["result"]["refinements"] = s.refinements;
    doc["result"]["matvecs_behind_reduction"] = s.matvecs_behind_reduction;
  }
  nlohmann::ordered_json phases = nlohmann::ordered_json::object();
  for (const auto& [name, stats] : s.phases) phases[name] = stats_json(stats);
  doc["phases"] = phases;
  doc["stats"] = {{"sends_per_iteration", s.sends_per_iteration},
                  {"skipped_sends", std::llround(s.skipped_sends)},
                  {"batch_sizes", s.batch_sizes},
                  {"halo_exchanges", s.halo_exchanges},
                  {"halo_tests", stats_json(s.halo_tests)},
                  {"progress_passes", stats_json(s.progress_passes)},
                  {"idle_waits", stats_json(s.idle_waits)}};
  if (!s.pc.name.empty()) {
    nlohmann::ordered_json pc = {{"name", s.pc.name},
                                 {"setup_s", s.pc_setup_s.max},
                                 {"setup_s_ranks", stats_json(s.pc_setup_s)},
                                 {"applies", s.pc.applies},
                                 {"applies_behind_reduction", s.pc_applies_behind_reduction},
                                 {"matvecs", s.pc.matvecs}};
    for (const auto& [key, value] : s.pc.numbers) pc[key] = value;
    nlohmann::ordered_json settings = nlohmann::ordered_json::object();
    for (const auto& [key, value] : s.pc.settings) settings[key] = value;
    pc["settings"] = settings;
    doc["pc_setup"] = pc;
  }
  doc["history"] = s.history;
  return doc;
}

namespace {
/// "sweep 0.123, halo 0.010": each phase some rank spent time in, with its
/// maximum over the ranks.
std::string phase_maxima(const RunSummary& s) {
  std::string phases;
  for (const auto& [name, stats] : s.phases) {
    if (stats.max == 0.0) continue;
    phases += fmt::format("{}{} {:.3f}", phases.empty() ? "" : ", ", name, stats.max);
  }
  return phases;
}
}  // namespace

std::string format_summary(const RunEnvironment& env, const RunProblem& p, const SolveConfig& c,
                           const RunSummary& s) {
  std::string out;
  auto line = [&out](std::string_view key, const std::string& value) {
    out += fmt::format("  {:<10} {}\n", key, value);
  };
  const std::string what = is_krylov(c) ? fmt::format("{} (pc {})", name(c.method), name(c.pc.kind))
                                        : fmt::format("{} {} over {}", name(c.method),
                                                      name(c.variant), name(c.transport));
  const bool omp = c.transport == Transport::omp;
  if (omp) {
    out += fmt::format("asyncsolve {}: {}, 1 rank, {} thread{} (z-slabs), {} reduction\n", version,
                       what, env.threads, env.threads == 1 ? "" : "s", s.allreduce);
  } else {
    const std::string hybrid =
        is_hybrid(c) ? fmt::format(" x {} thread{} ({})", env.threads, env.threads == 1 ? "" : "s",
                                   comm::hybrid_mode_name(c.hybrid))
                     : std::string();
    out += fmt::format("asyncsolve {}: {}, {} rank{} (process grid {}x{}x{}){}, {} reduction\n",
                       version, what, env.ranks, env.ranks == 1 ? "" : "s", p.dims[0], p.dims[1],
                       p.dims[2], hybrid, s.allreduce);
  }
  std::string local = fmt::format("{}x{}x{}", p.local_max[0], p.local_max[1], p.local_max[2]);
  if (p.local_min != p.local_max) {
    local = fmt::format("{}x{}x{} to {}", p.local_min[0], p.local_min[1], p.local_min[2], local);
  }
  if (p.parameters.contains("partition")) {
    // A distributed CSR matrix (--matrix, --assemble).
    const nlohmann::json& q = p.parameters["partition"];
    if (p.parameters.contains("matrix")) {
      const nlohmann::json& m = p.parameters["matrix"];
      line("matrix",
           fmt::format("{}: {} x {}, {} non-zeros ({} {} {}; {} duplicates summed)",
                       m["file"].get<std::string>(), m["rows"].get<long long>(),
                       m["cols"].get<long long>(), m["nnz"].get<long long>(),
                       m["format"].get<std::string>(), m["field"].get<std::string>(),
                       m["symmetry"].get<std::string>(), m["duplicates_summed"].get<long long>()));
    } else {
      line("problem", fmt::format("{} assembled as a CSR matrix, global {}x{}x{}", p.name,
                                  p.global[0], p.global[1], p.global[2]));
    }
    line("partition",
         fmt::format("{}: rows {} to {} per rank (imbalance {:.3f}), edge cut {}, {} values in "
                     "{} messages per exchange",
                     q["method"].get<std::string>(), q["rows_min"].get<long long>(),
                     q["rows_max"].get<long long>(), q["row_imbalance"].get<double>(),
                     q["edge_cut"].get<long long>(), q["communication_volume"].get<long long>(),
                     q["messages"].get<long long>()));
    if (p.parameters.contains("operator"))
      line("operator", operator_line(p.parameters["operator"]));
    if (p.parameters.contains("symmetry")) {
      const nlohmann::json& y = p.parameters["symmetry"];
      line("symmetry",
           fmt::format("{} (max |a_ij - a_ji| / max |a| = {:.3e}, / sqrt(|a_ii a_jj|) = {:.3e}, "
                       "tolerance {:.0e}; pattern {})",
                       y["symmetric"].get<bool>() ? "symmetric" : "NOT symmetric",
                       y["max_asymmetry"].get<double>(), y.value("max_scaled_asymmetry", 0.0),
                       y["tolerance"].get<double>(),
                       y["structural"].get<bool>() ? "symmetric" : "not symmetric"));
    }
    if (p.parameters.contains("jacobi_check") && !p.parameters["jacobi_check"].is_null())
      line("rho", p.parameters["jacobi_check"]["statement"].get<std::string>());
  } else {
    line("problem", fmt::format("{}, global {}x{}x{}, {} per {}{}", p.name, p.global[0],
                                p.global[1], p.global[2], local, omp ? "thread" : "rank",
                                c.offset != 0.0 ? fmt::format(", offset {}", c.offset) : ""));
  }
  const std::string iters =
      s.iterations.min == s.iterations.max
          ? fmt::format("{} iterations", static_cast<long>(s.iterations.max))
          : fmt::format("iterations min {} mean {:.1f} max {}", static_cast<long>(s.iterations.min),
                        s.iterations.mean, static_cast<long>(s.iterations.max));
  line("result",
       fmt::format("{} ({}) after {} in {:.3f} s", s.converged ? "converged" : "NOT converged",
                   solvers::stop_reason_name(s.reason), iters, s.time_s.max));
  if (!s.detail.empty())
    line(s.reason == solvers::StopReason::breakdown ? "breakdown" : "why", s.detail);
  line("residual", residual_text(s, c.tol));
  if (c.variant != Variant::sync && s.unconfirmed_stops > 0) {
    line("checks", fmt::format("{} stop{} on the estimate refuted by the true residual (the "
                               "asynchronous iteration went on)",
                               s.unconfirmed_stops, s.unconfirmed_stops == 1 ? "" : "s"));
  }
  if (c.variant != Variant::sync && omp) {
    if (s.final_sync_iterations > 0) {
      line("final", fmt::format("{} final sync iterations", s.final_sync_iterations));
    }
    if (s.idle_waits.max > 0) {
      line("idle",
           fmt::format("{} waits for news over the threads", std::llround(s.idle_waits.max)));
    }
  } else if (c.variant != Variant::sync) {
    line("messages",
         fmt::format("{:.2f} sends per iteration, {} skipped (channel full){}",
                     s.sends_per_iteration, std::llround(s.skipped_sends),
                     s.final_sync_iterations > 0
                         ? fmt::format(", {} final sync iterations", s.final_sync_iterations)
                         : std::string()));
    if (s.idle_waits.max > 0) {
      line("idle", fmt::format("waits for news per rank: min {} mean {:.1f} max {}",
                               std::llround(s.idle_waits.min), s.idle_waits.mean,
                               std::llround(s.idle_waits.max)));
    }
  }
  if (s.error_inf) line("error", fmt::format("max |u - exact| = {:.3e}", *s.error_inf));
  if (!s.restarts.empty()) line("restarts", restarts_text(s.restarts));
  if (s.refinements > 0) {
    const bool delayed = c.refinement == solvers::CgsRefinement::delayed;
    line("orthog", fmt::format("{} second Gram-Schmidt pass{}{} (--cgs-refinement {})",
                               s.refinements, s.refinements == 1 ? "" : "es",
                               delayed ? ", each in the next iteration's reduction" : "",
                               name(c.refinement)));
  }
  if (!s.repeats.empty() && c.repeat_solves > 1) {
    // --repeat-solve: every solve after the one setup
    double total = 0.0;
    double change = 0.0;
    auto [fewest, most] = std::minmax_element(
        s.repeats.begin(), s.repeats.end(),
        [](const auto& a, const auto& b) { return a.iterations < b.iterations; });
    auto [fastest, slowest] =
        std::minmax_element(s.repeats.begin(), s.repeats.end(),
                            [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
    for (const solvers::RepeatedSolve& r : s.repeats) {
      total += r.time_s;
      change = std::max(change, r.change_inf);
    }
    line("repeats",
         fmt::format("{} of {} solves after one setup in {:.3f} s (each {:.3f} to {:.3f} s), "
                     "{} to {} iterations, max |x - x_1| = {:.3e}",
                     s.repeats.size(), c.repeat_solves, total, fastest->time_s, slowest->time_s,
                     fewest->iterations, most->iterations, change));
  }
  for (const std::string& hint : s.hints) line("hint", hint);
  // None where the solve broke down before its first step.
  if (const std::string phases = phase_maxima(s); !phases.empty())
    line("phases", fmt::format("{} s (max over {})", phases, omp ? "threads" : "ranks"));
  if (is_krylov(c)) {
    line("halo", fmt::format("{}, {} exchanges, {:.0f} tests (mean per rank, every {} planes)",
                             s.halo, s.halo_exchanges, s.halo_tests.mean, c.test_every));
  } else {
    const char* bytes = c.method == Method::schwarz ? "the subdomain's rows, and its factor twice"
                        : p.parameters.contains("partition") ? "12 B per non-zero, 32 B per row"
                                                             : "16 B per point and sweep";
    line("sweep", fmt::format("{:.2f} GB/s aggregate ({})", s.sweep_bandwidth_gbs, bytes));
  }
  return out;
}

}  // namespace asyncsolve::app
