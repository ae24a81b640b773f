// `asyncsolve solve --matrix FILE.mtx` and `--assemble`: every solver on a
// distributed CSR matrix. Builds the system (read and partitioned, or a
// model problem assembled), optionally scales it to a unit diagonal, checks
// what Jacobi needs (a non-zero diagonal; rho(|D^-1 (A - D)|) < 1 for the
// asynchronous variants unless --force), solves, and reports through the
// same summary and document as the structured solves, with the matrix and
// the partition in the document's "problem".
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/channel_tree.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/fault_injection.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/solvers/assemble.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/jacobi_csr.hpp"
#include "asyncsolve/solvers/jacobi_rho.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "asyncsolve/sparse/equilibrate.hpp"
#include "asyncsolve/sparse/load.hpp"
#include "commands.hpp"
#include "result_document.hpp"
#include "sparse_session.hpp"

namespace asyncsolve::app {
namespace {

/// --write-solution must be writable before anything is computed, and no
/// output may be a file the command reads or another output.
void check_output_paths(const SolveConfig& config, const par::Comm& comm) {
  const SparseConfig& s = config.sparse;
  std::string error;
  if (comm.is_root()) {
    try {
      if (!s.write_solution_path.empty())
        core::check_writable(s.write_solution_path, "--write-solution");
      const core::NamedPath inputs[] = {
          {"--matrix", s.matrix_path}, {"--rhs", s.rhs_path}, {"--x0", s.x0_path}};
      const core::NamedPath outputs[] = {{"--json", config.json_path},
                                         {"--write-solution", s.write_solution_path}};
      core::check_distinct_files(inputs, outputs);
    } catch (const core::InputError& e) {
      error = e.what();
    }
  }
  error = par::broadcast_from_root(comm, std::move(error));
  if (!error.empty()) throw core::InputError(error);
}

SparseProblem load_matrix(const SolveConfig& config, const par::Comm& world) {
  sparse::LoadOptions options;
  options.partition = config.sparse.partition;
  if (config.sparse.matrix_memory_gib > 0.0) {
    options.limits = {config.sparse.matrix_memory_gib * 1073741824.0, "--matrix-memory"};
  } else {
    options.limits = {0.0, "half of rank 0's memory; --matrix-memory sets it"};
  }
  if (!config.sparse.rhs_path.empty()) options.rhs = config.sparse.rhs_path;
  if (!config.sparse.x0_path.empty()) options.x0 = config.sparse.x0_path;
  SparseProblem p;
  p.loaded = sparse::load_system(world, config.sparse.matrix_path, options);
  sparse::LoadedSystem& l = *p.loaded;
  p.matrix = std::move(l.matrix);
  p.b = l.b;
  p.x0 = l.x0;
  p.name = "matrix";
  p.row_kind = "file row";
  p.row_base = 1;
  const sparse::MatrixMarketInfo& i = l.info;
  p.parameters["matrix"] = {
      {"file", config.sparse.matrix_path},
      {"rows", i.rows},
      {"cols", i.cols},
      {"entries", i.entries},
      {"nnz", p.matrix.global_nnz()},
      {"format", std::string(sparse::name(i.format))},
      {"field", std::string(sparse::name(i.field))},
      {"symmetry", std::string(sparse::name(i.symmetry))},
      {"duplicates_summed", i.duplicates},
      {"mirrored", i.mirrored},
      {"zeros_dropped", i.zeros_dropped},
      {"rhs", config.sparse.rhs_path.empty() ? "A*1" : config.sparse.rhs_path},
      {"x0", config.sparse.x0_path.empty() ? "0" : config.sparse.x0_path}};
  p.parameters["setup_s"] = {
      {"read", l.read_s}, {"partition", l.partition_s}, {"distribute", l.distribute_s}};
  return p;
}

SparseProblem assemble_problem(const SolveConfig& config, const par::Comm& world) {
  const auto problem =
      grid::make_problem(model_problem(config.problem), grid::ProblemOptions{config.offset});
  SparseProblem p;
  p.decomposition.emplace(grid::Decomposition::create(world, config.decomposition));
  solvers::AssembledSystem a = solvers::assemble(*problem, *p.decomposition, config.shift);
  p.matrix = std::move(a.matrix);
  p.b = std::move(a.b);
  p.x0 = std::move(a.x0);
  p.name = std::string(problem->name());
  p.parameters = problem->parameters();
  p.parameters["assembled"] = true;
  return p;
}

/// The partition's quality, the same on every rank.
nlohmann::json partition_json(const SolveConfig& config, const sparse::DistMatrix& m) {
  const sparse::PartitionMetrics& s = m.metrics();
  return {{"method", config.sparse.assemble ? std::string("grid")
                                            : sparse::format_partition(config.sparse.partition)},
          {"edge_cut", s.edge_cut},
          {"communication_volume", s.volume},
          {"messages", s.messages},
          {"max_rank_volume", s.max_rank_volume},
          {"max_neighbours", s.max_neighbours},
          {"rows_min", s.min_rows},
          {"rows_max", s.max_rows},
          {"row_imbalance", s.row_imbalance},
          {"nnz_imbalance", s.nnz_imbalance},
          {"interior_rows", s.interior_rows}};
}

/// Collective: the CSR operator's layouts, as ranks per layout of the
/// interior and of the boundary rows (each rank chooses its own: see
/// ops::choose_interior_layout), the same on every rank.
nlohmann::json operator_json(const par::Comm& comm, const ops::CsrOperator& op) {
  std::array<double, ops::interior_layout_names.size() + ops::boundary_layout_names.size()> ranks{};
  ranks[static_cast<std::size_t>(op.interior_layout())] = 1.0;
  ranks[ops::interior_layout_names.size() + static_cast<std::size_t>(op.boundary_layout())] = 1.0;
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, ranks.data(), static_cast<int>(ranks.size()),
                               MPI_DOUBLE, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  nlohmann::json interior = nlohmann::json::object();
  nlohmann::json boundary = nlohmann::json::object();
  for (std::size_t i = 0; i < ops::interior_layout_names.size(); ++i)
    interior[std::string(ops::interior_layout_names[i])] = std::llround(ranks[i]);
  for (std::size_t i = 0; i < ops::boundary_layout_names.size(); ++i) {
    boundary[std::string(ops::boundary_layout_names[i])] =
        std::llround(ranks[ops::interior_layout_names.size() + i]);
  }
  return {{"kind", "csr"}, {"interior_layout", interior}, {"boundary_layout", boundary}};
}

int transport_of(const SolveConfig& config) {
  return config.transport == Transport::rma     ? AS_TRANSPORT_RMA
         : config.transport == Transport::shmem ? AS_TRANSPORT_SHMEM
                                                : AS_TRANSPORT_MPI;
}

/// Jacobi (sync, async, racy) on the CSR system. Collective.
Solved solve_jacobi(const SolveConfig& config, SparseProblem& p, solvers::CsrSystem& system,
                    comm::SparseHaloExchange& halo) {
  const par::Comm& comm = p.matrix.comm();
  const bool asynchronous = config.variant != Variant::sync;
  const collectives::AllreduceAlgorithm& allreduce = *config.allreduce;
  auto reduction = collectives::make_allreduce(
      asynchronous ? collectives::AllreduceAlgorithm{} : allreduce, comm);
  par::FaultInjector faults(fault_options(config), comm.rank());
  const solvers::JacobiOptions options = jacobi_options(config, comm, faults);
  Solved out;
  if (asynchronous) {
    const int transport = transport_of(config);
    auto convergence = collectives::make_convergence_allreduce(
        allreduce, comm, solvers::async_convergence_values, transport);
    solvers::AsyncJacobiOptions async;
    async.base = options;
    async.racy = config.variant == Variant::racy;
    async.max_in_flight = config.max_in_flight;
    async.final_sync = config.final_sync;
    async.progress_planes = config.progress.every;  // poll:K; 0 otherwise
    async.transport = transport;
    out.result = solvers::jacobi_async(system, p.matrix, halo, *reduction, *convergence, async);
    convergence->free();
  } else {
    out.result = solvers::jacobi_sync(system, p.matrix, halo, *reduction, options);
  }
  out.halo = std::string(halo.name());
  out.allreduce = allreduce.name();
  return out;
}

/// cg, pcg1, pcg2, pcg-overlap, pipecg on the CSR system. Collective.
Solved solve_krylov(const SolveConfig& config, SparseProblem& p, solvers::CsrSystem& system,
                    comm::SparseHaloExchange& halo) {
  const par::Comm& comm = p.matrix.comm();
  par::FaultInjector faults(fault_options(config), comm.rank());
  const solvers::KrylovOptions options = sparse_krylov_options(config, comm, faults);
  Solved out;
  out.result = solvers::krylov_solve(system, p.matrix, halo, options);
  out.halo = std::string(halo.name());
  out.allreduce = options.allreduce.name();
  return out;
}

/// max |x - exact| where the exact solution is known: all ones for a
/// matrix file without --rhs, the problem's exact values when assembled.
std::optional<double> error_of(const SolveConfig& config, const SparseProblem& p,
                               const grid::Field& x) {
  const par::Comm& comm = p.matrix.comm();
  const int n = p.matrix.local_rows();
  double err = 0.0;
  if (p.loaded) {
    if (!p.loaded->exact_known) return std::nullopt;
    for (int i = 0; i < n; ++i) err = std::max(err, std::abs(x.origin()[i] - 1.0));
  } else {
    const auto problem =
        grid::make_problem(model_problem(config.problem), grid::ProblemOptions{config.offset});
    const grid::Decomposition& d = *p.decomposition;
    if (!problem->exact_value({1, 1, 1}, d.global())) return std::nullopt;
    const grid::Int3& local = d.local();
    const grid::Int3& off = d.offset();
    int at = 0;
    for (int k = 0; k < local[2]; ++k)
      for (int j = 0; j < local[1]; ++j)
        for (int i = 0; i < local[0]; ++i, ++at) {
          const double exact =
              *problem->exact_value({off[0] + i + 1, off[1] + j + 1, off[2] + k + 1}, d.global());
          err = std::max(err, std::abs(x.origin()[at] - exact));
        }
  }
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  return err;
}

}  // namespace

solvers::KrylovOptions sparse_krylov_options(const SolveConfig& config, const par::Comm& comm,
                                             par::FaultInjector& faults) {
  if (config.progress.mode == Progress::Mode::thread) {
    throw core::InputError(
        fmt::format("--progress {} with --matrix or --assemble: expected none "
                    "(the sparse Krylov solves poll through --test-every)",
                    config.progress.name()));
  }
  return krylov_options(config, comm, faults);
}

SparseSetup setup_sparse(const SolveConfig& config, SparseProblem& p) {
  SparseSetup out;
  const par::Comm& comm = p.matrix.comm();
  const bool jacobi = !is_krylov(config);
  const std::span<const std::int64_t> row_names =
      p.loaded ? std::span<const std::int64_t>(p.loaded->file_rows)
               : std::span<const std::int64_t>();
  const std::string& row_kind = p.row_kind;
  const std::string what = p.decomposition ? "--assemble" : config.sparse.matrix_path;

  // --scale unit-diagonal: A <- S A S, b <- S b, x0 <- S^-1 x0, S = |D|^-1/2.
  std::vector<double>& s = out.scale;
  if (config.sparse.scale == Scale::unit_diagonal) {
    ops::CsrOperator unscaled(p.matrix);
    const solvers::DiagonalCheck d = solvers::smallest_diagonal(p.matrix, unscaled, row_names);
    double smallest_abs = 1e300;
    for (const double v : unscaled.diagonal()) smallest_abs = std::min(smallest_abs, std::abs(v));
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &smallest_abs, 1, MPI_DOUBLE, MPI_MIN, comm.get()),
                   "MPI_Allreduce");
    if (smallest_abs == 0.0) {
      throw core::InputError(
          fmt::format("--scale unit-diagonal: a diagonal entry is zero (the "
                      "smallest is {} on {} {}); expected a non-zero diagonal",
                      d.value, row_kind, d.row + p.row_base));
    }
    for (const double v : unscaled.diagonal()) s.push_back(1.0 / std::sqrt(std::abs(v)));
    p.matrix.scale_symmetric(s);
    for (std::size_t i = 0; i < s.size(); ++i) {
      p.b[i] *= s[i];
      p.x0[i] /= s[i];
    }
  }
  // A <- 2^a A, b <- 2^c b, x0 <- 2^(c - a) x0, exactly: no inner product of
  // the solve over- or underflows for a system scaled far from 1.
  out.powers = sparse::equilibrate(p.matrix, p.b, p.x0);
  const double t_operator = core::now_s();
  out.system = solvers::make_csr_system(p.matrix, p.b, p.x0);
  solvers::CsrSystem& system = out.system;
  // The operator's build (interior and boundary blocks, SELL-8): paid once
  // per matrix, as PETSc's assembly; bench/peers/run_pc.py counts it.
  p.parameters["setup_s"]["operator"] = par::max_over_ranks(comm, core::now_s() - t_operator);
  p.parameters["operator"] = operator_json(comm, system.op);

  nlohmann::json& jacobi_check = out.jacobi_check;
  if (jacobi) {
    // Jacobi divides by the diagonal; asynchronous Jacobi converges for every
    // delay pattern iff rho(|D^-1 (A - D)|) < 1 (Chazan-Miranker).
    const solvers::DiagonalCheck d = solvers::smallest_diagonal(p.matrix, system.op, row_names);
    double zero = 0.0;
    for (const double v : system.op.diagonal()) zero = std::max(zero, v == 0.0 ? 1.0 : 0.0);
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &zero, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
                   "MPI_Allreduce");
    if (zero > 0.0) {
      throw core::InputError(
          fmt::format("{}: a zero diagonal entry: Jacobi divides by the "
                      "diagonal; expected every a_ii != 0 (the smallest is "
                      "{} on {} {})",
                      what, d.value, row_kind, d.row + p.row_base));
    }
    const solvers::JacobiRho rho = solvers::estimate_jacobi_rho(p.matrix, system.op);
    jacobi_check = {{"rho_estimate", rho.estimate},
                    {"rho_upper_bound", rho.upper_bound},
                    {"power_iterations", rho.iterations},
                    {"forced", config.sparse.force}};
    if (comm.is_root()) {
      std::printf(
          "asyncsolve: rho(|D^-1 (A - D)|) ~ %.6f (upper bound %.6f, %d power "
          "iterations): asynchronous Jacobi %s\n",
          rho.estimate, rho.upper_bound, rho.iterations,
          rho.estimate < 1.0 ? "converges for every delay pattern"
                             : "is not guaranteed to converge");
      std::fflush(stdout);
    }
    if (config.variant != Variant::sync && !(rho.estimate < 1.0) && !config.sparse.force) {
      throw core::InputError(fmt::format(
          "--variant {}: rho(|D^-1 (A - D)|) is about {:.6f} >= 1, so asynchronous Jacobi may "
          "diverge (Chazan-Miranker); expected a matrix with rho < 1 (try --scale unit-diagonal "
          "or a Krylov method), or --force to run anyway",
          name(config.variant), rho.estimate));
    }
  }

  // Sync Jacobi over rma or shmem exchanges through channels; otherwise (and
  // for the true residual of the asynchronous variants) the --halo strategy.
  const int transport = transport_of(config);
  out.halo = jacobi && config.variant == Variant::sync && transport != AS_TRANSPORT_MPI
                 ? comm::make_sparse_channel_halo_exchange(p.matrix, transport)
                 : comm::make_sparse_halo_exchange(config.halo, p.matrix);
  return out;
}

