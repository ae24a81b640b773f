#include "asyncsolve/kernels/stencil2d_bench.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/core/statistics.hpp"

namespace asyncsolve::kernels {

void add_stencil2d_bench_options(CLI::App& app, Stencil2dBenchArgs& args, std::string_view worker) {
  app.add_option("--local", args.local,
                 fmt::format("Block size n per {0} (n x n points; weak scaling: the domain grows "
                             "with the {0}s), or a comma-separated sweep, e.g. 64,128,256",
                             worker));
  app.add_option("--radius", args.radius, "Halo width r (stencil (2r+1) x (2r+1)), 1 <= r < n");
  app.add_option("-i,--iterations", args.iterations, "Timed iterations per measurement");
  app.add_option("-x,--warmup", args.warmup, "Untimed iterations before them");
  app.add_option("--repeats", args.repeats,
                 "Measurements of every variant, interleaved; min/median/max are reported");
}

std::vector<int> validate_stencil2d_bench_args(const Stencil2dBenchArgs& args,
                                               std::size_t max_sizes) {
  const std::string expected = "a comma-separated list of block sizes >= 2, e.g. 64,128,256";
  const std::vector<std::string> items = core::split_list("--local", args.local, expected);
  if (max_sizes > 0 && items.size() > max_sizes) {
    throw core::InputError(fmt::format("--local '{}': {} sizes, expected at most {}", args.local,
                                       items.size(), max_sizes));
  }
  std::vector<int> sizes;
  for (const auto& item : items) {
    int n = 0;
    if (!core::parse_whole(item, n) || n < 2 || n > 65536) {
      throw core::InputError(fmt::format("--local '{}': bad size '{}', expected {} (at most 65536)",
                                         args.local, item, expected));
    }
    sizes.push_back(n);
  }
  core::expect_at_least("--radius", args.radius, 1);
  for (const int n : sizes) {
    if (args.radius >= n) {
      throw core::InputError(
          fmt::format("--radius {} with --local {}: expected 1 <= radius < the "
                      "local size (the halo comes from the neighbour's block)",
                      args.radius, n));
    }
  }
  core::expect_repetitions(args.iterations, args.warmup, args.repeats);
  return sizes;
}

namespace {

nlohmann::ordered_json result_json(const Stencil2dMeasurement& m, int px, int py, int radius,
                                   int ranks) {
  nlohmann::ordered_json row;
  row["name"] = m.name;
  if (!m.model.empty()) row["model"] = m.model;
  row["transport"] = m.transport;
  row["variant"] = m.variant;
  row["local"] = m.local;
  row["global"] = {static_cast<long>(px) * m.local, static_cast<long>(py) * m.local};
  row["radius"] = radius;
  row["ranks"] = ranks;
  row["halo_bytes_per_rank"] = m.halo_bytes;
  row["calls_per_iteration"] = m.calls;
  if (m.syncs >= 0) row["syncs_per_iteration"] = m.syncs;
  row["validated"] = true;
  row["iteration_us"] = core::series_json(m.iteration_us);
  row["exchange_us"] = core::series_json(m.exchange_us);
  row["filter_us"] = core::series_json(m.filter_us);
  row["bandwidth_mbs"] = core::series_json(m.bandwidth_mbs);
  return row;
}

}  // namespace

nlohmann::ordered_json stencil2d_results_json(const std::vector<Stencil2dMeasurement>& measurements,
                                              int px, int py, int radius, int ranks) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const auto& m : measurements) results.push_back(result_json(m, px, py, radius, ranks));
  return results;
}

std::string stencil2d_table(const std::vector<Stencil2dMeasurement>& measurements, long iterations,
                            long warmup, std::string_view worker, bool with_syncs) {
  std::string out =
      fmt::format("  {:>6}  {:<14} {:>26}  {:>10}  {:>10}  {:>10}  {:>6}", "local", "variant",
                  "iteration us med [min, max]", "exchange", "filter", "halo MB/s", "calls");
  out += with_syncs ? fmt::format("  {:>5}\n", "syncs") : "\n";
  for (const auto& m : measurements) {
    out += fmt::format("  {:>6}  {:<14} {:>26}  {:>10.2f}  {:>10.2f}  {:>10.1f}  {:>6}", m.local,
                       m.name,
                       fmt::format("{:.2f} [{:.2f}, {:.2f}]", core::median(m.iteration_us),
                                   core::minimum(m.iteration_us), core::maximum(m.iteration_us)),
                       core::median(m.exchange_us), core::median(m.filter_us),
                       core::median(m.bandwidth_mbs), m.calls);
    out += with_syncs ? fmt::format("  {:>5}\n", m.syncs) : "\n";
  }
  out += fmt::format(
      "  every repeat validated against the serial filter ({} of {} iterations "
      "timed); times: slowest {}, per iteration\n",
      iterations, warmup + iterations, worker);
  return out;
}

nlohmann::ordered_json stencil2d_parameters_json(const Stencil2dParameters& p) {
  nlohmann::ordered_json j;
  j["local_sizes"] = p.local_sizes;
  j["radius"] = p.radius;
  j["iterations"] = p.iterations;
  j["warmup"] = p.warmup;
  j["repeats"] = p.repeats;
  j["transport"] = p.transport;
  j["variant"] = p.variant;
  j["transports"] = p.transports;
  j["variants"] = p.variants;
  j["runs"] = p.runs;
  if (!p.grid.empty()) j["grid"] = p.grid;
  j["filter"] = "(2r+1)^2 weights 1 + (3(k+r) + 7(l+r)) mod 13, normalised to sum 1";
  j["initial_field"] = "splitmix64 hash of the global coordinates, in [0, 1)";
  j["validation"] = {
      {"reference", fmt::format("kernels::filter2d_serial on {}, the whole periodic domain",
                                p.reference_worker)},
      {"every_repeat", true},
      {"relative_tolerance", p.validation_tol}};
  j["timing"] = fmt::format(
      "per {0} per iteration, then the maximum over {0}s; exchange = iteration - filter; "
      "bandwidth = halo bytes per {0} / exchange time",
      p.worker);
  if (!p.synchronisation.empty()) j["synchronisation"] = p.synchronisation;
  return j;
}

}  // namespace asyncsolve::kernels
