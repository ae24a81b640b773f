#include "bench_allreduce_options.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/core/triple.hpp"

namespace asyncsolve::app {
namespace {

using core::InputError;

constexpr std::size_t min_bytes = 8;         // one double
constexpr std::size_t max_bytes = 8u << 20;  // 8 MiB: 2^20 doubles

std::vector<NoiseSetting> parse_noise(const std::string& text) {
  const std::string expected =
      "a list of US:HZ pairs (interrupts of US > 0 microseconds, HZ > 0 times per second, "
      "US * 1e-6 * HZ < 1), e.g. 50:20,200:1000";
  std::vector<NoiseSetting> out;
  for (const auto& item : split_list("--noise", text, expected)) {
    const std::size_t colon = item.find(':');
    NoiseSetting n;
    if (colon == std::string::npos ||
        !core::parse_whole(std::string_view(item).substr(0, colon), n.us) ||
        !core::parse_whole(std::string_view(item).substr(colon + 1), n.hz) || !(n.us > 0.0) ||
        !(n.hz > 0.0) || !std::isfinite(n.us) || !std::isfinite(n.hz) ||
        n.us * 1e-6 * n.hz >= 1.0) {
      throw InputError(
          fmt::format("--noise '{}': bad setting '{}', expected {}", text, item, expected));
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace

bool BenchAllreduceConfig::has_mode(AllreduceMode mode) const {
  return std::find(modes.begin(), modes.end(), mode) != modes.end();
}

void add_bench_allreduce_options(CLI::App& bench, BenchAllreduceArgs& a) {
  BenchAllreduceConfig& c = a.values;
  bench.option_defaults()->always_capture_default();
  bench.add_option("--algorithms", a.algorithms,
                   "Comma-separated reductions (collectives::make_nonblocking_allreduce names), "
                   "e.g. mpi (MPI_Allreduce), impi (MPI_Iallreduce), tree (asynchronous binary "
                   "tree)");
  bench.add_option("-m,--message-size", c.message_sizes,
                   "Message sizes MIN:MAX in bytes (or MAX): powers of two, 8 <= MIN <= MAX <= "
                   "8388608; doubles = bytes / 8");
  bench.add_option("-i,--iterations", c.iterations, "Timed operations per measurement");
  bench.add_option("-x,--warmup", c.warmup, "Untimed warm-up operations before them");
  bench.add_option("--repeats", c.repeats,
                   "Measurements of every figure, interleaved; min/median/max are reported");
  bench.add_option("--modes", a.modes,
                   "Comma-separated: latency (start+wait), overlap (start, calibrated compute, "
                   "wait; IMB-NBC), noise (pcg2 vs pcg-overlap under injected noise)");
  bench.add_option("--progress", a.progress,
                   "Overlap mode: none (test only in wait), poll:K (the compute cut into K "
                   "pieces with a test between them) or thread (a progress thread; "
                   "MPI_THREAD_MULTIPLE)");
  bench.add_option("--noise-global", a.noise_global,
                   "Noise mode: global grid NX,NY,NZ of the ones problem");
  bench.add_option("--noise", a.noise,
                   "Noise mode: comma-separated US:HZ settings (interrupts of US microseconds, "
                   "HZ per second)");
  bench.add_option("--noise-allreduce", a.noise_allreduce,
                   "Noise mode: pcg-overlap's reduction (pcg2 uses mpi)");
  add_json_option(bench, c.json_path);
}

BenchAllreduceConfig validate_bench_allreduce(const BenchAllreduceArgs& a) {
  BenchAllreduceConfig c = a.values;
  const std::vector<std::string> algorithms =
      split_list("--algorithms", a.algorithms,
                 "a comma-separated list of reduction names, e.g. mpi,impi,tree");
  c.sizes_bytes = core::parse_message_sizes(c.message_sizes, min_bytes, max_bytes);
  expect_repetitions(c.iterations, c.warmup, c.repeats);
  const std::string modes_expected = "a comma-separated list of latency, overlap, noise";
  c.modes.clear();
  for (const auto& m : split_list("--modes", a.modes, modes_expected)) {
    const std::optional<AllreduceMode> mode = parse<AllreduceMode>(m);
    if (!mode) {
      throw InputError(
          fmt::format("--modes '{}': unknown mode '{}', expected {}", a.modes, m, modes_expected));
    }
    c.modes.push_back(*mode);
  }
  const std::optional<Progress> progress = parse_progress(a.progress);
  if (!progress || (progress->mode == Progress::Mode::thread && progress->sleep_us)) {
    throw InputError(
        fmt::format("--progress '{}': expected none, poll:K with K >= 1, or thread", a.progress));
  }
  c.progress = *progress;
  c.noise_global = core::parse_triple(a.noise_global, "--noise-global");
  c.noise = parse_noise(a.noise);
  c.algorithms.clear();
  for (const auto& name : algorithms) {
    c.algorithms.push_back(parse_allreduce_option("--algorithms", name));
  }
  c.noise_allreduce = parse_allreduce_option("--noise-allreduce", a.noise_allreduce);
  return c;
}

}  // namespace asyncsolve::app
