// NAME
//   hybrid_mvm - paper 002 §7.2.2: the MVM under the library's masteronly,
//                funneled and multiple hybrid MPI+OpenMP schemes
//
// PURPOSE
//   Answers "when does reserving a thread for communication pay off?" with
//   the experiment of paper 002 §7.2.2, run through the library's own hybrid
//   driver, comm::HybridStencil (what `asyncsolve solve --hybrid` uses):
//   y = A x for the 7-point operator (6 on the diagonal, -1 for each
//   neighbour; ops::apply, the Krylov solvers' mat-vec with its fused inner
//   product) on an n_i x n_j x (n_k^loc x P) grid decomposed by
//   grid::Decomposition over a 1 x 1 x P process grid, so that each rank
//   holds n_k^loc planes of n_i x n_j points, with T OpenMP threads per rank.
//   The halo exchange (comm `waitall`: MPI_Irecv/MPI_Isend per face, one
//   MPI_Waitall) moves one n_i x n_j plane to and from each k-neighbour per
//   MVM, fixed, while the work grows with n_k^loc: sweeping n_k^loc at fixed
//   n_i = n_j moves f_comm of Eq. (11)-(13) from large to small. For every
//   n_k^loc it times, interleaved within each repeat (the order rotating
//   from repeat to repeat), comm::HybridStencil::apply in the three modes:
//     masteronly  the master exchanges the halo outside any parallel region
//                 (timed: comm), then one parallel region computes the block
//                 (timed: compute);
//     funneled    one parallel region: thread 0 exchanges while threads
//                 1..T-1 compute the points whose stencil needs no halo;
//                 after a barrier all T threads compute the planes next to a
//                 neighbouring rank (m = 1 reserved thread; with T = 1 it is
//                 masteronly);
//     multiple    one parallel region: the exchange's links (one per
//                 neighbouring rank) go to threads round-robin, each thread
//                 posting and completing its own messages
//                 (MPI_THREAD_MULTIPLE); after a barrier all threads compute
//                 the block. Skipped (null) without MPI_THREAD_MULTIPLE.
//   Threads split the block into slabs of planes, or into rows of a plane
//   when n_k^loc < T (HybridStencil::share).
//
//   What the library's decomposition changes against paper 002's periodic
//   kernel: the grid is not periodic (Dirichlet boundary, zero halo, in every
//   direction), so the first and last rank along k exchange one plane per
//   MVM where the others exchange two, and one rank exchanges nothing. The
//   time of an MVM is the slowest rank's, so with P >= 3 ranks it is set by a
//   rank with two planes, as in the paper; with P = 2 every rank exchanges
//   one plane (half the paper's communication); with P = 1 there is no
//   communication at all (comm ~ 0). The library packs each face into a
//   buffer before sending (a k-plane of a field with a halo is not
//   contiguous) and unpacks it after; the paper's kernel sent the planes in
//   place. The document records the planes exchanged per rank
//   (halo_planes_per_rank) and the decomposition.
//
//   Before timing each n_k^loc it validates: the masteronly result against a
//   plain reference MVM of the known global x (zero outside the grid, by
//   index arithmetic, no communication; 1e-12), and funneled and multiple
//   against masteronly bit for bit, with the halo planes poisoned (NaN)
//   before each scheme so that each must exchange them ("Solution
//   validates"; exit code 4 otherwise).
//
// USAGE
//   mpirun -np P hybrid_mvm [--nij N] [--nk MIN:MAX | --nk K1,K2,...]
//                           [--threads T] [--repeats R] [--mvms N]
//                           [--min-time S] [--json FILE] [--help]
//   Defaults: --nij 128, --nk 2:64 (powers of two), --threads
//   OMP_NUM_THREADS (omp_get_max_threads()), --repeats 5, MVMs per sample
//   calibrated per scheme so that a sample runs about --min-time 0.05 s.
//   T must not exceed max(n_k^loc, n_i): every thread gets a plane or a row.
//   Example (paper 002 Fig. 6 at small scale, one rank per socket):
//     OMP_NUM_THREADS=8 mpirun -np 4 --map-by socket:PE=8
//         build/bench/hybrid_mvm --nk 1:64 --repeats 7 --json hybrid_mvm.json
//   On a machine with fewer cores than ranks x threads the times measure the
//   scheduler, not the schemes: add --oversubscribe and OMP_WAIT_POLICY=passive
//   only to check that it runs.
//
// OUTPUT
//   The provenance line, then per n_k^loc: MVMs per sample, the median
//   seconds per MVM (max over ranks within a sample, median over repeats) of
//   masteronly (and its comm and compute parts), funneled and multiple, and
//   the performance ratios eps = T_masteronly / T_scheme (paper 002 Eq. (3);
//   > 1: the scheme wins). With --json, the document
//   "asyncsolve.bench.hybrid_mvm/1": threads, reserved (1), ni, nj, ranks,
//   and one record per n_k^loc with nk_local, masteronly_s, funneled_s,
//   multiple_s (null without MPI_THREAD_MULTIPLE), masteronly_comm_s,
//   masteronly_compute_s (the input of `asyncsolve model hybrid --fit`), plus
//   min/max over repeats, epsilons, the environment and provenance.
//   Exit codes: 0 success, 2 bad input, 4 validation failed or runtime failure.
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/hybrid_stencil.hpp"
#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/core/statistics.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/stencil.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/document.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/par/stats.hpp"
#include "benchkit.hpp"

