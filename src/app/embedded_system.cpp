// A system in a caller's memory, solved by the command's sparse path
// (sparse_session.hpp): distribution or the ranks' own rows, setup, solve,
// result document; new right-hand sides scattered from rank 0 or taken per
// rank; solutions gathered in the caller's numbering.
#include "embedded_system.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/par/fault_injection.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "asyncsolve/sparse/csr.hpp"
#include "asyncsolve/sparse/equilibrate.hpp"
#include "asyncsolve/sparse/load.hpp"
#include "result_document.hpp"
#include "solve_advice.hpp"

namespace asyncsolve::app {

namespace {

/// The environment of a run inside a caller's MPI (no par::Environment:
/// the caller initialised MPI).
RunEnvironment caller_environment(const par::Comm& comm) {
  RunEnvironment e;
  e.mpi_library = par::mpi_library_version();
  e.mpi_version = par::mpi_standard_version();
  e.ranks = comm.size();
  int provided = MPI_THREAD_SINGLE;
  par::check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  const char* level = provided >= MPI_THREAD_MULTIPLE     ? "multiple"
                      : provided >= MPI_THREAD_SERIALIZED ? "serialized"
                      : provided >= MPI_THREAD_FUNNELED   ? "funneled"
                                                          : "single";
  e.thread_level_requested = level;  // the caller's request is not known: what it got
  e.thread_level = level;
  e.hostname = par::processor_name();
  e.cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  e.mpi_osc = par::mpi_osc_choice();
  e.cpu_model = par::cpu_model();
  return e;
}

/// What this rank's set-up and solve allocate beyond its rows, about: a
/// second operator format (12 bytes a non-zero), the preconditioner (ILU(0):
/// its copy of the rows while it factorises, 24, and the factor, 12;
/// Schwarz and BoomerAMG: 48, a guess at their overlap, fill or hierarchy)
/// and the method's working set (solvers::krylov_fields) with 4 vectors more
/// (the true residual's, the result's).
double setup_bytes(const SolveConfig& config, const sparse::DistMatrix& m) {
  double per_nonzero = 12.0;
  switch (config.pc.kind) {
    case precond::PcKind::ilu0:
      per_nonzero += 36.0;
      break;
    case precond::PcKind::additive_schwarz:
    case precond::PcKind::boomeramg:
      per_nonzero += 48.0;
      break;
    default:
      break;
  }
  if (config.method == Method::schwarz) per_nonzero += 48.0;
  double vectors = 8.0;
  if (is_krylov(config.method)) {
    const long fields = solvers::krylov_fields(krylov_method(config.method), config.restart);
    vectors = 4.0 + static_cast<double>(fields);
  }
  return per_nonzero * static_cast<double>(m.local_nnz()) +
         8.0 * vectors * static_cast<double>(m.local_rows());
}

/// b = A * 1 on this rank's rows (the row sums).
std::vector<double> row_sums(const sparse::DistMatrix& m) {
  std::vector<double> b(static_cast<std::size_t>(m.local_rows()), 0.0);
  for (std::size_t i = 0; i < b.size(); ++i)
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) b[i] += m.val()[k];
  return b;
}

/// The "matrix" entry of the document's problem.
nlohmann::json matrix_json(const std::string& name, bool whole, const sparse::DistMatrix& m,
                           bool rhs, bool x0) {
  return {
      {"source", name},          {"input", whole ? "whole matrix on rank 0" : "rows of each rank"},
      {"rows", m.global_rows()}, {"cols", m.global_rows()},
      {"nnz", m.global_nnz()},   {"rhs", rhs ? "given" : "A*1"},
      {"x0", x0 ? "given" : "0"}};
}

}  // namespace

