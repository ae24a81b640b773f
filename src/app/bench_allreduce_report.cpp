// The output of `asyncsolve bench allreduce` (bench_command.cpp measures):
// a table per mode and the document asyncsolve.bench.allreduce/1.
#include "bench_allreduce_report.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/statistics.hpp"

namespace asyncsolve::app {
namespace {

using collectives::AllreduceAlgorithm;
using core::maximum;
using core::median;
using core::minimum;
using core::series_json;

std::string format_noise_setting(const NoiseSetting& s) {
  return s.hz == 0.0 ? std::string("quiet") : fmt::format("{:g} us @ {:g} Hz", s.us, s.hz);
}

std::optional<double> control_overlap_pct(const std::vector<OverlapRecord>& rs) {
  std::optional<double> worst;
  for (const auto& r : rs)
    if (r.algorithm.kind == AllreduceAlgorithm::Kind::mpi) {
      worst = std::max(worst.value_or(0.0), median(r.overlap_pct));
    }
  return worst;
}
constexpr double control_limit_pct = 10.0;

}  // namespace

std::string latency_table(const BenchAllreduceConfig& c, const std::vector<LatencyRecord>& rs) {
  std::string out = fmt::format(
      "latency: start + wait, microseconds per operation (max over ranks; min / median / max "
      "of {} repeat{})\n",
      c.repeats, c.repeats == 1 ? "" : "s");
  out += fmt::format("  {:<14} {:>9} {:>8} {:>10} {:>10} {:>10}\n", "algorithm", "bytes", "doubles",
                     "min", "median", "max");
  for (const auto& r : rs) {
    out += fmt::format("  {:<14} {:>9} {:>8} {:>10.2f} {:>10.2f} {:>10.2f}\n", r.algorithm.name(),
                       r.bytes, r.bytes / 8, minimum(r.latency_us), median(r.latency_us),
                       maximum(r.latency_us));
  }
  return out;
}

/// The blocking `mpi` reduction cannot overlap anything: its median overlap
/// is the measurement's own error. Null when mpi was not measured.
std::string overlap_table(const BenchAllreduceConfig& c, const std::vector<OverlapRecord>& rs) {
  std::string out = fmt::format(
      "overlap: progress {}; microseconds (max over ranks), medians of {} repeat{}; compute = "
      "kernel throughput during overlap / alone; tests = time in test() per operation\n",
      c.progress.name(), c.repeats, c.repeats == 1 ? "" : "s");
  out +=
      fmt::format("  {:<14} {:>9} {:>9} {:>9} {:>9}  {:>23}  {:>7} {:>8}\n", "algorithm", "bytes",
                  "t_pure", "t_cpu", "t_ovrl", "overlap % min/med/max", "compute", "tests");
  for (const auto& r : rs) {
    out += fmt::format(
        "  {:<14} {:>9} {:>9.2f} {:>9.2f} {:>9.2f}  {:>7.1f}/{:>7.1f}/{:>7.1f}  "
        "{:>7.2f} {:>8.2f}\n",
        r.algorithm.name(), r.bytes, median(r.pure_us), median(r.cpu_us), median(r.ovrl_us),
        minimum(r.overlap_pct), median(r.overlap_pct), maximum(r.overlap_pct),
        median(r.compute_ratio), median(r.test_us));
  }
  if (const auto control = control_overlap_pct(rs)) {
    out += *control <= control_limit_pct
               ? fmt::format("  control: blocking mpi overlaps at most {:.1f}% (expected 0)\n",
                             *control)
               : fmt::format(
                     "  control: blocking mpi shows up to {:.1f}% overlap, which is "
                     "impossible: t_cpu is not what the kernel takes inside the "
                     "overlapped loop on this machine (e.g. ranks sharing a core's "
                     "units when all compute at once); do not trust the overlap column\n",
                     *control);
  }
  return out;
}

std::string noise_table(const BenchAllreduceConfig& c, const std::vector<NoiseRecord>& rs) {
  std::string out = fmt::format(
      "noise: ones {}, slowdown t_noise / t_quiet (time max over ranks; medians of {} "
      "repeat{})\n",
      fmt::format("{}x{}x{}", c.noise_global[0], c.noise_global[1], c.noise_global[2]), c.repeats,
      c.repeats == 1 ? "" : "s");
  out += fmt::format("  {:<12} {:<10} {:<18} {:>6} {:>9} {:>9}  {:>20}\n", "method", "allreduce",
                     "noise", "iters", "quiet s", "noisy s", "slowdown min/med/max");
  for (const auto& r : rs) {
    out += fmt::format(
        "  {:<12} {:<10} {:<18} {:>6} {:>9.4f} {:>9.4f}  "
        "{:>6.3f}/{:>6.3f}/{:>6.3f}{}\n",
        name(r.method), r.allreduce.name(), format_noise_setting(r.setting),
        static_cast<long>(maximum(r.iterations)), median(r.quiet_time_s), median(r.time_s),
        minimum(r.slowdown), median(r.slowdown), maximum(r.slowdown),
        r.converged ? "" : "  NOT converged");
  }
  return out;
}

nlohmann::ordered_json make_document(const std::vector<std::string>& command,
                                     const std::string& started, const RunEnvironment& env,
                                     const BenchAllreduceConfig& c,
                                     const std::vector<LatencyRecord>& latency,
                                     const std::vector<OverlapRecord>& overlap,
                                     const std::vector<NoiseRecord>& noise) {
  nlohmann::ordered_json doc = document_header("asyncsolve.bench.allreduce/1", command, started);
  doc["environment"] = environment_json(env);
  std::vector<std::string> algorithms;
  for (const auto& a : c.algorithms) algorithms.push_back(a.name());
  std::vector<std::string> modes;
  for (const AllreduceMode m : c.modes) modes.emplace_back(name(m));
  nlohmann::ordered_json settings = nlohmann::ordered_json::array();
  for (const auto& s : c.noise) settings.push_back({{"us", s.us}, {"hz", s.hz}});
  doc["parameters"] = {{"algorithms", algorithms},
                       {"message_sizes", c.message_sizes},
                       {"sizes_bytes", c.sizes_bytes},
                       {"iterations", c.iterations},
                       {"warmup", c.warmup},
                       {"repeats", c.repeats},
                       {"modes", modes},
                       {"progress", c.progress.name()},
                       {"compute_kernel",
                        {{"name", "fma"},
                         {"array_doubles", ComputeKernelSize::length},
                         {"fmas_per_element", ComputeKernelSize::fmas},
                         {"flops_per_unit", ComputeKernelSize::flops_per_unit}}},
                       {"noise_problem", "ones"},
                       {"noise_global", {c.noise_global[0], c.noise_global[1], c.noise_global[2]}},
                       {"noise", settings},
                       {"noise_methods",
                        {{{"method", "pcg2"}, {"allreduce", "mpi"}},
                         {{"method", "pcg-overlap"}, {"allreduce", c.noise_allreduce.name()}}}},
                       {"noise_allreduce", c.noise_allreduce.name()},
                       {"noise_halo", "waitall"},
                       {"noise_test_every", noise_test_every},
                       {"noise_tol", noise_tol},
                       {"noise_seed", "the repeat's number, 1 to repeats"}};
  nlohmann::ordered_json lat = nlohmann::ordered_json::array();
  for (const auto& r : latency) {
    lat.push_back({{"algorithm", r.algorithm.name()},
                   {"bytes", r.bytes},
                   {"doubles", r.bytes / 8},
                   {"latency_us", series_json(r.latency_us)}});
  }
  doc["latency"] = lat;
  nlohmann::ordered_json ovl = nlohmann::ordered_json::array();
  for (const auto& r : overlap) {
    ovl.push_back({{"algorithm", r.algorithm.name()},
                   {"bytes", r.bytes},
                   {"doubles", r.bytes / 8},
                   {"progress", c.progress.name()},
                   {"t_pure_us", series_json(r.pure_us)},
                   {"t_cpu_us", series_json(r.cpu_us)},
                   {"t_ovrl_us", series_json(r.ovrl_us)},
                   {"overlap_pct", series_json(r.overlap_pct)},
                   {"compute_in_overlap_us", series_json(r.compute_us)},
                   {"test_us", series_json(r.test_us)},
                   {"compute_ratio", series_json(r.compute_ratio)},
                   {"gflops_solo", series_json(r.gflops_solo)},
                   {"gflops_overlap", series_json(r.gflops_overlap)},
                   {"gflops_effective", series_json(r.gflops_effective)},
                   {"calibration",
                    {{"units_min", r.units_min},
                     {"units_max", r.units_max},
                     {"unit_ns_max", r.unit_ns_max},
                     {"call_us_max", r.call_us_max}}}});
  }
  doc["overlap"] = ovl;
  if (const auto control = control_overlap_pct(overlap)) {
    doc["overlap_control"] = {{"algorithm", "mpi"},
                              {"max_median_overlap_pct", *control},
                              {"limit_pct", control_limit_pct},
                              {"ok", *control <= control_limit_pct}};
  } else {
    doc["overlap_control"] = nullptr;
  }
  nlohmann::ordered_json nse = nlohmann::ordered_json::array();
  for (const auto& r : noise) {
    nse.push_back({{"method", name(r.method)},
                   {"allreduce", r.allreduce.name()},
                   {"noise_us", r.setting.us},
                   {"noise_hz", r.setting.hz},
                   {"converged", r.converged},
                   {"iterations", series_json(r.iterations)},
                   {"time_s", series_json(r.time_s)},
                   {"quiet_time_s", series_json(r.quiet_time_s)},
                   {"slowdown", series_json(r.slowdown)},
                   {"injected_s", series_json(r.injected_s)}});
  }
  doc["noise"] = nse;
  return doc;
}

}  // namespace asyncsolve::app
