// NAME
//   beff - b_eff-style communication bandwidth: pure MPI against hybrid masteronly
//
// PURPOSE
//   Paper 002 §6 (Table 1, Figures 2-4) compares the communication of a pure
//   MPI code, where every CPU is an MPI process, with a hybrid "masteronly"
//   code, where one thread per SMP node communicates for the whole node with
//   messages as many times larger as the node has CPUs while the other
//   threads idle. This benchmark measures the same comparison with the b_eff
//   patterns (Rabenseifner and Koniges, paper 002 ref. [25]):
//     ring       every communicating rank sends to its successor and to its
//                predecessor in the ring of ranks and receives from both,
//                all at once (MPI_Irecv, MPI_Isend, one MPI_Waitall);
//     random     the same over a random ring: a random permutation of the
//                ranks, the same on every rank (--seed), new in every repeat;
//     3d-cyclic  a periodic 3D Cartesian grid (MPI_Dims_create): a message
//                to and from each of the 6 neighbours.
//   Two modes, measured in the same run, repeat by repeat interleaved:
//     pure       every rank communicates with messages of L bytes;
//     hybrid     ranks are grouped into nodes of T ranks (--node-size T;
//                default: the ranks that share memory, MPI_COMM_TYPE_SHARED);
//                the first rank of each node (its leader) communicates along
//                the same pattern among the leaders with messages of L*T
//                bytes, while the node's other ranks wait at a node barrier
//                (MPI_Barrier on the node), as masteronly's idle threads do.
//   Both modes move the same total data per iteration (P ranks times L, or
//   P/T leaders times L*T, per message direction), so T_hybrid/T_pure is the
//   ratio of the times to move it (paper 002's s_MPP/s_hybrid is 1 here, not
//   its assumed 2: the pure mode sends no extra intra-node messages).
//   The hybrid mode emulates nodes with ranks: it does not gather the node's
//   data into the leader (threads would share it), and the node barrier
//   stands for the end of a parallel region. On one machine the emulated
//   "inter-node" messages are shared-memory transfers like all others: the
//   result measures the MPI protocol (message sizes, one sender instead of
//   T), not a network.
//   On few ranks the patterns send some messages to the sender itself (a
//   ring of one leader; a 3D grid dimension of extent 1, e.g. 4 ranks make a
//   2x2x1 grid, 2 leaders a 2x1x1 one): those are copies inside MPI, counted
//   and reported per record, and they favour the mode with more of them.
//   Before timing, every repeat runs one untimed iteration whose messages
//   carry a pattern made of sender, direction, size and repeat, and checks
//   every word received; a mismatch stops the run (exit 4).
//
// USAGE
//   mpiexec -n P beff [-m MIN:MAX] [-i N] [--min-time S] [--repeats R]
//                     [--node-size T] [--patterns ring,random,3d-cyclic]
//                     [--seed S] [--json FILE] [--help]
//   Defaults: -m 8:8388608 (the 21 sizes of b_eff, 8 B to 8 MiB, powers of
//   two), iterations per measurement calibrated so that it lasts about
//   --min-time 0.005 s (or -i N), --repeats 5, T the ranks of one
//   shared-memory node (all of them on one machine: a single node, so give
//   --node-size to emulate several). P must be a multiple of T.
//   Example: mpiexec -n 4 build/bench/beff --node-size 2 --json beff.json
//
// OUTPUT
//   One table per pattern on rank 0: per size L the time per iteration (max
//   over ranks, median over the repeats), the bandwidth per communicating
//   rank and accumulated over them, in both modes, and T_hybrid/T_pure (the
//   median of the per-repeat ratios, with min and max); then a summary in the
//   style of paper 002's Table 1 (see summarise()). With --json, the document
//   "asyncsolve.bench.beff/1" (docs/benchmarks.md). MB/s are 1e6 bytes/s.
//   Exit codes: 0 success, 2 bad input, 4 validation failed or runtime failure.
#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/core/statistics.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/document.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/par/stats.hpp"
#include "benchkit.hpp"

namespace {

using asyncsolve::core::ExitCode;
using asyncsolve::core::InputError;
using asyncsolve::core::maximum;
using asyncsolve::core::median;
using asyncsolve::core::minimum;
using asyncsolve::core::RuntimeFailure;
using asyncsolve::core::series_json;
using asyncsolve::par::check_mpi;
using asyncsolve::par::Comm;
using Json = nlohmann::ordered_json;

constexpr const char* schema = "asyncsolve.bench.beff/1";
constexpr std::size_t min_message_bytes = 8;         // one 64-bit word
constexpr std::size_t max_message_bytes = 8u << 20;  // 8 MiB: b_eff's (and paper 002's) Lmax
constexpr int max_iterations = 1000000;

enum class Pattern { ring, random, cyclic3d };
enum class Mode { pure, hybrid };

const char* name(Pattern p) {
  switch (p) {
    case Pattern::ring:
      return "ring";
    case Pattern::random:
      return "random";
    case Pattern::cyclic3d:
      return "3d-cyclic";
  }
  return "?";
}
const char* name(Mode m) { return m == Mode::pure ? "pure" : "hybrid"; }

// ---- options ---------------------------------------------------------------

struct Config {
  std::string message_sizes = "8:8388608";  ///< -m as given
  std::vector<std::size_t> sizes_bytes;     ///< L, ascending
  int iterations = 0;                       ///< per measurement; 0 calibrates to min_time_s
  double min_time_s = 0.005;
  int repeats = 5;
  int node_size = 0;  ///< T; 0: the ranks of one MPI_COMM_TYPE_SHARED node
  std::string patterns_text = "ring,random,3d-cyclic";
  std::vector<Pattern> patterns;
  std::uint64_t seed = 1;
  std::string json_path;
  bool corrupt = false;  ///< testing: spoil one received word before the first check
};

std::vector<Pattern> parse_patterns(const std::string& text) {
  const std::string expected = "a comma-separated list of ring, random and 3d-cyclic";
  std::vector<Pattern> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(',', begin);
    const std::string item = text.substr(begin, end == std::string::npos ? end : end - begin);
    Pattern p{};
    if (item == "ring") {
      p = Pattern::ring;
    } else if (item == "random") {
      p = Pattern::random;
    } else if (item == "3d-cyclic") {
      p = Pattern::cyclic3d;
    } else {
      throw InputError(
          fmt::format("--patterns '{}': unknown pattern '{}', expected {}", text, item, expected));
    }
    if (std::find(out.begin(), out.end(), p) != out.end()) {
      throw InputError(
          fmt::format("--patterns '{}': '{}' given twice, expected {}", text, item, expected));
    }
    out.push_back(p);
    if (end == std::string::npos) return out;
    begin = end + 1;
  }
}

