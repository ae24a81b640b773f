// sell_model: what bounds the SELL-8 mat-vec on one core. A stand-alone
// model of the operator's interior kernel (src/ops/csr.cpp) on the 7-point
// matrix of an N^3 grid, stored as the operator stores it (slices of 8
// rows aligned on the column offsets, one index word per step, a lane
// mask per step), timed beside the STREAM triad in one process:
//
//   triad      a = b + 3 c                          (32 bytes/element counted:
//                                                    STREAM's 24 and a's fetch)
//   stream     the values alone: one vector add per step, y stored per slice
//   masked     the mat-vec with every step's load of x and FMA masked by
//              its lane mask, read from memory
//   unmasked   the same with the library's branch: a step whose 8 lanes
//              all hold an entry takes the unmasked load and FMA
//
// Each repeat runs the four kernels in turn (A B C D A B C D ...), so the
// machine's slow and fast spells fall on all of them; medians over
// --repeats. The masked and unmasked y must agree bit for bit and with a
// plain row-by-row product to rounding, else exit 4.
//
//   sell_model [--n 128] [--repeats 9] [--iterations 10] [--json FILE]
//
// Needs AVX-512 (built only where CMake's probe gives csr.cpp its options).
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/statistics.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/document.hpp"
#include "asyncsolve/par/environment.hpp"
#include "benchkit.hpp"

namespace {

using asyncsolve::core::ExitCode;
using asyncsolve::core::InputError;
using Json = nlohmann::ordered_json;

constexpr std::string_view schema = "asyncsolve.bench.sell_model/1";
constexpr int lanes = 8;
constexpr int offsets = 7;  // -n^2, -n, -1, 0, 1, n, n^2

struct Config {
  int n = 128;
  long long triad_n = 1LL << 25;
  int repeats = 9;
  int iterations = 10;
  std::string json_path;
};

std::optional<std::string> parse_command_line(int argc, char** argv, Config& c) {
  CLI::App app{"sell_model: the SELL-8 mat-vec's kernel, masked and unmasked, beside the triad",
               "sell_model"};
  asyncsolve::bench::add_common_options(app, "sell_model");
  app.add_option("--n", c.n, "Grid points per side of the 7-point matrix (a multiple of 8)");
  app.add_option("--triad-n", c.triad_n, "Elements in each of the triad's three arrays");
  app.add_option("--repeats", c.repeats, "Repeats of the interleaved kernels (median over them)");
  app.add_option("--iterations", c.iterations, "Calls of each kernel per repeat");
  app.add_option("--json", c.json_path, "Write the result document to this file")->default_str("");
  app.footer("Exit codes: 0 success, 2 bad input, 4 validation failed or runtime failure.");
  if (auto text = asyncsolve::bench::parse_options(app, argc, argv)) return text;
  if (c.n < 8 || c.n > 1024 || c.n % lanes != 0)
    throw InputError(fmt::format("--n {}: expected a multiple of 8 from 8 to 1024", c.n));
  if (c.triad_n < 1024 || c.triad_n > (1LL << 31))
    throw InputError(fmt::format("--triad-n {}: expected 1024 to 2^31", c.triad_n));
  if (c.repeats < 1 || c.repeats > 1000)
    throw InputError(fmt::format("--repeats {}: expected 1 to 1000", c.repeats));
  if (c.iterations < 1 || c.iterations > 100000)
    throw InputError(fmt::format("--iterations {}: expected 1 to 100000", c.iterations));
  return std::nullopt;
}

/// 64-byte aligned doubles.
struct Buffer {
  std::unique_ptr<double[], decltype(&std::free)> p{nullptr, &std::free};
  explicit Buffer(std::size_t count)
      : p(static_cast<double*>(std::aligned_alloc(64, (count * 8 + 63) / 64 * 64)), &std::free) {
    if (!p) throw std::bad_alloc();
  }
  double* get() const noexcept { return p.get(); }
};

/// The 7-point matrix of an n^3 grid in aligned SELL-8: slice s (rows 8s ..
/// 8s + 7) has 7 steps, step t at offset t; its index word is the column
/// of lane 0, which lies before x[0] or past its end in the first and last
/// slices' outer steps (x is padded there by n^2 + 8 zeros; the masks
/// leave those lanes out).
struct Sell {
  long long rows = 0;
  std::vector<double> val;
  std::vector<std::int32_t> col;
  std::vector<std::uint8_t> mask;
};

Sell build(int n) {
  Sell a;
  const long long n2 = static_cast<long long>(n) * n;
  a.rows = n2 * n;
  const std::array<long long, offsets> off{-n2, -n, -1, 0, 1, n, n2};
  const long long slices = a.rows / lanes;
  a.val.resize(static_cast<std::size_t>(slices * offsets * lanes));
  a.col.resize(static_cast<std::size_t>(slices * offsets));
  a.mask.resize(static_cast<std::size_t>(slices * offsets));
  for (long long s = 0; s < slices; ++s) {
    for (int t = 0; t < offsets; ++t) {
      unsigned m = 0;
      for (int l = 0; l < lanes; ++l) {
        const long long r = s * lanes + l;
        const long long i = r % n, j = r / n % n, k = r / n2;
        const std::array<bool, offsets> neighbour{k > 0,     j > 0,     i > 0,    true,
                                                  i < n - 1, j < n - 1, k < n - 1};
        const bool has = neighbour[static_cast<std::size_t>(t)];
        if (has) m |= 1U << l;
        a.val[static_cast<std::size_t>((s * offsets + t) * lanes + l)] =
            has ? (t == 3 ? 6.0 : -1.0) : 0.0;
      }
      a.mask[static_cast<std::size_t>(s * offsets + t)] = static_cast<std::uint8_t>(m);
      a.col[static_cast<std::size_t>(s * offsets + t)] =
          static_cast<std::int32_t>(s * lanes + off[t]);
    }
  }
  return a;
}

constexpr std::uintptr_t prefetch_bytes = 4096;  // the library's distance

[[gnu::always_inline]] inline void prefetch(const double* p) noexcept {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): past the end forms no pointer
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + prefetch_bytes),
               _MM_HINT_T0);
}

