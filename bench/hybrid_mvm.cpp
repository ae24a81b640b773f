// NAME
//   hybrid_mvm - paper 002 §7.2.2: the sparse MVM under masteronly, funneled
//                and multiple hybrid MPI+OpenMP schemes
//
// PURPOSE
//   Answers "when does reserving a thread for communication pay off?" with
//   the experiment of paper 002 §7.2.2: y = A x for the 7-point operator (6 on
//   the diagonal, -1 for each neighbour) on an n_i x n_j x n_k grid with
//   periodic boundaries in every direction, decomposed along k among the MPI
//   ranks (n_k^loc planes each), with T OpenMP threads per rank. The
//   communication per MVM is fixed (two planes of n_i x n_j values per rank:
//   one to each k-neighbour) while the work grows with n_k^loc; sweeping
//   n_k^loc at fixed n_i = n_j moves f_comm of Eq. (11)-(13) from large to
//   small. For every n_k^loc it times, interleaved within each repeat (the
//   order rotating from repeat to repeat):
//     masteronly  the master posts MPI_Irecv/MPI_Isend for both planes and
//                 waits, outside any parallel region (timed: comm); then one
//                 parallel region computes every row (timed: compute);
//     funneled    one parallel region: thread 0 exchanges the planes while
//                 threads 1..T-1 compute the interior planes 1..n_k^loc-2,
//                 rows split by thread id (no worksharing constructs); after
//                 a barrier all T threads compute planes 0 and n_k^loc-1
//                 (m = 1 reserved thread; with T = 1 thread 0 does it all);
//     multiple    one parallel region: the two plane exchanges ("links") go
//                 to threads round-robin (thread t takes links t, t+T, ...),
//                 each thread posting and completing its own messages
//                 (MPI_THREAD_MULTIPLE); after a barrier all threads compute
//                 every row. Skipped (null) without MPI_THREAD_MULTIPLE.
//   The kernel is matrix-free (a stencil, not the paper's CRS matrix); every
//   scheme computes each row with the same code, so their results are equal
//   bit for bit.
//   Before timing each n_k^loc it validates: the masteronly result against a
//   plain reference MVM of the known global x (periodic wrap by index
//   arithmetic, 1e-12), and funneled and multiple against masteronly bit for
//   bit ("Solution validates"; exit code 4 otherwise).
//
// USAGE
//   mpirun -np P hybrid_mvm [--nij N] [--nk MIN:MAX | --nk K1,K2,...]
//                           [--threads T] [--repeats R] [--mvms N]
//                           [--min-time S] [--json FILE] [--help]
//   Defaults: --nij 128, --nk 2:64 (powers of two), --threads
//   OMP_NUM_THREADS (omp_get_max_threads()), --repeats 5, MVMs per sample
//   calibrated per scheme so that a sample runs about --min-time 0.05 s.
//   Example (paper 002 Fig. 6 at small scale, one rank per socket):
//     OMP_NUM_THREADS=8 mpirun -np 4 --map-by socket:PE=8
//         build/bench/hybrid_mvm --nk 1:64 --repeats 7 --json hybrid_mvm.json
//   On a machine with fewer cores than ranks x threads the times measure the
//   scheduler, not the schemes: add --oversubscribe and OMP_WAIT_POLICY=passive
//   only to check that it runs.
//
// OUTPUT
//   Per n_k^loc: MVMs per sample, then the median seconds per MVM (max over
//   ranks within a sample, median over repeats) of masteronly (and its comm
//   and compute parts), funneled and multiple, and the performance ratios
//   eps = T_masteronly / T_scheme (paper 002 Eq. (3); > 1: the scheme wins).
//   With --json, the document "asyncsolve.bench.hybrid_mvm/1": threads,
//   reserved (1), ni, nj, ranks, and one record per n_k^loc with nk_local,
//   masteronly_s, funneled_s, multiple_s (null without MPI_THREAD_MULTIPLE),
//   masteronly_comm_s, masteronly_compute_s (the input of `asyncsolve model
//   hybrid --fit`), plus min/max over repeats, epsilons and provenance.
//   Exit codes: 0 success, 2 bad input, 4 validation failed or runtime failure.
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/version.hpp"