namespace {

namespace comm = asyncsolve::comm;
namespace core = asyncsolve::core;
namespace grid = asyncsolve::grid;
namespace ops = asyncsolve::ops;
namespace par = asyncsolve::par;
using core::ExitCode;
using core::InputError;
using core::median;
using Json = nlohmann::ordered_json;

constexpr const char* schema = "asyncsolve.bench.hybrid_mvm/1";
constexpr int max_nij = 8192;
constexpr int max_nk = 1 << 16;
constexpr double reference_tol = 1e-12;

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
    if (!core::parse_whole(std::string_view(text).substr(0, colon), lo) ||
        !core::parse_whole(std::string_view(text).substr(colon + 1), hi) || lo < 1 || hi < lo ||
        hi > max_nk) {
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
    if (!core::parse_whole(item, k) || k < 1 || k > max_nk) throw fail();
    out.push_back(k);
    if (end == std::string::npos) return out;
    begin = end + 1;
  }
}

/// Fills `c` from the command line; returns the text of --help or --version.
std::optional<std::string> parse_command_line(int argc, char** argv, Config& c) {
  CLI::App app{
      "hybrid_mvm: paper 002 §7.2.2's MVM under masteronly, funneled and multiple "
      "hybrid MPI+OpenMP schemes",
      "hybrid_mvm"};
  asyncsolve::bench::add_common_options(app, "hybrid_mvm");
  app.add_option("--nij", c.nij, "n_i = n_j: points per plane in each direction");
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
  if (auto text = asyncsolve::bench::parse_options(app, argc, argv)) return text;
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
  return std::nullopt;
}

// ---- one n_k^loc: the decomposition, the fields and the three schemes ----------

enum class Scheme { masteronly, funneled, multiple };
constexpr std::array<const char*, 3> scheme_names{"masteronly", "funneled", "multiple"};
constexpr std::array<comm::HybridMode, 3> scheme_modes{
    comm::HybridMode::masteronly, comm::HybridMode::funneled, comm::HybridMode::multiple};

/// x at global point (i, j, k): reproducible, not symmetric in anything.
double x_value(long i, long j, long k) noexcept {
  const double t = 0.37 * static_cast<double>(i) + 1.13 * static_cast<double>(j % 17) -
                   0.71 * static_cast<double>(k) + 0.01 * static_cast<double>((i * k) % 23);
  return std::sin(t) + 0.25 * std::cos(3.0 * t + static_cast<double>(j));
}

/// Every rank's block of n_i x n_j x n_k^loc points (process grid 1 x 1 x P),
/// x and y = A x, the halo exchanges and one comm::HybridStencil per scheme.
/// Created and freed collectively; not movable (the exchanges and schemes
/// hold references to the decomposition and the fields).
class Slab {
 public:
  Slab(const par::Comm& world, int nij, int nk, int threads, bool with_multiple)
      : decomposition_(make_decomposition(world, nij, nk)),
        x_(decomposition_.local(), 1),
        y_(decomposition_.local(), 1) {
    halo_ = comm::make_halo_exchange("waitall", decomposition_, x_, comm::Neighbourhood::faces);
    if (with_multiple) {
      links_ = comm::make_linkwise_halo_exchange(decomposition_, x_, comm::Neighbourhood::faces);
    }
    for (std::size_t s = 0; s < schemes_.size(); ++s) {
      if (scheme_modes[s] == comm::HybridMode::multiple && !with_multiple) continue;
      schemes_[s] = std::make_unique<comm::HybridStencil>(decomposition_, scheme_modes[s], threads,
                                                          halo_.get(), links_.get());
    }
  }
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;

