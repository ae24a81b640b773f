// NAME     asyncsolve bench allreduce
// PURPOSE  How long the reductions behind the Krylov inner products take
//          (latency, OSU style), how much of that time a computation can
//          hide (overlap, IMB-NBC style, paper 003 Fig. 9), and how much
//          injected noise slows pcg2 and pcg-overlap down (paper 003 §VII.D).
// USAGE    mpirun -np P asyncsolve bench allreduce [--algorithms mpi,impi,tree]
//          [-m 8:8192] [-i 1000] [-x 100] [--repeats 3] [--modes latency,overlap]
//          [--progress none|poll:K|thread] [--noise 50:20,200:1000] [--json FILE]
// OUTPUT   a table per mode on rank 0; with --json, the document
//          asyncsolve.bench.allreduce/1 (README, "asyncsolve bench allreduce").
//
// Every figure is measured --repeats times; the measurements of all
// algorithms and sizes (noise: methods and settings) are interleaved within
// a repeat, so that drift of the machine affects them alike. Times are per
// rank, then the maximum over ranks (the slowest rank sets the pace).
// Every reduction's sum is checked against the exact answer before its
// time is reported.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/statistics.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/core/triple.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/fault_injection.hpp"
#include "asyncsolve/par/progress.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "commands.hpp"
#include "result_document.hpp"

namespace asyncsolve::app {
namespace {

using collectives::AllreduceAlgorithm;
using collectives::NonblockingAllreduce;
using core::maximum;
using core::median;
using core::minimum;
using core::series_json;
using par::max_over_ranks;
using par::min_over_ranks;

constexpr double to_us = 1e6;
constexpr double noise_tol = 1e-6;  // the Krylov default tolerance
constexpr long noise_max_iters = 100000;
constexpr int noise_test_every = 4;  // the solve command's default

// ---- the reductions -----------------------------------------------------------

/// Collective: builds reduction `algorithm`, reporting bad input as bad
/// input of `option` (the factory throws before any communication, the same
/// on every rank).
std::unique_ptr<NonblockingAllreduce> make_reduction(std::string_view option,
                                                     const AllreduceAlgorithm& algorithm,
                                                     const par::Comm& comm, std::size_t doubles) {
  try {
    return collectives::make_nonblocking_allreduce(algorithm, comm, doubles);
  } catch (const core::InputError& e) {
    std::string message = e.what();
    constexpr std::string_view factory_option = "--allreduce ";
    if (message.starts_with(factory_option)) {
      message = fmt::format("{} {}", option, message.substr(factory_option.size()));
    } else {
      message = fmt::format("{} '{}': {}", option, algorithm.name(), message);
    }
    throw core::InputError(message);
  }
}

/// The operands and result of one size: rank r contributes r + 1 + (j mod 7)
/// to element j, so every element of the sum is an integer, exact in any
/// order of summation, and element mix-ups show.
struct Buffers {
  std::vector<double> values;
  std::vector<double> result;
  double base = 0.0;  ///< P (P + 1) / 2
  int ranks = 1;

  Buffers(const par::Comm& comm, std::size_t doubles)
      : values(doubles), result(doubles, 0.0), ranks(comm.size()) {
    for (std::size_t j = 0; j < doubles; ++j) {
      values[j] = comm.rank() + 1.0 + static_cast<double>(j % 7);
    }
    base = 0.5 * ranks * (ranks + 1.0);
  }
  /// True if `result` holds the exact sum.
  bool is_correct() const {
    for (std::size_t j = 0; j < result.size(); ++j)
      if (result[j] != base + ranks * static_cast<double>(j % 7)) return false;
    return true;
  }
};

/// Collective: throws RuntimeFailure on every rank if any rank's last sum
/// was wrong (checked outside the timed loops).
void validate(const par::Comm& comm, const Buffers& buffers, const std::string& algorithm,
              std::size_t bytes, std::string_view mode) {
  if (par::any_rank(comm, !buffers.is_correct())) {
    throw core::RuntimeFailure(
        fmt::format("bench allreduce ({}): {} returned a wrong sum for {} "
                    "bytes",
                    mode, algorithm, bytes));
  }
}

/// Collective: `warmup` start+wait cycles, a barrier, then `iterations`
/// timed cycles back to back. Returns this rank's seconds per operation.
double time_cycles(NonblockingAllreduce& r, Buffers& b, long warmup, long iterations,
                   const par::Comm& comm) {
  for (long w = 0; w < warmup; ++w) {
    r.start(b.values);
    r.wait(b.result);
  }
  comm.barrier();
  const double t0 = core::now_s();
  for (long i = 0; i < iterations; ++i) {
    r.start(b.values);
    r.wait(b.result);
  }
  return (core::now_s() - t0) / static_cast<double>(iterations);
}

// ---- the overlap mode's computation -----------------------------------------

/// Compute-bound work that stays in L1: passes of 8 dependent FMAs over each
/// element of a 2 KiB array (independent across elements, so it
/// vectorises). One unit is one pass; it is calibrated in units.
class ComputeKernel {
 public:
  static constexpr std::size_t length = 256;
  static constexpr int fmas = 8;
  static constexpr double flops_per_unit = 2.0 * fmas * length;