namespace {

using asyncsolve::core::ExitCode;
using asyncsolve::core::InputError;

constexpr const char* schema = "asyncsolve.bench.hybrid_mvm/1";
constexpr int max_nij = 8192;
constexpr int max_nk = 1 << 16;

// ---- options ---------------------------------------------------------------

struct Config {
  int nij = 128;
  std::vector<int> nk;  // n_k^loc values, in the order given
  std::string nk_text = "2:64";
  int threads = 0;  // 0: omp_get_max_threads()
  int repeats = 5;
  long mvms = 0;  // MVMs per timed sample; 0 calibrates to min_time_s
  double min_time_s = 0.05;
  std::string json_path;
};

struct Parsed {
  Config config;
  std::optional<std::string> text;  // --help or --version
};

/// "MIN:MAX" (powers of two from MIN up to MAX), or "K1,K2,..." (as given).
std::vector<int> parse_nk(const std::string& text) {
  const auto fail = [&] {
    return InputError(
        fmt::format("--nk '{}': expected MIN:MAX (MIN, 2 MIN, 4 MIN, ... up to "
                    "MAX) or a list K1,K2,... of planes per rank, each in [1, {}]",
                    text, max_nk));
  };
  std::vector<int> out;
  const std::size_t colon = text.find(':');
  if (colon != std::string::npos) {
    int lo = 0;
    int hi = 0;
    if (!asyncsolve::core::parse_whole(std::string_view(text).substr(0, colon), lo) ||
        !asyncsolve::core::parse_whole(std::string_view(text).substr(colon + 1), hi) || lo < 1 ||
        hi < lo || hi > max_nk) {
      throw fail();
    }
    for (long k = lo; k <= hi; k *= 2) out.push_back(static_cast<int>(k));
    return out;
  }
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(',', begin);
    const std::string_view item = std::string_view(text).substr(
        begin, end == std::string::npos ? std::string_view::npos : end - begin);
    int k = 0;
    if (!asyncsolve::core::parse_whole(item, k) || k < 1 || k > max_nk) throw fail();
    out.push_back(k);
    if (end == std::string::npos) return out;
    begin = end + 1;
  }
}

Parsed parse_command_line(int argc, char** argv) {
  Parsed out;
  Config& c = out.config;
  CLI::App app{
      "hybrid_mvm: paper 002 §7.2.2's MVM under masteronly, funneled and multiple "
      "hybrid MPI+OpenMP schemes",
      "hybrid_mvm"};
  app.set_version_flag("--version", fmt::format("hybrid_mvm (asyncsolve {}, git {})",
                                                asyncsolve::version, asyncsolve::git_commit));
  app.option_defaults()->always_capture_default();
  app.add_option("--nij", c.nij, "n_i = n_j: points per plane in each direction (periodic)");
  app.add_option("--nk", c.nk_text,
                 "Planes per rank n_k^loc: MIN:MAX (powers of two) or a list K1,K2,...");
  app.add_option("--threads", c.threads, "OpenMP threads per rank (T = n of paper 002)")
      ->default_str("OMP_NUM_THREADS, or omp_get_max_threads()");
  app.add_option("--repeats", c.repeats,
                 "Samples of every scheme, interleaved; medians are reported (>= 5 for a "
                 "measurement)");
  app.add_option("--mvms", c.mvms, "MVMs per sample; 0 calibrates them to --min-time");
  app.add_option("--min-time", c.min_time_s,
                 "Seconds a sample of each scheme runs when --mvms is 0");
  app.add_option("--json", c.json_path, "Write the result document to this file")->default_str("");
  app.footer(
      "Run under mpirun. Exit codes: 0 success, 2 bad input, 4 validation failed or "
      "runtime failure.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out.text = app.help();
    return out;
  } catch (const CLI::CallForVersion& v) {
    out.text = v.what();
    return out;
  } catch (const CLI::ParseError& e) {
    throw InputError(fmt::format("{} (see --help)", e.what()));
  }
  if (c.nij < 3 || c.nij > max_nij) {
    throw InputError(fmt::format("--nij {}: expected an integer in [3, {}]", c.nij, max_nij));
  }
  c.nk = parse_nk(c.nk_text);
  if (c.threads < 0 || c.threads > 1024) {
    throw InputError(fmt::format("--threads {}: expected an integer in [1, 1024]", c.threads));
  }
  if (c.repeats < 1 || c.repeats > 10000) {
    throw InputError(fmt::format("--repeats {}: expected an integer in [1, 10000]", c.repeats));
  }
  if (c.mvms < 0 || c.mvms > 100000000) {
    throw InputError(fmt::format("--mvms {}: expected an integer in [0, 100000000]", c.mvms));
  }
  if (!std::isfinite(c.min_time_s) || c.min_time_s <= 0.0 || c.min_time_s > 60.0) {
    throw InputError(fmt::format("--min-time {}: expected seconds in (0, 60]", c.min_time_s));
  }
  return out;
}