  const par::Comm& comm() const noexcept { return decomposition_.comm(); }
  const grid::Decomposition& decomposition() const noexcept { return decomposition_; }
  /// The input of the MVM (halo included) and its result.
  grid::Field& x() noexcept { return x_; }
  grid::Field& y() noexcept { return y_; }
  const grid::Field& y() const noexcept { return y_; }
  /// Planes this rank exchanges per MVM (its neighbouring ranks along k).
  int halo_planes() const { return halo_->messages_per_exchange(); }

  /// Collective among neighbours: y = A x in scheme `s`, the master's times added to `times`.
  void mvm(Scheme s, comm::HybridTimes& times) {
    sink_ += schemes_[static_cast<std::size_t>(s)]->apply(
        x_, [this](const grid::Box& box) { return ops::apply(op_, x_, y_, box); }, times);
  }

  /// Collective: releases the exchange and the decomposition's communicator.
  void free() {
    halo_->close();
    decomposition_.free();
  }

 private:
  static grid::Decomposition make_decomposition(const par::Comm& world, int nij, int nk) {
    grid::DecompositionSpec spec;
    spec.local = grid::Int3{nij, nij, nk};
    spec.dims = grid::Int3{1, 1, world.size()};
    return grid::Decomposition::create(world, spec);
  }

  grid::Decomposition decomposition_;
  grid::Field x_;
  grid::Field y_;
  std::unique_ptr<comm::HaloExchange> halo_;
  std::unique_ptr<comm::LinkwiseHaloExchange> links_;
  std::array<std::unique_ptr<comm::HybridStencil>, 3> schemes_;
  ops::StencilOperator op_{ops::Stencil::seven_point, 0.0};
  double sink_ = 0.0;  ///< the fused inner products, kept so no pass is optimised away
};

/// One timed sample, seconds per MVM, the maximum over ranks.
struct Sample {
  double total_s = 0;
  double comm_s = 0;     ///< masteronly: the exchange
  double compute_s = 0;  ///< masteronly: the parallel region
};

/// Collective: `mvms` MVMs of one scheme after a barrier.
Sample time_scheme(Scheme s, Slab& slab, long mvms) {
  comm::HybridTimes times;
  slab.comm().barrier();
  const double t0 = core::now_s();
  for (long m = 0; m < mvms; ++m) slab.mvm(s, times);
  const double per = static_cast<double>(mvms);
  std::array<double, 3> v{(core::now_s() - t0) / per,
                          (times.exchange_start + times.exchange_wait) / per,
                          (times.interior + times.boundary) / per};
  par::max_over_ranks(slab.comm(), v);
  return {v[0], v[1], v[2]};
}

/// Collective: MVMs per sample of scheme `s`, so that a sample runs about
/// min_time_s (the slowest rank decides).
long calibrate(Scheme s, Slab& slab, double min_time_s) {
  long mvms = 1;
  while (true) {
    const Sample sample = time_scheme(s, slab, mvms);
    const double elapsed = sample.total_s * static_cast<double>(mvms);
    if (elapsed >= min_time_s / 4 || mvms >= 1000000) {
      return std::clamp(static_cast<long>(std::ceil(min_time_s / std::max(sample.total_s, 1e-9))),
                        1L, 1000000L);
    }
    mvms *= 4;
  }
}

// ---- validation ----------------------------------------------------------------

/// x from x_value on the interior, zero on the physical boundary (the
/// Dirichlet halo), NaN on the halo planes a neighbouring rank must fill.
void fill_x(Slab& slab) {
  grid::Field& x = slab.x();
  const grid::Decomposition& d = slab.decomposition();
  const grid::Int3& n = x.interior();
  const grid::Int3& o = d.offset();
  x.fill(0.0);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) x(i, j, k) = x_value(o[0] + i, o[1] + j, o[2] + k);
  for (const grid::Face face : {grid::Face::z_lo, grid::Face::z_hi}) {
    if (d.is_physical_boundary(face)) continue;
    const grid::Box b = x.recv_box(face);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int k = b.lo[2]; k < b.hi[2]; ++k)
      for (int j = b.lo[1]; j < b.hi[1]; ++j)
        for (int i = b.lo[0]; i < b.hi[0]; ++i) x(i, j, k) = nan;
  }
}