/// y = A x (x padded as Sell says); `unmasked` takes the library's branch
/// for full steps.
template <bool unmasked>
void multiply(const Sell& a, const double* __restrict x, double* __restrict y) noexcept {
  const double* __restrict val = a.val.data();
  const std::int32_t* __restrict col = a.col.data();
  const std::uint8_t* __restrict mask = a.mask.data();
  const long long slices = a.rows / lanes;
  for (long long s = 0; s < slices; ++s) {
    __m512d sum = _mm512_setzero_pd();
    for (int t = 0; t < offsets; ++t) {
      const long long g = s * offsets + t;
      prefetch(val + g * lanes);
      const __m512d v = _mm512_loadu_pd(val + g * lanes);
      const __mmask8 m = mask[g];
      if (unmasked && m == 0xFF) {
        sum = _mm512_fmadd_pd(v, _mm512_loadu_pd(x + col[g]), sum);
      } else {
        sum = _mm512_mask3_fmadd_pd(v, _mm512_maskz_loadu_pd(m, x + col[g]), sum, m);
      }
    }
    _mm512_storeu_pd(y + s * lanes, sum);
  }
}

/// The values alone: per slice the sum of its steps' vectors, stored.
void stream(const Sell& a, double* __restrict y) noexcept {
  const double* __restrict val = a.val.data();
  const long long slices = a.rows / lanes;
  for (long long s = 0; s < slices; ++s) {
    __m512d sum = _mm512_setzero_pd();
    for (int t = 0; t < offsets; ++t) {
      prefetch(val + (s * offsets + t) * lanes);
      sum = _mm512_add_pd(sum, _mm512_loadu_pd(val + (s * offsets + t) * lanes));
    }
    _mm512_storeu_pd(y + s * lanes, sum);
  }
}

void triad(double* __restrict a, const double* __restrict b, const double* __restrict c,
           long long n) noexcept {
  const __m512d three = _mm512_set1_pd(3.0);
  for (long long i = 0; i < n; i += lanes)
    _mm512_store_pd(a + i, _mm512_fmadd_pd(three, _mm512_load_pd(c + i), _mm512_load_pd(b + i)));
}