// ---- the block and its kernel -----------------------------------------------

struct FreeDeleter {
  void operator()(double* p) const noexcept { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

Array make_array(std::size_t n) {
  constexpr std::size_t alignment = 64;
  const std::size_t bytes = (n * sizeof(double) + alignment - 1) / alignment * alignment;
  auto* p = static_cast<double*>(std::aligned_alloc(alignment, bytes));
  if (p == nullptr) throw std::bad_alloc();
  return Array(p);
}

/// One rank's slab: planes k = 0 .. nk-1 of an ni x nj x (nk * P) periodic
/// grid, x with one halo plane below (k = -1) and above (k = nk), y without.
/// Rows are numbered r = k * nj + j.
struct Block {
  int ni = 0;
  int nj = 0;
  int nk = 0;
  long k_offset = 0;  ///< global k of local plane 0
  long nk_global = 0;
  std::size_t plane = 0;  ///< ni * nj
  Array x;
  Array y;

  Block(int nij, int nk_local, int rank, int ranks)
      : ni(nij),
        nj(nij),
        nk(nk_local),
        k_offset(static_cast<long>(nk_local) * rank),
        nk_global(static_cast<long>(nk_local) * ranks),
        plane(static_cast<std::size_t>(nij) * static_cast<std::size_t>(nij)),
        x(make_array(plane * static_cast<std::size_t>(nk_local + 2))),
        y(make_array(plane * static_cast<std::size_t>(nk_local))) {}

  long rows() const noexcept { return static_cast<long>(nk) * nj; }
  double* x_row(int k, int j) const noexcept {  // k in -1 .. nk
    return x.get() + static_cast<std::size_t>(k + 1) * plane + static_cast<std::size_t>(j) * ni;
  }
  double* y_row(int k, int j) const noexcept {
    return y.get() + static_cast<std::size_t>(k) * plane + static_cast<std::size_t>(j) * ni;
  }
  double* halo_below() const noexcept { return x_row(-1, 0); }
  double* halo_above() const noexcept { return x_row(nk, 0); }
  double* first_plane() const noexcept { return x_row(0, 0); }
  double* last_plane() const noexcept { return x_row(nk - 1, 0); }
};

/// x at global point (i, j, k): reproducible, not symmetric in anything.
double x_value(long i, long j, long k) noexcept {
  const double t = 0.37 * static_cast<double>(i) + 1.13 * static_cast<double>(j % 17) -
                   0.71 * static_cast<double>(k) + 0.01 * static_cast<double>((i * k) % 23);
  return std::sin(t) + 0.25 * std::cos(3.0 * t + static_cast<double>(j));
}

/// y = A x on rows [r0, r1): y = 6 x - (west + east + south + north + below +
/// above), periodic in i and j by index arithmetic; below and above come from
/// the halo planes at the slab's ends. Not inlined, so the timed calls stay
/// calls.
[[gnu::noinline]] void mvm_rows(const Block& b, long r0, long r1) noexcept {
  const int ni = b.ni;
  for (long r = r0; r < r1; ++r) {
    const int k = static_cast<int>(r / b.nj);
    const int j = static_cast<int>(r % b.nj);
    const double* __restrict c = b.x_row(k, j);
    const double* __restrict s = b.x_row(k, j == 0 ? b.nj - 1 : j - 1);
    const double* __restrict n = b.x_row(k, j == b.nj - 1 ? 0 : j + 1);
    const double* __restrict lo = b.x_row(k - 1, j);
    const double* __restrict hi = b.x_row(k + 1, j);
    double* __restrict out = b.y_row(k, j);
    out[0] = 6.0 * c[0] - (c[ni - 1] + c[1] + s[0] + n[0] + lo[0] + hi[0]);
#pragma omp simd
    for (int i = 1; i < ni - 1; ++i) {
      out[i] = 6.0 * c[i] - (c[i - 1] + c[i + 1] + s[i] + n[i] + lo[i] + hi[i]);
    }
    const int e = ni - 1;
    out[e] = 6.0 * c[e] - (c[e - 1] + c[0] + s[e] + n[e] + lo[e] + hi[e]);
  }
}

/// First row of part t of `rows` rows split in `parts` (sizes differ by at most one).
long part_begin(long t, long parts, long rows) noexcept {
  return t * (rows / parts) + std::min(t, rows % parts);
}

/// The rows [r0, r1) shared among `parts` threads: thread t's share.
void mvm_share(const Block& b, long r0, long r1, int parts, int t) noexcept {
  const long n = r1 - r0;
  mvm_rows(b, r0 + part_begin(t, parts, n), r0 + part_begin(t + 1, parts, n));
}

// ---- the schemes -------------------------------------------------------------

/// The ranks below and above along k (periodic), the tags, the thread count.
struct Ring {
  MPI_Comm comm = MPI_COMM_NULL;
  int below = 0;
  int above = 0;
  int threads = 1;
  // A message travelling down (to `below`) carries tag 0, up carries tag 1.
  static constexpr int down = 0;
  static constexpr int up = 1;
};

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw asyncsolve::core::RuntimeFailure(fmt::format("{} failed: {}", what, text));
  }
}