Solved solve_sparse(const SolveConfig& config, SparseProblem& p, SparseSetup& setup) {
  solvers::CsrSystem& system = setup.system;
  Solved solved = is_krylov(config) ? solve_krylov(config, p, system, *setup.halo)
                                    : solve_jacobi(config, p, system, *setup.halo);
  // Back to the unscaled unknowns: x = S 2^(a - c) y.
  setup.powers.unscale({system.x.origin(), static_cast<std::size_t>(p.matrix.local_rows())});
  const std::vector<double>& s = setup.scale;
  for (std::size_t i = 0; i < s.size(); ++i) system.x.origin()[i] *= s[i];
  return solved;
}

RunProblem sparse_run_problem(const SolveConfig& config, const SparseProblem& p,
                              const SparseSetup& setup) {
  const par::Comm& comm = p.matrix.comm();
  RunProblem rp;
  rp.name = p.name;
  const std::int64_t rows = p.matrix.global_rows();
  const auto clamp = [](std::int64_t v) {
    return static_cast<int>(std::min<std::int64_t>(v, std::numeric_limits<int>::max()));
  };
  if (p.decomposition) {
    rp.global = p.decomposition->global();
    rp.local = p.decomposition->local();
    rp.dims = p.decomposition->dims();
  } else {
    rp.global = {clamp(rows), 1, 1};
    rp.local = {p.matrix.local_rows(), 1, 1};
    rp.dims = {comm.size(), 1, 1};
  }
  rp.local_min = {clamp(p.matrix.metrics().min_rows), 1, 1};
  rp.local_max = {clamp(p.matrix.metrics().max_rows), 1, 1};
  if (p.decomposition) {
    rp.local_min = rp.local;
    rp.local_max = rp.local;
    par::check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, rp.local_min.data(), 3, MPI_INT, MPI_MIN, comm.get()),
        "MPI_Allreduce");
    par::check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, rp.local_max.data(), 3, MPI_INT, MPI_MAX, comm.get()),
        "MPI_Allreduce");
  }
  rp.parameters = p.parameters;
  rp.parameters["partition"] = partition_json(config, p.matrix);
  rp.parameters["scale"] = std::string(name(config.sparse.scale));
  rp.parameters["equilibration"] = {{"matrix_exponent", setup.powers.matrix_exponent},
                                    {"rhs_exponent", setup.powers.rhs_exponent}};
  rp.parameters["jacobi_check"] = setup.jacobi_check;
  return rp;
}