/// Fills `c` from the command line; returns the text of --help or --version.
std::optional<std::string> parse_command_line(int argc, char** argv, Config& c) {
  CLI::App app{
      "beff: b_eff-style bandwidth (ring, random, 3d-cyclic), pure MPI against hybrid "
      "masteronly (paper 002 §6)",
      "beff"};
  asyncsolve::bench::add_common_options(app, "beff");
  app.add_option("-m,--message-size", c.message_sizes,
                 "Message sizes L in bytes, MIN:MAX (or MAX), powers of two from 8 to 8388608");
  app.add_option("-i,--iterations", c.iterations,
                 "Iterations per measurement; 0 calibrates them to --min-time");
  app.add_option("--min-time", c.min_time_s,
                 "Seconds a measurement lasts at least when --iterations is 0");
  app.add_option("--repeats", c.repeats, "Repeats of every measurement (median, min, max)");
  app.add_option("--node-size", c.node_size,
                 "Ranks per (emulated) node T; hybrid messages are L*T bytes")
      ->default_str("the ranks of one shared-memory node");
  app.add_option("--patterns", c.patterns_text, "Patterns: ring, random, 3d-cyclic");
  app.add_option("--seed", c.seed, "Seed of the random rings (the same on every rank)");
  app.add_option("--json", c.json_path, "Write the result document to this file")->default_str("");
  // Hidden: lets the tests see that a wrong word stops the run with exit 4.
  app.add_flag("--corrupt-for-testing", c.corrupt,
               "Spoil one received word on rank 0 before the first check")
      ->group("");
  app.footer(
      "pure: every rank sends messages of L bytes; hybrid masteronly: one leader per node of T\n"
      "ranks sends L*T bytes along the same pattern, the others wait at a node barrier.\n"
      "On one machine every message is a shared-memory transfer: this measures the protocol,\n"
      "not a network. Exit codes: 0 success, 2 bad input, 4 validation failed or runtime "
      "failure.");
  if (auto text = asyncsolve::bench::parse_options(app, argc, argv)) return text;

  c.sizes_bytes =
      asyncsolve::core::parse_message_sizes(c.message_sizes, min_message_bytes, max_message_bytes);
  c.patterns = parse_patterns(c.patterns_text);
  if (c.iterations < 0 || c.iterations > max_iterations) {
    throw InputError(fmt::format("-i {}: expected an integer in [0, {}] (0 calibrates)",
                                 c.iterations, max_iterations));
  }
  if (!std::isfinite(c.min_time_s) || c.min_time_s <= 0.0 || c.min_time_s > 10.0) {
    throw InputError(fmt::format("--min-time {}: expected seconds in (0, 10]", c.min_time_s));
  }
  if (c.repeats < 1 || c.repeats > 1000) {
    throw InputError(fmt::format("--repeats {}: expected an integer in [1, 1000]", c.repeats));
  }
  if (app.count("--node-size") > 0 && c.node_size < 1) {
    throw InputError(fmt::format("--node-size {}: expected an integer >= 1", c.node_size));
  }
  return std::nullopt;
}

// ---- statistics -------------------------------------------------------------

/// The geometric mean of positive values ("logavg" in b_eff).
double log_average(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += std::log(x);
  return std::exp(sum / static_cast<double>(v.size()));
}

// ---- the nodes: who communicates in each mode -------------------------------

/// The ranks of one mode that communicate, and how much larger their
/// messages are than L. Owns the communicators it made (freed by free(),
/// collectively, at the end of run()).
struct Layout {
  Mode mode = Mode::pure;
  Comm comm;                    ///< the communicating ranks (a view of the world for pure, the
                                ///< leaders for hybrid); null on a hybrid non-leader
  Comm node;                    ///< hybrid: the ranks of this rank's node
  int factor = 1;               ///< message size / L: 1, or T
  int communicating_ranks = 1;  ///< size of comm (the same on every rank)
  std::vector<int> dims;        ///< 3d-cyclic: the grid of the communicating ranks

  bool communicates() const { return comm.get() != MPI_COMM_NULL; }
  void free() {
    comm.free();
    node.free();
  }
};

/// Per direction d: send to dest[d] and receive from source[d], both with tag d.
struct Neighbours {
  std::vector<int> dest;
  std::vector<int> source;
};