/// Link 0: send the first plane down, receive the plane above from above.
/// Link 1: send the last plane up, receive the plane below from below.
/// Posts both messages of the link and waits for them (any thread, with
/// MPI_THREAD_MULTIPLE; the master otherwise).
void exchange_link(const Block& b, const Ring& ring, int link) {
  const int count = static_cast<int>(b.plane);
  MPI_Request req[2];
  if (link == 0) {
    check(MPI_Irecv(b.halo_above(), count, MPI_DOUBLE, ring.above, Ring::down, ring.comm, &req[0]),
          "MPI_Irecv");
    check(MPI_Isend(b.first_plane(), count, MPI_DOUBLE, ring.below, Ring::down, ring.comm, &req[1]),
          "MPI_Isend");
  } else {
    check(MPI_Irecv(b.halo_below(), count, MPI_DOUBLE, ring.below, Ring::up, ring.comm, &req[0]),
          "MPI_Irecv");
    check(MPI_Isend(b.last_plane(), count, MPI_DOUBLE, ring.above, Ring::up, ring.comm, &req[1]),
          "MPI_Isend");
  }
  check(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
}

/// Both planes at once: two receives, two sends, one MPI_Waitall.
void exchange_both(const Block& b, const Ring& ring) {
  const int count = static_cast<int>(b.plane);
  MPI_Request req[4];
  check(MPI_Irecv(b.halo_above(), count, MPI_DOUBLE, ring.above, Ring::down, ring.comm, &req[0]),
        "MPI_Irecv");
  check(MPI_Irecv(b.halo_below(), count, MPI_DOUBLE, ring.below, Ring::up, ring.comm, &req[1]),
        "MPI_Irecv");
  check(MPI_Isend(b.first_plane(), count, MPI_DOUBLE, ring.below, Ring::down, ring.comm, &req[2]),
        "MPI_Isend");
  check(MPI_Isend(b.last_plane(), count, MPI_DOUBLE, ring.above, Ring::up, ring.comm, &req[3]),
        "MPI_Isend");
  check(MPI_Waitall(4, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
}

/// Keeps the first exception of a parallel region, rethrown after it.
struct RegionError {
  std::exception_ptr error;
  void keep() {
#pragma omp critical(hybrid_mvm_error)
    if (!error) error = std::current_exception();
  }
  void rethrow() const {
    if (error) std::rethrow_exception(error);
  }
};

/// masteronly: comm by the master outside parallel regions, then compute.
/// Adds the two parts' seconds to comm_s and compute_s.
void masteronly(const Block& b, const Ring& ring, double& comm_s, double& compute_s) {
  const double t0 = MPI_Wtime();
  exchange_both(b, ring);
  const double t1 = MPI_Wtime();
  const int threads = ring.threads;
  const long rows = b.rows();
#pragma omp parallel num_threads(threads)
  mvm_share(b, 0, rows, threads, omp_get_thread_num());
  compute_s += MPI_Wtime() - t1;
  comm_s += t1 - t0;
}

/// funneled: thread 0 communicates while threads 1..T-1 compute the
/// interior planes; after a barrier everyone computes the two boundary planes.
void funneled(const Block& b, const Ring& ring) {
  const int threads = ring.threads;
  const long nj = b.nj;
  const long rows = b.rows();
  // Interior planes 1 .. nk-2 need no halo; with nk <= 2 there are none.
  const long inner_lo = b.nk > 2 ? nj : 0;
  const long inner_hi = b.nk > 2 ? rows - nj : 0;
  RegionError error;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    if (t == 0) {
      try {
        exchange_both(b, ring);
      } catch (...) {
        error.keep();
      }
    } else {
      mvm_share(b, inner_lo, inner_hi, threads - 1, t - 1);
    }
#pragma omp barrier
    // One thread only: nobody computed the interior beside the communication.
    if (threads == 1) mvm_rows(b, inner_lo, inner_hi);
    if (b.nk > 2) {
      // Plane 0 and plane nk-1 as one range of 2 nj rows split among all.
      const long share = part_begin(t + 1, threads, 2 * nj) - part_begin(t, threads, 2 * nj);
      const long begin = part_begin(t, threads, 2 * nj);
      for (long r = begin; r < begin + share; ++r) {
        const long row = r < nj ? r : rows - 2 * nj + r;
        mvm_rows(b, row, row + 1);
      }
    } else {
      mvm_share(b, 0, rows, threads, t);  // every plane touches a halo
    }
  }
  error.rethrow();
}

/// multiple: thread t exchanges links t, t+T, ...; after a barrier all compute.
void multiple(const Block& b, const Ring& ring) {
  const int threads = ring.threads;
  const long rows = b.rows();
  RegionError error;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    try {
      for (int link = t; link < 2; link += threads) exchange_link(b, ring, link);
    } catch (...) {
      error.keep();
    }
#pragma omp barrier
    mvm_share(b, 0, rows, threads, t);
  }
  error.rethrow();
}

enum class Scheme { masteronly, funneled, multiple };
constexpr const char* scheme_names[] = {"masteronly", "funneled", "multiple"};

struct Sample {
  double total_s = 0;    ///< per MVM, max over ranks
  double comm_s = 0;     ///< masteronly: per MVM, max over ranks
  double compute_s = 0;  ///< masteronly: per MVM, max over ranks
};

/// Collective: `mvms` MVMs of one scheme between barriers; times per MVM,
/// the maximum over ranks.
Sample time_scheme(Scheme s, const Block& b, const Ring& ring, long mvms) {
  double comm_s = 0;
  double compute_s = 0;
  check(MPI_Barrier(ring.comm), "MPI_Barrier");
  const double t0 = MPI_Wtime();
  for (long m = 0; m < mvms; ++m) {
    switch (s) {
      case Scheme::masteronly:
        masteronly(b, ring, comm_s, compute_s);
        break;
      case Scheme::funneled:
        funneled(b, ring);
        break;
      case Scheme::multiple:
        multiple(b, ring);
        break;
    }
  }
  const double per = static_cast<double>(mvms);
  double v[3] = {(MPI_Wtime() - t0) / per, comm_s / per, compute_s / per};
  check(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_MAX, ring.comm), "MPI_Allreduce");
  return {v[0], v[1], v[2]};
}

