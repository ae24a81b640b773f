#include "agreement.hpp"

#include <mpi.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::app {
namespace {

/// Appends "key=value\n" lines to a text.
class Writer {
 public:
  void operator()(std::string_view key, std::string_view value) {
    text_ += fmt::format("{}={}\n", key, value);
  }
  void operator()(std::string_view key, double value) { (*this)(key, fmt::format("{:a}", value)); }
  void operator()(std::string_view key, long long value) { (*this)(key, fmt::format("{}", value)); }
  void operator()(std::string_view key, long value) { (*this)(key, static_cast<long long>(value)); }
  void operator()(std::string_view key, int value) { (*this)(key, static_cast<long long>(value)); }
  void operator()(std::string_view key, bool value) {
    (*this)(key, std::string_view(value ? "true" : "false"));
  }
  void operator()(std::string_view key, const std::optional<grid::Int3>& value) {
    (*this)(key, value ? core::format_triple(*value) : std::string("-"));
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

void write_solve(Writer& w, const SolveConfig& c) {
  w("problem", name(c.problem));
  w("offset", c.offset);
  w("global", c.decomposition.global);
  w("local", c.decomposition.local);
  w("dims", c.decomposition.dims);
  w("method", name(c.method));
  w("variant", name(c.variant));
  w("transport", name(c.transport));
  w("halo", comm::halo_strategy_name(c.halo));
  w("allreduce", c.allreduce ? c.allreduce->name() : std::string("-"));
  w("progress", c.progress.name());
  w("tol", c.tol);
  w("max_iters", c.max_iters);
  w("max_time_s", c.max_time_s);
  w("check_every", c.check_every);
  w("halo_every", c.halo_every);
  w("copy", c.copy);
  w("monitor", c.monitor);
  w("monitor_every_s", c.monitor_every_s);
  w("json_path", c.json_path);
  w("max_in_flight", c.max_in_flight);
  w("final_sync", c.final_sync);
  w("idle", c.idle);
  w("kernel", name(c.kernel));
  w("threads", c.threads);
  w("hybrid", comm::hybrid_mode_name(c.hybrid));
  w("slow_rank", c.slow_rank);
  w("slow_factor", c.slow_factor);
  w("noise_us", c.noise_us);
  w("noise_hz", c.noise_hz);
  w("noise_seed", c.noise_seed);
  w("test_every", c.test_every);
  w("pc", name(c.pc.kind));
  w("pc_degree", c.pc.degree);
  w("pc_options", precond::pc_options_text(c.pc));
  w("overlap", c.pc.schwarz.overlap);
  w("local_solver", precond::local_solver_name(c.pc.schwarz.local_solver));
  w("coarse", precond::coarse_name(c.pc.schwarz.coarse));
  w("block_size", c.schwarz.block_size);
  w("coordinates", c.schwarz.coordinates);
  w("shift", c.shift);
  w("repeat_solves", c.repeat_solves);
  w("restart", c.restart);
  w("cgs_refinement", name(c.refinement));
  const SpinConfig& s = c.spin;
  w("spin.sites", s.sites);
  w("spin.coupling", s.coupling);
  w("spin.field", s.field);
  w("spin.lattice", name(s.lattice));
  w("spin.length", s.length);
  w("spin.width", s.width);
  w("spin.buffers", s.buffers);
  w("spin.chunk", s.chunk);
  w("spin.rma_sync", name(s.rma_sync));
  const SparseConfig& m = c.sparse;
  w("sparse.matrix_path", m.matrix_path);
  w("sparse.rhs_path", m.rhs_path);
  w("sparse.x0_path", m.x0_path);
  w("sparse.write_solution_path", m.write_solution_path);
  w("sparse.partition",
    fmt::format("{}:{}", sparse::name(m.partition.method), sparse::name(m.partition.weight)));
  w("sparse.scale", name(m.scale));
  w("sparse.force", m.force);
  w("sparse.assemble", m.assemble);
  w("sparse.matrix_memory_gib", m.matrix_memory_gib);
}

void write_bench_allreduce(Writer& w, const BenchAllreduceConfig& c) {
  std::string list;
  for (const auto& a : c.algorithms) list += a.name() + ",";
  w("algorithms", list);
  list.clear();
  for (const std::size_t b : c.sizes_bytes) list += fmt::format("{},", b);
  w("sizes_bytes", list);
  w("message_sizes", c.message_sizes);
  w("iterations", c.iterations);
  w("warmup", c.warmup);
  w("repeats", c.repeats);
  list.clear();
  for (const AllreduceMode m : c.modes) list += fmt::format("{},", name(m));
  w("modes", list);
  w("progress", c.progress.name());
  w("noise_global", std::optional<grid::Int3>(c.noise_global));
  list.clear();
  for (const NoiseSetting& n : c.noise) list += fmt::format("{:a}:{:a},", n.us, n.hz);
  w("noise", list);
  w("noise_allreduce", c.noise_allreduce.name());
  w("json_path", c.json_path);
}

void write_bench_stencil2d(Writer& w, const BenchStencil2dConfig& c) {
  std::string list;
  for (const int n : c.local_sizes) list += fmt::format("{},", n);
  w("local_sizes", list);
  w("radius", c.radius);
  w("iterations", c.iterations);
  w("warmup", c.warmup);
  w("repeats", c.repeats);
  w("transport_text", c.transport_text);
  w("variant_text", c.variant_text);
  list.clear();
  for (const Stencil2dRun& r : c.runs) list += r.name() + ",";
  w("runs", list);
  w("corrupt_corner", c.corrupt_corner);
  w("json_path", c.json_path);
}

void write_model_hybrid(Writer& w, const ModelHybridConfig& c) {
  w("threads", c.threads);
  w("reserved", c.reserved);
  w("f_comm", c.f_comm);
  w("f_comp_non", c.f_comp_non);
  w("f_comp_overlap", c.f_comp_overlap ? fmt::format("{:a}", *c.f_comp_overlap) : "-");
  w("fit_path", c.fit_path);
  w("non_ratio", c.non_ratio ? fmt::format("{:a}", *c.non_ratio) : "-");
  w("json_path", c.json_path);
}

}  // namespace

std::string canonical(const Command& command) {
  Writer w;
  w("kind", static_cast<int>(command.kind));
  switch (command.kind) {
    case Command::Kind::help:
    case Command::Kind::version:
      w("text", command.text);
      break;
    case Command::Kind::info:
      break;
    case Command::Kind::solve:
      write_solve(w, command.solve);
      break;
    case Command::Kind::bench_allreduce:
      write_bench_allreduce(w, command.bench_allreduce);
      break;
    case Command::Kind::bench_stencil2d:
      write_bench_stencil2d(w, command.bench_stencil2d);
      break;
    case Command::Kind::model_hybrid:
      write_model_hybrid(w, command.model_hybrid);
      break;
  }
  return w.take();
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

bool ranks_agree(const par::Comm& world, std::uint64_t hash) {
  // The largest hash and the largest complement (the smallest hash): equal
  // exactly when every rank has the same one.
  std::uint64_t both[2] = {hash, ~hash};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_UINT64_T, MPI_MAX, world.get()),
                 "MPI_Allreduce");
  return both[0] == hash && both[1] == ~hash;
}

std::string disagreement_message() {
  return "the ranks were started with different options (or in environments that resolve them "
         "differently): expected the same command line on every rank";
}

namespace {

/// A canonical value as a reader writes it (numbers are in hexadecimal
/// floating point there).
std::string readable(const std::string& value) {
  if (value.find("0x") != std::string::npos && value.find('p') != std::string::npos) {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end != nullptr && *end == '\0') return fmt::format("{}", v);
  }
  return value.empty() ? "(empty)" : value;
}

}  // namespace