/// A ring through the ranks in `order`: direction 0 goes to the successor
/// (and comes from the predecessor), direction 1 the other way.
Neighbours ring_neighbours(const std::vector<int>& order, int me) {
  const int n = static_cast<int>(order.size());
  const auto it = std::find(order.begin(), order.end(), me);
  const int pos = static_cast<int>(it - order.begin());
  const int next = order[static_cast<std::size_t>((pos + 1) % n)];
  const int prev = order[static_cast<std::size_t>((pos + n - 1) % n)];
  return {{next, prev}, {prev, next}};
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// A random permutation of 0..n-1 (Fisher-Yates on splitmix64), a function
/// of (seed, repeat) only: every rank computes the same one.
std::vector<int> random_order(int n, std::uint64_t seed, int repeat) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::uint64_t state = seed * 0xD1B54A32D192ED03ULL + static_cast<std::uint64_t>(repeat);
  for (int i = n - 1; i > 0; --i) {
    const auto j = static_cast<int>(splitmix64(state) % static_cast<std::uint64_t>(i + 1));
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
  }
  return order;
}

/// Collective over the communicating ranks: the 6 neighbours on a periodic
/// 3D grid (MPI_Dims_create; ranks not reordered, so the grid's ranks are
/// those of `comm`). Directions 2k and 2k+1 go up and down dimension k.
Neighbours cyclic3d_neighbours(Layout& layout) {
  const int n = layout.communicating_ranks;
  int dims[3] = {0, 0, 0};
  check_mpi(MPI_Dims_create(n, 3, dims), "MPI_Dims_create");
  layout.dims.assign(dims, dims + 3);
  const int periods[3] = {1, 1, 1};
  MPI_Comm cart = MPI_COMM_NULL;
  check_mpi(MPI_Cart_create(layout.comm.get(), 3, dims, periods, 0, &cart), "MPI_Cart_create");
  Comm owned = Comm::adopt(cart);
  Neighbours nb;
  for (int k = 0; k < 3; ++k) {
    int down = 0;
    int up = 0;
    check_mpi(MPI_Cart_shift(cart, k, 1, &down, &up), "MPI_Cart_shift");
    nb.dest.insert(nb.dest.end(), {up, down});
    nb.source.insert(nb.source.end(), {down, up});
  }
  owned.free();
  return nb;
}

// ---- messages ----------------------------------------------------------------

/// The send and receive buffers of one rank, one pair per direction, in
/// 64-bit words (every size is a multiple of 8 bytes).
struct Buffers {
  std::vector<std::vector<std::uint64_t>> send;
  std::vector<std::vector<std::uint64_t>> recv;
  std::vector<MPI_Request> requests;

  Buffers(std::size_t directions, std::size_t max_bytes)
      : send(directions, std::vector<std::uint64_t>(max_bytes / 8)),
        recv(directions, std::vector<std::uint64_t>(max_bytes / 8)),
        requests(2 * directions, MPI_REQUEST_NULL) {}
};

/// The first word of the message `sender` sends in `direction`, of `bytes`,
/// in `repeat`; word i is key ^ (i * odd constant), so a word from another
/// sender, size, repeat, direction or position shows.
std::uint64_t message_key(int sender, std::size_t direction, std::size_t bytes, int repeat) {
  std::uint64_t state = (static_cast<std::uint64_t>(sender) << 40) ^
                        (static_cast<std::uint64_t>(direction) << 32) ^
                        (static_cast<std::uint64_t>(bytes) << 4) ^
                        (static_cast<std::uint64_t>(repeat) * 0x2545F4914F6CDD1DULL);
  return splitmix64(state);
}
constexpr std::uint64_t word_stride = 0x9E3779B97F4A7C15ULL;

void fill_messages(Buffers& b, int sender, std::size_t bytes, int repeat) {
  const std::size_t words = bytes / 8;
  for (std::size_t d = 0; d < b.send.size(); ++d) {
    const std::uint64_t key = message_key(sender, d, bytes, repeat);
    for (std::size_t i = 0; i < words; ++i) b.send[d][i] = key ^ (i * word_stride);
    std::fill_n(b.recv[d].begin(), words, ~std::uint64_t{0});
  }
}

/// Words received that differ from what their sender must have sent.
std::size_t wrong_words(const Buffers& b, const Neighbours& nb, std::size_t bytes, int repeat) {
  const std::size_t words = bytes / 8;
  std::size_t wrong = 0;
  for (std::size_t d = 0; d < b.recv.size(); ++d) {
    const std::uint64_t key = message_key(nb.source[d], d, bytes, repeat);
    for (std::size_t i = 0; i < words; ++i) wrong += b.recv[d][i] != (key ^ (i * word_stride));
  }
  return wrong;
}