// ---- validation ----------------------------------------------------------------

void fill_x(const Block& b) {
  for (int k = 0; k < b.nk; ++k)
    for (int j = 0; j < b.nj; ++j) {
      double* row = b.x_row(k, j);
      for (int i = 0; i < b.ni; ++i) row[i] = x_value(i, j, b.k_offset + k);
    }
  // Poison the halo planes: each scheme must fill them.
  std::fill(b.halo_below(), b.halo_below() + b.plane, std::numeric_limits<double>::quiet_NaN());
  std::fill(b.halo_above(), b.halo_above() + b.plane, std::numeric_limits<double>::quiet_NaN());
}

/// Largest |y - A x| over the block, A x computed point by point from
/// x_value with periodic index arithmetic (no halo, no communication).
double reference_error(const Block& b) {
  const auto wrap = [](long v, long n) { return ((v % n) + n) % n; };
  double worst = 0.0;
  for (int k = 0; k < b.nk; ++k)
    for (int j = 0; j < b.nj; ++j)
      for (int i = 0; i < b.ni; ++i) {
        const long g = b.k_offset + k;
        const double want =
            6.0 * x_value(i, j, g) -
            (x_value(wrap(i - 1, b.ni), j, g) + x_value(wrap(i + 1, b.ni), j, g) +
             x_value(i, wrap(j - 1, b.nj), g) + x_value(i, wrap(j + 1, b.nj), g) +
             x_value(i, j, wrap(g - 1, b.nk_global)) + x_value(i, j, wrap(g + 1, b.nk_global)));
        const double got = b.y_row(k, j)[i];
        const double err = std::isfinite(got) ? std::abs(got - want) : 1e300;
        worst = std::max(worst, err);
      }
  return worst;
}

