// NAME
//   spmv - time per distributed CSR mat-vec, and its bandwidth against the
//   STREAM triad measured in the same run
//
// PURPOSE
//   The numbers docs/PERFORMANCE.md sets beside PETSc's MatMult (bench/peers,
//   configuration mtx-spmv): y = A x with asyncsolve's CSR operator
//   (ops::CsrOperator) on a matrix read from a Matrix Market file (or the
//   7-point Laplacian of an N^3 grid, --laplacian N), distributed by
//   --partition, the halo exchange (--halo) in flight during the interior
//   rows. Before timing, the product is validated against the plain
//   reference (ops::spmv_ref; relative difference <= 1e-12) on x_i = 1 + i
//   mod 7. Bytes counted per mat-vec: 12 per non-zero (value and 32-bit
//   column index) plus 20 per row (the row offset, x read once, y written);
//   the triad: 32 per element (a written, b and c read, a's line fetched).
//   Repeats interleave the two kernels (triad, then the mat-vecs) so that a
//   change of the machine's state touches both.
//
// USAGE
//   mpirun -np P spmv --matrix FILE.mtx [--partition block] [--halo waitall]
//                     [--layout auto|csr|sell8|blocks] [--values compressed|plain]
//                     [--iterations 100] [--repeats 5]
//                     [--triad-n N] [--json FILE]
//   mpirun -np P spmv --laplacian 128 ...
//   spmv --write-laplacian 128 --out FILE.mtx   (one rank: writes the matrix)
//
// OUTPUT
//   A line per repeat and a summary on rank 0; with --json a document
//   (schema asyncsolve.bench.spmv/1) whose "result" block has the fields
//   bench/peers/run_peers.py reads of an asyncsolve run: iterations (mat-vecs
//   per repeat), time_s and time_per_iteration_s (the median repeat, max over
//   ranks), converged (the validation passed), true_residual (its relative
//   difference). Exit 0, 2 bad input, 4 failed validation.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/core/statistics.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/document.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/solvers/assemble.hpp"
#include "asyncsolve/sparse/load.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"
#include "benchkit.hpp"