/// Largest |y - A x| over the block, A x computed point by point from
/// x_value (zero outside the global grid; no halo, no communication).
double reference_error(const Slab& slab) {
  const grid::Decomposition& d = slab.decomposition();
  const grid::Int3& g = d.global();
  const grid::Int3& o = d.offset();
  const grid::Int3& n = slab.y().interior();
  const auto xg = [&](long i, long j, long k) {
    const bool inside = i >= 0 && j >= 0 && k >= 0 && i < g[0] && j < g[1] && k < g[2];
    return inside ? x_value(i, j, k) : 0.0;
  };
  double worst = 0.0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const long gi = o[0] + i;
        const long gj = o[1] + j;
        const long gk = o[2] + k;
        const double want =
            6.0 * xg(gi, gj, gk) - (xg(gi - 1, gj, gk) + xg(gi + 1, gj, gk) + xg(gi, gj - 1, gk) +
                                    xg(gi, gj + 1, gk) + xg(gi, gj, gk - 1) + xg(gi, gj, gk + 1));
        const double got = slab.y()(i, j, k);
        worst = std::max(worst, std::isfinite(got) ? std::abs(got - want) : 1e300);
      }
  return worst;
}

/// y's interior, in storage order.
std::vector<double> interior_of(const grid::Field& y) {
  const grid::Int3& n = y.interior();
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(n[0]) * n[1] * n[2]);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) out.push_back(y(i, j, k));
  return out;
}

/// Collective: runs the schemes once each from the same x and compares.
/// Returns the failure text (empty when the solution validates).
std::string validate(Slab& slab, bool with_multiple, Json& out) {
  comm::HybridTimes times;
  fill_x(slab);
  slab.y().fill(std::numeric_limits<double>::quiet_NaN());
  slab.mvm(Scheme::masteronly, times);
  const std::vector<double> want = interior_of(slab.y());
  // The reference error, then the funneled and multiple points that differ.
  std::array<double, 3> errors{reference_error(slab), 0.0, 0.0};
  for (const Scheme s : {Scheme::funneled, Scheme::multiple}) {
    if (s == Scheme::multiple && !with_multiple) continue;
    fill_x(slab);
    slab.y().fill(std::numeric_limits<double>::quiet_NaN());
    slab.mvm(s, times);
    const std::vector<double> got = interior_of(slab.y());
    double mismatched = 0;
    // Bit for bit (NaN never equals: an unwritten point fails too).
    for (std::size_t i = 0; i < want.size(); ++i) mismatched += got[i] == want[i] ? 0.0 : 1.0;
    errors[s == Scheme::funneled ? 1 : 2] = mismatched;
  }
  par::max_over_ranks(slab.comm(), errors);
  out = {{"masteronly_vs_reference_max_abs", errors[0]},
         {"funneled_mismatches", errors[1]},
         {"multiple_mismatches", with_multiple ? Json(errors[2]) : Json()}};
  std::string failure;
  if (!(errors[0] <= reference_tol)) {
    failure += fmt::format(" masteronly differs from the reference MVM by {:.3e};", errors[0]);
  }
  for (const std::size_t s : {std::size_t{1}, std::size_t{2}}) {
    if (errors[s] != 0) {
      failure += fmt::format(" {} differs from masteronly on some rank at up to {:.0f} points;",
                             scheme_names[s], errors[s]);
    }
  }
  return failure;
}

// ---- the benchmark ---------------------------------------------------------------

/// A statistic over the repeats, or null where the scheme did not run.
Json figure(const std::vector<double>& v, double (*statistic)(std::span<const double>)) {
  return v.empty() ? Json() : Json(statistic(v));
}
double median_of(std::span<const double> v) { return median({v.begin(), v.end()}); }