struct EmbeddedSystem::State {
  Command command;
  std::vector<std::string> args;
  bool whole = true;
  SparseProblem p;
  SparseSetup setup;
  std::vector<std::int64_t> rows;  ///< this rank's rows, caller's numbering
  // whole: rank 0's map of every rank's rows, to scatter new right-hand sides
  std::vector<int> counts;
  std::vector<int> displs;
  std::vector<std::int64_t> all_rows;
  std::unique_ptr<par::FaultInjector> faults;
  std::optional<solvers::CsrKrylovSolver> krylov;
  std::vector<double> b0;   ///< the construction's b, as the system holds it (scaled)
  int b0_rhs_exponent = 0;  ///< the power of two b0 was scaled by
  bool ones_known = false;  ///< b0 is A 1 (no b given): the solution is all ones
  bool b_is_b0 = true;      ///< the system's b is b0

  const SolveConfig& config() const { return command.solve; }
  const par::Comm& comm() const { return p.matrix.comm(); }
};

namespace {

/// Collective: the rows of each rank, the ranks' row blocks checked.
void build_from_rows(const par::Comm& comm, const EmbeddedMatrix& m, SparseProblem& p) {
  const auto n = static_cast<std::int64_t>(m.rows.row_ptr.empty() ? 0 : m.rows.row_ptr.size() - 1);
  std::int64_t sizes[2] = {m.global_rows, -m.global_rows};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, sizes, 2, MPI_INT64_T, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  std::string error;
  if (sizes[0] != -sizes[1]) {
    // Which rank is wrong is not known: every rank's count is named.
    std::vector<std::int64_t> columns(static_cast<std::size_t>(comm.size()));
    par::check_mpi(
        MPI_Allgather(&m.global_rows, 1, MPI_INT64_T, columns.data(), 1, MPI_INT64_T, comm.get()),
        "MPI_Allgather");
    std::vector<std::string> counts;
    for (std::size_t r = 0; r < columns.size(); ++r)
      counts.push_back(fmt::format("rank {}: {}", r, columns[r]));
    error = fmt::format(
        "the ranks' blocks of rows have different numbers of columns ({}): expected the same "
        "number (the matrix's size) on every rank",
        fmt::join(counts, ", "));
  } else if ((!m.b.empty() && static_cast<std::int64_t>(m.b.size()) != n) ||
             (!m.x0.empty() && static_cast<std::int64_t>(m.x0.size()) != n)) {
    error = fmt::format(
        "rank {}: b or x0 of {} values for {} rows: expected one value per row", comm.rank(),
        !m.b.empty() && static_cast<std::int64_t>(m.b.size()) != n ? m.b.size() : m.x0.size(), n);
  } else {
    // a rank's own rows: its b and x0 entries numbered from 0
    error = sparse::check_finite(fmt::format("rank {}: b", comm.rank()), m.b);
    if (error.empty()) error = sparse::check_finite(fmt::format("rank {}: x0", comm.rank()), m.x0);
  }
  sparse::raise_together(comm, error);
  const double t0 = core::now_s();
  p.matrix = sparse::DistMatrix::from_rows(comm, m.global_rows, m.rows);
  error.clear();
  if (p.matrix.first_row() != m.first_row) {
    error = fmt::format(
        "rank {}: rows from {} to {}: expected rows from {} (each rank's block "
        "follows the previous rank's, without overlap or gap)",
        comm.rank(), m.first_row, m.first_row + n, p.matrix.first_row());
  }
  sparse::raise_together(comm, error);
  p.b = m.b.empty() ? row_sums(p.matrix) : std::vector<double>(m.b.begin(), m.b.end());
  p.x0 = m.x0.empty() ? std::vector<double>(static_cast<std::size_t>(n), 0.0)
                      : std::vector<double>(m.x0.begin(), m.x0.end());
  p.parameters["setup_s"] = {{"distribute", par::max_over_ranks(comm, core::now_s() - t0)}};
}

}  // namespace

