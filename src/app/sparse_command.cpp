// `asyncsolve solve --matrix FILE.mtx` and `--assemble`: every solver on a
// distributed CSR matrix. Builds the system (read and partitioned, or a
// model problem assembled), optionally scales it to a unit diagonal, checks
// whether the matrix is symmetric (the CG family refuses one that is not,
// unless --force), checks what Jacobi needs (a non-zero diagonal;
// rho(|D^-1 (A - D)|) < 1 for the asynchronous variants unless --force),
// solves, and reports through the same summary and document as the
// structured solves, with the matrix and the partition in its "problem".
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/channel_tree.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/core/error.hpp"
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
#include "asyncsolve/solvers/norm.hpp"
#include "asyncsolve/solvers/schwarz_iteration.hpp"
#include "asyncsolve/sparse/equilibrate.hpp"
#include "asyncsolve/sparse/load.hpp"
#include "asyncsolve/sparse/symmetry.hpp"
#include "commands.hpp"
#include "memory_check.hpp"
#include "near_null_input.hpp"
#include "result_document.hpp"
#include "solve_advice.hpp"
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
      // Every file the command reads, --coordinates included.
      const core::NamedPath inputs[] = {{"--matrix", s.matrix_path},
                                        {"--rhs", s.rhs_path},
                                        {"--x0", s.x0_path},
                                        {"--coordinates", config.schwarz.coordinates}};
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
  p.row_names = {l.file_rows, sparse::RowOrigin::file};
  p.matrix = std::move(l.matrix);
  p.b = l.b;
  p.x0 = l.x0;
  p.name = "matrix";
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

/// Refuses, as bad input, a model problem whose assembled matrix would not
/// fit in a node's memory (one clear line, not an allocation failure or the
/// OOM killer on one rank). A lower bound: each stored entry (7 or 27 a
/// row) in the distributed matrix and the operator's copy (8-byte value,
/// 4-byte column), and eight vectors. Collective; one verdict everywhere.
void check_assembly_memory(const SolveConfig& config, const grid::Decomposition& decomposition) {
  const grid::Int3& n = decomposition.local();
  const double rows = 1.0 * n[0] * n[1] * n[2];
  const double entries = config.problem == Problem::laplace27 ? 27.0 : 7.0;
  refuse_grid_over_memory(config, decomposition, rows * (2.0 * 12.0 * entries + 8.0 * 8.0),
                          " with --assemble: the assembled matrix needs at least");
}