  ComputeKernel() : a_(length, 1.0) {}

  /// `units` passes over the array. The iteration x -> 0.9999999 x + 1e-7
  /// has the fixed point 1, so the values stay near 1: no overflow, no
  /// denormals, and the stores keep the work observable.
  void run(long units) noexcept {
    double* a = a_.data();
    for (long u = 0; u < units; ++u) {
      for (std::size_t j = 0; j < length; ++j) {
        double x = a[j];
        for (int k = 0; k < fmas; ++k) x = x * 0.9999999 + 1e-7;
        a[j] = x;
      }
    }
  }
  /// Seconds one call of run(units) takes.
  double time(long units) noexcept {
    const double t0 = core::now_s();
    run(units);
    return core::now_s() - t0;
  }
  double checksum() const noexcept {
    double s = 0.0;
    for (const double v : a_) s += v;
    return s;
  }

 private:
  std::vector<double> a_;
};

/// The kernel calibrated on one rank to take about a target time per call.
struct Calibration {
  long units = 1;       ///< passes per call
  double unit_s = 0.0;  ///< seconds per pass, from a run of at least 1 ms
  double call_s = 0.0;  ///< seconds of one calibrated call (best of 3)
};

Calibration calibrate(ComputeKernel& kernel, double target_s) {
  Calibration c;
  long n = 1;
  double t = kernel.time(n);
  while (t < 1e-3 && n < (1L << 40)) {
    n *= 2;
    t = kernel.time(n);
  }
  c.unit_s = t / static_cast<double>(n);
  c.units = std::max(1L, std::lround(target_s / c.unit_s));
  c.call_s = kernel.time(c.units);
  for (int k = 0; k < 2; ++k) c.call_s = std::min(c.call_s, kernel.time(c.units));
  return c;
}

/// One overlap measurement of one algorithm and size on this rank (seconds,
/// before the maximum over ranks).
struct OverlapSample {
  double pure_s = 0.0;     ///< start+wait alone, per operation
  double cpu_s = 0.0;      ///< the calibrated computation alone, per call
  double ovrl_s = 0.0;     ///< start, computation (with progress), wait, per operation
  double compute_s = 0.0;  ///< of ovrl_s: in the kernel (its pieces, tests excluded)
  double test_s = 0.0;     ///< of ovrl_s: in test() between the pieces (poll:K)
  Calibration calibration;
};

/// Collective: t_pure, the calibration, t_cpu and t_ovrl of reduction `r`
/// (IMB-NBC's procedure). With a progress thread the reduction is
/// registered with it for the overlapped loop only; both sides touch the
/// reduction under the thread's mutex (par::ProgressThread's contract).
OverlapSample measure_overlap(NonblockingAllreduce& r, Buffers& b, ComputeKernel& kernel,
                              const BenchAllreduceConfig& config, const par::Comm& comm) {
  OverlapSample s;
  s.pure_s = time_cycles(r, b, config.warmup, config.iterations, comm);
  s.calibration = calibrate(kernel, max_over_ranks(comm, s.pure_s));
  const long units = s.calibration.units;

  comm.barrier();
  double t0 = core::now_s();
  for (long i = 0; i < config.iterations; ++i) kernel.run(units);
  s.cpu_s = (core::now_s() - t0) / static_cast<double>(config.iterations);

  std::optional<par::ProgressThread> thread;
  bool done = false;  // completed by the progress thread (guarded by its mutex)
  int registration = -1;
  if (config.progress.mode == Progress::Mode::thread) {
    thread.emplace(comm);
    registration = thread->add([&r, &b, &done] {
      if (r.active() && r.test(b.result)) done = true;
    });
  }
  const int pieces = config.progress.mode == Progress::Mode::poll ? config.progress.every : 1;
  double compute_s = 0.0;
  double test_s = 0.0;
  // One operation: start, compute (in `pieces` pieces with a test between
  // them for poll:K), wait unless already complete.
  const auto overlapped = [&] {
    if (thread) {
      {
        const std::lock_guard lock(thread->mutex());
        done = false;
        r.start(b.values);
      }
      const double c0 = core::now_s();
      kernel.run(units);
      compute_s += core::now_s() - c0;
      const std::lock_guard lock(thread->mutex());
      if (!done) r.wait(b.result);
      done = false;
      return;
    }
    r.start(b.values);
    bool complete = false;
    double c0 = core::now_s();
    for (int p = 0; p < pieces; ++p) {
      kernel.run(units * (p + 1) / pieces - units * p / pieces);
      const double c1 = core::now_s();
      compute_s += c1 - c0;
      if (p + 1 < pieces && !complete) {
        complete = r.test(b.result);
        c0 = core::now_s();
        test_s += c0 - c1;
      } else {
        c0 = c1;
      }
    }
    if (!complete) r.wait(b.result);
  };
  for (long w = 0; w < config.warmup; ++w) overlapped();
  comm.barrier();
  compute_s = 0.0;
  test_s = 0.0;
  t0 = core::now_s();
  for (long i = 0; i < config.iterations; ++i) overlapped();
  s.ovrl_s = (core::now_s() - t0) / static_cast<double>(config.iterations);
  s.compute_s = compute_s / static_cast<double>(config.iterations);
  s.test_s = test_s / static_cast<double>(config.iterations);
  if (thread) {
    thread->remove(registration);
    thread->stop();  // collective
  }
  return s;
}

/// IMB-NBC's overlap: the share of the shorter of communication and
/// computation that was hidden, in percent, clamped to [0, 100].
double overlap_percent(double pure_s, double cpu_s, double ovrl_s) {
  const double shorter = std::min(pure_s, cpu_s);
  if (!(shorter > 0.0)) return 0.0;
  return 100.0 * std::clamp((pure_s + cpu_s - ovrl_s) / shorter, 0.0, 1.0);
}

// ---- records ------------------------------------------------------------------

/// Per algorithm and size, per repeat (maximum over ranks unless noted).
struct LatencyRecord {
  AllreduceAlgorithm algorithm;
  std::size_t bytes = 0;
  std::vector<double> latency_us;
};

struct OverlapRecord {
  AllreduceAlgorithm algorithm;
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
  AllreduceAlgorithm allreduce;
  NoiseSetting setting;  ///< {0, 0}: quiet
  std::vector<double> time_s, quiet_time_s, slowdown, injected_s, iterations;
  bool converged = true;
};

// ---- the three modes ----------------------------------------------------------

std::vector<LatencyRecord> run_latency(const BenchAllreduceConfig& config, const par::Comm& comm) {
  std::vector<LatencyRecord> records;
  for (const auto& a : config.algorithms)
    for (const std::size_t bytes : config.sizes_bytes) records.push_back({a, bytes, {}});
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    for (auto& rec : records) {
      const std::size_t doubles = rec.bytes / 8;
      auto r = make_reduction("--algorithms", rec.algorithm, comm, doubles);
      Buffers b(comm, doubles);
      const double t = time_cycles(*r, b, config.warmup, config.iterations, comm);
      validate(comm, b, rec.algorithm.name(), rec.bytes, "latency");
      rec.latency_us.push_back(max_over_ranks(comm, t) * to_us);
      r->free();
    }
  }
  return records;
}

std::vector<OverlapRecord> run_overlap(const BenchAllreduceConfig& config, const par::Comm& comm) {
  std::vector<OverlapRecord> records;
  for (const auto& a : config.algorithms) {
    for (const std::size_t bytes : config.sizes_bytes) {
      OverlapRecord rec;
      rec.algorithm = a;
      rec.bytes = bytes;
      records.push_back(std::move(rec));
    }
  }
  ComputeKernel kernel;
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    for (auto& rec : records) {
      const std::size_t doubles = rec.bytes / 8;
      auto r = make_reduction("--algorithms", rec.algorithm, comm, doubles);
      Buffers b(comm, doubles);
      const OverlapSample s = measure_overlap(*r, b, kernel, config, comm);
      validate(comm, b, rec.algorithm.name(), rec.bytes, "overlap");
      r->free();
      const double pure = max_over_ranks(comm, s.pure_s);
      const double cpu = max_over_ranks(comm, s.cpu_s);
      const double ovrl = max_over_ranks(comm, s.ovrl_s);
      const double compute = max_over_ranks(comm, s.compute_s);
      const double tests = max_over_ranks(comm, s.test_s);
      const double units_max = max_over_ranks(comm, static_cast<double>(s.calibration.units));
      const double units_min = min_over_ranks(comm, static_cast<double>(s.calibration.units));
      rec.pure_us.push_back(pure * to_us);
      rec.cpu_us.push_back(cpu * to_us);
      rec.ovrl_us.push_back(ovrl * to_us);
      rec.compute_us.push_back(compute * to_us);
      rec.test_us.push_back(tests * to_us);
      rec.overlap_pct.push_back(overlap_percent(pure, cpu, ovrl));
      rec.compute_ratio.push_back(compute > 0.0 ? cpu / compute : 0.0);
      // The slowest rank's rate: its flops over the largest time.
      const double flops = units_min * ComputeKernel::flops_per_unit;
      rec.gflops_solo.push_back(cpu > 0.0 ? flops / cpu / 1e9 : 0.0);
      rec.gflops_overlap.push_back(compute > 0.0 ? flops / compute / 1e9 : 0.0);
      rec.gflops_effective.push_back(ovrl > 0.0 ? flops / ovrl / 1e9 : 0.0);
      rec.units_min.push_back(units_min);
      rec.units_max.push_back(units_max);
      rec.unit_ns_max.push_back(max_over_ranks(comm, s.calibration.unit_s) * 1e9);
      rec.call_us_max.push_back(max_over_ranks(comm, s.calibration.call_s) * to_us);
    }
  }
  // Keeps the kernel's stores observable to the compiler.
  if (!std::isfinite(kernel.checksum())) throw core::RuntimeFailure("compute kernel diverged");
  return records;
}

