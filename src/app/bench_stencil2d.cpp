// NAME     asyncsolve bench stencil2d
// PURPOSE  Paper 004's Stencil2D: which way of exchanging an 8-neighbour halo
//          (faces and corners) is fastest here — MPI two-sided (trivial,
//          sendrecv, halo) or one-sided (put, get, get0, get1) over MPI-3 RMA
//          and OpenSHMEM — with a (2r+1) x (2r+1) filter as the computation.
// USAGE    mpirun -np P asyncsolve bench stencil2d [--local 256 | 64,128,256]
//          [--radius 1] [-i 100] [-x 5] [--repeats 5] [--transport auto|mpi,rma,shmem]
//          [--variant all|trivial,sendrecv,halo,put,get,get0,get1] [--json FILE]
//          OMPI_MCA_osc=ucx oshrun -np P asyncsolve bench stencil2d --transport shmem
// OUTPUT   a table on rank 0; with --json, the document
//          asyncsolve.bench.stencil2d/1 (docs/benchmarks.md, "asyncsolve bench stencil2d").
//
// Weak scaling: every rank owns an n x n block of a periodic domain of
// (px n) x (py n) points on the px x py grid of MPI_Dims_create. For each
// local size the variants are created once; each repeat runs each of them
// in turn (interleaved, so drift affects all alike): reset to the initial
// field, -x untimed iterations, a barrier, -i timed iterations. The final
// field of every repeat is compared with the serial filter computed once on
// rank 0 (kernels::filter2d_serial) before any time is reported; a mismatch
// stops the benchmark with exit 4, naming the variant and the first wrong
// point. Times are per rank, then the maximum over ranks (the slowest rank
// sets the pace); the exchange time is the iteration time minus the time in
// the filter (copy-in, communication, waiting and synchronisation).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/kernels/stencil2d.hpp"
#include "asyncsolve/kernels/stencil2d_bench.hpp"
#include "asyncsolve/par/document.hpp"
#include "asyncsolve/par/stats.hpp"
#include "commands.hpp"
#include "result_document.hpp"