namespace {

using namespace asyncsolve;
using Json = nlohmann::ordered_json;

struct Config {
  std::string matrix;
  int laplacian = 0;
  int write_laplacian = 0;
  std::string out;
  std::string partition = "block";
  std::string halo = "waitall";
  std::string layout = "auto";
  std::string values = "compressed";
  int iterations = 100;
  int repeats = 5;
  long long triad_n = 1LL << 24;
  std::string json_path;
};

[[gnu::noinline]] void triad(double* __restrict a, const double* __restrict b,
                             const double* __restrict c, double s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

/// The 7-point Laplacian of an n^3 grid (the ones problem's matrix) as a
/// Matrix Market file, written by rank 0 alone.
void write_laplacian(int n, const std::string& out) {
  sparse::CsrMatrix a;
  a.rows = a.cols = static_cast<std::int64_t>(n) * n * n;
  a.row_ptr.reserve(static_cast<std::size_t>(a.rows) + 1);
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const auto i = static_cast<std::int32_t>(x + n * (y + n * z));
        const auto add = [&](std::int32_t j, double v) {
          a.col.push_back(j);
          a.val.push_back(v);
        };
        if (z > 0) add(i - n * n, -1);
        if (y > 0) add(i - n, -1);
        if (x > 0) add(i - 1, -1);
        add(i, 6);
        if (x < n - 1) add(i + 1, -1);
        if (y < n - 1) add(i + n, -1);
        if (z < n - 1) add(i + n * n, -1);
        a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
      }
  core::write_file_atomic(out, sparse::format_matrix(a));
}

/// --layout: auto (nothing: the operator chooses), csr, sell8 or blocks;
/// throws core::InputError for anything else.
std::optional<ops::InteriorLayout> parse_layout(const std::string& layout) {
  if (layout == "auto") return std::nullopt;
  if (layout == "csr") return ops::InteriorLayout::csr;
  if (layout == "sell8") return ops::InteriorLayout::sell8;
  if (layout == "blocks") return ops::InteriorLayout::blocks;
  throw core::InputError("--layout " + layout + ": expected auto, csr, sell8 or blocks");
}

int run(const Config& c, const bench::DriverRun& driver) {
  const par::Comm& world = driver.world;
  const std::string started = core::iso8601_now();
  par::check_json_path(c.json_path, world);
  // The matrix: read and partitioned, or the Laplacian assembled on a grid.
  sparse::DistMatrix m;
  std::optional<grid::Decomposition> d;
  if (!c.matrix.empty()) {
    sparse::LoadOptions options;
    options.partition = sparse::parse_partition(c.partition);
    m = std::move(sparse::load_system(world, c.matrix, options).matrix);
  } else {
    d.emplace(grid::Decomposition::create(
        world,
        {.global = grid::Int3{c.laplacian, c.laplacian, c.laplacian}, .local = {}, .dims = {}}));
    const auto problem = grid::make_problem("ones", {});
    m = std::move(solvers::assemble(*problem, *d, 0.0).matrix);
  }
  const ops::CsrOperator op(m, parse_layout(c.layout), c.values == "compressed");
  // Summed over ranks: entries stored for the interior rows, SELL-8 steps
  // gathered, ranks whose interior rows are in SELL-8 and in row blocks
  // (auto decides per rank), values stored for the interior rows, SELL-8
  // steps uniform.
  const auto& steps = op.interior_sell().steps;
  long long totals[6] = {
      op.interior_stored(),
      static_cast<long long>(std::count_if(steps.begin(), steps.end(),
                                           [](ops::SellStep s) { return s.consecutive == 0; })),
      op.interior_layout() == ops::InteriorLayout::sell8 ? 1 : 0,
      op.interior_layout() == ops::InteriorLayout::blocks ? 1 : 0,
      op.interior_values(),
      static_cast<long long>(std::count_if(steps.begin(), steps.end(),
                                           [](ops::SellStep s) { return s.uniform != 0; }))};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, totals, 6, MPI_LONG_LONG, MPI_SUM, world.get()),
                 "MPI_Allreduce");
  const auto [stored, gathered, sell_ranks, block_ranks, values_stored, uniform] = totals;
  const long long csr_ranks = world.size() - sell_ranks - block_ranks;
  std::string layout_used;
  for (const auto& [name, count] :
       {std::pair{"sell8", sell_ranks}, std::pair{"blocks", block_ranks},
        std::pair{"csr", csr_ranks}}) {
    if (count == 0) continue;
    if (!layout_used.empty()) layout_used += ", ";
    layout_used += count == world.size()
                       ? std::string(name)
                       : fmt::format("{} on {} of {} ranks", name, count, world.size());
  }
  auto halo = comm::make_sparse_halo_exchange(comm::parse_halo_strategy(c.halo), m);
  const auto n = static_cast<std::size_t>(op.rows());
  grid::Field x({op.rows(), 1, 1}, 0);
  grid::Field y({op.rows(), 1, 1}, 0);
  for (std::size_t i = 0; i < n; ++i)
    x.origin()[i] = 1.0 + static_cast<double>((m.first_row() + static_cast<std::int64_t>(i)) % 7);

  const auto spmv = [&] {
    halo->start(x);
    ops::spmv_interior(op, x.origin(), y.origin(), 0, op.interior_rows());
    halo->finish(x);
    ops::spmv_boundary(op, x.origin(), halo->ghosts().data(), y.origin());
  };
  // Validate against the reference before timing.
  spmv();
  std::vector<double> ref(n);
  ops::spmv_ref(m, x.origin(), halo->ghosts().data(), ref.data());
  double diff[2] = {0.0, 0.0};
  for (std::size_t i = 0; i < n; ++i) {
    diff[0] = std::max(diff[0], std::abs(y.origin()[i] - ref[i]));
    diff[1] = std::max(diff[1], std::abs(ref[i]));
  }
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, diff, 2, MPI_DOUBLE, MPI_MAX, world.get()),
                 "MPI_Allreduce");
  const double difference = diff[1] > 0 ? diff[0] / diff[1] : diff[0];
  if (!(difference <= 1e-12)) {
    throw core::RuntimeFailure(
        fmt::format("validation failed: max |y - y_ref| / max |y_ref| = {:.3e}", difference));
  }

  const auto tn = static_cast<std::size_t>(c.triad_n);
  std::vector<double> ta(tn, 0.0), tb(tn, 2.0), tc(tn, 1.0);
  const double nnz = static_cast<double>(m.global_nnz());
  const double rows = static_cast<double>(m.global_rows());
  const double spmv_bytes = 12.0 * nnz + 20.0 * rows;
  const double triad_bytes = 32.0 * static_cast<double>(tn) * world.size();
  std::vector<double> spmv_s, triad_s, bandwidth, triad_bw, ratio;
  for (int r = 0; r < c.repeats; ++r) {
    world.barrier();
    double t0 = core::now_s();
    triad(ta.data(), tb.data(), tc.data(), 3.0, tn);
    const double t_triad = par::rank_stats(world, core::now_s() - t0).max;
    world.barrier();
    t0 = core::now_s();
    for (int it = 0; it < c.iterations; ++it) spmv();
    const double t_spmv = par::rank_stats(world, core::now_s() - t0).max / c.iterations;
    spmv_s.push_back(t_spmv);
    triad_s.push_back(t_triad);
    bandwidth.push_back(spmv_bytes / t_spmv / 1e9);
    triad_bw.push_back(triad_bytes / t_triad / 1e9);
    ratio.push_back(bandwidth.back() / triad_bw.back());
    if (world.is_root()) {
      std::printf("repeat %d: spmv %.4g ms (%.2f GB/s), triad %.2f GB/s, ratio %.3f\n", r + 1,
                  t_spmv * 1e3, bandwidth.back(), triad_bw.back(), ratio.back());
    }
  }
  if (ta[tn / 2] != 5.0) throw core::RuntimeFailure("the triad computed a wrong value");
  const double median_s = core::median(spmv_s);
  if (world.is_root()) {
    std::printf(
        "spmv: %lld rows, %lld non-zeros on %d ranks (%s, halo %s, interior rows %s with "
        "%lld entries stored, %lld steps of 8 gathered, %lld uniform, %lld values "
        "stored; SELL-8 kernel %s): %.4g ms per mat-vec (median of %d), %.2f GB/s = %.3f of the "
        "triad's "
        "%.2f GB/s\n",
        static_cast<long long>(m.global_rows()), static_cast<long long>(m.global_nnz()),
        world.size(), c.matrix.empty() ? "laplacian" : c.partition.c_str(), c.halo.c_str(),
        layout_used.c_str(), stored, gathered, uniform, values_stored,
        std::string(ops::csr_sell_kernel()).c_str(), median_s * 1e3, c.repeats,
        core::median(bandwidth), core::median(ratio), core::median(triad_bw));
  }
  const bool written = par::write_document(world, c.json_path, "spmv", "Wrote {}", [&] {
    Json doc = core::document_header("asyncsolve.bench.spmv/1", driver.args, started);
    doc["environment"] = par::environment_json(par::describe_environment(world, driver.env));
    doc["parameters"] = {{"matrix", c.matrix},
                         {"laplacian", c.laplacian},
                         {"partition", c.partition},
                         {"halo", c.halo},
                         {"layout", layout_used},
                         {"sell_kernel", ops::csr_sell_kernel()},
                         {"interior_stored", stored},
                         {"gathered_steps", gathered},
                         {"uniform_steps", uniform},
                         {"values", c.values},
                         {"interior_values", values_stored},
                         {"iterations", c.iterations},
                         {"repeats", c.repeats},
                         {"triad_n", c.triad_n},
                         {"rows", m.global_rows()},
                         {"nnz", m.global_nnz()},
                         {"bytes_per_spmv", spmv_bytes}};
    doc["result"] = {{"converged", true},
                     {"iterations", {{"max", c.iterations}}},
                     {"time_s", median_s * c.iterations},
                     {"time_per_iteration_s", median_s},
                     {"true_residual", difference}};
    doc["spmv_s"] = core::series_json(spmv_s);
    doc["spmv_gbs"] = core::series_json(bandwidth);
    doc["triad_gbs"] = core::series_json(triad_bw);
    doc["ratio_to_triad"] = core::series_json(ratio);
    return doc;
  });
  halo->close();
  m.free();
  if (d) d->free();
  return written ? 0 : 4;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"spmv: time per distributed CSR mat-vec against the STREAM triad", "spmv"};
  asyncsolve::bench::add_common_options(app, "spmv");
  app.add_option("--matrix", c.matrix, "Matrix Market file (square)");
  app.add_option("--laplacian", c.laplacian, "Instead: the 7-point Laplacian of an N^3 grid");
  app.add_option("--write-laplacian", c.write_laplacian,
                 "Write the 7-point Laplacian of an N^3 grid to --out and stop (one rank)");
  app.add_option("--out", c.out, "File --write-laplacian writes");
  app.add_option("--partition", c.partition, "block, metis or scotch[:rows|:nnz]");
  app.add_option("--halo", c.halo, "waitall, alltoallv, ialltoallv, neighbor or persistent");
  app.add_option("--layout", c.layout,
                 "Interior rows: auto (SELL-8 unless it pads by more than a quarter, else row "
                 "blocks unless they store over 1.5 values a non-zero, else csr), csr, sell8 "
                 "or blocks");
  app.add_option("--values", c.values,
                 "SELL-8 values: compressed (a uniform step's value once) or plain (8 per step)");
  app.add_option("--iterations", c.iterations, "Mat-vecs per repeat");
  app.add_option("--repeats", c.repeats, "Repeats (median reported)");
  app.add_option("--triad-n", c.triad_n, "Elements of each triad array per rank");
  app.add_option("--json", c.json_path, "Write the result document to this file");
  return asyncsolve::bench::driver_main(
      argc, argv, {"spmv", asyncsolve::par::ThreadLevel::single, "(try a smaller matrix)"},
      [&]() -> std::optional<std::string> {
        auto text = asyncsolve::bench::parse_options(app, argc, argv);
        if (text) return text;
        const int sources = (!c.matrix.empty()) + (c.laplacian > 0) + (c.write_laplacian > 0);
        if (sources != 1) {
          throw asyncsolve::core::InputError(
              "expected exactly one of --matrix, --laplacian and --write-laplacian");
        }
        if (c.write_laplacian > 0 && c.out.empty())
          throw asyncsolve::core::InputError("--write-laplacian: expected --out FILE.mtx");
        if (c.iterations < 1 || c.repeats < 1 || c.triad_n < 1)
          throw asyncsolve::core::InputError(
              "--iterations, --repeats and --triad-n: expected integers >= 1");
        if (!c.matrix.empty()) asyncsolve::sparse::parse_partition(c.partition);
        asyncsolve::comm::parse_halo_strategy(c.halo);
        parse_layout(c.layout);
        if (c.values != "compressed" && c.values != "plain")
          throw asyncsolve::core::InputError("--values " + c.values +
                                             ": expected compressed or plain");
        return std::nullopt;
      },
      [&](const asyncsolve::bench::DriverRun& driver) {
        if (c.write_laplacian > 0) {
          if (driver.world.is_root()) write_laplacian(c.write_laplacian, c.out);
          return 0;
        }
        return run(c, driver);
      });
}
