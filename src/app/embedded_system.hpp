#pragma once
// A linear system a caller holds in memory (the Python package's scipy
// matrices), solved as `asyncsolve solve --matrix` solves a file's: the
// same distribution, setup, solvers and result document (sparse_session).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/solvers/krylov_solver.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "asyncsolve/sparse/load.hpp"
#include "cli.hpp"
#include "sparse_session.hpp"

namespace asyncsolve::app {

/// Where the rows come from: the whole matrix on rank 0 (partitioned and
/// distributed as --matrix is), or each rank's own consecutive rows with
/// global column indices (DistMatrix::from_rows; the caller's numbering).
struct EmbeddedMatrix {
  bool whole = true;
  sparse::SystemView system;     ///< whole: read on rank 0 only (b, x0 may be empty)
  std::int64_t global_rows = 0;  ///< rows: the matrix's size (its columns)
  std::int64_t first_row = 0;    ///< rows: this rank's first row
  sparse::RowsView rows;         ///< rows: this rank's rows
  std::span<const double> b;     ///< rows: this rank's entries (empty: b = A * 1)
  std::span<const double> x0;    ///< rows: this rank's entries (empty: 0)
};

/// One solve's outcome.
struct EmbeddedResult {
  bool converged = false;  ///< the solve (and every repeat) converged, the same on every rank
  std::string document;    ///< the result document (JSON), the same on every rank
  grid::Field x;           ///< this rank's entries of the solution
};

/// A distributed system kept set up for solves. Move-only; free() is
/// collective.
class EmbeddedSystem {
 public:
  /// Collective over `comm`: distributes the matrix (or builds it from the
  /// ranks' rows) on a duplicate of `comm`, sets it up for the command's
  /// method (setup_sparse) and, with `keep` and a Krylov method, sets the
  /// preconditioner up once for every solve (solvers::CsrKrylovSolver).
  /// Throws core::InputError with the same message on every rank for bad
  /// input (the command's own checks, the matrix's, row blocks that overlap
  /// or leave gaps).
  EmbeddedSystem(const par::Comm& comm, Command command, std::vector<std::string> args,
                 const EmbeddedMatrix& matrix, bool keep);
  EmbeddedSystem(EmbeddedSystem&&) noexcept;
  EmbeddedSystem& operator=(EmbeddedSystem&&) noexcept;
  ~EmbeddedSystem();

  /// Collective: solves from the current b (the construction's, or the
  /// last set_rhs) and x0; the solution is the result's x (the system's x
  /// is moved out when `take_x`, else copied: take it only for the last
  /// solve).
  EmbeddedResult solve(bool take_x);

  /// Collective: a new right-hand side and initial guess, in the
  /// construction's form (whole: rank 0's vectors in the caller's
  /// numbering, the other ranks' ignored; rows: this rank's entries).
  /// b empty: the construction's b; x0 empty: zero. Throws
  /// core::InputError on every rank for a wrong length.
  void set_rhs(std::span<const double> b, std::span<const double> x0);

  /// This rank's rows in the caller's numbering (whole: a permutation of
  /// the matrix's rows, interior rows first; rows: consecutive).
  std::span<const std::int64_t> rows() const;
  int local_rows() const;
  std::int64_t global_rows() const;

  /// Collective: `x` (this rank's entries) in the caller's numbering,
  /// whole, on every rank.
  std::vector<double> gather(std::span<const double> x) const;

  /// Collective: closes the halo exchange, frees the preconditioner and the
  /// matrix's communicator. Afterwards only the destructor may be called.
  void free();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace asyncsolve::app