namespace asyncsolve::app {
namespace {

using par::max_over_ranks;

constexpr double to_us = 1e6;
constexpr double validation_tol = 1e-12;

/// One variant at one local size, over the repeats (slowest rank's figures).
using Record = kernels::Stencil2dMeasurement;

struct Failure {
  std::string message;
};

/// Collective: refuses, as bad input (the same verdict on every rank), a
/// block size whose variants and serial reference would not fit in the
/// memory of a node: one clear line instead of an allocation failure on
/// some ranks. Each variant keeps about three (n + 2r)^2 arrays; rank 0
/// computes the reference over the whole domain (three P n^2 arrays).
void check_memory(const BenchStencil2dConfig& config, int n, const par::Comm& comm) {
  const double side = n + 2.0 * config.radius;
  const double block = static_cast<double>(n) * n;
  double bytes = 8.0 * (3.0 * static_cast<double>(config.runs.size()) * side * side + block);
  if (comm.is_root()) bytes += 8.0 * 3.0 * comm.size() * block;
  const par::NodeMemory memory = par::node_memory(comm, bytes);
  if (memory.need_bytes > 0.9 * memory.have_bytes) {
    throw core::InputError(
        fmt::format("--local {}: the blocks and the reference need {:.1f} GiB on one node, which "
                    "has {:.1f} GiB of memory; expected a smaller --local",
                    n, memory.need_bytes / 1073741824.0, memory.have_bytes / 1073741824.0));
  }
}

/// Collective: all repeats of all runs at local size `n`. Returns a failure
/// (the same on every rank) if a validation failed; the variants are freed
/// either way.
std::optional<Failure> measure(const BenchStencil2dConfig& config, int n, const par::Comm& comm,
                               std::vector<Record>& records) {
  kernels::Stencil2dSpec spec;
  spec.local = n;
  spec.radius = config.radius;
  spec.corrupt_corner = config.corrupt_corner;
  std::vector<std::unique_ptr<kernels::Stencil2d>> variants;
  const std::size_t first = records.size();
  for (const auto& run : config.runs) {
    variants.push_back(kernels::make_stencil2d(run.transport, run.variant, comm, spec));
    Record rec;
    rec.name = run.name();
    rec.transport = name(run.transport);
    rec.variant = name(run.variant);
    rec.local = n;
    rec.halo_bytes = variants.back()->halo_bytes();
    rec.calls = variants.back()->messages_per_iteration();
    records.push_back(std::move(rec));
  }
  const kernels::Stencil2dGrid& grid = variants.front()->grid();
  const long total = config.warmup + config.iterations;
  const std::vector<double> reference = kernels::stencil2d_reference(comm, grid, spec, total);

  std::optional<Failure> failure;
  for (int repeat = 0; repeat < config.repeats && !failure; ++repeat) {
    for (std::size_t v = 0; v < variants.size() && !failure; ++v) {
      kernels::Stencil2d& s = *variants[v];
      Record& rec = records[first + v];
      s.reset();
      if (config.warmup > 0) s.run(config.warmup);
      comm.barrier();
      const kernels::Stencil2dTiming t = s.run(config.iterations);
      // Validate before the time is kept.
      const kernels::Stencil2dCheck check =
          kernels::stencil2d_compare(comm, grid, spec, s.field(), reference, validation_tol);
      if (!check.ok) {
        failure = Failure{fmt::format(
            "bench stencil2d: {} failed validation (local {}, radius {}, {} ranks, repeat {}, "
            "after {} iterations): first wrong point (x, y) = ({}, {}) of the {}x{} domain, got "
            "{:.17g}, expected {:.17g} ({} point{} wrong)",
            rec.name, n, config.radius, comm.size(), repeat + 1, total, check.gx, check.gy,
            static_cast<long>(grid.px) * n, static_cast<long>(grid.py) * n, check.got,
            check.expected, check.wrong_points, check.wrong_points == 1 ? "" : "s")};
        break;
      }
      const auto it = static_cast<double>(config.iterations);
      const double total_s = max_over_ranks(comm, t.total_s) / it;
      const double exchange_s = max_over_ranks(comm, t.exchange_s()) / it;
      const double filter_s = max_over_ranks(comm, t.filter_s) / it;
      rec.iteration_us.push_back(total_s * to_us);
      rec.exchange_us.push_back(exchange_s * to_us);
      rec.filter_us.push_back(filter_s * to_us);
      rec.bandwidth_mbs.push_back(
          exchange_s > 0.0 ? static_cast<double>(rec.halo_bytes) / exchange_s / 1e6 : 0.0);
    }
  }
  for (auto& s : variants) s->free();  // collective, in creation order on every rank
  return failure;
}

nlohmann::ordered_json make_document(const std::vector<std::string>& command,
                                     const std::string& started, const RunEnvironment& env,
                                     const BenchStencil2dConfig& c, const kernels::Stencil2dGrid& g,
                                     const std::vector<Record>& records) {
  nlohmann::ordered_json doc = document_header("asyncsolve.bench.stencil2d/1", command, started);
  doc["environment"] = environment_json(env);
  std::vector<std::string> transports, variants;
  for (const auto& r : c.runs) {
    const std::string t(name(r.transport));
    const std::string v(name(r.variant));
    if (std::find(transports.begin(), transports.end(), t) == transports.end())
      transports.push_back(t);
    if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
  }
  kernels::Stencil2dParameters p;
  p.local_sizes = c.local_sizes;
  p.radius = c.radius;
  p.iterations = c.iterations;
  p.warmup = c.warmup;
  p.repeats = c.repeats;
  p.transport = c.transport_text;
  p.variant = c.variant_text;
  p.transports = transports;
  p.variants = variants;
  for (const auto& r : c.runs) p.runs.push_back(r.name());
  p.worker = "rank";
  p.reference_worker = "rank 0";
  p.validation_tol = validation_tol;
  doc["parameters"] = kernels::stencil2d_parameters_json(p);
  doc["grid"] = {{"dims", {g.px, g.py}}, {"periodic", true}};
  doc["results"] = kernels::stencil2d_results_json(records, g.px, g.py, c.radius, env.ranks);
  return doc;
}

}  // namespace

core::ExitCode run_bench_stencil2d(const BenchStencil2dConfig& config, const par::Comm& world,
                                   const par::Environment& env,
                                   const std::vector<std::string>& command) {
  const std::string started = core::iso8601_now();
  check_json_path(config.json_path, world);
  const RunEnvironment e = describe_environment(world, env);
  const kernels::Stencil2dGrid grid = kernels::Stencil2dGrid::create(world.rank(), world.size());
  for (const int n : config.local_sizes) check_memory(config, n, world);
  par::print_on_root(world, fmt::format("{}\n  grid {}x{} (periodic), radius {}, {} iterations "
                                        "({} warm-up), {} repeat{}\n",
                                        par::provenance_line("bench stencil2d", e), grid.px,
                                        grid.py, config.radius, config.iterations, config.warmup,
                                        config.repeats, config.repeats == 1 ? "" : "s"));
  std::vector<Record> records;
  for (const int n : config.local_sizes) {
    if (const auto failure = measure(config, n, world, records)) {
      if (world.is_root())
        std::fprintf(stderr, "asyncsolve: error: %s\n", failure->message.c_str());
      return core::ExitCode::runtime_failure;
    }
  }
  par::print_on_root(world, kernels::stencil2d_table(records, config.iterations, config.warmup,
                                                     "rank", /*with_syncs=*/false));

  const bool written = par::write_document(
      world, config.json_path, "asyncsolve", "  json       {}",
      [&] { return make_document(command, started, e, config, grid, records); });
  return written ? core::ExitCode::success : core::ExitCode::runtime_failure;
}

}  // namespace asyncsolve::app