SparseProblem assemble_problem(const SolveConfig& config, const par::Comm& world) {
  const auto problem =
      grid::make_problem(model_problem(config.problem), grid::ProblemOptions{config.offset});
  SparseProblem p;
  p.decomposition.emplace(grid::Decomposition::create(world, config.decomposition));
  check_assembly_memory(config, *p.decomposition);
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
Solved solve_jacobi(const SolveConfig& config, SparseProblem& p, SparseSetup& setup) {
  solvers::CsrSystem& system = setup.system;
  comm::SparseHaloExchange& halo = *setup.halo;
  const par::Comm& comm = p.matrix.comm();
  const bool asynchronous = config.variant != Variant::sync;
  const collectives::AllreduceAlgorithm& allreduce = *config.allreduce;
  auto reduction = collectives::make_allreduce(
      asynchronous ? collectives::AllreduceAlgorithm{} : allreduce, comm);
  par::FaultInjector faults(fault_options(config), comm.rank());
  solvers::JacobiOptions options = jacobi_options(config, comm, faults);
  if (setup.jacobi_check.is_object() && setup.jacobi_check.value("verdict", "") == "below_one") {
    options.stagnation_span = std::max(options.stagnation_span, p.matrix.global_rows());
  }
  Solved out;
  if (asynchronous) {
    const int transport = transport_of(config);
    auto convergence = collectives::make_convergence_allreduce(
        allreduce, comm, solvers::async_convergence_values, transport);
    const solvers::AsyncJacobiOptions async = async_jacobi_options(config, options, transport);
    const auto progress = start_progress_thread(config, comm);
    out.result = solvers::jacobi_async(system, p.matrix, halo, *reduction, *convergence, async);
    stop_progress_thread(progress.get(), out);
    convergence->free();
  } else {
    out.result = solvers::jacobi_sync(system, p.matrix, halo, *reduction, options);
  }
  out.halo = std::string(halo.name());
  out.allreduce = allreduce.name();
  return out;
}

/// The Schwarz iteration (sync, async, racy) on the CSR system. Collective.
Solved solve_schwarz(const SolveConfig& config, SparseProblem& p, solvers::CsrSystem& system,
                     comm::SparseHaloExchange& halo) {
  const par::Comm& comm = p.matrix.comm();
  const bool asynchronous = config.variant != Variant::sync;
  const collectives::AllreduceAlgorithm& allreduce = *config.allreduce;
  auto reduction = collectives::make_allreduce(
      asynchronous ? collectives::AllreduceAlgorithm{} : allreduce, comm);
  par::FaultInjector faults(fault_options(config), comm.rank());
  solvers::SchwarzIterationOptions options;
  options.async =
      async_jacobi_options(config, jacobi_options(config, comm, faults), transport_of(config));
  options.asynchronous = asynchronous;
  options.schwarz = config.pc.schwarz;
  options.strategy = config.halo;
  // Two levels: the near-null space from the block size and coordinates.
  precond::PcSettings coarse = config.pc;
  if (config.pc.schwarz.coarse != precond::CoarseKind::none && p.row_names.named()) {
    add_near_null_space(comm, config.schwarz, config.sparse.matrix_path, p.matrix.global_rows(),
                        p.row_names.rows, coarse);
    options.near_null = coarse.near_null.get();
  }
  std::unique_ptr<collectives::NonblockingAllreduce> convergence;
  if (asynchronous) {
    convergence = collectives::make_convergence_allreduce(
        allreduce, comm, solvers::async_convergence_values, options.async.transport);
  }
  Solved out;
  const auto progress = start_progress_thread(config, comm);
  out.result =
      solvers::schwarz_solve(system, p.matrix, halo, *reduction, convergence.get(), options);
  stop_progress_thread(progress.get(), out);
  if (convergence) convergence->free();
  out.halo = std::string(halo.name());
  out.allreduce = allreduce.name();
  return out;
}

/// cg, pcg1, pcg2, pcg-overlap, pipecg on the CSR system. Collective.
Solved solve_krylov(const SolveConfig& config, SparseProblem& p, solvers::CsrSystem& system,
                    comm::SparseHaloExchange& halo) {
  const par::Comm& comm = p.matrix.comm();
  par::FaultInjector faults(fault_options(config), comm.rank());
  const solvers::KrylovOptions options = sparse_krylov_options(config, p, faults);
  Solved out;
  try {
    out.result = solvers::krylov_solve(system, p.matrix, halo, options);
  } catch (const precond::NotPositiveDefinite& e) {  // on every rank alike
    throw core::InputError(not_positive_definite(e));
  }
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
    for (int i = 0; i < n; ++i) err = std::max(err, solvers::error_term(x.origin()[i], 1.0));
  } else {
    if (config.shift != 0.0) return std::nullopt;  // (A + S I) x = b: not A's solution
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
          err = std::max(err, solvers::error_term(x.origin()[at], exact));
        }
  }
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  return err;
}

/// What is known of A's symmetry (solve_advice.hpp): symmetric for a model
/// problem and a file stored symmetric; unknown for a caller's matrix.
Symmetry symmetry_of(const SparseProblem& p) {
  if (p.decomposition) return Symmetry::symmetric;
  if (!p.loaded) return Symmetry::unknown;
  switch (p.loaded->info.symmetry) {
    case sparse::MmSymmetry::symmetric:
      return Symmetry::symmetric;
    case sparse::MmSymmetry::skew_symmetric:
      return Symmetry::nonsymmetric;
    case sparse::MmSymmetry::general:
      break;
  }
  return Symmetry::unknown;
}

