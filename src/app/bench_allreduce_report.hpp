#pragma once
// The records `asyncsolve bench allreduce` measures (per repeat, maximum
// over ranks unless noted) and what prints and writes them: one table per
// mode and the document asyncsolve.bench.allreduce/1. Local (rank 0).
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "asyncsolve/collectives/allreduce.hpp"
#include "bench_allreduce_options.hpp"
#include "result_document.hpp"
#include "solve_options.hpp"

namespace asyncsolve::app {

/// The noise mode's solves (recorded in the document).
inline constexpr double noise_tol = 1e-6;  ///< the Krylov default tolerance
inline constexpr long noise_max_iters = 100000;
inline constexpr int noise_test_every = 4;  ///< the solve command's default

/// The overlap mode's computation (bench_command.cpp's ComputeKernel):
/// passes of `fmas` dependent FMAs over each element of a `length`-double
/// array; one unit is one pass.
struct ComputeKernelSize {
  static constexpr std::size_t length = 256;
  static constexpr int fmas = 8;
  static constexpr double flops_per_unit = 2.0 * fmas * length;
};

/// Per algorithm and size, per repeat (maximum over ranks unless noted).
struct LatencyRecord {
  collectives::AllreduceAlgorithm algorithm;
  std::size_t bytes = 0;
  std::vector<double> latency_us;
};

struct OverlapRecord {
  collectives::AllreduceAlgorithm algorithm;
  std::size_t bytes = 0;
  std::vector<double> pure_us, cpu_us, ovrl_us, overlap_pct, compute_us, test_us;
  std::vector<double> compute_ratio;  ///< kernel throughput during overlap / alone = cpu / compute
  /// The slowest rank's rates: the kernel alone (flops / t_cpu), the kernel
  /// during the overlap (flops / its time there), and the whole overlapped
  /// operation (flops / t_ovrl, paper 003 Fig. 9a's DGEMM throughput).
  std::vector<double> gflops_solo, gflops_overlap, gflops_effective;
  std::vector<double> units_min, units_max, unit_ns_max, call_us_max;  ///< calibration
};

struct NoiseRecord {
  Method method = Method::pcg2;
  collectives::AllreduceAlgorithm allreduce;
  NoiseSetting setting;  ///< {0, 0}: quiet
  std::vector<double> time_s, quiet_time_s, slowdown, injected_s, iterations;
  bool converged = true;
};

/// The latency table (microseconds per operation, min / median / max).
std::string latency_table(const BenchAllreduceConfig& c, const std::vector<LatencyRecord>& rs);

/// The overlap table (pure, compute, overlapped times and the overlap).
std::string overlap_table(const BenchAllreduceConfig& c, const std::vector<OverlapRecord>& rs);

/// The noise table (time to solution and slowdown per setting).
std::string noise_table(const BenchAllreduceConfig& c, const std::vector<NoiseRecord>& rs);

/// The document asyncsolve.bench.allreduce/1 of a run.
nlohmann::ordered_json make_document(const std::vector<std::string>& command,
                                     const std::string& started, const RunEnvironment& env,
                                     const BenchAllreduceConfig& c,
                                     const std::vector<LatencyRecord>& latency,
                                     const std::vector<OverlapRecord>& overlap,
                                     const std::vector<NoiseRecord>& noise);

}  // namespace asyncsolve::app