EmbeddedSystem::EmbeddedSystem(const par::Comm& comm, Command command,
                               std::vector<std::string> args, const EmbeddedMatrix& matrix,
                               bool keep)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.command = std::move(command);
  s.args = std::move(args);
  s.whole = matrix.whole;
  const SolveConfig& config = s.config();
  check_slow_rank(config, comm);
  if (config.transport == Transport::shmem) {
    // OpenSHMEM is started by the command's main, under oshrun; an
    // embedding program (the Python package) has MPI only.
    throw core::InputError(
        "--transport shmem: OpenSHMEM runs under the asyncsolve command only (oshrun); expected "
        "mpi or rma from an embedding program such as the Python package");
  }
  const sparse::PartitionSpec& partition = config.sparse.partition;
  if (!matrix.whole && (partition.method != sparse::Partitioner::block ||
                        partition.weight != sparse::PartWeight::rows)) {
    // The keywords are the same on every rank: refused on every rank alike.
    throw core::InputError(fmt::format(
        "--partition {}: the caller's rows (rows=) stay on their ranks, expected block (the "
        "whole matrix on rank 0 is partitioned)",
        sparse::format_partition(partition)));
  }
  SparseProblem& p = s.p;
  p.name = "matrix";
  bool rhs = !matrix.b.empty();
  bool x0 = !matrix.x0.empty();
  if (matrix.whole) {
    sparse::LoadedSystem l = sparse::distribute_system(comm, matrix.system, config.sparse.partition,
                                                       config.sparse.matrix_path);
    rhs = !l.exact_known;
    int given = matrix.system.x0.empty() ? 0 : 1;
    par::check_mpi(MPI_Bcast(&given, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
    x0 = given != 0;
    p.parameters["setup_s"] = {{"partition", l.partition_s}, {"distribute", l.distribute_s}};
    p.matrix = std::move(l.matrix);
    p.b = std::move(l.b);
    p.x0 = std::move(l.x0);
    s.rows = std::move(l.file_rows);
  } else {
    build_from_rows(comm, matrix, p);
    s.rows.resize(static_cast<std::size_t>(p.matrix.local_rows()));
    std::iota(s.rows.begin(), s.rows.end(), p.matrix.first_row());
  }
  p.row_names = {s.rows, sparse::RowOrigin::array};
  p.parameters["matrix"] = matrix_json(config.sparse.matrix_path, matrix.whole, p.matrix, rhs, x0);
  // Collective: frees what a set-up that every rank abandons alike built.
  const auto release_together = [&] {
    if (s.setup.halo) s.setup.halo->close();
    p.matrix.free();
  };
  try {
    // A basis that no node could hold is the caller's --restart, refused
    // before the reservation below would fail as out of memory.
    if (is_krylov(config.method)) {
      solvers::check_restart(comm, krylov_method(config.method), config.restart,
                             8.0 * static_cast<double>(p.matrix.local_rows()));
    }
    // The set-up's collectives would leave the other ranks waiting for one
    // that failed an allocation inside it: room for it is agreed first.
    sparse::agree_on_memory(comm, setup_bytes(config, p.matrix), "the solver's set-up and vectors");
    s.setup = setup_sparse(config, p);
    if (keep && is_krylov(config)) {
      s.faults = std::make_unique<par::FaultInjector>(fault_options(config), comm.rank());
      try {
        s.krylov.emplace(s.setup.system, p.matrix, *s.setup.halo,
                         sparse_krylov_options(config, p, *s.faults));
      } catch (const precond::NotPositiveDefinite& e) {  // on every rank alike
        throw core::InputError(not_positive_definite(e));
      } catch (const core::CollectiveBreakdown&) {  // on every rank alike
        // A subdomain that cannot be factorised: the failed emplace keeps no
        // solver, so each solve() goes the one-solve way (solve_sparse),
        // whose setup meets the same breakdown and reports it as the solve's
        // outcome.
      }
    }
  } catch (const core::InputError&) {
    // Refused on every rank alike: free what was built, together.
    release_together();
    throw;
  } catch (const core::CollectiveFailure&) {
    // Failed on every rank alike (out of memory on one): likewise.
    release_together();
    throw;
  }
  s.b0.assign(s.setup.system.b.origin(), s.setup.system.b.origin() + p.matrix.local_rows());
  s.b0_rhs_exponent = s.setup.powers.rhs_exponent;
  int no_b = rhs ? 0 : 1;
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &no_b, 1, MPI_INT, MPI_MIN, s.comm().get()),
                 "MPI_Allreduce");
  s.ones_known = no_b != 0;
  if (s.whole) {
    // Rank 0 learns every rank's rows, to scatter right-hand sides.
    const par::Comm& c = s.comm();
    const int n = p.matrix.local_rows();
    s.counts.resize(c.is_root() ? static_cast<std::size_t>(c.size()) : 0);
    par::check_mpi(MPI_Gather(&n, 1, MPI_INT, s.counts.data(), 1, MPI_INT, 0, c.get()),
                   "MPI_Gather");
    s.displs.assign(s.counts.size(), 0);
    for (std::size_t r = 1; r < s.counts.size(); ++r)
      s.displs[r] = s.displs[r - 1] + s.counts[r - 1];
    s.all_rows.resize(c.is_root() ? static_cast<std::size_t>(p.matrix.global_rows()) : 0);
    par::check_mpi(MPI_Gatherv(s.rows.data(), n, MPI_INT64_T, s.all_rows.data(), s.counts.data(),
                               s.displs.data(), MPI_INT64_T, 0, c.get()),
                   "MPI_Gatherv");
  }
}