/// A diagonal entry of zero, named by its row as the user knows it: the
/// first one, or none. Collective.
std::optional<std::string> zero_diagonal(const SparseProblem& p, const ops::CsrOperator& op) {
  const solvers::DiagonalCheck d =
      solvers::smallest_diagonal(p.matrix, op, p.row_names.rows, solvers::DiagonalOrder::magnitude);
  if (d.value != 0.0) return std::nullopt;
  return p.row_names.name(d.row);
}

/// --scale unit-diagonal: A <- S A S, b <- S b, x0 <- S^-1 x0 with
/// S = |D|^-1/2; returns S's entries (none without the option). Collective.
std::vector<double> scale_to_unit_diagonal(const SolveConfig& config, SparseProblem& p) {
  std::vector<double> s;
  if (config.sparse.scale != Scale::unit_diagonal) return s;
  ops::CsrOperator unscaled(p.matrix);
  if (const auto row = zero_diagonal(p, unscaled)) {
    throw core::InputError(
        fmt::format("--scale unit-diagonal: a_ii = 0 on {}; expected a non-zero diagonal", *row));
  }
  for (const double v : unscaled.diagonal()) s.push_back(1.0 / std::sqrt(std::abs(v)));
  p.matrix.scale_symmetric(s);
  for (std::size_t i = 0; i < s.size(); ++i) {
    p.b[i] *= s[i];
    p.x0[i] /= s[i];
  }
  return s;
}

/// What Jacobi needs, checked before it runs: a non-zero diagonal (it
/// divides by it) and, for the asynchronous variants, rho(|D^-1 (A - D)|)
/// < 1 proven (Chazan-Miranker: then it converges for every delay
/// pattern) unless --force. Prints what the bounds prove; returns the
/// document's "jacobi_check". Collective.
nlohmann::json check_jacobi(const SolveConfig& config, const SparseProblem& p,
                            const solvers::CsrSystem& system) {
  if (const auto row = zero_diagonal(p, system.op)) {
    throw core::InputError(
        fmt::format("{}: a zero diagonal entry, a_ii = 0 on {}: Jacobi divides by the diagonal; "
                    "expected every a_ii != 0",
                    p.decomposition ? "--assemble" : config.sparse.matrix_path, *row));
  }
  const solvers::JacobiRho rho = solvers::estimate_jacobi_rho(p.matrix, system.op);
  check_async_rho(rho, config.variant, config.sparse.force, symmetry_of(p));
  if (p.matrix.comm().is_root()) {
    std::printf("%s\n", rho_line(rho, config.variant).c_str());
    std::fflush(stdout);
  }
  return {{"rho_estimate", rho.estimate},
          {"rho_upper_bound", rho.upper_bound},
          {"rho_lower_bound", rho.lower_bound},
          {"verdict", std::string(solvers::rho_verdict_name(rho.verdict))},
          {"proof", std::string(solvers::rho_proof_name(rho.proof))},
          {"statement", rho_statement(rho)},
          {"power_iterations", rho.iterations},
          {"forced", config.sparse.force}};
}

/// Collective: is A = A^T? problem.symmetry of the document (the summary
/// says it too). Throws core::InputError for a matrix that is not, with a
/// method of the CG family, unless --force.
nlohmann::json symmetry_json(const SolveConfig& config, const sparse::DistMatrix& matrix,
                             bool jacobi) {
  const double t0 = core::now_s();
  const sparse::Symmetry symmetry = sparse::check_symmetry(matrix);
  if (!jacobi && solvers::needs_symmetric_matrix(krylov_method(config.method)) &&
      !symmetry.symmetric() && !config.sparse.force) {
    throw core::InputError(fmt::format(
        "--method {}: the matrix is not symmetric ({}: above {:.0e}) and the CG family needs "
        "A = A^T; expected --method gmres or bicgstab (or --force to run anyway)",
        name(config.method), symmetry.statement(), symmetry.tolerance));
  }
  refuse_cholesky_if_nonsymmetric(config.pc, config.method == Method::schwarz, symmetry,
                                  config.sparse.force);
  return {{"symmetric", symmetry.symmetric()},
          {"structural", symmetry.structural},
          {"max_asymmetry", symmetry.max_asymmetry},
          {"max_scaled_asymmetry", symmetry.max_scaled_asymmetry},
          {"unmatched_entries", symmetry.unmatched},
          {"tolerance", symmetry.tolerance},
          {"check_s", par::max_over_ranks(matrix.comm(), core::now_s() - t0)},
          {"forced", config.sparse.force}};
}

