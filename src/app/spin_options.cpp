#include "spin_options.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/kernels/tfim.hpp"
#include "asyncsolve/par/shmem.hpp"

namespace asyncsolve::app {

using core::InputError;

void add_spin_options(CLI::App& solve, SolveConfig& c) {
  solve
      .add_option("--sites", c.spin.sites,
                  "--problem tfim: n lattice sites, 2^n states (2 <= n <= 34; with "
                  "--lattice square:LxW it must equal L*W)")
      ->default_str("16; L*W for square:LxW")
      ->each([&c](const std::string&) { c.spin.sites_given = true; });
  solve.add_option("--coupling", c.spin.coupling,
                   "--problem tfim: J of H = J sum_<ij> Z_i Z_j + Gamma sum_i X_i (Pauli "
                   "matrices; J > 0 antiferromagnetic)");
  solve.add_option("--field", c.spin.field, "--problem tfim: Gamma, the transverse field");
  solve.add_option("--lattice", c.spin.lattice,
                   "--problem tfim: chain (periodic) or square:LxW (periodic L x W, L, W >= 2)");
  solve.add_option("--buffers", c.spin.buffers,
                   "--method lanczos --transport mpi: K >= 2 round-robin receive buffers of the "
                   "remote mat-vec (2: double buffering)");
  solve.add_option("--chunk", c.spin.chunk,
                   "--method lanczos --transport mpi: doubles per message of the remote "
                   "mat-vec (>= 1; capped at the block of 2^(n-m))");
  solve.add_option("--rma-sync", c.spin.rma_sync,
                   "--method lanczos --transport rma: fence (MPI_Put between two "
                   "MPI_Win_fence) or notify (passive target: put, flush, flag and "
                   "acknowledgement)");
}

namespace {

/// "square:LxW" -> L, W (>= 2); throws InputError otherwise.
void parse_lattice(SpinConfig& s) {
  if (s.lattice == "chain") {
    s.length = 0;
    s.width = 0;
    return;
  }
  const std::string expected = "chain or square:LxW with integers L, W >= 2";
  if (!s.lattice.starts_with("square:")) {
    throw InputError(fmt::format("--lattice '{}': expected {}", s.lattice, expected));
  }
  const std::string_view dims = std::string_view(s.lattice).substr(7);
  const std::size_t x = dims.find('x');
  int l = 0;
  int w = 0;
  if (x == std::string_view::npos || !core::parse_whole(dims.substr(0, x), l) ||
      !core::parse_whole(dims.substr(x + 1), w) || l < 2 || w < 2) {
    throw InputError(fmt::format("--lattice '{}': expected {}", s.lattice, expected));
  }
  if (static_cast<long long>(l) * w > kernels::tfim_max_sites) {
    throw InputError(fmt::format("--lattice '{}': {} sites, expected at most {} (2^n states)",
                                 s.lattice, static_cast<long long>(l) * w,
                                 kernels::tfim_max_sites));
  }
  s.length = l;
  s.width = w;
}

}  // namespace

void validate_spin(SolveConfig& c, const SpinRaw& raw) {
  if (c.method != "lanczos") {
    throw InputError(
        fmt::format("--method {} with --problem tfim: expected --method lanczos", c.method));
  }
  if (c.problem != "tfim") {
    throw InputError(
        fmt::format("--problem {} with --method lanczos: expected --problem tfim", c.problem));
  }
  const auto refuse = [&](bool given, const std::string& what, std::string_view expected) {
    if (given) {
      throw InputError(fmt::format("{} with --method lanczos: expected {}", what, expected));
    }
  };
  refuse(raw.grid_given, "--global/--local/--dims", "--sites N (the problem size is 2^N states)");
  refuse(raw.threads_given, fmt::format("--threads {}", c.threads), "no --threads");
  refuse(c.variant != "sync", fmt::format("--variant {}", c.variant), "sync (the default)");
  refuse(c.hybrid != "none", fmt::format("--hybrid {}", c.hybrid), "none (the default)");
  refuse(c.progress != "none", fmt::format("--progress {}", c.progress), "none (the default)");
  refuse(c.pc != "auto", fmt::format("--pc {}", c.pc), "auto (Lanczos takes no preconditioner)");
  refuse(c.shift != 0.0, fmt::format("--shift {}", c.shift), "0");
  refuse(c.offset != 0.0, fmt::format("--offset {}", c.offset), "0");
  refuse(c.copy, "--copy", "no --copy");
  refuse(c.slow_rank != -1, fmt::format("--slow-rank {}", c.slow_rank), "-1");
  refuse(c.noise_hz != 0.0, fmt::format("--noise-hz {}", c.noise_hz), "0");
  if (c.transport != "mpi" && c.transport != "rma" && c.transport != "shmem") {
    throw InputError(
        fmt::format("--transport '{}' with --method lanczos: expected one of mpi, "
                    "rma, shmem",
                    c.transport));
  }
  if (c.transport == "shmem" && !par::shmem_available()) {
    throw InputError(
        "--transport shmem: this build of asyncsolve has no OpenSHMEM, expected mpi "
        "or rma");
  }
  SpinConfig& s = c.spin;
  parse_lattice(s);
  if (s.lattice != "chain") {
    const int lw = s.length * s.width;
    if (s.sites_given && s.sites != lw) {
      throw InputError(
          fmt::format("--sites {} with --lattice {}: expected {} (L*W) or no "
                      "--sites",
                      s.sites, s.lattice, lw));
    }
    s.sites = lw;
  }
  if (s.sites < 2) {
    throw InputError(fmt::format("--sites {}: expected an integer >= 2", s.sites));
  }
  if (s.sites > kernels::tfim_max_sites) {
    throw InputError(fmt::format(
        "--sites {}: 2^{} states are {:.0f} GiB per vector, expected at "
        "most {} sites",
        s.sites, s.sites, std::ldexp(8.0, s.sites) / 1073741824.0, kernels::tfim_max_sites));
  }
  if (!std::isfinite(s.coupling)) {
    throw InputError(fmt::format("--coupling {}: expected a finite number", s.coupling));
  }
  if (!std::isfinite(s.field)) {
    throw InputError(fmt::format("--field {}: expected a finite number", s.field));
  }
  if (s.buffers < 2) {
    throw InputError(
        fmt::format("--buffers {}: expected an integer >= 2 (round-robin receive "
                    "buffers; 2 is double buffering)",
                    s.buffers));
  }
  if (s.chunk < 1) {
    throw InputError(
        fmt::format("--chunk {}: expected an integer >= 1 (doubles per message)", s.chunk));
  }
  if (s.rma_sync != "fence" && s.rma_sync != "notify") {
    throw InputError(fmt::format("--rma-sync '{}': expected fence or notify", s.rma_sync));
  }
  if (!raw.tol_given) c.tol = 1e-10;
  if (!(c.tol > 0.0) || !std::isfinite(c.tol)) {
    throw InputError(fmt::format("--tol {}: expected a positive number", c.tol));
  }
  if (c.max_iters < 1) {
    throw InputError(
        fmt::format("--max-iters {}: expected an integer >= 1 with --method lanczos", c.max_iters));
  }
  if (c.allreduce != "auto") collectives::check_allreduce_name(c.allreduce);
  if (!(c.monitor_every_s >= 0.0) || !std::isfinite(c.monitor_every_s)) {
    throw InputError(
        fmt::format("--monitor-every {}: expected a number of seconds >= 0", c.monitor_every_s));
  }
}

}  // namespace asyncsolve::app
