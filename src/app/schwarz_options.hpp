#pragma once
// The options of `asyncsolve solve` for additive Schwarz and for the
// near-null space of systems of PDEs: --overlap, --local-solver, --coarse,
// --block-size and --coordinates. Pure: no MPI, no output.
#include <string>
#include <vector>

#include "asyncsolve/precond/local_solver.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/sparse/symmetry.hpp"
#include "option_table.hpp"
#include "options_common.hpp"

namespace asyncsolve::app {

/// --local-solver, spelled by the precond layer's table.
template <>
struct EnumNames<precond::LocalSolverKind> {
  static constexpr const auto& names = precond::local_solver_names;
};

/// --coarse, spelled by the precond layer's table.
template <>
struct EnumNames<precond::CoarseKind> {
  static constexpr const auto& names = precond::coarse_names;
};

/// The options as given (text where validation makes a type).
struct SchwarzArgs {
  int overlap = 1;
  std::string local_solver = "auto";
  std::string coarse = "none";
  int block_size = 0;  ///< 0: not given (the matrix file's comment, else 1)
  std::string coordinates;
};

/// The validated values (the precond settings carry the rest).
struct SchwarzConfig {
  int block_size = 0;       ///< --block-size; 0: not given
  std::string coordinates;  ///< --coordinates FILE; empty: none
};

/// Declares the options on `solve`, applying to `methods` (those that take a
/// general preconditioner) with --pc asm (overlap, local solver, coarse),
/// --pc asm|boomeramg (block size) and --pc asm --coarse nicolaides
/// (coordinates).
void add_schwarz_options(OptionTable& table, SchwarzArgs& args,
                         const std::vector<std::string>& methods);

/// Checks the values and writes them into `pc` (schwarz and block_size).
/// Throws core::InputError naming the value and what was expected: an
/// overlap outside 0..8, a local solver this build lacks, --coordinates
/// without --matrix, a block size outside 1..16.
SchwarzConfig validate_schwarz(const SchwarzArgs& args, bool matrix_given, precond::PcSettings& pc);

/// Throws core::InputError for a Cholesky local solver (cholmod, ic0) of a
/// solve that factorises subdomain blocks (--method schwarz, `schwarz`, or
/// --pc asm) when the matrix is not symmetric, unless `force`: it reads one
/// triangle of each block as the whole of a symmetric one, so it would
/// factorise another matrix.
void refuse_cholesky_if_nonsymmetric(const precond::PcSettings& pc, bool schwarz,
                                     const sparse::Symmetry& symmetry, bool force);

}  // namespace asyncsolve::app