EmbeddedSystem::EmbeddedSystem(EmbeddedSystem&&) noexcept = default;
EmbeddedSystem& EmbeddedSystem::operator=(EmbeddedSystem&&) noexcept = default;
EmbeddedSystem::~EmbeddedSystem() = default;

EmbeddedResult EmbeddedSystem::solve(bool take_x) {
  State& s = *state_;
  const SolveConfig& config = s.config();
  const std::string started = core::iso8601_now();
  Solved solved;
  solvers::CsrSystem& system = s.setup.system;
  // A zero b (this solve's: given, or the construction's): x = 0 solves
  // A x = b, as check_rhs warns for the command's --matrix (rank 0 prints).
  double largest = 0.0;
  for (int i = 0; i < s.p.matrix.local_rows(); ++i)
    largest = std::max(largest, std::abs(system.b.origin()[i]));
  std::string zero_b;
  if (par::max_over_ranks(s.comm(), largest) == 0.0) {
    const bool ones = s.ones_known && s.b_is_b0;  // b = A * 1
    zero_b = zero_rhs_warning(config.sparse.matrix_path, ones ? std::string() : "b", false);
    if (s.comm().is_root()) std::fprintf(stderr, "asyncsolve: warning: %s\n", zero_b.c_str());
  }
  if (s.krylov) {
    solved.result = s.krylov->solve();
    warn_of_empty_row(s.p, s.setup);
    solved.halo = std::string(s.setup.halo->name());
    solved.allreduce = config.allreduce ? config.allreduce->name() : std::string();
    confirm_on_given_system(config, s.p, s.setup, solved.result);
    unscale_solution(s.p, s.setup);
  } else {
    solved = solve_sparse(config, s.p, s.setup);
  }
  const par::Comm& comm = s.comm();
  if (s.ones_known && s.b_is_b0 && s.setup.empty_row.empty() &&
      zero_b.empty()) {  // else not unique
    // b = A 1: the solution is all ones, and the error is known (as --matrix
    // reports it without --rhs).
    double err = 0.0;
    for (int i = 0; i < s.p.matrix.local_rows(); ++i)
      err = std::max(err, solvers::error_term(system.x.origin()[i], 1.0));
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
                   "MPI_Allreduce");
    solved.result.error_inf = err;
  }
  RunSummary summary = sparse_summary(config, s.p, s.setup, solved);
  if (!zero_b.empty() &&
      std::find(summary.warnings.begin(), summary.warnings.end(), zero_b) == summary.warnings.end())
    summary.warnings.push_back(zero_b);
  const RunProblem rp = sparse_run_problem(config, s.p, s.setup);
  std::string document;
  if (comm.is_root()) {
    document = core::document_text(
        make_result_document(s.args, started, caller_environment(comm), rp, config, summary), -1);
  }
  EmbeddedResult out;
  out.document = par::broadcast_from_root(comm, std::move(document));
  out.converged = solved.result.converged &&
                  std::all_of(solved.result.repeats.begin(), solved.result.repeats.end(),
                              [](const solvers::RepeatedSolve& r) { return r.converged; });
  if (take_x) {
    out.x = std::move(system.x);
  } else {
    out.x = grid::Field({s.p.matrix.local_rows(), 1, 1}, 0);
    std::copy_n(system.x.origin(), s.p.matrix.local_rows(), out.x.origin());
  }
  return out;
}

