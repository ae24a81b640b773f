#include "spin_options.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/kernels/tfim.hpp"
#include "asyncsolve/par/shmem.hpp"
#include "solve_options.hpp"

namespace asyncsolve::app {

using core::InputError;

void add_spin_options(OptionTable& t, SpinArgs& a, const Applies& lanczos) {
  SpinConfig& s = a.values;
  const auto over = [&](std::string transport) {
    Applies out = lanczos;
    out.any.front().push_back(Condition{"--transport", {std::move(transport)}});
    return out;
  };
  a.sites =
      t.number("--sites", s.sites, {2, kernels::tfim_max_sites},
               {.help = "--problem tfim: n lattice sites, 2^n states (with --lattice "
                        "square:LxW it must equal L*W)",
                .applies = lanczos,
                .shown_default = "16; L*W for square:LxW",
                .note = fmt::format(" (2^n states: at most {} sites)", kernels::tfim_max_sites)});
  t.number("--coupling", s.coupling, {-1e6, 1e6},
           {.help = "--problem tfim: J of H = J sum_<ij> Z_i Z_j + Gamma sum_i X_i (Pauli "
                    "matrices; J > 0 antiferromagnetic)",
            .applies = lanczos});
  t.number("--field", s.field, {-1e6, 1e6},
           {.help = "--problem tfim: Gamma, the transverse field", .applies = lanczos});
  t.text("--lattice", a.lattice,
         {.help = "--problem tfim: chain (periodic) or square:LxW (periodic L x W, L, W >= 2)",
          .applies = lanczos,
          .sample = "square:2x3",
          .value = "chain|square:LxW",
          .limits = "L, W >= 2, L*W <= 34"});
  t.number("--buffers", s.buffers, {2, 64},
           {.help = "--method lanczos --transport mpi: K round-robin receive buffers of the "
                    "remote mat-vec (2: double buffering)",
            .applies = over("mpi"),
            .note = " (round-robin receive buffers; 2 is double buffering)"});
  t.number("--chunk", s.chunk, {1, 1 << 30},
           {.help = "--method lanczos --transport mpi: doubles per message of the remote "
                    "mat-vec (capped at the block of 2^(n-m))",
            .applies = over("mpi"),
            .note = " (doubles per message)"});
  t.choice("--rma-sync", a.rma_sync, names<RmaSync>(),
           {.help = "--method lanczos --transport rma: fence (MPI_Put between two "
                    "MPI_Win_fence) or notify (passive target: put, flush, flag and "
                    "acknowledgement)",
            .applies = over("rma")});
}

namespace {

/// --lattice: chain, or square:LxW (L, W >= 2) into s.lattice, length and
/// width; throws InputError otherwise.
void parse_lattice(const std::string& text, SpinConfig& s) {
  if (parse<Lattice>(text) == Lattice::chain) {
    s.lattice = Lattice::chain;
    s.length = 0;
    s.width = 0;
    return;
  }
  const std::string expected = "chain or square:LxW with integers L, W >= 2";
  const std::string prefix = fmt::format("{}:", name(Lattice::square));
  if (!text.starts_with(prefix)) {
    throw InputError(fmt::format("--lattice '{}': expected {}", text, expected));
  }
  const std::string_view dims = std::string_view(text).substr(prefix.size());
  const std::size_t x = dims.find('x');
  int l = 0;
  int w = 0;
  if (x == std::string_view::npos || !core::parse_whole(dims.substr(0, x), l) ||
      !core::parse_whole(dims.substr(x + 1), w) || l < 2 || w < 2) {
    throw InputError(fmt::format("--lattice '{}': expected {}", text, expected));
  }
  if (static_cast<long long>(l) * w > kernels::tfim_max_sites) {
    throw InputError(fmt::format("--lattice '{}': {} sites, expected at most {} (2^n states)", text,
                                 static_cast<long long>(l) * w, kernels::tfim_max_sites));
  }
  s.lattice = Lattice::square;
  s.length = l;
  s.width = w;
}

}  // namespace

void validate_spin(const SolveArgs& a, SolveConfig& c) {
  if (parse<Method>(a.method) != Method::lanczos) {
    throw InputError(
        fmt::format("--method {} with --problem tfim: expected --method lanczos", a.method));
  }
  if (parse<Problem>(a.problem) != Problem::tfim) {
    throw InputError(
        fmt::format("--problem {} with --method lanczos: expected --problem tfim", a.problem));
  }
  c.method = Method::lanczos;
  c.problem = Problem::tfim;
  const auto lanczos_refuse = [](bool given, const std::string& what, std::string_view expected) {
    refuse(given, what, "--method lanczos", fmt::format("expected {}", expected));
  };
  lanczos_refuse(!a.global.empty() || !a.local.empty() || !a.dims.empty(),
                 "--global/--local/--dims", "--sites N (the problem size is 2^N states)");
  lanczos_refuse(given(a.threads), fmt::format("--threads {}", c.threads), "no --threads");
  lanczos_refuse(parse<Variant>(a.variant) != Variant::sync, "--variant " + a.variant,
                 "sync (the default)");
  lanczos_refuse(
      try_parse([&] { return comm::parse_hybrid_mode(a.hybrid); }) != comm::HybridMode::none,
      "--hybrid " + a.hybrid, "none (the default)");
  const std::optional<Progress> progress = parse_progress(a.progress);
  lanczos_refuse(!progress || progress->mode != Progress::Mode::none, "--progress " + a.progress,
                 "none (the default)");
  lanczos_refuse(!is_auto(a.pc), "--pc " + a.pc, "auto (Lanczos takes no preconditioner)");
  lanczos_refuse(c.shift != 0.0, fmt::format("--shift {}", c.shift), "0");
  lanczos_refuse(c.offset != 0.0, fmt::format("--offset {}", c.offset), "0");
  lanczos_refuse(c.copy, "--copy", "no --copy");
  lanczos_refuse(c.slow_rank != -1, fmt::format("--slow-rank {}", c.slow_rank), "-1");
  lanczos_refuse(c.noise_hz != 0.0, fmt::format("--noise-hz {}", c.noise_hz), "0");
  const std::optional<Transport> transport = parse<Transport>(a.transport);
  if (!transport || *transport == Transport::omp) {
    throw InputError(
        fmt::format("--transport '{}' with --method lanczos: expected one of mpi, "
                    "rma, shmem",
                    a.transport));
  }
  c.transport = *transport;
  if (c.transport == Transport::shmem && !par::shmem_available()) {
    throw InputError(
        "--transport shmem: this build of asyncsolve has no OpenSHMEM, expected mpi "
        "or rma");
  }
  SpinConfig& s = c.spin;
  s = a.spin.values;
  parse_lattice(a.spin.lattice, s);
  if (s.lattice == Lattice::square) {
    const int lw = s.length * s.width;
    if (given(a.spin.sites) && s.sites != lw) {
      throw InputError(
          fmt::format("--sites {} with --lattice {}: expected {} (L*W) or no "
                      "--sites",
                      s.sites, a.spin.lattice, lw));
    }
    s.sites = lw;
  }
  expect_at_least("--sites", s.sites, 2);
  if (s.sites > kernels::tfim_max_sites) {
    throw InputError(fmt::format(
        "--sites {}: 2^{} states are {:.0f} GiB per vector, expected at "
        "most {} sites",
        s.sites, s.sites, std::ldexp(8.0, s.sites) / 1073741824.0, kernels::tfim_max_sites));
  }
  expect_finite("--coupling", s.coupling);
  expect_finite("--field", s.field);
  expect_at_least("--buffers", s.buffers, 2,
                  " (round-robin receive buffers; 2 is double buffering)");
  expect_at_least("--chunk", s.chunk, 1, " (doubles per message)");
  const std::optional<RmaSync> rma_sync = parse<RmaSync>(a.spin.rma_sync);
  if (!rma_sync) {
    throw InputError(fmt::format("--rma-sync '{}': expected fence or notify", a.spin.rma_sync));
  }
  s.rma_sync = *rma_sync;
  if (!given(a.tol)) c.tol = 1e-10;
  expect(c.tol > 0.0 && std::isfinite(c.tol), "--tol", c.tol, "a positive number");
  expect_at_least("--max-iters", c.max_iters, 1, " with --method lanczos");
  c.allreduce = is_auto(a.allreduce) ? collectives::AllreduceAlgorithm{}
                                     : collectives::parse_allreduce(a.allreduce);
  expect_monitor_every(c.monitor, c.monitor_every_s, SolveConfig{}.monitor_every_s);
}

}  // namespace asyncsolve::app
