#pragma once
// The solve of a distributed CSR system in its steps, shared by `asyncsolve
// solve --matrix/--assemble` (sparse_command.cpp) and by callers that hold
// the matrix in memory (embedded_system.cpp, the Python package): the
// system and where it came from; its setup (the zero right-hand side's
// warning, scaling, equilibration, operator, the symmetry check, Jacobi's
// checks, halo exchange); one solve by the configured method; the summary
// and the problem as the result document describes them.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "asyncsolve/sparse/equilibrate.hpp"
#include "asyncsolve/sparse/load.hpp"
#include "result_document.hpp"

namespace asyncsolve::app {

/// The distributed system and where it came from.
struct SparseProblem {
  sparse::DistMatrix matrix;
  std::vector<double> b;
  std::vector<double> x0;
  std::optional<sparse::LoadedSystem> loaded;        ///< --matrix (its matrix moved out)
  std::optional<grid::Decomposition> decomposition;  ///< --assemble
  /// Each local row's row in the file or in the caller's matrix, and how
  /// messages name one (unnamed: assembled); a view of `loaded` or of the
  /// caller's state.
  sparse::RowNames row_names;
  nlohmann::json parameters;  ///< for the document's "problem"
  std::string name;
};

/// The system set up for the solvers.
struct SparseSetup {
  /// --scale unit-diagonal: S = |D|^-1/2 per local row (empty: not scaled);
  /// the system holds S A S, S b and S^-1 x0.
  std::vector<double> scale;
  /// The powers of two the (scaled) system was equilibrated by: the system
  /// holds 2^a A, 2^c b and 2^(c - a) x0 on top of the scaling above.
  sparse::PowerOfTwoScaling powers;
  solvers::CsrSystem system;
  nlohmann::json jacobi_check;        ///< rho's bounds (Jacobi), null otherwise
  std::vector<std::string> warnings;  ///< for the summary (a zero right-hand side, an empty row)
  /// The empty-row warning, printed on stderr once the solve has run (a
  /// method that refuses the row then prints its one error line alone).
  std::string empty_row;
  /// The largest |x0| as given (--x0; 0 without it), over all ranks: a
  /// breakdown at iteration 0 names it.
  double x0_max = 0.0;
  std::unique_ptr<comm::SparseHaloExchange> halo;
};

/// Collective: refuses (core::InputError on every rank) a matrix with an
/// empty row where b is not zero (A x = b has no solution), naming the
/// first such row as the user numbers it. With b = 0 there, A is singular
/// and the system consistent: refused for Schwarz's exact subdomain
/// solves (--method schwarz, --pc asm: their blocks are singular too),
/// else returns the warning (and no error against an exact
/// solution is reported, since the solution is not unique); "" without an
/// empty row.
std::string check_empty_rows(const SolveConfig& config, SparseProblem& p);

/// Rank 0: prints setup.empty_row (check_empty_rows's warning) on stderr,
/// once the solve has run.
void warn_of_empty_row(const SparseProblem& p, const SparseSetup& setup);

/// Collective: a right-hand side that is zero: the warning (printed on
/// stderr from rank 0, and for the document); the default b = A * 1 then
/// has no unique solution, so error_inf is not reported.
std::vector<std::string> check_rhs(const SolveConfig& config, SparseProblem& p);

/// Collective over the matrix's communicator: warns of a zero right-hand
/// side (--matrix), scales the system (--scale), builds its operator (its
/// time and layouts in p.parameters), checks its symmetry (the CG family
/// refuses a nonsymmetric matrix unless --force), checks what Jacobi needs
/// (a non-zero diagonal; rho < 1 for the asynchronous variants unless
/// --force) and builds the halo exchange. Throws core::InputError on every
/// rank for what the matrix cannot do.
SparseSetup setup_sparse(const SolveConfig& config, SparseProblem& p);

/// Collective: the Krylov methods' options for p's CSR system
/// (krylov_options; messages name a file's rows; for boomeramg and asm the
/// block size and near-null space, add_near_null_space); throws
/// core::InputError for --progress thread, which the sparse solves do not
/// take, and for a bad block size or coordinates file.
solvers::KrylovOptions sparse_krylov_options(const SolveConfig& config, const SparseProblem& p,
                                             par::FaultInjector& faults);

/// Collective: one solve of the set-up system by the configured method,
/// from setup.system.x (the solution is left there, back in the unscaled
/// unknowns). The halo exchange stays open.
Solved solve_sparse(const SolveConfig& config, SparseProblem& p, SparseSetup& setup);

/// Collective, with --scale (nothing otherwise): result's true residual
/// becomes that of the system as given, ||S^-1 (S b - S A S y)|| / ||b||
/// (the scaled system's moves to scaled_true_residual); a solve that met
/// the tolerance on the scaled system only is "unconfirmed". Call it
/// before unscale_solution.
void confirm_on_given_system(const SolveConfig& config, const SparseProblem& p, SparseSetup& setup,
                             solvers::SolveResult& result);

/// Collective: a breakdown every rank agreed on before the iteration (a
/// subdomain that cannot be factorised, core::CollectiveBreakdown) as the
/// solve's outcome: x0 returned, reason breakdown with `detail`, no
/// estimate, the true residual x0's on the system as given.
solvers::SolveResult breakdown_before_iterating(const SparseProblem& p, SparseSetup& setup,
                                                std::string detail);

/// Local: a breakdown's detail, which quotes the method's own quantities
/// (p^T A p, rho, an inner product) of the equilibrated system, says so,
/// with the powers, when the solver `iterated`; one at iteration 0 also
/// names the initial guess's largest value (--x0).
void annotate_breakdown(const SolveConfig& config, const SparseSetup& setup, bool iterated,
                        solvers::SolveResult& result);

/// Local: setup.system.x back in the unscaled unknowns, x = S 2^(a - c) y.
void unscale_solution(const SparseProblem& p, SparseSetup& setup);

/// Collective: the solve summarised over the ranks, with the setup's
/// warnings and the hints (a method that fits where Jacobi diverged, a
/// graph partitioner where the block partition exchanges much).
RunSummary sparse_summary(const SolveConfig& config, const SparseProblem& p,
                          const SparseSetup& setup, const Solved& solved);

/// Collective: the problem as the result document describes it (the
/// matrix, the partition's quality, the operator, the symmetry, the
/// scaling, rho).
RunProblem sparse_run_problem(const SolveConfig& config, const SparseProblem& p,
                              const SparseSetup& setup);

}  // namespace asyncsolve::app
