// NAME     asyncsolve bench allreduce
// PURPOSE  How long the reductions behind the Krylov inner products take
//          (latency, OSU style), how much of that time a computation can
//          hide (overlap, IMB-NBC style, paper 003 Fig. 9), and how much
//          injected noise slows pcg2 and pcg-overlap down (paper 003 §VII.D).
// USAGE    mpirun -np P asyncsolve bench allreduce [--algorithms mpi,impi,tree]
//          [-m 8:8192] [-i 1000] [-x 100] [--repeats 3] [--modes latency,overlap]
//          [--progress none|poll:K|thread] [--noise 50:20,200:1000] [--json FILE]
// OUTPUT   a table per mode on rank 0; with --json, the document
//          asyncsolve.bench.allreduce/1 (docs/benchmarks.md, "asyncsolve bench allreduce").
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
#include "bench_allreduce_report.hpp"
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
class ComputeKernel : public ComputeKernelSize {
 public:
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
  auto halo = comm::make_halo_exchange(comm::HaloStrategy::waitall, decomposition, system.x,
                                       comm::Neighbourhood::faces);
  solvers::KrylovOptions options;
  options.method = krylov_method(method);
  options.tol = noise_tol;
  options.max_iters = noise_max_iters;
  options.test_every = noise_test_every;
  options.pc.kind = precond::PcKind::jacobi;  // pcg2 and pcg-overlap: Jacobi by definition
  options.allreduce = allreduce;
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
  const auto problem = grid::make_problem(grid::ModelProblem::ones, {});
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
    const auto seed = static_cast<std::uint64_t>(repeat) + 1;
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