core::ExitCode run_sparse_solve(const SolveConfig& config, const par::Comm& world,
                                const par::Environment& env,
                                const std::vector<std::string>& command) {
  const std::string started = core::iso8601_now();
  check_json_path(config.json_path, world);
  check_output_paths(config, world);
  if (config.slow_rank >= world.size()) {
    throw core::InputError(fmt::format("--slow-rank {}: expected a rank below {} (or -1)",
                                       config.slow_rank, world.size()));
  }
  SparseProblem p =
      config.sparse.assemble ? assemble_problem(config, world) : load_matrix(config, world);
  const par::Comm& comm = p.matrix.comm();
  SparseSetup setup = setup_sparse(config, p);
  Solved solved = solve_sparse(config, p, setup);
  setup.halo->close();
  solvers::CsrSystem& system = setup.system;
  solved.result.error_inf = error_of(config, p, system.x);
  if (p.loaded && !config.sparse.write_solution_path.empty()) {
    sparse::write_solution(
        p.matrix, p.loaded->file_rows,
        std::span<const double>(system.x.origin(), static_cast<std::size_t>(p.matrix.local_rows())),
        config.sparse.write_solution_path);
  }

  const RunSummary summary = summarise(comm, solved, false);
  const RunProblem rp = sparse_run_problem(config, p, setup);
  RunEnvironment e = describe_environment(comm, env);
  const core::ExitCode code =
      report_solve(comm, command, started, e, rp, config, summary, solved.result);
  p.matrix.free();
  if (p.decomposition) p.decomposition->free();
  return code;
}

}  // namespace asyncsolve::app