void EmbeddedSystem::set_rhs(std::span<const double> b, std::span<const double> x0) {
  State& s = *state_;
  const par::Comm& comm = s.comm();
  const auto n = static_cast<std::size_t>(s.p.matrix.local_rows());
  solvers::CsrSystem& system = s.setup.system;
  std::vector<double> mine_b(n);
  std::vector<double> mine_x0(n, 0.0);
  // given[0]: b, given[1]: x0 (whole: rank 0's word)
  int given[2] = {b.empty() ? 0 : 1, x0.empty() ? 0 : 1};
  if (s.whole) {
    const auto rows = static_cast<std::size_t>(s.p.matrix.global_rows());
    std::string error;
    if (comm.is_root()) {
      for (const auto& [what, v] :
           {std::pair<const char*, std::span<const double>>{"b", b}, {"x0", x0}}) {
        if (error.empty() && !v.empty() && v.size() != rows) {
          error = fmt::format("{}: {} values for a matrix of {} rows: expected {}", what, v.size(),
                              rows, rows);
        }
        if (error.empty()) error = sparse::check_finite(what, v);
      }
    }
    sparse::raise_together(comm, error);
    par::check_mpi(MPI_Bcast(given, 2, MPI_INT, 0, comm.get()), "MPI_Bcast");
    for (int v = 0; v < 2; ++v) {
      if (given[v] == 0) continue;
      const std::span<const double> in = v == 0 ? b : x0;
      std::vector<double> packed(comm.is_root() ? rows : 0);
      for (std::size_t k = 0; k < packed.size(); ++k) packed[k] = in[s.all_rows[k]];
      par::check_mpi(MPI_Scatterv(packed.data(), s.counts.data(), s.displs.data(), MPI_DOUBLE,
                                  (v == 0 ? mine_b : mine_x0).data(), static_cast<int>(n),
                                  MPI_DOUBLE, 0, comm.get()),
                     "MPI_Scatterv");
    }
  } else {
    std::string error;
    for (const auto& [what, v] :
         {std::pair<const char*, std::span<const double>>{"b", b}, {"x0", x0}}) {
      if (error.empty() && !v.empty() && v.size() != n) {
        error = fmt::format("rank {}: {} of {} values for {} rows: expected one value per row",
                            comm.rank(), what, v.size(), n);
      }
      if (error.empty())
        error = sparse::check_finite(fmt::format("rank {}: {}", comm.rank(), what), v);
    }
    sparse::raise_together(comm, error);
    // A rank without rows passes an empty b whether the others give theirs
    // or not (the caller's check): given where any rank gave it, so that
    // every rank agrees whether b is b0.
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, given, 2, MPI_INT, MPI_MAX, comm.get()),
                   "MPI_Allreduce");
    std::copy(b.begin(), b.end(), mine_b.begin());
    std::copy(x0.begin(), x0.end(), mine_x0.begin());
  }
  // The scaled system: 2^c S b (or the construction's b, already scaled) and
  // 2^(c - a) S^-1 x0, with the construction's power a of A and a power c
  // chosen for this b as the construction chose its own (exact powers of
  // two: a b of 1e+-300 neither overflows nor underflows r^T r).
  s.b_is_b0 = given[0] == 0;
  const std::vector<double>& scale = s.setup.scale;
  const int a = s.setup.powers.matrix_exponent;
  if (s.b_is_b0) {  // agreed on every rank: the reduction is collective
    s.setup.powers.rhs_exponent = s.b0_rhs_exponent;
  } else {
    double largest[2] = {0.0, 0.0};  // |S b|, |S^-1 x0|
    for (std::size_t i = 0; i < n; ++i) {
      const double si = scale.empty() ? 1.0 : scale[i];
      largest[0] = std::max(largest[0], std::abs(mine_b[i] * si));
      largest[1] = std::max(largest[1], std::abs(mine_x0[i] / si));
    }
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, largest, 2, MPI_DOUBLE, MPI_MAX, comm.get()),
                   "MPI_Allreduce");
    const sparse::PowerOfTwoScaling fresh = sparse::scaling_for(a, largest[0], largest[1]);
    // (0, 0) would need A unscaled: then b keeps A's power, as the construction's fallback
    s.setup.powers.rhs_exponent = fresh.matrix_exponent == a ? fresh.rhs_exponent : a;
  }
  const int c = s.setup.powers.rhs_exponent;
  for (std::size_t i = 0; i < n; ++i) {
    const double si = scale.empty() ? 1.0 : scale[i];
    system.b.origin()[i] = given[0] != 0 ? std::ldexp(mine_b[i] * si, c) : s.b0[i];
    system.x.origin()[i] = std::ldexp(mine_x0[i] / si, c - a);
  }
}

