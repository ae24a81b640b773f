#include "bench_stencil2d_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/kernels/stencil2d.hpp"
#include "asyncsolve/par/shmem.hpp"

namespace asyncsolve::app {
namespace {

using core::InputError;
using Transport = Stencil2dTransport;
using Variant = Stencil2dVariant;

/// True if `variant` exists over `transport` (kernels::is_stencil2d_variant).
bool exists(Transport transport, Variant variant) {
  return kernels::is_stencil2d_variant(transport, variant);
}

std::vector<int> parse_local_sizes(const std::string& text) {
  const std::string expected = fmt::format(
      "a comma-separated list of block sizes from 2 to {}, e.g. 64,128,256", stencil2d_local_max);
  std::vector<int> sizes;
  for (const auto& item : split_list("--local", text, expected)) {
    int n = 0;
    if (!core::parse_whole(item, n) || n < 2 || n > stencil2d_local_max) {
      throw InputError(fmt::format("--local '{}': bad size '{}', expected {}",
                                   core::printable(text), core::printable(item), expected));
    }
    sizes.push_back(n);
  }
  return sizes;
}

/// --transport: auto (mpi, rma, and shmem where it can run) or a list; a
/// listed shmem must be able to run.
std::vector<Transport> parse_transports(const std::string& text) {
  std::vector<Transport> transports;
  if (is_auto(text)) {
    transports = {Transport::mpi, Transport::rma};
    if (par::shmem_available() && started_by_launcher() && mca_osc_is_ucx()) {
      transports.push_back(Transport::shmem);
    }
    return transports;
  }
  for (const auto& t :
       split_list("--transport", text, "auto or a comma-separated list of mpi, rma, shmem")) {
    transports.push_back(parse_one_of<Transport>("--transport", t, " (or auto)"));
  }
  if (std::find(transports.begin(), transports.end(), Transport::shmem) == transports.end()) {
    return transports;
  }
  if (!par::shmem_available()) {
    throw InputError(
        "--transport shmem: this build of asyncsolve has no OpenSHMEM, expected "
        "mpi or rma");
  }
  return transports;
}

/// --variant: all (every variant of the chosen transports) or a list, each
/// of which must exist over one of them.
std::vector<Variant> parse_variants(const std::string& text,
                                    const std::vector<Transport>& transports) {
  if (text == kernels::stencil2d_every_variant) return values<Variant>();
  std::vector<Variant> variants;
  for (const auto& v : split_list("--variant", text, "all or a comma-separated list of variants")) {
    variants.push_back(parse_one_of<Variant>("--variant", v, " (or all)"));
  }
  std::vector<std::string_view> transport_names;
  transport_names.reserve(transports.size());
  for (const Transport t : transports) transport_names.push_back(name(t));
  for (const Variant v : variants) {
    if (std::any_of(transports.begin(), transports.end(),
                    [v](Transport t) { return exists(t, v); })) {
      continue;
    }
    const bool two_sided = exists(Transport::mpi, v);
    throw InputError(
        fmt::format("--variant {} with --transport {}: {} is {}, expected "
                    "--transport {}",
                    name(v), fmt::join(transport_names, ","), name(v),
                    two_sided ? "two-sided" : "one-sided", two_sided ? "mpi" : "rma or shmem"));
  }
  return variants;
}

}  // namespace

std::string Stencil2dRun::name() const {
  return fmt::format("{}/{}", app::name(transport), app::name(variant));
}

bool BenchStencil2dConfig::uses_shmem() const {
  return std::any_of(runs.begin(), runs.end(),
                     [](const Stencil2dRun& r) { return r.transport == Transport::shmem; });
}

void add_bench_stencil2d_options(OptionTable& t, BenchStencil2dArgs& a) {
  BenchStencil2dConfig& c = a.values;
  t.text("--local", a.local,
         {.help = fmt::format("Block size n per rank (n x n points; weak scaling: the domain "
                              "grows with the ranks), or a comma-separated sweep, e.g. "
                              "64,128,256 (each 2 to {})",
                              stencil2d_local_max),
          .sample = "8,12",
          .value = "N[,N...]",
          .limits = fmt::format("each 2 to {}", stencil2d_local_max)});
  t.number("--radius", c.radius, {1, stencil2d_radius_max},
           {.help = "Halo width r (stencil (2r+1) x (2r+1)), r < n"});
  t.number("-i,--iterations", c.iterations, {1, 1e7}, {.help = "Timed iterations per measurement"});
  t.number("-x,--warmup", c.warmup, {0, 1e7}, {.help = "Untimed iterations before them"});
  t.number("--repeats", c.repeats, {1, 1000},
           {.help = "Measurements of every variant, interleaved; min/median/max are reported"});
  t.text("--transport", c.transport_text,
         {.help = "auto (mpi and rma, and shmem when built with OpenSHMEM and run under "
                  "oshrun with OMPI_MCA_osc=ucx) or a comma-separated list of mpi (two-sided), "
                  "rma (MPI-3 one-sided), shmem (OpenSHMEM; run under oshrun)",
          .sample = "rma",
          .value = "LIST"});
  t.text("--variant", c.variant_text,
         {.help = "all, or a comma-separated list: trivial, sendrecv, halo (mpi); put, get, "
                  "get0, get1 (rma and shmem); each runs over every chosen transport that has "
                  "it",
          .sample = "get1",
          .value = "LIST"});
  t.flag("--test-corrupt-corner", c.corrupt_corner,
         {.help = "Test hook: corrupt one halo corner so that validation fails (exit 4)",
          .hidden = true});
  t.path("--json", c.json_path, {.help = "Write the result document to this file"});
}

BenchStencil2dConfig validate_bench_stencil2d(const BenchStencil2dArgs& a,
                                              const OptionTable& table) {
  BenchStencil2dConfig c = a.values;
  c.local_sizes = parse_local_sizes(a.local);
  expect_at_least("--radius", c.radius, 1);
  for (const int n : c.local_sizes) {
    if (c.radius >= n) {
      throw InputError(
          fmt::format("--radius {} with --local {}: expected 1 <= radius < the "
                      "local size (the halo comes from the neighbour's block)",
                      c.radius, n));
    }
  }
  expect_repetitions(c.iterations, c.warmup, c.repeats);
  const std::vector<Transport> transports = parse_transports(c.transport_text);
  const std::vector<Variant> variants = parse_variants(c.variant_text, transports);
  c.runs.clear();
  for (const Transport t : transports)
    for (const Variant v : variants)
      if (exists(t, v)) c.runs.push_back({t, v});
  table.refuse_inapplicable(Context{});
  return c;
}

bool started_by_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

}  // namespace asyncsolve::app