/// The problem as the summary and the document describe it. Collective.
RunProblem run_problem(const SolveConfig& config, const SparseProblem& p,
                       const sparse::PowerOfTwoScaling& powers, nlohmann::json jacobi_check) {
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
  rp.parameters["equilibration"] = {{"matrix_exponent", powers.matrix_exponent},
                                    {"rhs_exponent", powers.rhs_exponent}};
  rp.parameters["jacobi_check"] = std::move(jacobi_check);
  return rp;
}

/// The hints of a finished solve: a method that fits where Jacobi
/// diverged, a graph partitioner where the block partition exchanges much.
std::vector<std::string> hints_of(const SolveConfig& config, const SparseProblem& p,
                                  const solvers::SolveResult& result) {
  std::vector<std::string> hints;
  if (auto h = divergence_hint(config, result, symmetry_of(p))) hints.push_back(std::move(*h));
  if (result.reason == solvers::StopReason::unconfirmed && result.true_residual > 0.0 &&
      !std::isnan(result.scaled_true_residual)) {
    // --tol is both the scaled system's stop and the given system's
    // verdict: a smaller one moves both, so the hint cannot be a --tol.
    hints.push_back(fmt::format(
        "the scaled system's residual understates this system's by a factor of {:.1e}: solve "
        "without --scale (a preconditioner that scales rows, such as --pc jacobi, helps the "
        "same systems)",
        result.true_residual / result.scaled_true_residual));
  }
  if (p.loaded) {
    const sparse::DistMatrix& m = p.matrix;
    if (auto h = partition_hint(config.sparse.partition, m.metrics(), m.global_rows(),
                                m.comm().size())) {
      hints.push_back(std::move(*h));
    }
  }
  return hints;
}

}  // namespace

solvers::KrylovOptions sparse_krylov_options(const SolveConfig& config, const SparseProblem& p,
                                             par::FaultInjector& faults) {
  solvers::KrylovOptions options = krylov_options(config, p.matrix.comm(), faults);
  options.row_names = p.row_names;  // messages name the user's rows
  const bool block_aware = config.pc.kind == precond::PcKind::boomeramg ||
                           config.pc.kind == precond::PcKind::additive_schwarz;
  if (block_aware && p.row_names.named()) {
    add_near_null_space(p.matrix.comm(), config.schwarz, config.sparse.matrix_path,
                        p.matrix.global_rows(), p.row_names.rows, options.pc);
  }
  if (config.progress.mode == Progress::Mode::thread) {
    throw core::InputError(
        fmt::format("--progress {} with --matrix or --assemble: expected none "
                    "(the sparse Krylov solves poll through --test-every)",
                    config.progress.name()));
  }
  return options;
}