/// Collective: one solve of the noise mode; returns the time (max over ranks).
double noise_solve(const grid::Problem& problem, const grid::Decomposition& decomposition,
                   Method method, const AllreduceAlgorithm& allreduce, const NoiseSetting& setting,
                   std::uint64_t seed, NoiseRecord& rec) {
  const par::Comm& comm = decomposition.comm();
  solvers::KrylovSystem system = solvers::make_krylov_system(problem, decomposition, 0.0);
  auto halo =
      comm::make_halo_exchange("waitall", decomposition, system.x, comm::Neighbourhood::faces);
  solvers::KrylovOptions options;
  options.method = krylov_method(method);
  options.tol = noise_tol;
  options.max_iters = noise_max_iters;
  options.test_every = noise_test_every;
  options.jacobi = true;  // pcg2 and pcg-overlap are Jacobi-preconditioned by definition
  options.allreduce = allreduce.name();
  par::FaultInjector faults(par::FaultOptions{-1, 1.0, setting.us, setting.hz, seed}, comm.rank());
  if (faults.is_active()) options.faults = &faults;
  const solvers::SolveResult result = solvers::krylov_solve(system, decomposition, *halo, options);
  halo->close();
  rec.converged = rec.converged && result.converged;
  rec.iterations.push_back(max_over_ranks(comm, static_cast<double>(result.iterations)));
  rec.injected_s.push_back(max_over_ranks(comm, result.injected_s));
  return max_over_ranks(comm, result.time_s);
}