/// One iteration of the pattern on a communicating rank: every receive
/// posted, every send started, one MPI_Waitall. Local to `comm`'s ranks.
void exchange(MPI_Comm comm, const Neighbours& nb, std::size_t bytes, Buffers& b) {
  const int count = static_cast<int>(bytes);
  const std::size_t n = nb.dest.size();
  for (std::size_t d = 0; d < n; ++d) {
    check_mpi(MPI_Irecv(b.recv[d].data(), count, MPI_BYTE, nb.source[d], static_cast<int>(d), comm,
                        &b.requests[d]),
              "MPI_Irecv");
  }
  for (std::size_t d = 0; d < n; ++d) {
    check_mpi(MPI_Isend(b.send[d].data(), count, MPI_BYTE, nb.dest[d], static_cast<int>(d), comm,
                        &b.requests[n + d]),
              "MPI_Isend");
  }
  check_mpi(MPI_Waitall(static_cast<int>(2 * n), b.requests.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
}

/// One iteration of a mode, on every rank: the communicating ranks exchange
/// messages of `bytes`; in hybrid mode every rank of the node then meets at
/// the node barrier (the others wait there while their leader communicates).
void step(const Layout& layout, const Neighbours& nb, std::size_t bytes, Buffers* b) {
  if (layout.communicates()) exchange(layout.comm.get(), nb, bytes, *b);
  if (layout.mode == Mode::hybrid) check_mpi(MPI_Barrier(layout.node.get()), "MPI_Barrier");
}

/// Collective over the world: seconds for `iterations` steps, the maximum
/// over ranks, after a barrier that starts every rank together.
double time_steps(const Comm& world, const Layout& layout, const Neighbours& nb, std::size_t bytes,
                  Buffers* b, int iterations) {
  world.barrier();
  const double t0 = asyncsolve::core::now_s();
  for (int i = 0; i < iterations; ++i) step(layout, nb, bytes, b);
  return asyncsolve::par::max_over_ranks(world, asyncsolve::core::now_s() - t0);
}

/// Collective over the world: iterations that make one measurement last
/// about `min_time_s` (doubling a trial count until it takes an eighth of
/// that, then scaling). Every rank decides on the same maximum time.
int calibrate(const Comm& world, const Layout& layout, const Neighbours& nb, std::size_t bytes,
              Buffers* b, double min_time_s) {
  int trial = 1;
  double t = time_steps(world, layout, nb, bytes, b, trial);
  while (t < min_time_s / 8 && trial < max_iterations / 2) {
    trial *= 2;
    t = time_steps(world, layout, nb, bytes, b, trial);
  }
  // Once more at the final count: a rank descheduled in one trial (an
  // oversubscribed machine) would otherwise leave far too few iterations.
  t = std::min(t, time_steps(world, layout, nb, bytes, b, trial));
  const double estimate = std::ceil(min_time_s * trial / std::max(t, 1e-9));
  return static_cast<int>(std::clamp(estimate, 1.0, static_cast<double>(max_iterations)));
}

// ---- results ------------------------------------------------------------------

/// One pattern, mode and size: every repeat's time per iteration and bandwidths.
struct Record {
  Pattern pattern{};
  Mode mode{};
  std::size_t bytes = 0;          ///< L (the pure mode's message size)
  std::size_t message_bytes = 0;  ///< L, or L*T in hybrid mode
  int messages = 0;               ///< sent per communicating rank per iteration
  int self_messages = 0;          ///< of which to the rank itself (a ring of one, a 3D grid
                                  ///< dimension of extent 1): a copy inside MPI
  int communicating_ranks = 0;
  int iterations = 0;
  std::vector<double> time_s;    ///< per iteration, max over ranks, per repeat
  std::vector<double> bw_rank;   ///< MB/s per communicating rank (per node in hybrid mode)
  std::vector<double> bw_total;  ///< MB/s accumulated over the communicating ranks

  double bytes_per_iteration() const {
    return static_cast<double>(messages) * static_cast<double>(message_bytes);
  }
  void add(double seconds_per_iteration) {
    time_s.push_back(seconds_per_iteration);
    const double b = bytes_per_iteration() / seconds_per_iteration * 1e-6;
    bw_rank.push_back(b);
    bw_total.push_back(b * communicating_ranks);
  }
};

struct PatternResult {
  Pattern pattern{};
  std::vector<Record> pure;                ///< per size
  std::vector<Record> hybrid;              ///< per size
  std::vector<std::vector<double>> ratio;  ///< per size: T_hybrid/T_pure per repeat
  std::vector<std::vector<int>> dims;      ///< 3d-cyclic: the grid of each mode
};

/// Collective over the world: validates one iteration and throws
/// RuntimeFailure on every rank if any rank received a wrong word.
void validate(const Comm& world, const Layout& layout, const Neighbours& nb, std::size_t bytes,
              Buffers* b, int repeat, Pattern pattern, long long& messages_checked) {
  long long wrong = 0;
  if (layout.communicates()) {
    wrong = static_cast<long long>(wrong_words(*b, nb, bytes, repeat));
    messages_checked += static_cast<long long>(nb.source.size());
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, world.get()),
            "MPI_Allreduce");
  if (wrong != 0) {
    throw RuntimeFailure(fmt::format(
        "validation failed: {} {} with {}-byte messages, repeat {}: {} received words differ "
        "from what their sender sent; no bandwidth reported",
        name(pattern), name(layout.mode), bytes, repeat, wrong));
  }
}

/// Collective over the world: every size of one pattern in both modes,
/// the modes interleaved within each repeat.
PatternResult measure(const Comm& world, const Config& c, Pattern pattern,
                      std::vector<Layout*> layouts, long long& messages_checked) {
  PatternResult out;
  out.pattern = pattern;
  const std::size_t directions = pattern == Pattern::cyclic3d ? 6 : 2;

  struct ModeState {
    Layout* layout;
    std::optional<Buffers> buffers;
    Neighbours fixed;  // ring and 3d-cyclic: the same in every repeat
    int me = -1;
  };
  std::vector<ModeState> modes;
  for (Layout* l : layouts) {
    ModeState s{l, std::nullopt, {}, -1};
    if (l->communicates()) {
      s.me = l->comm.rank();
      s.buffers.emplace(directions, c.sizes_bytes.back() * static_cast<std::size_t>(l->factor));
      if (pattern == Pattern::cyclic3d) {
        s.fixed = cyclic3d_neighbours(*l);
      } else {
        std::vector<int> order(static_cast<std::size_t>(l->communicating_ranks));
        std::iota(order.begin(), order.end(), 0);
        s.fixed = ring_neighbours(order, s.me);
      }
    } else if (pattern == Pattern::cyclic3d) {
      // The grid's shape, for the report (the leaders computed the same).
      int dims[3] = {0, 0, 0};
      check_mpi(MPI_Dims_create(l->communicating_ranks, 3, dims), "MPI_Dims_create");
      l->dims.assign(dims, dims + 3);
    }
    modes.push_back(std::move(s));
  }
  for (const ModeState& s : modes) out.dims.push_back(s.layout->dims);
  const auto neighbours = [&](const ModeState& s, int repeat) {
    if (pattern != Pattern::random || !s.layout->communicates()) return s.fixed;
    return ring_neighbours(random_order(s.layout->communicating_ranks, c.seed, repeat), s.me);
  };

  for (std::size_t L : c.sizes_bytes) {
    std::vector<Record> records;
    for (ModeState& s : modes) {
      Record r;
      r.pattern = pattern;
      r.mode = s.layout->mode;
      r.bytes = L;
      r.message_bytes = L * static_cast<std::size_t>(s.layout->factor);
      r.messages = static_cast<int>(directions);
      r.communicating_ranks = s.layout->communicating_ranks;
      if (pattern == Pattern::cyclic3d) {
        r.self_messages =
            2 * static_cast<int>(std::count(s.layout->dims.begin(), s.layout->dims.end(), 1));
      } else {
        r.self_messages = r.communicating_ranks == 1 ? 2 : 0;
      }
      records.push_back(std::move(r));
    }
    for (int rep = 0; rep < c.repeats; ++rep) {
      for (std::size_t m = 0; m < modes.size(); ++m) {
        ModeState& s = modes[m];
        Record& r = records[m];
        Buffers* b = s.buffers ? &*s.buffers : nullptr;
        const Neighbours nb = neighbours(s, rep);
        // One untimed iteration whose every message is checked.
        if (b != nullptr) fill_messages(*b, s.me, r.message_bytes, rep);
        world.barrier();
        step(*s.layout, nb, r.message_bytes, b);
        if (c.corrupt && b != nullptr && world.is_root()) b->recv[0][0] ^= 1;
        validate(world, *s.layout, nb, r.message_bytes, b, rep, pattern, messages_checked);
        if (rep == 0) {
          r.iterations = c.iterations > 0
                             ? c.iterations
                             : calibrate(world, *s.layout, nb, r.message_bytes, b, c.min_time_s);
        }
        const double t = time_steps(world, *s.layout, nb, r.message_bytes, b, r.iterations);
        r.add(t / r.iterations);
      }
    }
    out.ratio.push_back(records.size() == 2
                            ? asyncsolve::core::ratios(records[1].time_s, records[0].time_s)
                            : std::vector<double>{});
    out.pure.push_back(std::move(records[0]));
    out.hybrid.push_back(std::move(records[1]));
  }
  return out;
}

// ---- the summary (paper 002, Table 1) -----------------------------------------

/// Per mode: for each pattern, the arithmetic mean over the sizes of the
/// accumulated bandwidth (median over repeats) and its value at the largest
/// size; b_eff, as b_eff defines it, is the logarithmic average (geometric
/// mean) of the ring and the random pattern's means (null unless both ran);
/// 3d-cyclic is reported beside it, as in Table 1.
struct ModeSummary {
  std::vector<std::pair<Pattern, double>> average;  ///< MB/s accumulated
  std::vector<std::pair<Pattern, double>> at_lmax;  ///< MB/s accumulated
  std::optional<double> b_eff;
  std::optional<double> b_eff_at_lmax;
  std::optional<double> cyclic3d;
  std::optional<double> cyclic3d_at_lmax;
  int communicating_ranks = 1;
};

ModeSummary summarise(const std::vector<PatternResult>& results, Mode mode) {
  ModeSummary s;
  std::optional<double> ring;
  std::optional<double> ring_lmax;
  std::optional<double> random;
  std::optional<double> random_lmax;
  for (const PatternResult& p : results) {
    const auto& records = mode == Mode::pure ? p.pure : p.hybrid;
    double sum = 0.0;
    for (const Record& r : records) sum += median(r.bw_total);
    const double avg = sum / static_cast<double>(records.size());
    const double lmax = median(records.back().bw_total);
    s.communicating_ranks = records.back().communicating_ranks;
    s.average.emplace_back(p.pattern, avg);
    s.at_lmax.emplace_back(p.pattern, lmax);
    switch (p.pattern) {
      case Pattern::ring:
        ring = avg;
        ring_lmax = lmax;
        break;
      case Pattern::random:
        random = avg;
        random_lmax = lmax;
        break;
      case Pattern::cyclic3d:
        s.cyclic3d = avg;
        s.cyclic3d_at_lmax = lmax;
        break;
    }
  }
  if (ring && random) {
    s.b_eff = log_average({*ring, *random});
    s.b_eff_at_lmax = log_average({*ring_lmax, *random_lmax});
  }
  return s;
}

std::optional<double> quotient(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return std::nullopt;
  return *a / *b;
}

Json optional_json(std::optional<double> v) { return v ? Json(*v) : Json(nullptr); }

std::string pattern_table(const PatternResult& p) {
  std::string out = fmt::format(
      "\n{}: time per iteration (max over ranks; median of the repeats), MB/s per communicating "
      "rank and accumulated\n",
      name(p.pattern));
  if (p.pattern == Pattern::cyclic3d) {
    out += fmt::format("  (periodic grids: pure {}, hybrid {})\n", fmt::join(p.dims[0], "x"),
                       fmt::join(p.dims[1], "x"));
  }
  for (const Record* r : {&p.pure.front(), &p.hybrid.front()}) {
    if (r->self_messages > 0) {
      out += fmt::format(
          "  ({}: {} of the {} messages per iteration go to the sending rank "
          "itself{})\n",
          name(r->mode), r->self_messages, r->messages,
          p.pattern == Pattern::cyclic3d ? ", across the grid's dimensions of extent 1"
                                         : ", the only one in its ring");
    }
  }
  out += fmt::format(
      "{:>9} | {:>7} {:>10} {:>10} {:>10} | {:>9} {:>7} {:>10} {:>10} {:>10} | "
      "{:>6} {:>13}\n",
      "L bytes", "iters", "pure us", "b/rank", "b_acc", "L*T bytes", "iters", "hybrid us", "b/node",
      "b_acc", "Th/Tp", "(min - max)");
  for (std::size_t i = 0; i < p.pure.size(); ++i) {
    const Record& a = p.pure[i];
    const Record& h = p.hybrid[i];
    out += fmt::format(
        "{:>9} | {:>7} {:>10.2f} {:>10.1f} {:>10.1f} | {:>9} {:>7} {:>10.2f} {:>10.1f} {:>10.1f} "
        "| {:>6.2f} ({:.2f} - {:.2f})\n",
        a.bytes, a.iterations, median(a.time_s) * 1e6, median(a.bw_rank), median(a.bw_total),
        h.message_bytes, h.iterations, median(h.time_s) * 1e6, median(h.bw_rank),
        median(h.bw_total), median(p.ratio[i]), minimum(p.ratio[i]), maximum(p.ratio[i]));
  }
  return out;
}

std::string summary_table(const ModeSummary& pure, const ModeSummary& hybrid, std::size_t lmax) {
  const auto cell = [](std::optional<double> v, const char* spec) {
    return v ? fmt::format(fmt::runtime(spec), *v) : std::string("-");
  };
  const auto per = [](std::optional<double> v, int n) {
    return v ? std::optional<double>(*v / n) : std::nullopt;
  };
  std::string out = fmt::format(
      "\nSummary (paper 002 Table 1 style; MB/s accumulated over the communicating ranks; "
      "Lmax = {} bytes)\n",
      lmax);
  out += fmt::format("{:<18} {:>14} {:>14} {:>16} {:>18}\n", "", "b_eff (avg)", "b_eff at Lmax",
                     "3d-cyclic (avg)", "3d-cyclic at Lmax");
  const auto row = [&](const char* label, std::optional<double> a, std::optional<double> b,
                       std::optional<double> c3, std::optional<double> d, const char* spec) {
    out += fmt::format("{:<18} {:>14} {:>14} {:>16} {:>18}\n", label, cell(a, spec), cell(b, spec),
                       cell(c3, spec), cell(d, spec));
  };
  row("b_hybrid", hybrid.b_eff, hybrid.b_eff_at_lmax, hybrid.cyclic3d, hybrid.cyclic3d_at_lmax,
      "{:.1f}");
  const int nh = hybrid.communicating_ranks;
  row("  (per node)", per(hybrid.b_eff, nh), per(hybrid.b_eff_at_lmax, nh),
      per(hybrid.cyclic3d, nh), per(hybrid.cyclic3d_at_lmax, nh), "({:.1f})");
  row("b_pure", pure.b_eff, pure.b_eff_at_lmax, pure.cyclic3d, pure.cyclic3d_at_lmax, "{:.1f}");
  const int np = pure.communicating_ranks;
  row("  (per rank)", per(pure.b_eff, np), per(pure.b_eff_at_lmax, np), per(pure.cyclic3d, np),
      per(pure.cyclic3d_at_lmax, np), "({:.1f})");
  row("b_pure/b_hybrid", quotient(pure.b_eff, hybrid.b_eff),
      quotient(pure.b_eff_at_lmax, hybrid.b_eff_at_lmax), quotient(pure.cyclic3d, hybrid.cyclic3d),
      quotient(pure.cyclic3d_at_lmax, hybrid.cyclic3d_at_lmax), "{:.2f}");
  out +=
      "(both modes move the same total data, s_pure/s_hybrid = 1, so T_hybrid/T_pure = "
      "b_pure/b_hybrid;\n b_eff = geometric mean of ring and random, each the arithmetic mean "
      "over the sizes)\n";
  return out;
}

Json record_json(const Record& r) {
  return {{"pattern", name(r.pattern)},
          {"mode", name(r.mode)},
          {"bytes", r.bytes},
          {"message_bytes", r.message_bytes},
          {"messages_per_iteration", r.messages},
          {"self_messages_per_iteration", r.self_messages},
          {"communicating_ranks", r.communicating_ranks},
          {"bytes_per_iteration_per_rank", r.bytes_per_iteration()},
          {"iterations", r.iterations},
          {"time_per_iteration_s", series_json(r.time_s)},
          {"bandwidth_per_rank_mbs", series_json(r.bw_rank)},
          {"bandwidth_accumulated_mbs", series_json(r.bw_total)}};
}

Json summary_json(const ModeSummary& s) {
  Json average = Json::object();
  Json at_lmax = Json::object();
  for (const auto& [p, v] : s.average) average[name(p)] = v;
  for (const auto& [p, v] : s.at_lmax) at_lmax[name(p)] = v;
  const auto per = [&](std::optional<double> v) {
    return v ? Json(*v / s.communicating_ranks) : Json(nullptr);
  };
  return {{"communicating_ranks", s.communicating_ranks},
          {"average_mbs", average},
          {"at_lmax_mbs", at_lmax},
          {"b_eff_mbs", optional_json(s.b_eff)},
          {"b_eff_at_lmax_mbs", optional_json(s.b_eff_at_lmax)},
          {"cyclic3d_average_mbs", optional_json(s.cyclic3d)},
          {"cyclic3d_at_lmax_mbs", optional_json(s.cyclic3d_at_lmax)},
          {"b_eff_per_communicating_rank_mbs", per(s.b_eff)},
          {"cyclic3d_average_per_communicating_rank_mbs", per(s.cyclic3d)}};
}

// ---- the benchmark --------------------------------------------------------------

/// Collective: the node layout. Throws InputError (on every rank alike) for
/// a rank count that is not a multiple of T, or unequal shared-memory nodes.
struct Nodes {
  int size = 1;                 ///< T
  std::string source;           ///< "--node-size" or "MPI_COMM_TYPE_SHARED"
  int shared_memory_nodes = 1;  ///< real nodes (MPI_COMM_TYPE_SHARED) the ranks run on
};

Nodes resolve_nodes(const Config& c, const Comm& world, Layout& pure, Layout& hybrid) {
  const int P = world.size();
  const int me = world.rank();
  Comm shared = world.split_shared();
  int counts[2] = {shared.is_root() ? 1 : 0, 0};
  int sizes[2] = {shared.size(), -shared.size()};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, counts, 1, MPI_INT, MPI_SUM, world.get()), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, sizes, 2, MPI_INT, MPI_MAX, world.get()), "MPI_Allreduce");
  Nodes nodes;
  nodes.shared_memory_nodes = counts[0];
  if (c.node_size > 0) {
    nodes.size = c.node_size;
    nodes.source = "--node-size";
    if (P % c.node_size != 0) {
      shared.free();
      throw InputError(
          fmt::format("--node-size {}: {} ranks are not a multiple of it, expected "
                      "a divisor of the rank count",
                      c.node_size, P));
    }
  } else {
    nodes.source = "MPI_COMM_TYPE_SHARED";
    if (sizes[0] != -sizes[1]) {
      shared.free();
      throw InputError(
          fmt::format("the shared-memory nodes hold {} to {} ranks: expected equal "
                      "nodes, or give --node-size",
                      -sizes[1], sizes[0]));
    }
    nodes.size = sizes[0];
  }
  if (c.sizes_bytes.back() * static_cast<std::size_t>(nodes.size) >
      static_cast<std::size_t>(INT_MAX)) {
    shared.free();
    throw InputError(
        fmt::format("--node-size {}: hybrid messages of {} * {} bytes exceed {}, "
                    "expected a smaller -m MAX or node size",
                    nodes.size, c.sizes_bytes.back(), nodes.size, INT_MAX));
  }

  pure.mode = Mode::pure;
  pure.comm = Comm::view(world.get());
  pure.factor = 1;
  pure.communicating_ranks = P;

  // Nodes: consecutive blocks of T ranks (sequential ranking, as paper 002's
  // SR8000 runs) with --node-size, else the shared-memory node itself.
  MPI_Comm node = MPI_COMM_NULL;
  if (c.node_size > 0) {
    check_mpi(MPI_Comm_split(world.get(), me / c.node_size, me, &node), "MPI_Comm_split");
    shared.free();
  } else {
    check_mpi(MPI_Comm_dup(shared.get(), &node), "MPI_Comm_dup");
    shared.free();
  }
  hybrid.mode = Mode::hybrid;
  hybrid.node = Comm::adopt(node);
  check_mpi(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  const bool leader = hybrid.node.rank() == 0;
  MPI_Comm leaders = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(world.get(), leader ? 0 : MPI_UNDEFINED, me, &leaders),
            "MPI_Comm_split");
  if (leaders != MPI_COMM_NULL) {
    check_mpi(MPI_Comm_set_errhandler(leaders, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
  hybrid.comm = Comm::adopt(leaders);
  hybrid.factor = nodes.size;
  hybrid.communicating_ranks = P / nodes.size;
  return nodes;
}

int run(const Config& c, const asyncsolve::bench::DriverRun& driver) {
  const Comm& world = driver.world;
  asyncsolve::par::check_json_path(c.json_path, world);
  const std::string started = asyncsolve::core::iso8601_now();
  Layout pure;
  Layout hybrid;
  const Nodes nodes = resolve_nodes(c, world, pure, hybrid);
  const int P = world.size();
  const bool root = world.is_root();
  const asyncsolve::par::RunEnvironment environment =
      asyncsolve::par::describe_environment(world, driver.env);
  const bool emulated = nodes.shared_memory_nodes < P / nodes.size;

  if (root) {
    std::printf("%s, on %d shared-memory node%s\n",
                asyncsolve::par::provenance_line("beff", environment).c_str(),
                nodes.shared_memory_nodes, nodes.shared_memory_nodes == 1 ? "" : "s");
    std::printf(
        "pure: %d communicating ranks, messages of L bytes; hybrid masteronly: %d "
        "leader%s (nodes of T = %d ranks, from %s), messages of L*T bytes, the other "
        "ranks wait at a node barrier\n",
        P, hybrid.communicating_ranks, hybrid.communicating_ranks == 1 ? "" : "s", nodes.size,
        nodes.source.c_str());
    if (emulated) {
      std::printf(
          "Note: %d emulated nodes on %d shared-memory node%s: their \"inter-node\" "
          "messages are shared-memory transfers, so this measures the MPI protocol, not "
          "a network\n",
          hybrid.communicating_ranks, nodes.shared_memory_nodes,
          nodes.shared_memory_nodes == 1 ? "" : "s");
    }
    if (hybrid.communicating_ranks == 1) {
      std::printf("Note: one node: the hybrid leader sends its messages to itself\n");
    }
    const std::string iterations =
        c.iterations > 0
            ? fmt::format("{} iterations per measurement", c.iterations)
            : fmt::format("iterations calibrated to {} s per measurement", c.min_time_s);
    std::printf("Sizes %zu to %zu bytes, %d repeat%s (pure and hybrid interleaved), %s\n",
                c.sizes_bytes.front(), c.sizes_bytes.back(), c.repeats, c.repeats == 1 ? "" : "s",
                iterations.c_str());
    std::fflush(stdout);
  }

  long long messages_checked = 0;
  std::vector<PatternResult> results;
  for (Pattern p : c.patterns) {
    results.push_back(measure(world, c, p, {&pure, &hybrid}, messages_checked));
    if (root) {
      std::fputs(pattern_table(results.back()).c_str(), stdout);
      std::fflush(stdout);
    }
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &messages_checked, 1, MPI_LONG_LONG, MPI_SUM, world.get()),
            "MPI_Allreduce");
  const ModeSummary pure_summary = summarise(results, Mode::pure);
  const ModeSummary hybrid_summary = summarise(results, Mode::hybrid);
  if (root) {
    std::printf("Validation: %lld messages checked word by word\nSolution validates\n",
                messages_checked);
    std::fputs(summary_table(pure_summary, hybrid_summary, c.sizes_bytes.back()).c_str(), stdout);
    std::fflush(stdout);
  }

  const bool written = asyncsolve::par::write_document(world, c.json_path, "beff", "Wrote {}", [&] {
    Json measurements = Json::array();
    Json ratios = Json::array();
    for (const PatternResult& p : results) {
      for (std::size_t i = 0; i < p.pure.size(); ++i) {
        measurements.push_back(record_json(p.pure[i]));
        measurements.push_back(record_json(p.hybrid[i]));
        const double tp = median(p.pure[i].time_s);
        const double th = median(p.hybrid[i].time_s);
        ratios.push_back({{"pattern", name(p.pattern)},
                          {"bytes", p.pure[i].bytes},
                          {"hybrid_message_bytes", p.hybrid[i].message_bytes},
                          {"t_hybrid_over_t_pure", series_json(p.ratio[i])},
                          {"median_t_hybrid_over_median_t_pure", th / tp}});
      }
    }
    Json grids = Json::object();
    if (!pure.dims.empty()) grids["pure"] = pure.dims;
    if (!hybrid.dims.empty()) grids["hybrid"] = hybrid.dims;
    std::vector<std::string> pattern_names;
    for (Pattern p : c.patterns) pattern_names.emplace_back(name(p));
    Json doc = asyncsolve::core::document_header(schema, driver.args, started);
    Json env = asyncsolve::par::environment_json(environment);
    env["shared_memory_nodes"] = nodes.shared_memory_nodes;
    env["node_size"] = nodes.size;
    env["node_size_source"] = nodes.source;
    env["nodes"] = hybrid.communicating_ranks;
    env["nodes_emulated"] = emulated;
    doc["environment"] = env;
    doc["parameters"] = {{"message_sizes", c.message_sizes},
                         {"sizes_bytes", c.sizes_bytes},
                         {"iterations", c.iterations},
                         {"min_time_s", c.min_time_s},
                         {"repeats", c.repeats},
                         {"node_size", nodes.size},
                         {"patterns", pattern_names},
                         {"seed", c.seed},
                         {"cyclic3d_dims", grids}};
    doc["definitions"] = {
        {"pure", "every rank communicates; messages of L = bytes"},
        {"hybrid",
         "masteronly emulated with ranks: the first rank of each node of node_size "
         "ranks communicates along the same pattern among the leaders with messages "
         "of L * node_size bytes; the node's other ranks wait at a node barrier "
         "(MPI_Barrier on the node, part of every timed iteration)"},
        {"ring", "send to successor and predecessor, receive from both (Irecv, Isend, Waitall)"},
        {"random", "ring through a random permutation of the ranks (seed, new per repeat)"},
        {"3d-cyclic", "periodic MPI_Dims_create 3D grid, all 6 neighbours"},
        {"self_messages_per_iteration",
         "messages a communicating rank sends to itself: both ring directions in a ring of "
         "one, both directions of every 3D grid dimension of extent 1 (copies inside MPI)"},
        {"time",
         "seconds per iteration: the maximum over all ranks of the timed loop, "
         "divided by the iterations"},
        {"bandwidth",
         "MB/s = 1e6 bytes/s; per rank: bytes a communicating rank sends per "
         "iteration / time per iteration (per node in hybrid mode); accumulated: "
         "summed over the communicating ranks"},
        {"t_hybrid_over_t_pure",
         "per repeat, the hybrid time over the pure time of that "
         "repeat; both move the same total data (s_pure/s_hybrid = 1), "
         "so it equals b_pure/b_hybrid"},
        {"b_eff",
         "per mode: the geometric mean (logavg) of the ring and the random pattern, "
         "each the arithmetic mean over the sizes of the accumulated bandwidth "
         "(median over repeats); 3d-cyclic reported beside it; at_lmax: the largest "
         "size alone"},
        {"one_machine",
         "with nodes emulated on one shared-memory machine, every message is "
         "a shared-memory transfer: this measures the MPI protocol (sizes, "
         "one sender instead of node_size), not a network"}};
    doc["validation"] = {{"passed", true},
                         {"messages_checked", messages_checked},
                         {"what",
                          "one untimed iteration per pattern, mode, size and repeat; "
                          "every word received checked against its sender's pattern"}};
    doc["measurements"] = measurements;
    doc["ratios"] = ratios;
    doc["summary"] = {
        {"lmax_bytes", c.sizes_bytes.back()},
        {"pure", summary_json(pure_summary)},
        {"hybrid", summary_json(hybrid_summary)},
        {"b_pure_over_b_hybrid",
         {{"b_eff", optional_json(quotient(pure_summary.b_eff, hybrid_summary.b_eff))},
          {"b_eff_at_lmax",
           optional_json(quotient(pure_summary.b_eff_at_lmax, hybrid_summary.b_eff_at_lmax))},
          {"cyclic3d", optional_json(quotient(pure_summary.cyclic3d, hybrid_summary.cyclic3d))},
          {"cyclic3d_at_lmax", optional_json(quotient(pure_summary.cyclic3d_at_lmax,
                                                      hybrid_summary.cyclic3d_at_lmax))}}},
        {"s_pure_over_s_hybrid", 1}};
    return doc;
  });
  hybrid.free();
  pure.free();
  return asyncsolve::core::to_int(written ? ExitCode::success : ExitCode::runtime_failure);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  return asyncsolve::bench::driver_main(
      argc, argv, {"beff", asyncsolve::par::ThreadLevel::single, ""},
      [&] { return parse_command_line(argc, argv, config); },
      [&](const asyncsolve::bench::DriverRun& driver) { return run(config, driver); });
}
