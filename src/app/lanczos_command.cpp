// `asyncsolve solve --method lanczos --problem tfim`: paper 004's SPIN
// benchmark, the ground-state energy of the transverse-field Ising model by
// Lanczos on 2^m ranks, the remote part of the mat-vec over --transport.
#include <mpi.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/kernels/lanczos.hpp"
#include "asyncsolve/kernels/spin_exchange.hpp"
#include "asyncsolve/kernels/tfim.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/version.hpp"
#include "commands.hpp"
#include "options_common.hpp"
#include "result_document.hpp"

namespace asyncsolve::app {
namespace {

/// Collective: the rank count and the sites leave n - m >= 1 local bits and
/// three vectors plus the exchange's buffers fit in every node's memory.
/// Throws InputError on every rank alike.
void check_spin_size(const SolveConfig& c, const par::Comm& comm, std::size_t exchange_bytes) {
  const int ranks = comm.size();
  const int n = c.spin.sites;
  if (!std::has_single_bit(static_cast<unsigned>(ranks))) {
    throw core::InputError(
        fmt::format("{} ranks with --method lanczos: the 2^{} states are "
                    "split by their high bits, expected a power of two "
                    "(1, 2, 4, 8, ...)",
                    ranks, n));
  }
  const int m = std::countr_zero(static_cast<unsigned>(ranks));
  if (n - m < 1) {
    throw core::InputError(
        fmt::format("--sites {} on {} ranks: {} local bits, expected at most "
                    "2^(n-1) = {} ranks (n - log2(ranks) >= 1)",
                    n, ranks, n - m, 1LL << (n - 1)));
  }
  const double block = std::ldexp(1.0, n - m);
  const par::NodeMemory memory =
      par::node_memory(comm, 3.0 * 8.0 * block + static_cast<double>(exchange_bytes));
  if (memory.need_bytes > 0.9 * memory.have_bytes) {
    throw core::InputError(fmt::format(
        "--sites {} on {} ranks: 2^{} states need {:.1f} GiB on one node (3 vectors and the "
        "{} buffers), which has {:.1f} GiB of memory; expected fewer sites or more nodes",
        n, ranks, n, memory.need_bytes / 1073741824.0, name(c.transport),
        memory.have_bytes / 1073741824.0));
  }
}

/// The kernels' transport of the solve's --transport (validation allowed
/// mpi, rma and shmem with lanczos).
kernels::SpinTransport spin_transport(Transport transport) {
  switch (transport) {
    case Transport::rma:
      return kernels::SpinTransport::rma;
    case Transport::shmem:
      return kernels::SpinTransport::shmem;
    case Transport::mpi:
    case Transport::omp:
      break;
  }
  return kernels::SpinTransport::mpi;
}

kernels::SpinLattice make_lattice(const SpinConfig& s) {
  return s.lattice == Lattice::chain ? kernels::make_chain(s.sites)
                                     : kernels::make_square(s.length, s.width);
}

nlohmann::ordered_json stats_json(const par::RankStats& s) {
  return {{"max", s.max}, {"mean", s.mean}, {"min", s.min}};
}

/// NaN and infinities become null in the document.
nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

/// --monitor's printer (on rank 0): iteration, energy and change, at most
/// every `every` seconds (and the first iteration).
std::function<void(const kernels::LanczosPoint&)> lanczos_monitor(double every) {
  auto last = std::make_shared<double>(-1e300);
  return [last, every](const kernels::LanczosPoint& p) {
    if (p.time_s - *last < every && p.iteration != 1) return;
    std::printf("  iteration %6ld  energy %.15g  change %.3e  %8.2f s\n", p.iteration, p.energy,
                p.change, p.time_s);
    std::fflush(stdout);
    *last = p.time_s;
  };
}

/// The document's `result`.
nlohmann::ordered_json result_json(const kernels::LanczosResult& result, const par::RankStats& time,
                                   const std::vector<double>& per_rank, std::optional<double> exact,
                                   double per_site) {
  std::vector<long long> iters;
  iters.reserve(per_rank.size());
  for (const double it : per_rank) iters.push_back(std::llround(it));
  return {{"converged", result.converged},
          {"reason", result.reason},
          {"detail", result.detail},
          {"iterations",
           {{"min", result.iterations},
            {"mean", static_cast<double>(result.iterations)},
            {"max", result.iterations},
            {"per_rank", iters}}},
          {"energy", result.energy},
          {"energy_per_site", per_site},
          {"exact_energy", exact ? nlohmann::json(*exact) : nlohmann::json(nullptr)},
          {"exact_method", exact ? "free fermions (periodic chain, even n)" : ""},
          {"relative_error", exact ? number_or_null(std::abs(result.energy - *exact) /
                                                    std::max(std::abs(*exact), 1e-300))
                                   : nlohmann::json(nullptr)},
          {"change", number_or_null(result.change)},
          {"residual_bound", number_or_null(result.residual_bound)},
          {"time_s", time.max},
          {"time_s_ranks", stats_json(time)},
          {"time_per_iteration_s",
           result.iterations > 0 ? time.max / static_cast<double>(result.iterations) : 0.0}};
}

/// The document's `history`: one point per Lanczos step.
nlohmann::json history_json(const kernels::LanczosResult& result) {
  nlohmann::json history = nlohmann::json::array();
  for (const auto& p : result.history) {
    history.push_back({{"rank", 0},
                       {"iteration", p.iteration},
                       {"time_s", p.time_s},
                       {"residual", number_or_null(p.change)},
                       {"energy", p.energy},
                       {"change", number_or_null(p.change)},
                       {"alpha", p.alpha},
                       {"beta", p.beta},
                       {"residual_bound", number_or_null(p.residual_bound)}});
  }
  return history;
}

}  // namespace

core::ExitCode run_lanczos(const SolveConfig& config, const par::Comm& world,
                           const par::Environment& env, const std::vector<std::string>& command) {
  const std::string started = core::iso8601_now();
  check_json_path(config.json_path, world);
  const SpinConfig& s = config.spin;
  kernels::SpinExchangeOptions xo;
  xo.transport = spin_transport(config.transport);
  xo.buffers = s.buffers;
  xo.chunk = static_cast<std::size_t>(s.chunk);
  xo.rma_sync = s.rma_sync;
  const int ranks = world.size();
  const int m = std::has_single_bit(static_cast<unsigned>(ranks))
                    ? std::countr_zero(static_cast<unsigned>(ranks))
                    : 0;
  const std::size_t block = s.sites - m >= 1 ? std::size_t{1} << (s.sites - m) : std::size_t{1};
  check_spin_size(config, world, kernels::spin_exchange_buffer_bytes(xo, m, block));

  const kernels::SpinLattice lattice = make_lattice(s);
  const kernels::TfimHamiltonian hamiltonian(lattice, s.coupling, s.field);
  auto exchange = kernels::make_spin_exchange(xo, world, block);
  const std::string allreduce = config.allreduce->name();
  auto reduce = collectives::make_allreduce(*config.allreduce, world);
  const kernels::SpinOperator op(hamiltonian, *exchange, world);

  kernels::LanczosOptions options;
  options.tol = config.tol;
  options.max_iters = config.max_iters;
  if (config.monitor && world.is_root()) options.monitor = lanczos_monitor(config.monitor_every_s);
  world.barrier();  // every rank starts the clock together
  const kernels::LanczosResult result = kernels::lanczos_ground_state(op, *reduce, options);
  exchange->free();

  // Summaries over ranks: every rank takes part in every reduction.
  const par::RankStats time = par::rank_stats(world, result.time_s);
  std::vector<std::pair<std::string, par::RankStats>> phases;
  for (std::size_t i = 0; i < result.phases.size(); ++i) {
    phases.emplace_back(result.phases.names()[i], par::rank_stats(world, result.phases.seconds(i)));
  }
  const std::vector<double> per_rank =
      par::gather_to_root(world, static_cast<double>(result.iterations));
  std::optional<double> exact;
  if (s.lattice == Lattice::chain && s.sites % 2 == 0) {
    exact = kernels::tfim_chain_ground_energy(s.sites, s.coupling, s.field);
  }
  const RunEnvironment e = describe_environment(world, env);
  if (config.transport == Transport::rma) warn_of_rma_crowding(world, nullptr);

  int write_failed = 0;
  if (world.is_root()) {
    const double n = s.sites;
    const double per_site = result.energy / n;
    const std::string transport =
        config.transport == Transport::mpi
            ? fmt::format("mpi ({} buffers, {} doubles per message)", s.buffers,
                          std::min<std::size_t>(xo.chunk, block))
        : config.transport == Transport::rma
            ? std::string(s.rma_sync == RmaSync::fence
                              ? "rma (MPI_Put + MPI_Win_fence)"
                              : "rma (MPI_Put + flush + flag, passive target)")
            : std::string("shmem (putmem_nbi + fence + flag)");
    std::string out = fmt::format("asyncsolve {}: lanczos over {}, {} rank{}, {} reduction\n",
                                  version, transport, ranks, ranks == 1 ? "" : "s", allreduce);
    const auto line = [&out](std::string_view key, const std::string& value) {
      out += fmt::format("  {:<10} {}\n", key, value);
    };
    line("problem", fmt::format("tfim {}, {} sites, {} bonds, 2^{} states, 2^{} per rank, J {}, "
                                "Gamma {} (Pauli matrices)",
                                lattice.name, s.sites, hamiltonian.bonds(), s.sites, s.sites - m,
                                s.coupling, s.field));
    line("result", fmt::format("{} ({}) after {} iterations in {:.3f} s",
                               result.converged ? "converged" : "NOT converged", result.reason,
                               result.iterations, time.max));
    if (!result.detail.empty()) line("breakdown", result.detail);
    std::string energy = fmt::format("E0 = {:.15g}, per site {:.15g}", result.energy, per_site);
    if (exact) {
      energy += fmt::format("; free fermions {:.15g} (relative difference {:.1e})", *exact,
                            std::abs(result.energy - *exact) / std::max(std::abs(*exact), 1e-300));
    }
    line("energy", energy);
    line("lanczos", fmt::format("last change {:.2e} (tolerance {:.1e}), residual bound {:.2e}, "
                                "no reorthogonalisation",
                                result.change, config.tol, result.residual_bound));
    std::string ph;
    for (const auto& [name, st] : phases) {
      ph += fmt::format("{}{} {:.3f}", ph.empty() ? "" : ", ", name, st.max);
    }
    line("phases", ph + " s (max over ranks)");
    line("exchange", fmt::format("{} partner{}, {} message{} and {:.1f} MiB sent per mat-vec per "
                                 "rank, {:.1f} MiB of buffers",
                                 m, m == 1 ? "" : "s", exchange->messages_per_matvec(),
                                 exchange->messages_per_matvec() == 1 ? "" : "s",
                                 static_cast<double>(exchange->bytes_per_matvec()) / 1048576.0,
                                 static_cast<double>(exchange->buffer_bytes()) / 1048576.0));
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    if (!config.json_path.empty()) {
      try {
        nlohmann::ordered_json doc = document_header("asyncsolve.result/1", command, started);
        doc["environment"] = environment_json(e);
        doc["problem"] = {{"name", "tfim"},
                          {"lattice", lattice.name},
                          {"sites", s.sites},
                          {"length", lattice.length},
                          {"width", lattice.width},
                          {"bonds", hamiltonian.bonds()},
                          {"coupling", s.coupling},
                          {"field", s.field},
                          {"operators", "pauli"},
                          {"hamiltonian", "J sum_<ij> Z_i Z_j + Gamma sum_i X_i"},
                          {"states", std::ldexp(1.0, s.sites)},
                          {"local_states", static_cast<double>(block)},
                          {"high_bits", m}};
        doc["method"] = {{"name", "lanczos"},
                         {"transport", name(config.transport)},
                         {"buffers", s.buffers},
                         {"chunk", s.chunk},
                         {"rma_sync", name(s.rma_sync)},
                         {"shmem_sync", "putmem_nbi+fence+flag"},
                         {"allreduce", allreduce},
                         {"tol", config.tol},
                         {"max_iters", config.max_iters},
                         {"reorthogonalization", "none"},
                         {"start_vector", "splitmix64 hash of the global state index"},
                         {"monitor", config.monitor},
                         {"monitor_every", config.monitor_every_s}};
        doc["result"] = result_json(result, time, per_rank, exact, per_site);
        nlohmann::ordered_json ph_json = nlohmann::ordered_json::object();
        for (const auto& [name, st] : phases) ph_json[name] = stats_json(st);
        doc["phases"] = ph_json;
        doc["stats"] = {{"messages_per_matvec", exchange->messages_per_matvec()},
                        {"bytes_per_matvec", exchange->bytes_per_matvec()},
                        {"buffer_bytes", exchange->buffer_bytes()},
                        {"matvecs", result.iterations}};
        doc["history"] = history_json(result);
        core::write_file_atomic(config.json_path, core::document_text(doc));
        std::printf("  %-10s %s\n", "json", config.json_path.c_str());
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "asyncsolve: error: %s\n", ex.what());
        write_failed = 1;
      }
    }
  }
  par::check_mpi(MPI_Bcast(&write_failed, 1, MPI_INT, 0, world.get()), "MPI_Bcast");
  if (write_failed != 0) return core::ExitCode::runtime_failure;
  return result.converged ? core::ExitCode::success : core::ExitCode::not_converged;
}

}  // namespace asyncsolve::app
