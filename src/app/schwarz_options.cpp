#include "schwarz_options.hpp"

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/subdomain.hpp"

namespace asyncsolve::app {

namespace {

Condition when(std::string dimension, std::vector<std::string> values) {
  return Condition{std::move(dimension), std::move(values)};
}

}  // namespace

void add_schwarz_options(OptionTable& t, SchwarzArgs& a, const std::vector<std::string>& methods) {
  const Applies schwarz = Applies{
      {{when("--method", methods), when("--pc", {"asm"})}, {when("--method", {"schwarz"})}}};
  // The Schwarz iteration's coarse level is synchronous.
  const Applies coarse = Applies{{{when("--method", methods), when("--pc", {"asm"})},
                                  {when("--method", {"schwarz"}), when("--variant", {"sync"})}}};
  // The block size counts BoomerAMG's functions and the coarse vectors per
  // subdomain: one-level Schwarz has no use for it.
  const Applies block_size =
      Applies{{{when("--matrix", {"FILE"}), when("--method", methods), when("--pc", {"boomeramg"})},
               {when("--matrix", {"FILE"}), when("--method", methods), when("--pc", {"asm"}),
                when("--coarse", {"nicolaides"})},
               {when("--matrix", {"FILE"}), when("--method", {"schwarz"}),
                when("--coarse", {"nicolaides"})}}};
  const Applies rigid_body = Applies{{{when("--matrix", {"FILE"}), when("--method", methods),
                                       when("--pc", {"asm"}), when("--coarse", {"nicolaides"})},
                                      {when("--matrix", {"FILE"}), when("--method", {"schwarz"}),
                                       when("--coarse", {"nicolaides"})}}};
  t.number("--overlap", a.overlap, {0, sparse::kMaxOverlap},
           {.help = "Schwarz: layers of the matrix graph each rank's subdomain grows by beyond "
                    "its owned rows (0: no overlap, block Jacobi)",
            .applies = schwarz,
            .sample = "2"});
  t.choice("--local-solver", a.local_solver, names<precond::LocalSolverKind>(),
           {.help = "Schwarz: the subdomain solver, factorised once at setup: cholmod "
                    "(SuiteSparse Cholesky, SPD), umfpack (SuiteSparse LU), ic0 (built-in "
                    "incomplete Cholesky, memory-light) or auto (cholmod for a symmetric "
                    "subdomain, umfpack otherwise; ic0 in a build without SuiteSparse)",
            .applies = schwarz});
  t.choice("--coarse", a.coarse, names<precond::CoarseKind>(),
           {.help = "Schwarz: none (one level) or nicolaides (two levels: one coarse vector per "
                    "subdomain and near-null vector, E = Z^T A Z factorised on every rank, "
                    "added to each apply; rigid-body modes with --coordinates; the schwarz "
                    "iteration: sync only, the coarse correction before the local solves)",
            .applies = coarse});
  t.number("--block-size", a.block_size, {0, 16},
           {.help = "Unknowns per node of a system of PDEs (3 for 3-D elasticity), rows "
                    "interleaved node by node in the matrix file: BoomerAMG's num_functions, "
                    "the coarse vectors per subdomain; 0: the matrix file's '% block-size: N' "
                    "comment, else 1",
            .applies = block_size,
            .sample = "3"});
  t.path("--coordinates", a.coordinates,
         {.help = "Node coordinates (Matrix Market array, one row per node, one column per "
                  "dimension; needs --matrix and a block size equal to the dimension): the "
                  "rigid-body modes of elasticity as the coarse vectors (hypre's BoomerAMG "
                  "takes them only with nodal coarsening, which the renumbered rows defeat)",
          .applies = rigid_body,
          .sample = "nodes.mtx"});
}

SchwarzConfig validate_schwarz(const SchwarzArgs& a, bool matrix_given, precond::PcSettings& pc) {
  using core::InputError;
  if (a.overlap < 0 || a.overlap > sparse::kMaxOverlap) {
    throw InputError(fmt::format("--overlap {}: expected an integer from 0 to {}", a.overlap,
                                 sparse::kMaxOverlap));
  }
  pc.schwarz.overlap = a.overlap;
  pc.schwarz.local_solver =
      parse_one_of<precond::LocalSolverKind>("--local-solver", a.local_solver);
  precond::require_local_solver(pc.schwarz.local_solver);
  pc.schwarz.coarse = parse_one_of<precond::CoarseKind>("--coarse", a.coarse);
  if (a.block_size < 0 || a.block_size > 16) {
    throw InputError(
        fmt::format("--block-size {}: expected an integer from 1 to 16 (0: from the "
                    "matrix file)",
                    a.block_size));
  }
  if ((a.block_size > 1 || !a.coordinates.empty()) && !matrix_given) {
    throw InputError(fmt::format("{}: expected --matrix FILE (a model problem is scalar)",
                                 a.coordinates.empty()
                                     ? fmt::format("--block-size {}", a.block_size)
                                     : "--coordinates " + a.coordinates));
  }
  pc.block_size = a.block_size > 0 ? a.block_size : 1;
  return {a.block_size, a.coordinates};
}

void refuse_cholesky_if_nonsymmetric(const precond::PcSettings& pc, bool schwarz,
                                     const sparse::Symmetry& symmetry, bool force) {
  const precond::LocalSolverKind local = pc.schwarz.local_solver;
  const bool factorises = schwarz || pc.kind == precond::PcKind::additive_schwarz;
  if (!factorises || symmetry.symmetric() || force ||
      (local != precond::LocalSolverKind::cholmod && local != precond::LocalSolverKind::ic0)) {
    return;
  }
  throw core::InputError(fmt::format(
      "--local-solver {}: the matrix is not symmetric ({}: above {:.0e}) and {} factorises each "
      "subdomain block as a symmetric one (it reads one triangle); expected --local-solver "
      "umfpack or auto (or --force to run anyway)",
      precond::local_solver_name(local), symmetry.statement(), symmetry.tolerance,
      precond::local_solver_name(local)));
}

}  // namespace asyncsolve::app