std::span<const std::int64_t> EmbeddedSystem::rows() const { return state_->rows; }
int EmbeddedSystem::local_rows() const { return state_->p.matrix.local_rows(); }
std::int64_t EmbeddedSystem::global_rows() const { return state_->p.matrix.global_rows(); }

std::vector<double> EmbeddedSystem::gather(std::span<const double> x) const {
  const State& s = *state_;
  const par::Comm& comm = s.comm();
  const std::int64_t rows = s.p.matrix.global_rows();
  std::vector<double> out;
  if (s.whole) {
    out = sparse::gather_in_file_order(comm, s.rows, x, rows);
    out.resize(static_cast<std::size_t>(rows));
    par::check_mpi(MPI_Bcast(out.data(), static_cast<int>(rows), MPI_DOUBLE, 0, comm.get()),
                   "MPI_Bcast");
  } else {
    out.resize(static_cast<std::size_t>(rows));
    std::vector<int> counts(static_cast<std::size_t>(comm.size()));
    std::vector<int> displs(counts.size());
    for (std::size_t r = 0; r < counts.size(); ++r) {
      counts[r] = static_cast<int>(s.p.matrix.row_offsets()[r + 1] - s.p.matrix.row_offsets()[r]);
      displs[r] = static_cast<int>(s.p.matrix.row_offsets()[r]);
    }
    par::check_mpi(MPI_Allgatherv(x.data(), static_cast<int>(x.size()), MPI_DOUBLE, out.data(),
                                  counts.data(), displs.data(), MPI_DOUBLE, comm.get()),
                   "MPI_Allgatherv");
  }
  return out;
}

void EmbeddedSystem::free() {
  if (state_ == nullptr) return;
  State& s = *state_;
  if (s.krylov) s.krylov->free();
  if (s.setup.halo) s.setup.halo->close();
  s.p.matrix.free();
  state_.reset();
}

}  // namespace asyncsolve::app