std::string disagreement_message(const par::Comm& world, const std::string& text) {
  const std::string first = par::broadcast_from_root(world, text);
  // This rank's first line that differs from rank 0's.
  std::string mine;
  if (text != first) {
    std::size_t at = 0;
    while (at < text.size() && at < first.size() && text[at] == first[at]) ++at;
    const std::size_t line = text.rfind('\n', at == 0 ? 0 : at - 1);
    const std::size_t from = line == std::string::npos || at == 0 ? 0 : line + 1;
    const auto field = [from](const std::string& t) {
      const std::size_t end = t.find('\n', from);
      return t.substr(from, end == std::string::npos ? std::string::npos : end - from);
    };
    const std::string ours = field(text);
    const std::string theirs = field(first);
    const std::size_t eq = ours.find('=');
    const bool unparsed = text == unparsed_command || first == unparsed_command;
    if (unparsed || eq == std::string::npos || theirs.compare(0, eq + 1, ours, 0, eq + 1) != 0 ||
        ours.compare(0, eq, "kind") == 0) {
      mine = fmt::format("rank {} {} rank 0", world.rank(),
                         text == unparsed_command ? "could not parse its command line, unlike"
                         : unparsed               ? "parsed its command line, unlike"
                                                  : "runs another command than");
    } else {
      mine =
          fmt::format("rank {}'s {} is {} where rank 0's is {}", world.rank(), ours.substr(0, eq),
                      readable(ours.substr(eq + 1)), readable(theirs.substr(eq + 1)));
    }
  }
  // The lowest differing rank's line, on every rank.
  const std::string lowest = sparse::first_error(world, mine);
  if (lowest.empty()) return disagreement_message();  // the texts agree, the hashes not
  return fmt::format(
      "the ranks were started with different options (or in environments that resolve them "
      "differently): {}; expected the same command line on every rank",
      lowest);
}

}  // namespace asyncsolve::app
