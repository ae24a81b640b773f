// NAME
//   jacobi_sweep - memory bandwidth of the Jacobi sweep against the STREAM triad
//
// PURPOSE
//   Answers "does the 7-point Jacobi sweep run at the speed of memory?"
//   (issue 2). On one rank it times, interleaved within every repeat so that
//   all kernels see the same machine state:
//     triad      a[i] = b[i] + s*c[i] over three arrays far larger than the
//                caches, counted as STREAM counts it: 24 bytes per element;
//     sweep      asyncsolve::ops::jacobi_sweep(u, u_new), then u and u_new
//                swap: 16 bytes per interior point (read u, write u_new);
//     residual   asyncsolve::ops::residual_norm_sq(u): 8 bytes per point
//                (left out with --no-residual);
//     fused      asyncsolve::ops::jacobi_sweep_residual(u, u_new), the sweep
//                that also returns ||b - A u||^2 (issue 13), then u and
//                u_new swap: 16 bytes per point, like the sweep;
//     sweep_ref  asyncsolve::ops::jacobi_sweep_ref (only with --ref).
//   Counted bytes are the least traffic a kernel needs, not what the hardware
//   moves: a store that misses the cache first reads its line (write
//   allocate), so the triad really moves 32 bytes per element, and the sweep
//   24 per point unless its stores stream (docs/PERFORMANCE.md).
//   Before it reports a speed it validates: jacobi_sweep bit for bit against
//   jacobi_sweep_ref on odd-sized grids and on the benchmark grid (halo left
//   untouched), residual_norm_sq against residual_norm_sq_ref, the fused
//   kernel against both bit for bit (its field against jacobi_sweep_ref, its
//   residual against residual_norm_sq; jacobi_sweep_residual_ref against
//   jacobi_sweep_ref and residual_norm_sq_ref), and, after the timing, every
//   element of the triad's result.
//
// USAGE
//   jacobi_sweep [--grid X,Y,Z] [--triad-n N] [--repeats R] [--iterations N]
//                [--min-time S] [--no-residual] [--ref] [--kernel NAME] [--json FILE]
//                [--help]
//   Runs with or without mpirun, on one rank. Defaults: --grid 200,200,200,
//   --triad-n 33554432 (2^25: three arrays of 256 MiB), --repeats 7, and
//   calls per repeat calibrated so each kernel runs about --min-time 0.2 s.
//   Example: ./build/bench/jacobi_sweep --repeats 9 --json results/bench/jacobi_sweep.json
//
// OUTPUT
//   Validation lines ending in "Solution validates"; then per kernel the
//   calls per repeat and min / median / max GB/s over the repeats; then the
//   ratios kernel/triad, computed per repeat from the two kernels of that
//   repeat, as the median over repeats: sweep against the 0.80 target, fused
//   against 0.85 (issue 13). With --json,
//   the document "asyncsolve.bench.jacobi_sweep/1" with every repeat's times.
//   Exit codes: 0 success, 2 bad input, 4 validation failed or runtime failure.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/statistics.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/core/triple.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/stencil7.hpp"
#include "asyncsolve/par/document.hpp"
#include "asyncsolve/par/environment.hpp"
#include "benchkit.hpp"