/// Collective: runs the schemes once each from the same x and compares.
/// Returns the failure text (empty when the solution validates).
std::string validate(const Block& b, const Ring& ring, bool with_multiple,
                     nlohmann::ordered_json& out) {
  fill_x(b);
  double comm_s = 0;
  double compute_s = 0;
  masteronly(b, ring, comm_s, compute_s);
  const std::vector<double> want(b.y.get(), b.y.get() + b.plane * static_cast<std::size_t>(b.nk));
  double errors[3] = {reference_error(b), 0.0, 0.0};  // ref, funneled, multiple (mismatches)
  for (const Scheme s : {Scheme::funneled, Scheme::multiple}) {
    if (s == Scheme::multiple && !with_multiple) continue;
    fill_x(b);
    std::fill(b.y.get(), b.y.get() + want.size(), std::numeric_limits<double>::quiet_NaN());
    if (s == Scheme::funneled) funneled(b, ring);
    if (s == Scheme::multiple) multiple(b, ring);
    double mismatched = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      // Bit for bit (NaN never equals: an unwritten point fails too).
      mismatched += b.y[i] == want[i] ? 0.0 : 1.0;
    }
    errors[s == Scheme::funneled ? 1 : 2] = mismatched;
  }
  check(MPI_Allreduce(MPI_IN_PLACE, errors, 3, MPI_DOUBLE, MPI_MAX, ring.comm), "MPI_Allreduce");
  out = {{"masteronly_vs_reference_max_abs", errors[0]},
         {"funneled_mismatches", errors[1]},
         {"multiple_mismatches",
          with_multiple ? nlohmann::ordered_json(errors[2]) : nlohmann::ordered_json()}};
  std::string failure;
  if (!(errors[0] <= 1e-12)) {
    failure += fmt::format(" masteronly differs from the reference MVM by {:.3e};", errors[0]);
  }
  if (errors[1] != 0)
    failure += fmt::format(" funneled differs from masteronly on some rank at up to {:.0f} points;",
                           errors[1]);
  if (errors[2] != 0)
    failure += fmt::format(" multiple differs from masteronly on some rank at up to {:.0f} points;",
                           errors[2]);
  return failure;
}

// ---- the benchmark ---------------------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}
/// Collective: MVMs per sample of scheme `s`, so that a sample runs about
/// min_time_s (the slowest rank decides).
long calibrate(Scheme s, const Block& b, const Ring& ring, double min_time_s) {
  long mvms = 1;
  while (true) {
    const Sample sample = time_scheme(s, b, ring, mvms);
    const double elapsed = sample.total_s * static_cast<double>(mvms);
    if (elapsed >= min_time_s / 4 || mvms >= 1000000) {
      return std::clamp(static_cast<long>(std::ceil(min_time_s / std::max(sample.total_s, 1e-9))),
                        1L, 1000000L);
    }
    mvms *= 4;
  }
}