SparseSetup setup_sparse(const SolveConfig& config, SparseProblem& p) {
  SparseSetup out;
  const par::Comm& comm = p.matrix.comm();
  const bool jacobi = config.method == Method::jacobi;
  out.warnings = check_rhs(config, p);
  out.empty_row = check_empty_rows(config, p);
  if (!out.empty_row.empty()) out.warnings.push_back(out.empty_row);
  for (const double v : p.x0) out.x0_max = std::max(out.x0_max, std::abs(v));
  out.x0_max = par::max_over_ranks(comm, out.x0_max);
  out.scale = scale_to_unit_diagonal(config, p);
  // A <- 2^a A, b <- 2^c b, x0 <- 2^(c - a) x0, exactly: no inner product of
  // the solve over- or underflows for a system scaled far from 1.
  out.powers = sparse::equilibrate(p.matrix, p.b, p.x0);
  p.row_names.matrix_exponent = out.powers.matrix_exponent;  // messages quote A as given
  const double t_operator = core::now_s();
  out.system = solvers::make_csr_system(p.matrix, p.b, p.x0);
  // The operator's build (interior and boundary blocks, SELL-8): paid once
  // per matrix, as PETSc's assembly; bench/peers/run_pc.py counts it.
  p.parameters["setup_s"]["operator"] = par::max_over_ranks(comm, core::now_s() - t_operator);
  p.parameters["operator"] = operator_json(comm, out.system.op);

  p.parameters["symmetry"] = symmetry_json(config, p.matrix, !is_krylov(config));
  out.jacobi_check = jacobi ? check_jacobi(config, p, out.system) : nullptr;

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
  Solved solved;
  bool iterated = true;
  try {
    solved = is_krylov(config)                  ? solve_krylov(config, p, system, *setup.halo)
             : config.method == Method::schwarz ? solve_schwarz(config, p, system, *setup.halo)
                                                : solve_jacobi(config, p, setup);
  } catch (const core::CollectiveBreakdown& e) {  // on every rank alike, before the iteration
    solved.result = breakdown_before_iterating(p, setup, e.what());
    solved.halo = std::string(setup.halo->name());
    solved.allreduce = config.allreduce->name();
    iterated = false;
  }
  warn_of_empty_row(p, setup);
  confirm_on_given_system(config, p, setup, solved.result);
  unscale_solution(p, setup);
  annotate_breakdown(config, setup, iterated, solved.result);
  return solved;
}

RunSummary sparse_summary(const SolveConfig& config, const SparseProblem& p,
                          const SparseSetup& setup, const Solved& solved) {
  RunSummary summary = summarise(p.matrix.comm(), solved, false);
  summary.warnings = setup.warnings;
  summary.hints = hints_of(config, p, solved.result);
  return summary;
}

RunProblem sparse_run_problem(const SolveConfig& config, const SparseProblem& p,
                              const SparseSetup& setup) {
  return run_problem(config, p, setup.powers, setup.jacobi_check);
}

core::ExitCode run_sparse_solve(const SolveConfig& config, const par::Comm& world,
                                const par::Environment& env,
                                const std::vector<std::string>& command) {
  const std::string started = core::iso8601_now();
  check_json_path(config.json_path, world);
  check_output_paths(config, world);
  check_slow_rank(config, world);
  SparseProblem p =
      config.sparse.assemble ? assemble_problem(config, world) : load_matrix(config, world);
  const par::Comm& comm = p.matrix.comm();
  SparseSetup setup = setup_sparse(config, p);
  Solved solved = solve_sparse(config, p, setup);
  setup.halo->close();
  solvers::CsrSystem& system = setup.system;
  solved.result.error_inf = error_of(config, p, system.x);
  // A solution a full disk refuses (on every rank alike) still leaves the
  // summary and the result document; the failure (exit 4) follows them.
  std::optional<core::CollectiveFailure> unwritten;
  const auto rows = static_cast<std::size_t>(p.matrix.local_rows());
  const std::string& solution = config.sparse.write_solution_path;
  try {
    if (p.loaded && !solution.empty()) {
      sparse::write_solution(p.matrix, p.loaded->file_rows, {system.x.origin(), rows}, solution);
    }
  } catch (const core::CollectiveFailure& e) {
    unwritten.emplace(e);
  }
  const RunSummary summary = sparse_summary(config, p, setup, solved);
  const RunProblem rp = sparse_run_problem(config, p, setup);
  RunEnvironment e = describe_environment(comm, env);
  const core::ExitCode code =
      report_solve(comm, command, started, e, rp, config, summary, solved.result);
  if (unwritten) throw *unwritten;
  p.matrix.free();
  if (p.decomposition) p.decomposition->free();
  return code;
}

}  // namespace asyncsolve::app
