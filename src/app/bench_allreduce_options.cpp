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
      "a list of US:HZ pairs (interrupts of 0 < US <= 1e6 microseconds, 0 < HZ <= 1e6 times "
      "per second, US * 1e-6 * HZ < 1), e.g. 50:20,200:1000";
  std::vector<NoiseSetting> out;
  for (const auto& item : split_list("--noise", text, expected)) {
    const std::size_t colon = item.find(':');
    NoiseSetting n;
    if (colon == std::string::npos ||
        !core::parse_whole(std::string_view(item).substr(0, colon), n.us) ||
        !core::parse_whole(std::string_view(item).substr(colon + 1), n.hz) || !(n.us > 0.0) ||
        !(n.hz > 0.0) || !(n.us <= 1e6) || !(n.hz <= 1e6) || n.us * 1e-6 * n.hz >= 1.0) {
      throw InputError(fmt::format("--noise '{}': bad setting '{}', expected {}",
                                   core::printable(text), core::printable(item), expected));
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace

bool BenchAllreduceConfig::has_mode(AllreduceMode mode) const {
  return std::find(modes.begin(), modes.end(), mode) != modes.end();
}

void add_bench_allreduce_options(OptionTable& t, BenchAllreduceArgs& a) {
  BenchAllreduceConfig& c = a.values;
  // Which mode reads which option is said in its help; every option is
  // taken with any --modes (one command line may run all three, and
  // recording an option a mode does not read misleads no one: the
  // document's records say which mode each came from).
  t.text("--algorithms", a.algorithms,
         {.help = "Comma-separated reductions (collectives::make_nonblocking_allreduce names), "
                  "e.g. mpi (MPI_Allreduce), impi (MPI_Iallreduce), tree (asynchronous binary "
                  "tree), rd, knomial:K, twolevel:ALG, shm (progress-free, over a shared-memory "
                  "window; one node) or twolevel:shm+ALG",
          .sample = "rd,knomial:3",
          .value = "LIST"});
  t.text("-m,--message-size", c.message_sizes,
         {.help = "Message sizes MIN:MAX in bytes (or MAX): powers of two, 8 <= MIN <= MAX <= "
                  "8388608; doubles = bytes / 8",
          .sample = "64:256",
          .value = "MIN:MAX",
          .limits = "powers of two, 8 to 8388608"});
  t.number("-i,--iterations", c.iterations, {1, 1e8}, {.help = "Timed operations per measurement"});
  t.number("-x,--warmup", c.warmup, {0, 1e8}, {.help = "Untimed warm-up operations before them"});
  t.number("--repeats", c.repeats, {1, 1000},
           {.help = "Measurements of every figure, interleaved; min/median/max are reported"});
  t.text("--modes", a.modes,
         {.help = "Comma-separated: latency (start+wait), overlap (start, calibrated compute, "
                  "wait; IMB-NBC), noise (pcg2 vs pcg-overlap under injected noise)",
          .sample = "noise",
          .value = "LIST"});
  t.text("--progress", a.progress,
         {.help = "Overlap mode: none (test only in wait), poll:K (the compute cut into K "
                  "pieces with a test between them) or thread (a progress thread; "
                  "MPI_THREAD_MULTIPLE)",
          .sample = "poll:4",
          .value = "MODE",
          .limits = "poll:K: K 1 to 1e6"});
  t.text("--noise-global", a.noise_global,
         {.help = fmt::format("Noise mode: global grid NX,NY,NZ of the ones problem (each 1 to "
                              "{})",
                              noise_global_max),
          .sample = "8,8,8",
          .value = "X,Y,Z",
          .limits = fmt::format("each 1 to {}", noise_global_max)});
  t.text("--noise", a.noise,
         {.help = "Noise mode: comma-separated US:HZ settings (interrupts of US microseconds, "
                  "HZ per second; each 0 < US, HZ <= 1e6)",
          .sample = "10:10",
          .value = "US:HZ,...",
          .limits = "0 < US, HZ <= 1e6, US HZ < 1e6"});
  t.text("--noise-allreduce", a.noise_allreduce,
         {.help = "Noise mode: pcg-overlap's reduction (pcg2 uses mpi): any name of "
                  "--algorithms, e.g. impi, tree, rd, knomial:K, twolevel:ALG, shm or "
                  "twolevel:shm+ALG",
          .sample = "tree",
          .value = "NAME"});
  t.path("--json", c.json_path, {.help = "Write the result document to this file"});
}

BenchAllreduceConfig validate_bench_allreduce(const BenchAllreduceArgs& a,
                                              const OptionTable& table) {
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
      throw InputError(fmt::format("--modes '{}': unknown mode '{}', expected {}",
                                   core::printable(a.modes), core::printable(m), modes_expected));
    }
    c.modes.push_back(*mode);
  }
  const std::optional<Progress> progress = parse_progress(a.progress);
  if (!progress || (progress->mode == Progress::Mode::thread && progress->sleep_us)) {
    throw InputError(
        fmt::format("--progress '{}': expected none, poll:K with K from 1 to 1e6, or thread",
                    core::printable(a.progress)));
  }
  c.progress = *progress;
  c.noise_global = core::parse_triple(a.noise_global, "--noise-global", 1, noise_global_max);
  c.noise = parse_noise(a.noise);
  c.algorithms.clear();
  for (const auto& name : algorithms) {
    c.algorithms.push_back(parse_allreduce_option("--algorithms", name));
  }
  c.noise_allreduce = parse_allreduce_option("--noise-allreduce", a.noise_allreduce);
  Context context{{{"--modes", {}}}};
  for (const AllreduceMode m : c.modes) context.dimensions[0].values.emplace_back(name(m));
  table.refuse_inapplicable(context);
  return c;
}

}  // namespace asyncsolve::app