std::vector<NoiseRecord> run_noise(const BenchAllreduceConfig& config,
                                   const grid::Decomposition& decomposition) {
  const auto problem = grid::make_problem("ones", {});
  struct NoiseMethod {
    Method method;
    AllreduceAlgorithm allreduce;
  };
  const std::vector<NoiseMethod> methods{{Method::pcg2, {}},
                                         {Method::pcg_overlap, config.noise_allreduce}};
  std::vector<NoiseSetting> settings{{0.0, 0.0}};
  settings.insert(settings.end(), config.noise.begin(), config.noise.end());
  std::vector<NoiseRecord> records;  // setting-major, then method
  for (const auto& s : settings) {
    for (const auto& m : methods) {
      NoiseRecord rec;
      rec.method = m.method;
      rec.allreduce = m.allreduce;
      rec.setting = s;
      records.push_back(std::move(rec));
    }
  }
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    // Seeds differ between repeats so that the noise phases are sampled.
    const auto seed = static_cast<std::uint64_t>(repeat + 1);
    for (auto& rec : records) {
      rec.time_s.push_back(
          noise_solve(*problem, decomposition, rec.method, rec.allreduce, rec.setting, seed, rec));
    }
    for (std::size_t i = 0; i < records.size(); ++i) {
      const double quiet = records[i % methods.size()].time_s.back();
      records[i].quiet_time_s.push_back(quiet);
      records[i].slowdown.push_back(quiet > 0.0 ? records[i].time_s.back() / quiet : 0.0);
    }
  }
  return records;
}