/// Collective: the record of one n_k^loc (validated first; a failure is
/// returned in `failure`, the same on every rank, and nothing is timed).
Json measure(const Config& c, int nk, bool with_multiple, Slab& slab, Json& validations,
             std::string& failure) {
  Json checked;
  failure = validate(slab, with_multiple, checked);
  checked["nk_local"] = nk;
  validations.push_back(checked);
  if (!failure.empty()) return Json();

  std::vector<Scheme> schemes{Scheme::masteronly, Scheme::funneled};
  if (with_multiple) schemes.push_back(Scheme::multiple);
  // MVMs per sample, per scheme: a slow scheme must not take a fast one's count.
  std::array<long, 3> mvms{0, 0, 0};
  for (const Scheme s : schemes) {
    mvms[static_cast<std::size_t>(s)] = c.mvms > 0 ? c.mvms : calibrate(s, slab, c.min_time_s);
  }
  std::array<std::vector<double>, 3> total;
  std::vector<double> comm_s;
  std::vector<double> compute_s;
  for (int r = 0; r < c.repeats; ++r) {
    for (std::size_t i = 0; i < schemes.size(); ++i) {
      const Scheme s = schemes[(i + static_cast<std::size_t>(r)) % schemes.size()];
      const Sample sample = time_scheme(s, slab, mvms[static_cast<std::size_t>(s)]);
      total[static_cast<std::size_t>(s)].push_back(sample.total_s);
      if (s == Scheme::masteronly) {
        comm_s.push_back(sample.comm_s);
        compute_s.push_back(sample.compute_s);
      }
    }
  }
  const double mo = median(total[0]);
  const double fu = median(total[1]);
  Json rec = {{"nk_local", nk},
              {"masteronly_s", mo},
              {"funneled_s", fu},
              {"multiple_s", figure(total[2], median_of)},
              {"masteronly_comm_s", median(comm_s)},
              {"masteronly_compute_s", median(compute_s)},
              {"epsilon_funneled", mo / fu},
              {"epsilon_multiple", with_multiple ? Json(mo / median(total[2])) : Json()},
              {"repeats", c.repeats}};
  for (std::size_t s = 0; s < scheme_names.size(); ++s) {
    const std::string name = scheme_names[s];
    rec[name + "_mvms_per_sample"] = mvms[s] > 0 ? Json(mvms[s]) : Json();
    rec[name + "_min_s"] = figure(total[s], core::minimum);
    rec[name + "_max_s"] = figure(total[s], core::maximum);
  }
  rec["masteronly_comm_min_s"] = figure(comm_s, core::minimum);
  rec["masteronly_comm_max_s"] = figure(comm_s, core::maximum);
  rec["masteronly_compute_min_s"] = figure(compute_s, core::minimum);
  rec["masteronly_compute_max_s"] = figure(compute_s, core::maximum);
  if (slab.comm().is_root()) {
    const std::string mu =
        with_multiple ? fmt::format("{:12.4e}", median(total[2])) : fmt::format("{:>12}", "-");
    const std::string emu =
        with_multiple ? fmt::format("{:8.3f}", mo / median(total[2])) : fmt::format("{:>8}", "-");
    std::printf("%8d %8ld %12.4e %12.4e %12.4e %12.4e %s %8.3f %s\n", nk, mvms[0], mo,
                median(comm_s), median(compute_s), fu, mu.c_str(), mo / fu, emu.c_str());
    std::fflush(stdout);
  }
  return rec;
}