int run(const Config& c, const std::vector<std::string>& args,
        const asyncsolve::par::Environment& env) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const bool root = rank == 0;
  const int threads = c.threads > 0 ? c.threads : omp_get_max_threads();
  for (const int nk : c.nk) {
    if (static_cast<long>(nk) * c.nij < threads) {
      throw InputError(fmt::format(
          "--threads {} with --nk {} and --nij {}: more threads than "
          "the {} rows of the smallest slab, expected at most {}",
          threads, nk, c.nij, static_cast<long>(nk) * c.nij, static_cast<long>(nk) * c.nij));
    }
  }
  if (!c.json_path.empty()) {
    int bad = 0;
    std::string why;
    if (root) {
      try {
        asyncsolve::core::check_writable(c.json_path, "--json");
      } catch (const InputError& e) {
        bad = 1;
        why = e.what();
      }
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad != 0) throw InputError(root ? why : std::string("--json"));
  }
  if (env.provided() < asyncsolve::par::ThreadLevel::funneled) {
    throw asyncsolve::core::RuntimeFailure(
        "MPI provides neither MPI_THREAD_FUNNELED nor more: the hybrid schemes cannot run");
  }
  const bool with_multiple = env.provided() == asyncsolve::par::ThreadLevel::multiple;

  MPI_Comm comm = MPI_COMM_NULL;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  Ring ring;
  ring.comm = comm;
  ring.below = (rank - 1 + ranks) % ranks;
  ring.above = (rank + 1) % ranks;
  ring.threads = threads;

  // Oversubscription, as far as this node sees it.
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  int node_ranks = 1;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const bool oversubscribed = static_cast<unsigned>(node_ranks * threads) > cores;

  const std::string started = asyncsolve::core::iso8601_now();
  if (root) {
    std::printf(
        "hybrid_mvm: periodic 7-point MVM, %d x %d x (n_k^loc x %d ranks), %d thread%s "
        "per rank (1 reserved in funneled), multiple %s\n",
        c.nij, c.nij, ranks, threads, threads == 1 ? "" : "s",
        with_multiple ? "on" : "off (no MPI_THREAD_MULTIPLE)");
    if (oversubscribed) {
      std::printf(
          "WARNING: %d ranks x %d threads on %u cores of this node: oversubscribed, the "
          "times measure the scheduler\n",
          node_ranks, threads, cores);
    }
    std::printf("%8s %8s %12s %12s %12s %12s %12s %8s %8s\n", "nk_loc", "mvms_mo", "master_s",
                "comm_s", "compute_s", "funneled_s", "multiple_s", "eps_fun", "eps_mul");
    std::fflush(stdout);
  }

  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  nlohmann::ordered_json validations = nlohmann::ordered_json::array();
  std::string failure;
  for (const int nk : c.nk) {
    const Block b(c.nij, nk, rank, ranks);
    nlohmann::ordered_json checked;
    failure = validate(b, ring, with_multiple, checked);
    checked["nk_local"] = nk;
    validations.push_back(checked);
    if (!failure.empty()) {
      failure = fmt::format("n_k^loc {}:{}", nk, failure);
      break;
    }
    std::vector<Scheme> schemes{Scheme::masteronly, Scheme::funneled};
    if (with_multiple) schemes.push_back(Scheme::multiple);
    // MVMs per sample, per scheme: a slow scheme must not take a fast one's count.
    long mvms[3] = {0, 0, 0};
    for (const Scheme s : schemes) {
      mvms[static_cast<std::size_t>(s)] = c.mvms > 0 ? c.mvms : calibrate(s, b, ring, c.min_time_s);
    }
    std::vector<std::vector<double>> total(3);
    std::vector<double> comm_s;
    std::vector<double> compute_s;
    for (int r = 0; r < c.repeats; ++r) {
      for (std::size_t i = 0; i < schemes.size(); ++i) {
        const Scheme s = schemes[(i + static_cast<std::size_t>(r)) % schemes.size()];
        const Sample sample = time_scheme(s, b, ring, mvms[static_cast<std::size_t>(s)]);
        total[static_cast<std::size_t>(s)].push_back(sample.total_s);
        if (s == Scheme::masteronly) {
          comm_s.push_back(sample.comm_s);
          compute_s.push_back(sample.compute_s);
        }
      }
    }
    const auto stat = [](const std::vector<double>& v, const char* what) -> nlohmann::ordered_json {
      if (v.empty()) return nullptr;
      if (std::string_view(what) == "min") return *std::min_element(v.begin(), v.end());
      if (std::string_view(what) == "max") return *std::max_element(v.begin(), v.end());
      return median(v);
    };
    const double mo = median(total[0]);
    const double fu = median(total[1]);
    nlohmann::ordered_json rec = {
        {"nk_local", nk},
        {"masteronly_s", mo},
        {"funneled_s", fu},
        {"multiple_s", stat(total[2], "median")},
        {"masteronly_comm_s", median(comm_s)},
        {"masteronly_compute_s", median(compute_s)},
        {"epsilon_funneled", mo / fu},
        {"epsilon_multiple",
         with_multiple ? nlohmann::ordered_json(mo / median(total[2])) : nullptr},
        {"repeats", c.repeats}};
    for (std::size_t s = 0; s < 3; ++s) {
      const std::string name = scheme_names[s];
      rec[name + "_mvms_per_sample"] = mvms[s] > 0 ? nlohmann::ordered_json(mvms[s]) : nullptr;
      rec[name + "_min_s"] = stat(total[s], "min");
      rec[name + "_max_s"] = stat(total[s], "max");
    }
    rec["masteronly_comm_min_s"] = stat(comm_s, "min");
    rec["masteronly_comm_max_s"] = stat(comm_s, "max");
    rec["masteronly_compute_min_s"] = stat(compute_s, "min");
    rec["masteronly_compute_max_s"] = stat(compute_s, "max");
    if (root) {
      const std::string mu =
          with_multiple ? fmt::format("{:12.4e}", median(total[2])) : fmt::format("{:>12}", "-");
      const std::string emu =
          with_multiple ? fmt::format("{:8.3f}", mo / median(total[2])) : fmt::format("{:>8}", "-");
      std::printf("%8d %8ld %12.4e %12.4e %12.4e %12.4e %s %8.3f %s\n", nk, mvms[0], mo,
                  median(comm_s), median(compute_s), fu, mu.c_str(), mo / fu, emu.c_str());
      std::fflush(stdout);
    }
    records.push_back(std::move(rec));
  }
  MPI_Comm_free(&comm);
  if (!failure.empty()) {
    if (root) {
      std::fprintf(stderr, "hybrid_mvm: ERROR: %s Solution does not validate; no times reported\n",
                   failure.c_str());
    }
    return asyncsolve::core::to_int(ExitCode::runtime_failure);
  }
  if (root) std::printf("Solution validates (every n_k^loc, every scheme)\n");

  if (root && !c.json_path.empty()) {
    const nlohmann::ordered_json doc = {
        {"schema", schema},
        {"threads", threads},
        {"reserved", 1},
        {"ni", c.nij},
        {"nj", c.nij},
        {"ranks", ranks},
        {"records", records},
        {"version", asyncsolve::version},
        {"git", asyncsolve::git_commit},
        {"started", started},
        {"command", args},
        {"hostname", asyncsolve::par::processor_name()},
        {"mpi_library", asyncsolve::par::mpi_library_version()},
        {"thread_level", asyncsolve::par::to_string(env.provided())},
        {"multiple_available", with_multiple},
        {"cores", cores},
        {"ranks_on_node", node_ranks},
        {"oversubscribed", oversubscribed},
        {"repeats", c.repeats},
        {"min_time_s", c.min_time_s},
        {"time",
         "seconds per MVM: the maximum over ranks within a sample, the median (min, max) "
         "over repeats"},
        {"validation", validations}};
    asyncsolve::core::write_file_atomic(c.json_path, doc.dump(2) + "\n");
    std::printf("Wrote %s\n", c.json_path.c_str());
  }
  return asyncsolve::core::to_int(ExitCode::success);
}

}  // namespace

