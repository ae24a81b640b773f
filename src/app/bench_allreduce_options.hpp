#pragma once
// The options of `asyncsolve bench allreduce`, parsed once into a typed
// BenchAllreduceConfig. Pure: no MPI, no output.
#include <cstddef>
#include <string>
#include <vector>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "options_common.hpp"

namespace asyncsolve::app {

/// --modes of `bench allreduce`: start+wait latency, overlap with a
/// calibrated computation (IMB-NBC), and pcg2 vs pcg-overlap under noise.
enum class AllreduceMode { latency, overlap, noise };
template <>
struct EnumNames<AllreduceMode> {
  static constexpr std::array<std::string_view, 3> names{"latency", "overlap", "noise"};
};

/// One noise setting of `bench allreduce --modes noise`: every rank is
/// interrupted for `us` microseconds `hz` times per second.
struct NoiseSetting {
  double us = 0.0;
  double hz = 0.0;
};

/// What `asyncsolve bench allreduce` takes, validated (the reductions are
/// also built once, collectively, before the first measurement).
struct BenchAllreduceConfig {
  using Algorithm = collectives::AllreduceAlgorithm;
  std::vector<Algorithm> algorithms{
      {Algorithm::Kind::mpi}, {Algorithm::Kind::impi}, {Algorithm::Kind::tree}};
  std::vector<std::size_t> sizes_bytes;  ///< powers of two from -m MIN to MAX (8, 16, ..., 8192)
  std::string message_sizes = "8:8192";  ///< -m as given (recorded in the document)
  long iterations = 1000;                ///< -i: timed operations per measurement
  long warmup = 100;                     ///< -x: untimed operations before them
  int repeats = 3;                       ///< measurements of every figure (min/median/max)
  std::vector<AllreduceMode> modes{AllreduceMode::latency, AllreduceMode::overlap};
  /// Overlap mode: none, poll:K (the compute cut into K pieces) or thread
  /// (needs MPI_THREAD_MULTIPLE).
  Progress progress;
  grid::Int3 noise_global{64, 64, 64};  ///< the ones problem of the noise mode
  std::vector<NoiseSetting> noise{{50.0, 20.0}, {200.0, 1000.0}};
  Algorithm noise_allreduce{Algorithm::Kind::impi};  ///< pcg-overlap's reduction (pcg2 uses mpi)
  std::string json_path;                             ///< empty: no result document

  bool has_mode(AllreduceMode mode) const;
};

/// The `bench allreduce` options as the command line gave them (CLI11
/// writes into it; it stays in place until validated).
struct BenchAllreduceArgs {
  BenchAllreduceConfig values;  ///< the numbers, -m's text and --json
  std::string algorithms = "mpi,impi,tree";
  std::string modes = "latency,overlap";
  std::string progress = "none";
  std::string noise_global = "64,64,64";
  std::string noise = "50:20,200:1000";
  std::string noise_allreduce = "impi";
};

/// Declares every option of `bench allreduce`, writing into `args`.
void add_bench_allreduce_options(CLI::App& bench, BenchAllreduceArgs& args);

/// After the parse: the validated config. Throws core::InputError with one
/// line naming the bad value and what was expected.
BenchAllreduceConfig validate_bench_allreduce(const BenchAllreduceArgs& args);

}  // namespace asyncsolve::app