int run(const Config& c, const asyncsolve::bench::DriverRun& driver) {
  const par::Comm& world = driver.world;
  const int ranks = world.size();
  const bool root = world.is_root();
  const int threads = c.threads > 0 ? c.threads : omp_get_max_threads();
  for (const int nk : c.nk) {
    const int parts = std::max(nk, c.nij);
    if (threads > parts) {
      throw InputError(
          fmt::format("--threads {} with --nk {} and --nij {}: more threads than "
                      "the {} planes or rows a slab splits into, expected at most {}",
                      threads, nk, c.nij, parts, parts));
    }
  }
  par::check_json_path(c.json_path, world);
  if (driver.env.provided() < par::ThreadLevel::funneled) {
    throw core::RuntimeFailure(
        "MPI provides neither MPI_THREAD_FUNNELED nor more: the hybrid schemes cannot run");
  }
  const bool with_multiple = driver.env.provided() == par::ThreadLevel::multiple;

  // Oversubscription, as far as this node sees it.
  par::Comm node = world.split_shared();
  const int node_ranks = node.size();
  node.free();
  par::RunEnvironment environment = par::describe_environment(world, driver.env);
  environment.threads = threads;
  const bool oversubscribed = node_ranks * threads > environment.cores;

  const std::string started = core::iso8601_now();
  if (root) {
    const std::string funneled = threads == 1 ? std::string("funneled is masteronly (1 thread)")
                                              : fmt::format(
                                                    "1 of {} threads reserved in "
                                                    "funneled",
                                                    threads);
    std::printf(
        "%s\n7-point MVM through comm::HybridStencil, %d x %d x (n_k^loc x %d ranks), "
        "process grid 1x1x%d (not periodic: end ranks exchange one plane), %s, "
        "multiple %s\n",
        par::provenance_line("hybrid_mvm", environment).c_str(), c.nij, c.nij, ranks, ranks,
        funneled.c_str(), with_multiple ? "on" : "off (no MPI_THREAD_MULTIPLE)");
    if (oversubscribed) {
      std::printf(
          "WARNING: %d ranks x %d threads on %d cores of this node: oversubscribed, the "
          "times measure the scheduler\n",
          node_ranks, threads, environment.cores);
    }
    std::printf("%8s %8s %12s %12s %12s %12s %12s %8s %8s\n", "nk_loc", "mvms_mo", "master_s",
                "comm_s", "compute_s", "funneled_s", "multiple_s", "eps_fun", "eps_mul");
    std::fflush(stdout);
  }

  Json records = Json::array();
  Json validations = Json::array();
  std::string failure;
  par::RankStats planes;
  for (const int nk : c.nk) {
    Slab slab(world, c.nij, nk, threads, with_multiple);
    planes = par::rank_stats(slab.comm(), slab.halo_planes());
    Json rec = measure(c, nk, with_multiple, slab, validations, failure);
    slab.free();
    if (!failure.empty()) {
      failure = fmt::format("n_k^loc {}:{}", nk, failure);
      break;
    }
    records.push_back(std::move(rec));
  }
  if (!failure.empty()) {
    if (root) {
      std::fprintf(stderr, "hybrid_mvm: ERROR: %s Solution does not validate; no times reported\n",
                   failure.c_str());
    }
    return core::to_int(ExitCode::runtime_failure);
  }
  if (root) std::printf("Solution validates (every n_k^loc, every scheme)\n");

  const bool written = par::write_document(world, c.json_path, "hybrid_mvm", "Wrote {}", [&] {
    Json doc = core::document_header(schema, driver.args, started);
    doc["environment"] = par::environment_json(environment);
    doc["threads"] = threads;
    doc["reserved"] = 1;
    doc["ni"] = c.nij;
    doc["nj"] = c.nij;
    doc["ranks"] = ranks;
    doc["records"] = records;
    doc["hostname"] = environment.hostname;
    doc["mpi_library"] = environment.mpi_library;
    doc["thread_level"] = environment.thread_level;
    doc["multiple_available"] = with_multiple;
    doc["cores"] = environment.cores;
    doc["ranks_on_node"] = node_ranks;
    doc["oversubscribed"] = oversubscribed;
    doc["repeats"] = c.repeats;
    doc["min_time_s"] = c.min_time_s;
    doc["time"] =
        "seconds per MVM: the maximum over ranks within a sample, the median (min, "
        "max) over repeats";
    doc["operator"] =
        "7-point, 6 on the diagonal, -1 per neighbour, zero (Dirichlet) outside "
        "the grid; ops::apply through comm::HybridStencil";
    doc["decomposition"] = {{"dims", {1, 1, ranks}}, {"periodic", false}, {"halo", "waitall"}};
    doc["halo_planes_per_rank"] = {{"min", planes.min}, {"max", planes.max}};
    doc["validation"] = validations;
    return doc;
  });
  return core::to_int(written ? ExitCode::success : ExitCode::runtime_failure);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  // multiple needs every thread to call MPI; the others need funneled.
  return asyncsolve::bench::driver_main(
      argc, argv,
      {"hybrid_mvm", asyncsolve::par::ThreadLevel::multiple, "(try a smaller --nij or --nk)"},
      [&] { return parse_command_line(argc, argv, config); },
      [&](const asyncsolve::bench::DriverRun& driver) { return run(config, driver); });
}