int run(const Config& c, const asyncsolve::bench::DriverRun& driver) {
  if (driver.world.size() != 1)
    throw InputError(fmt::format("{} ranks: expected 1", driver.world.size()));
  asyncsolve::par::check_json_path(c.json_path, driver.world);
  const std::string started = asyncsolve::core::iso8601_now();
  const auto environment = asyncsolve::par::describe_environment(driver.world, driver.env);
  std::printf("%s\n", asyncsolve::par::provenance_line("sell_model", environment).c_str());

  const Sell a = build(c.n);
  const auto rows = static_cast<std::size_t>(a.rows);
  const auto pad = static_cast<std::size_t>(c.n) * static_cast<std::size_t>(c.n) + lanes;
  Buffer x_padded(rows + 2 * pad), y(rows), y2(rows);
  std::fill_n(x_padded.get(), rows + 2 * pad, 0.0);
  double* const x_origin = x_padded.get() + pad;
  for (std::size_t i = 0; i < rows; ++i) x_origin[i] = 1.0 + 0.1 * static_cast<double>(i % 7);
  const double* const xs = x_origin;
  const auto tn = static_cast<std::size_t>((c.triad_n + lanes - 1) / lanes * lanes);
  Buffer ta(tn), tb(tn), tc(tn);
  for (std::size_t i = 0; i < tn; ++i) {
    ta.get()[i] = 0.0;
    tb.get()[i] = 2.0;
    tc.get()[i] = 1.0;
  }

  // Validate: both kernels give the row-by-row product.
  multiply<false>(a, xs, y.get());
  multiply<true>(a, xs, y2.get());
  const long long n = c.n, n2 = n * n;
  double worst = 0.0;
  bool identical = true;
  for (long long r = 0; r < a.rows; ++r) {
    const long long i = r % n, j = r / n % n, k = r / n2;
    double ref = 6.0 * xs[r];
    if (k > 0) ref -= xs[r - n2];
    if (j > 0) ref -= xs[r - n];
    if (i > 0) ref -= xs[r - 1];
    if (i < n - 1) ref -= xs[r + 1];
    if (j < n - 1) ref -= xs[r + n];
    if (k < n - 1) ref -= xs[r + n2];
    worst = std::max(worst, std::abs(y.get()[r] - ref));
    identical = identical && y.get()[r] == y2.get()[r];
  }
  if (!identical || worst > 1e-13) {
    throw asyncsolve::core::RuntimeFailure(
        fmt::format("validation failed: masked and unmasked {}, largest error {:.3g}",
                    identical ? "agree" : "differ", worst));
  }

  const double nnz_steps = static_cast<double>(a.val.size());
  const double bytes_model = nnz_steps * 8.0 + static_cast<double>(a.col.size()) * 4.0 +
                             static_cast<double>(a.mask.size()) + 16.0 * static_cast<double>(rows);
  const double bytes_stream = nnz_steps * 8.0 + 8.0 * static_cast<double>(rows);
  const double bytes_triad = 32.0 * static_cast<double>(tn);
  const std::array<std::string, 4> names{"triad", "stream", "masked", "unmasked"};
  std::array<std::vector<double>, 4> seconds;
  for (int r = 0; r < c.repeats; ++r) {
    for (std::size_t k = 0; k < names.size(); ++k) {
      const double t0 = asyncsolve::core::now_s();
      for (int it = 0; it < c.iterations; ++it) {
        if (k == 0) triad(ta.get(), tb.get(), tc.get(), static_cast<long long>(tn));
        if (k == 1) stream(a, y.get());
        if (k == 2) multiply<false>(a, xs, y.get());
        if (k == 3) multiply<true>(a, xs, y2.get());
      }
      seconds[k].push_back((asyncsolve::core::now_s() - t0) / c.iterations);
    }
  }
  const std::array<double, 4> bytes{bytes_triad, bytes_stream, bytes_model, bytes_model};
  Json kernels = Json::object();
  const double triad_s = asyncsolve::core::median(seconds[0]);
  for (std::size_t k = 0; k < names.size(); ++k) {
    const double s = asyncsolve::core::median(seconds[k]);
    std::vector<double> per_triad;
    for (int r = 0; r < c.repeats; ++r)
      per_triad.push_back((bytes[k] / seconds[k][r]) / (bytes_triad / seconds[0][r]));
    std::printf("%-9s %8.3f ms  %6.2f GB/s  %.3f of the triad (median of per-repeat ratios)\n",
                names[k].c_str(), s * 1e3, bytes[k] / s * 1e-9,
                asyncsolve::core::median(per_triad));
    kernels[names[k]] = {{"bytes", bytes[k]},
                         {"seconds", asyncsolve::core::series_json(seconds[k], "repeats")},
                         {"gbs", bytes[k] / s * 1e-9},
                         {"to_triad", asyncsolve::core::series_json(per_triad, "repeats")}};
  }
  std::vector<double> masked_over_unmasked;
  for (int r = 0; r < c.repeats; ++r) masked_over_unmasked.push_back(seconds[2][r] / seconds[3][r]);
  std::printf("masked / unmasked time: %.3f (median of per-repeat ratios); triad %.3f ms\n",
              asyncsolve::core::median(masked_over_unmasked), triad_s * 1e3);
  const bool written =
      asyncsolve::par::write_document(driver.world, c.json_path, "sell_model", "Wrote {}", [&] {
        Json doc = asyncsolve::core::document_header(schema, driver.args, started);
        doc["environment"] = asyncsolve::par::environment_json(environment);
        doc["config"] = {{"n", c.n},
                         {"triad_n", c.triad_n},
                         {"repeats", c.repeats},
                         {"iterations", c.iterations}};
        doc["validation"] = {{"passed", true}, {"largest_error", worst}};
        doc["kernels"] = kernels;
        doc["masked_over_unmasked"] =
            asyncsolve::core::series_json(masked_over_unmasked, "repeats");
        return doc;
      });
  return asyncsolve::core::to_int(written ? ExitCode::success : ExitCode::runtime_failure);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  return asyncsolve::bench::driver_main(
      argc, argv, {"sell_model", asyncsolve::par::ThreadLevel::single, "(try a smaller --n)"},
      [&] { return parse_command_line(argc, argv, config); },
      [&](const asyncsolve::bench::DriverRun& driver) { return run(config, driver); });
}