// ---- output -------------------------------------------------------------------

std::string format_noise_setting(const NoiseSetting& s) {
  return s.hz == 0.0 ? std::string("quiet") : fmt::format("{:g} us @ {:g} Hz", s.us, s.hz);
}

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
std::optional<double> control_overlap_pct(const std::vector<OverlapRecord>& rs) {
  std::optional<double> worst;
  for (const auto& r : rs)
    if (r.algorithm.kind == AllreduceAlgorithm::Kind::mpi) {
      worst = std::max(worst.value_or(0.0), median(r.overlap_pct));
    }
  return worst;
}
constexpr double control_limit_pct = 10.0;

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
                         {"array_doubles", ComputeKernel::length},
                         {"fmas_per_element", ComputeKernel::fmas},
                         {"flops_per_unit", ComputeKernel::flops_per_unit}}},
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

}  // namespace

core::ExitCode run_bench_allreduce(const BenchAllreduceConfig& config, const par::Comm& world,
                                   const par::Environment& env,
                                   const std::vector<std::string>& command) {
  const std::string started = core::iso8601_now();
  // Everything that can be bad input is checked before the first measurement.
  check_json_path(config.json_path, world);
  for (const auto& a : config.algorithms) make_reduction("--algorithms", a, world, 1)->free();
  make_reduction("--noise-allreduce", config.noise_allreduce, world, 1)->free();
  if (config.progress.mode == Progress::Mode::thread) {
    int provided = MPI_THREAD_SINGLE;
    par::check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
    if (provided != MPI_THREAD_MULTIPLE) {
      throw core::InputError(
          "--progress thread: this MPI library provides no "
          "MPI_THREAD_MULTIPLE, expected none or poll:K");
    }
  }
  std::optional<grid::Decomposition> decomposition;
  if (config.has_mode(AllreduceMode::noise)) {
    grid::DecompositionSpec spec;
    spec.global = config.noise_global;
    try {
      decomposition.emplace(grid::Decomposition::create(world, spec));
    } catch (const core::InputError& e) {
      std::string message = e.what();
      constexpr std::string_view solve_option = "--global ";
      message = message.starts_with(solve_option)
                    ? fmt::format("--noise-global {}", message.substr(solve_option.size()))
                    : fmt::format("--noise-global {}: {}", core::format_triple(config.noise_global),
                                  message);
      throw core::InputError(message);
    }
  }

  const RunEnvironment e = describe_environment(world, env);
  par::print_on_root(
      world, fmt::format("{}\n  {} iterations ({} warm-up), {} repeat{}, sizes {} to {} bytes\n",
                         par::provenance_line("bench allreduce", e), config.iterations,
                         config.warmup, config.repeats, config.repeats == 1 ? "" : "s",
                         config.sizes_bytes.front(), config.sizes_bytes.back()));
  std::vector<LatencyRecord> latency;
  std::vector<OverlapRecord> overlap;
  std::vector<NoiseRecord> noise;
  for (const auto& mode : config.modes) {
    switch (mode) {
      case AllreduceMode::latency:
        latency = run_latency(config, world);
        par::print_on_root(world, latency_table(config, latency));
        break;
      case AllreduceMode::overlap:
        overlap = run_overlap(config, world);
        par::print_on_root(world, overlap_table(config, overlap));
        break;
      case AllreduceMode::noise:
        noise = run_noise(config, *decomposition);
        par::print_on_root(world, noise_table(config, noise));
        break;
    }
  }

  const bool written = par::write_document(
      world, config.json_path, "asyncsolve", "  json       {}",
      [&] { return make_document(command, started, e, config, latency, overlap, noise); });
  if (decomposition) decomposition->free();
  return written ? core::ExitCode::success : core::ExitCode::runtime_failure;
}

}  // namespace asyncsolve::app