int main(int argc, char** argv) {
  namespace core = asyncsolve::core;
  const std::vector<std::string> args(argv, argv + argc);
  Parsed parsed;
  std::optional<std::string> parse_error;
  try {
    parsed = parse_command_line(argc, argv);
  } catch (const InputError& e) {
    parse_error = e.what();
  }
  // multiple needs every thread to call MPI; the others need funneled.
  asyncsolve::par::Environment env(argc, argv, asyncsolve::par::ThreadLevel::multiple);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = core::to_int(ExitCode::success);
  try {
    if (parse_error) throw InputError(*parse_error);
    if (parsed.text) {
      if (rank == 0) std::printf("%s\n", parsed.text->c_str());
    } else {
      code = run(parsed.config, args, env);
    }
  } catch (const InputError& e) {
    if (rank == 0) std::fprintf(stderr, "hybrid_mvm: error: %s\n", e.what());
    code = core::to_int(ExitCode::bad_input);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "hybrid_mvm: rank %d: error: out of memory (try a smaller --nij or --nk)\n", rank);
    asyncsolve::par::Environment::abort(core::to_int(ExitCode::runtime_failure));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hybrid_mvm: rank %d: error: %s\n", rank, e.what());
    asyncsolve::par::Environment::abort(core::to_int(ExitCode::runtime_failure));
  }
  std::fflush(stdout);
  env.finalize();
  return code;
}