namespace {

using asyncsolve::core::ExitCode;
using asyncsolve::core::InputError;
using asyncsolve::core::Int3;
using asyncsolve::core::maximum;
using asyncsolve::core::median;
using asyncsolve::core::minimum;
using asyncsolve::grid::Field;
namespace ops = asyncsolve::ops;
using Json = nlohmann::ordered_json;

constexpr const char* schema = "asyncsolve.bench.jacobi_sweep/1";
constexpr double ratio_target = 0.80;
constexpr double fused_ratio_target = 0.85;  // issue 13: the residual for free
constexpr double triad_scalar = 3.0;         // STREAM's scalar
constexpr double triad_b = 2.0;              // b, c and hence a = 5 are exact in binary
constexpr double triad_c = 1.0;

// ---- options ---------------------------------------------------------------

struct Config {
  Int3 grid{200, 200, 200};
  long long triad_n = 1LL << 25;
  int repeats = 7;
  int iterations = 0;  // calls per repeat; 0 calibrates to min_time_s
  double min_time_s = 0.2;
  bool residual = true;
  bool ref = false;
  std::string kernel = "auto";
  std::string json_path;
};

/// The stencil variant named `name` (--kernel), or an InputError naming those built.
asyncsolve::ops::Stencil7Kernel kernel_named(const std::string& name) {
  std::string allowed;
  for (const auto k : asyncsolve::ops::stencil7_kernels()) {
    if (asyncsolve::ops::stencil7_kernel_name(k) == name) return k;
    allowed +=
        fmt::format("{}{}", allowed.empty() ? "" : ", ", asyncsolve::ops::stencil7_kernel_name(k));
  }
  throw InputError(fmt::format("--kernel '{}': expected one of {}", name, allowed));
}

/// Fills `c` from the command line; returns the text of --help or --version.
std::optional<std::string> parse_command_line(int argc, char** argv, Config& c) {
  std::string grid = asyncsolve::core::format_triple(c.grid);
  bool no_residual = false;

  CLI::App app{"jacobi_sweep: bandwidth of the Jacobi sweep against the STREAM triad, on one rank",
               "jacobi_sweep"};
  asyncsolve::bench::add_common_options(app, "jacobi_sweep");
  app.add_option("--grid", grid, "Interior points of the swept field NX,NY,NZ");
  app.add_option("--triad-n", c.triad_n, "Elements in each of the triad's three arrays");
  app.add_option("--repeats", c.repeats, "Repeats of the interleaved kernels (median over them)");
  app.add_option("--iterations", c.iterations,
                 "Calls of each kernel per repeat; 0 calibrates them to --min-time");
  app.add_option("--min-time", c.min_time_s,
                 "Seconds each kernel runs per repeat when --iterations is 0");
  app.add_flag("--no-residual", no_residual, "Leave out the residual kernel");
  app.add_flag("--ref", c.ref, "Also time jacobi_sweep_ref, the plain reference sweep");
  app.add_option("--kernel", c.kernel,
                 "Stencil variant timed: auto (the library's measured choice), portable, stream "
                 "or avx512 (those this build has)");
  app.add_option("--json", c.json_path, "Write the result document to this file")->default_str("");
  app.footer(
      "Bytes counted: triad 24/element, sweep 16/point, residual 8/point, fused 16/point.\n"
      "Exit codes: 0 success, 2 bad input, 4 validation failed or runtime failure.");

  if (auto text = asyncsolve::bench::parse_options(app, argc, argv)) return text;

  c.residual = !no_residual;
  kernel_named(c.kernel);
  c.grid = asyncsolve::core::parse_triple(grid, "--grid");
  constexpr long long max_points = 1LL << 33;
  for (int d = 0; d < 3; ++d) {
    if (c.grid[d] > (1 << 20)) {
      throw InputError(fmt::format("--grid '{}': expected each size <= {}", grid, 1 << 20));
    }
  }
  if (asyncsolve::core::product(c.grid) > max_points) {
    throw InputError(fmt::format("--grid '{}': expected at most {} points", grid, max_points));
  }
  if (c.triad_n < 1 || c.triad_n > max_points) {
    throw InputError(
        fmt::format("--triad-n {}: expected an integer in [1, {}]", c.triad_n, max_points));
  }
  if (c.repeats < 1 || c.repeats > 10000) {
    throw InputError(fmt::format("--repeats {}: expected an integer in [1, 10000]", c.repeats));
  }
  if (c.iterations < 0 || c.iterations > 1000000) {
    throw InputError(
        fmt::format("--iterations {}: expected an integer in [0, 1000000]", c.iterations));
  }
  if (!std::isfinite(c.min_time_s) || c.min_time_s <= 0.0 || c.min_time_s > 60.0) {
    throw InputError(fmt::format("--min-time {}: expected seconds in (0, 60]", c.min_time_s));
  }
  return std::nullopt;
}

// ---- helpers ---------------------------------------------------------------

struct FreeDeleter {
  void operator()(double* p) const noexcept { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

/// n doubles, 64-byte aligned like a Field's storage.
Array make_array(std::size_t n) {
  constexpr std::size_t alignment = 64;
  const std::size_t bytes = (n * sizeof(double) + alignment - 1) / alignment * alignment;
  auto* p = static_cast<double*>(std::aligned_alloc(alignment, bytes));
  if (p == nullptr) throw std::bad_alloc();
  return Array(p);
}

/// The STREAM triad. Not inlined, so that the calls being timed cannot be
/// merged or hoisted out of the timing loop.
[[gnu::noinline]] void triad(double* __restrict a, const double* __restrict b,
                             const double* __restrict c, double s, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

/// A reproducible value in [0, 1) for index i (splitmix64).
double hashed_unit(std::uint64_t i) noexcept {
  std::uint64_t z = i + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

/// Every stored value (halo included) pseudo-random in [-1, 1).
void fill_random(Field& f, std::uint64_t seed) {
  auto s = f.storage();
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = 2.0 * hashed_unit(seed + i) - 1.0;
}

/// Halo at 1 (a Dirichlet boundary), interior pseudo-random in [0, 1): the
/// sweeps relax towards 1, so no value ever becomes subnormal.
void fill_benchmark(Field& f) {
  f.fill(1.0);
  const Int3& n = f.interior();
  std::uint64_t count = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) f(i, j, k) = hashed_unit(count++);
}

bool same_bits(const Field& x, const Field& y) {
  const auto a = x.storage();
  const auto b = y.storage();
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

/// `out` against `ref`, two fields that started equal and were swept from
/// `u` by a fast kernel and by the reference: equal bit for bit, except that
/// the fast kernel may have given out's x-face halo cells (i < 0 or i >= nx
/// of an interior row) u's values there, as ops::jacobi_sweep says it may.
bool same_but_x_halos(const Field& out, const Field& ref, const Field& u) {
  if (same_bits(out, ref)) return true;
  const Int3& n = u.interior();
  const int h = u.halo();
  for (int k = -h; k < n[2] + h; ++k)
    for (int j = -h; j < n[1] + h; ++j)
      for (int i = -h; i < n[0] + h; ++i) {
        const double got = out(i, j, k);
        const double want = ref(i, j, k);
        if (std::memcmp(&got, &want, sizeof got) == 0) continue;
        const bool x_halo = (i < 0 || i >= n[0]) && j >= 0 && j < n[1] && k >= 0 && k < n[2];
        const double from_u = u(i, j, k);
        if (!x_halo || std::memcmp(&got, &from_u, sizeof got) != 0) return false;
      }
  return true;
}

/// jacobi_sweep(u) against jacobi_sweep_ref(u) into fields that start equal:
/// the interiors must agree bit for bit, and the halos too but for the x-face
/// cells the fast kernel may give u's values (same_but_x_halos). `out` holds
/// the fast kernel's result afterwards.
bool sweep_matches_ref(const Field& u, Field& out) {
  Field ref(u.interior(), u.halo());
  std::copy(out.storage().begin(), out.storage().end(), ref.storage().begin());
  ops::jacobi_sweep(u, out);
  ops::jacobi_sweep_ref(u, ref);
  return same_but_x_halos(out, ref, u);
}

/// The fused sweep and residual against the plain kernels, bit for bit:
/// jacobi_sweep_residual writes jacobi_sweep_ref's field and returns
/// residual_norm_sq's value; jacobi_sweep_residual_ref writes the same field
/// and returns residual_norm_sq_ref's value. `out` starts as any field of
/// u's shape.
bool fused_matches(const Field& u, Field& out) {
  Field ref(u.interior(), u.halo());
  Field twin(u.interior(), u.halo());
  std::copy(out.storage().begin(), out.storage().end(), ref.storage().begin());
  std::copy(out.storage().begin(), out.storage().end(), twin.storage().begin());
  const double fused = ops::jacobi_sweep_residual(u, out);
  const double fused_ref = ops::jacobi_sweep_residual_ref(u, twin);
  ops::jacobi_sweep_ref(u, ref);
  const double plain = ops::residual_norm_sq(u);
  const double plain_ref = ops::residual_norm_sq_ref(u);
  return same_but_x_halos(out, ref, u) && same_bits(twin, ref) &&
         std::memcmp(&fused, &plain, sizeof fused) == 0 &&
         std::memcmp(&fused_ref, &plain_ref, sizeof fused_ref) == 0;
}

/// Relative difference of residual_norm_sq from residual_norm_sq_ref, and
/// the tolerance it must meet: both sum the same non-negative terms in
/// different orders, so they differ by at most about (points * eps) relative.
std::pair<double, double> residual_difference(const Field& u) {
  const double fast = ops::residual_norm_sq(u);
  const double ref = ops::residual_norm_sq_ref(u);
  const double diff =
      std::abs(fast - ref) / std::max(std::abs(ref), std::numeric_limits<double>::min());
  const double points = static_cast<double>(asyncsolve::core::product(u.interior()));
  const double tol = std::max(1e-13, points * std::numeric_limits<double>::epsilon());
  return {diff, tol};
}

/// The checks of every grid of `grids` with the stencil variant set
/// (`kernel`): the sweep and the fused sweep bit for bit against the
/// reference, the residual within points*eps of it (the worst ratio of its
/// difference to that tolerance into `worst_residual`). Returns the number of
/// failed checks, each reported on stderr.
int failed_checks(const std::vector<Int3>& grids, ops::Stencil7Kernel kernel,
                  double& worst_residual) {
  const auto name = std::string(ops::stencil7_kernel_name(kernel));
  int bad = 0;
  std::uint64_t seed = 1;
  for (const Int3& n : grids) {
    Field u(n, 1);
    Field out(n, 1);
    fill_random(u, seed);
    fill_random(out, seed + 0x5555);
    seed += 0x10000;
    const std::string grid = asyncsolve::core::format_triple(n);
    if (!sweep_matches_ref(u, out)) {
      std::fprintf(stderr,
                   "jacobi_sweep: ERROR: jacobi_sweep (%s) differs from jacobi_sweep_ref on grid "
                   "%s\n",
                   name.c_str(), grid.c_str());
      ++bad;
    }
    if (!fused_matches(u, out)) {
      std::fprintf(stderr,
                   "jacobi_sweep: ERROR: jacobi_sweep_residual (%s) differs from the plain "
                   "kernels on grid %s\n",
                   name.c_str(), grid.c_str());
      ++bad;
    }
    const auto [diff, tol] = residual_difference(u);
    worst_residual = std::max(worst_residual, diff / tol);
    if (!(diff <= tol)) {
      std::fprintf(stderr,
                   "jacobi_sweep: ERROR: residual_norm_sq (%s) differs from residual_norm_sq_ref "
                   "by %.3g relative on grid %s (tolerance %.3g)\n",
                   name.c_str(), diff, grid.c_str(), tol);
      ++bad;
    }
  }
  return bad;
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// Cache sizes of cpu0 as Linux reports them, e.g. {"L1d": "48K", "L3": "32768K"}.
Json cpu_caches() {
  Json caches = Json::object();
  for (int index = 0; index < 16; ++index) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    const std::string level = read_first_line(dir + "level");
    if (level.empty()) break;
    const std::string type = read_first_line(dir + "type");
    const std::string suffix = type == "Data" ? "d" : type == "Instruction" ? "i" : "";
    caches["L" + level + suffix] = read_first_line(dir + "size");
  }
  return caches;
}
double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

// ---- the benchmark ---------------------------------------------------------

/// One timed kernel: `call` runs it once and moves `bytes_per_call` counted bytes.
struct Kernel {
  Kernel(std::string name_, std::string what_, double bytes_per_unit_, long long units_,
         std::function<void()> call_)
      : name(std::move(name_)),
        what(std::move(what_)),
        bytes_per_unit(bytes_per_unit_),
        units(units_),
        call(std::move(call_)) {}

  std::string name;
  std::string what;
  double bytes_per_unit;
  long long units;
  std::function<void()> call;
  int calls_per_repeat = 1;
  std::vector<double> seconds;  // per repeat
  std::vector<double> gbs;      // per repeat

  double bytes_per_call() const { return bytes_per_unit * static_cast<double>(units); }
  double time_calls(int count) const {
    const double t0 = asyncsolve::core::now_s();
    for (int i = 0; i < count; ++i) call();
    return asyncsolve::core::now_s() - t0;
  }
};

Json kernel_json(const Kernel& k) {
  return {{"what", k.what},
          {"bytes_counted_per_unit", k.bytes_per_unit},
          {"units", k.units},
          {"bytes_counted_per_call", k.bytes_per_call()},
          {"calls_per_repeat", k.calls_per_repeat},
          {"seconds", k.seconds},
          {"gbs", k.gbs},
          {"gbs_min", minimum(k.gbs)},
          {"gbs_median", median(k.gbs)},
          {"gbs_max", maximum(k.gbs)}};
}

int run(const Config& c, const asyncsolve::bench::DriverRun& driver) {
  if (driver.world.size() != 1) {
    throw InputError(fmt::format("{} ranks: expected 1 (run it without mpirun, or with -np 1)",
                                 driver.world.size()));
  }
  asyncsolve::par::check_json_path(c.json_path, driver.world);
  const std::string started = asyncsolve::core::iso8601_now();
  const asyncsolve::par::RunEnvironment environment =
      asyncsolve::par::describe_environment(driver.world, driver.env);
  const std::string model = environment.cpu_model.empty() ? "unknown" : environment.cpu_model;
  const Json caches = cpu_caches();
  const std::string l3 = caches.contains("L3") ? caches["L3"].get<std::string>() : "?";

  std::printf("%s\nCPU: %s, L3 %s\n",
              asyncsolve::par::provenance_line("jacobi_sweep", environment).c_str(), model.c_str(),
              l3.c_str());

  // -- validate the kernels before timing anything
  // Odd sizes put rows at every alignment. The last four take 36 to 77 MiB
  // for two fields, more than a 32 MiB last-level cache, where the library
  // switches to another kernel (streaming stores); two of them have rows
  // about as short as a vector plus its alignment peel.
  const std::vector<Int3> check_grids{{1, 1, 1},      {2, 3, 2},      {3, 2, 5},     {7, 5, 3},
                                      {8, 4, 4},      {9, 3, 2},      {17, 6, 5},    {31, 7, 3},
                                      {64, 5, 4},     {67, 9, 8},     {203, 5, 4},   {333, 101, 67},
                                      {1001, 67, 35}, {5, 1201, 601}, {13, 701, 401}};
  bool valid = true;
  Json validation;
  {
    int bad = 0;
    double worst_residual = 0.0;
    Json variants = Json::array();
    for (const auto kernel : ops::stencil7_kernels()) {
      if (kernel == ops::Stencil7Kernel::automatic) continue;
      ops::stencil7_set_kernel(kernel);
      bad += failed_checks(check_grids, kernel, worst_residual);
      variants.push_back(ops::stencil7_kernel_name(kernel));
    }
    validation["check_grids"] = check_grids;
    validation["check_kernels"] = variants;
    validation["check_grids_failed"] = bad;
    validation["residual_worst_diff_over_tol"] = worst_residual;
    valid = bad == 0;
  }
  if (valid) {
    std::printf(
        "Validation: jacobi_sweep bit-identical to jacobi_sweep_ref on %zu grids of 1 to "
        "3.6M points (x-face halos: unchanged or u's); residual_norm_sq within points*eps of "
        "the reference; "
        "jacobi_sweep_residual bit-identical to the sweep and residual_norm_sq; each with "
        "every variant built (%s)\n",
        check_grids.size(), validation["check_kernels"].dump().c_str());
  }
  // The variant timed, and validated once more on the benchmark grid.
  ops::stencil7_set_kernel(kernel_named(c.kernel));

  // -- the benchmark's data
  const Int3 n = c.grid;
  const long long points = asyncsolve::core::product(n);
  Field u(n, 1);
  Field u_new(n, 1);
  fill_benchmark(u);
  std::copy(u.storage().begin(), u.storage().end(), u_new.storage().begin());
  if (valid) {
    const bool sweep_ok = sweep_matches_ref(u, u_new);
    const bool fused_ok = fused_matches(u, u_new);
    const auto [diff, tol] = residual_difference(u);
    validation["benchmark_grid_sweep_identical"] = sweep_ok;
    validation["benchmark_grid_fused_identical"] = fused_ok;
    if (!fused_ok) {
      std::fprintf(stderr,
                   "jacobi_sweep: ERROR: jacobi_sweep_residual differs from the plain kernels on "
                   "grid %s\n",
                   asyncsolve::core::format_triple(n).c_str());
    }
    validation["benchmark_grid_residual_rel_diff"] = diff;
    if (!sweep_ok) {
      std::fprintf(stderr,
                   "jacobi_sweep: ERROR: jacobi_sweep differs from jacobi_sweep_ref on grid %s\n",
                   asyncsolve::core::format_triple(n).c_str());
    }
    if (!(diff <= tol)) {
      std::fprintf(stderr,
                   "jacobi_sweep: ERROR: residual_norm_sq differs from residual_norm_sq_ref "
                   "by %.3g relative on grid %s (tolerance %.3g)\n",
                   diff, asyncsolve::core::format_triple(n).c_str(), tol);
    }
    valid = sweep_ok && fused_ok && diff <= tol;
    if (valid) {
      std::printf("Validation: the same on the benchmark grid %s\n",
                  asyncsolve::core::format_triple(n).c_str());
    }
  }
  if (!valid) {
    std::fprintf(stderr, "jacobi_sweep: ERROR: Solution does not validate; no speeds reported\n");
    return asyncsolve::core::to_int(ExitCode::runtime_failure);
  }

  const std::string kernel_used(ops::stencil7_kernel_name(ops::stencil7_kernel(u)));
  const std::size_t tn = static_cast<std::size_t>(c.triad_n);
  Array a = make_array(tn);
  Array b = make_array(tn);
  Array cc = make_array(tn);
  std::fill_n(a.get(), tn, 0.0);
  std::fill_n(b.get(), tn, triad_b);
  std::fill_n(cc.get(), tn, triad_c);

  double residual_sink = 0.0;
  std::vector<Kernel> kernels;
  kernels.emplace_back("triad", "a[i] = b[i] + 3*c[i] (STREAM triad)", 24.0, c.triad_n,
                       [&] { triad(a.get(), b.get(), cc.get(), triad_scalar, tn); });
  kernels.emplace_back("sweep", "asyncsolve::ops::jacobi_sweep, then swap u and u_new", 16.0,
                       points, [&] {
                         ops::jacobi_sweep(u, u_new);
                         u.swap(u_new);
                       });
  if (c.residual) {
    kernels.emplace_back("residual", "asyncsolve::ops::residual_norm_sq", 8.0, points,
                         [&] { residual_sink += ops::residual_norm_sq(u); });
  }
  kernels.emplace_back("fused",
                       "asyncsolve::ops::jacobi_sweep_residual (sweep and ||b - Au||^2), then "
                       "swap u and u_new",
                       16.0, points, [&] {
                         residual_sink += ops::jacobi_sweep_residual(u, u_new);
                         u.swap(u_new);
                       });
  if (c.ref) {
    kernels.emplace_back("sweep_ref", "asyncsolve::ops::jacobi_sweep_ref, then swap u and u_new",
                         16.0, points, [&] {
                           ops::jacobi_sweep_ref(u, u_new);
                           u.swap(u_new);
                         });
  }

  std::printf("Triad: 3 arrays of %lld doubles (%.1f MiB each), 24 bytes counted per element\n",
              c.triad_n, mib(8.0 * static_cast<double>(c.triad_n)));
  std::printf(
      "Sweep: grid %s, 2 fields of %.1f MiB with halo, 16 bytes counted per point "
      "(residual: 8); kernels built %s AVX-512; variant %s (--kernel %s)\n",
      asyncsolve::core::format_triple(n).c_str(),
      mib(static_cast<double>(u.storage().size_bytes())),
      asyncsolve::ops::stencil7_uses_avx512() ? "with" : "without", kernel_used.c_str(),
      c.kernel.c_str());

  // -- warm up and calibrate: one call each untimed, one timed
  for (Kernel& k : kernels) {
    k.time_calls(1);
    const double t1 = std::max(k.time_calls(1), 1e-9);
    k.calls_per_repeat = c.iterations > 0
                             ? c.iterations
                             : static_cast<int>(std::clamp(std::ceil(c.min_time_s / t1), 1.0, 1e6));
  }
  std::string calls;
  for (const Kernel& k : kernels) calls += fmt::format(" {} {}", k.name, k.calls_per_repeat);
  std::printf("Repeats: %d, interleaved; calls per repeat:%s\n", c.repeats, calls.c_str());
  std::fflush(stdout);

  // -- timing: triad, sweep, residual, (sweep_ref), triad, sweep, ...
  for (int r = 0; r < c.repeats; ++r) {
    for (Kernel& k : kernels) {
      const double t = k.time_calls(k.calls_per_repeat);
      k.seconds.push_back(t);
      k.gbs.push_back(k.bytes_per_call() * k.calls_per_repeat / t * 1e-9);
    }
  }

  // -- validate the triad's answer, as STREAM does, after the timing
  const double expected = triad_b + triad_scalar * triad_c;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < tn; ++i) wrong += (a[i] != expected) ? 1 : 0;
  validation["triad_wrong_elements"] = wrong;
  if (wrong != 0 || !std::isfinite(residual_sink)) {
    std::fprintf(stderr,
                 "jacobi_sweep: ERROR: triad: %zu of %zu elements differ from %g; "
                 "Solution does not validate; no speeds reported\n",
                 wrong, tn, expected);
    return asyncsolve::core::to_int(ExitCode::runtime_failure);
  }
  std::printf("Validation: triad a[i] = %g for all %zu elements\n", expected, tn);
  std::printf("Solution validates\n");

  // -- report
  std::printf("%-10s %10s %12s %10s %12s %10s\n", "kernel", "B/unit", "calls/rep", "min GB/s",
              "median GB/s", "max GB/s");
  for (const Kernel& k : kernels) {
    std::printf("%-10s %10.0f %12d %10.2f %12.2f %10.2f\n", k.name.c_str(), k.bytes_per_unit,
                k.calls_per_repeat, minimum(k.gbs), median(k.gbs), maximum(k.gbs));
  }
  Json ratios = Json::object();
  const Kernel& tri = kernels.front();
  for (std::size_t ki = 1; ki < kernels.size(); ++ki) {
    const Kernel& k = kernels[ki];
    const std::vector<double> per_repeat = asyncsolve::core::ratios(k.gbs, tri.gbs);
    const double med = median(per_repeat);
    const double lo = minimum(per_repeat);
    const double hi = maximum(per_repeat);
    ratios[k.name + "/triad"] = asyncsolve::core::series_json(per_repeat, "per_repeat");
    const double target = k.name == "sweep"   ? ratio_target
                          : k.name == "fused" ? fused_ratio_target
                                              : 0.0;
    std::printf("Ratio %s/triad: median %.3f (min %.3f, max %.3f over %d repeats)%s\n",
                k.name.c_str(), med, lo, hi, c.repeats,
                target > 0.0 ? fmt::format("; target >= {:.2f}: {}", target,
                                           med >= target ? "met" : "NOT met")
                                   .c_str()
                             : "");
  }

  Json kernels_json = Json::object();
  for (const Kernel& k : kernels) kernels_json[k.name] = kernel_json(k);
  const double sweep_ratio = ratios["sweep/triad"]["median"].get<double>();
  const double fused_ratio = ratios["fused/triad"]["median"].get<double>();
  validation["passed"] = true;
  const bool written =
      asyncsolve::par::write_document(driver.world, c.json_path, "jacobi_sweep", "Wrote {}", [&] {
        Json doc = asyncsolve::core::document_header(schema, driver.args, started);
        doc["environment"] = asyncsolve::par::environment_json(environment);
        doc["host"] = {{"hostname", environment.hostname},
                       {"cpu_model", model},
                       {"logical_cpus", std::thread::hardware_concurrency()},
                       {"caches", caches}};
        doc["config"] = {{"grid", c.grid},
                         {"triad_n", c.triad_n},
                         {"repeats", c.repeats},
                         {"iterations", c.iterations},
                         {"min_time_s", c.min_time_s},
                         {"residual", c.residual},
                         {"ref", c.ref},
                         {"kernel", c.kernel}};
        doc["build"] = {{"avx512f", asyncsolve::ops::stencil7_uses_avx512()}};
        doc["kernel"] = {{"requested", c.kernel}, {"used", kernel_used}};
        doc["grid"] = c.grid;
        doc["field_bytes_with_halo"] = u.storage().size_bytes();
        doc["triad_bytes_per_array"] = 8 * c.triad_n;
        doc["validation"] = validation;
        doc["kernels"] = kernels_json;
        doc["ratios"] = ratios;
        doc["target"] = {
            {"ratio", "sweep/triad"}, {"min", ratio_target}, {"met", sweep_ratio >= ratio_target}};
        doc["fused_target"] = {{"ratio", "fused/triad"},
                               {"min", fused_ratio_target},
                               {"met", fused_ratio >= fused_ratio_target}};
        doc["residual_checksum"] = residual_sink;
        return doc;
      });
  return asyncsolve::core::to_int(written ? ExitCode::success : ExitCode::runtime_failure);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  return asyncsolve::bench::driver_main(
      argc, argv,
      {"jacobi_sweep", asyncsolve::par::ThreadLevel::single, "(try a smaller --grid or --triad-n)"},
      [&] { return parse_command_line(argc, argv, config); },
      [&](const asyncsolve::bench::DriverRun& driver) { return run(config, driver); });
}
