#pragma once
// What `asyncsolve solve` tells a user about a sparse system beyond its
// result: what is proven about rho(|D^-1 (A - D)|), and the refusal of
// asynchronous Jacobi without a proof of rho < 1; warnings about the
// system (b = 0); hints: a method that fits where Jacobi cannot work, a
// graph partitioner where the block partition exchanges many values. Text
// from typed values only: no MPI, no output.
#include <cstdint>
#include <optional>
#include <string>

#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/solvers/jacobi_rho.hpp"
#include "asyncsolve/solvers/result.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "asyncsolve/sparse/partition.hpp"
#include "solve_options.hpp"

namespace asyncsolve::app {

/// What is known of A's symmetry: stored symmetric (a Matrix Market
/// `symmetric` file, an assembled model problem), found symmetric or not,
/// or not known.
enum class Symmetry { symmetric, nonsymmetric, unknown };

/// One clause naming what this build can solve A with where Jacobi cannot:
/// pcg1 with a preconditioner (chebyshev, and boomeramg where the build
/// has hypre) for a symmetric positive definite matrix; this build's
/// methods for nonsymmetric matrices, if any, for one that is not (both
/// when the symmetry is not known).
std::string methods_that_fit(Symmetry symmetry);

/// One clause naming what this build can solve a matrix that is not
/// positive definite with (its methods for nonsymmetric and indefinite
/// systems), or saying that none can.
std::string indefinite_methods();

/// A preconditioner's refusal of a matrix that is not positive definite,
/// with what can work instead: core::InputError's message.
std::string not_positive_definite(const precond::NotPositiveDefinite& refusal);

/// What the bounds prove about rho, as one clause (with the estimate and
/// the power iterations): the summary's "rho" line.
std::string rho_statement(const solvers::JacobiRho& rho);

/// The line printed before Jacobi runs: what the bounds prove about rho
/// and what that means for `variant` (synchronous Jacobi converges when
/// rho < 1, since rho(D^-1 (A - D)) <= rho(|D^-1 (A - D)|); asynchronous
/// Jacobi converges for every delay pattern if and only if rho < 1).
std::string rho_line(const solvers::JacobiRho& rho, Variant variant);

/// For async and racy Jacobi: throws core::InputError unless rho < 1 is
/// proven or `force` is given. The message says what is proven and names
/// what can work instead; never a rescaling, which cannot change rho
/// (D^-1 (A - D) is only similar to itself under diagonal scalings).
void check_async_rho(const solvers::JacobiRho& rho, Variant variant, bool force, Symmetry symmetry);

/// After a solve: the hint of a Jacobi solve that diverged (a method that
/// fits), or none.
std::optional<std::string> divergence_hint(const SolveConfig& config,
                                           const solvers::SolveResult& result, Symmetry symmetry);

/// Values a halo exchange moves per owned row (the partition's
/// communication volume over the matrix's rows) from which the block
/// partition's exchanges count as large: one value for every four rows. A
/// sweep or mat-vec streams about 100 bytes per row (32 per row and 12 per
/// non-zero, some 6 non-zeros a row), an exchanged value 8 bytes over a
/// network several times slower than memory, plus its packing: at this
/// volume the exchange costs a noticeable part of each iteration, and on a
/// mesh numbered without locality (the usual case for unstructured meshes)
/// a graph partitioner cuts it by an order of magnitude.
inline constexpr double large_exchange_per_row = 0.25;

/// The hint to partition a --matrix system with a graph partitioner of
/// this build, when `spec` is the block partition, there are several ranks
/// and the exchange is large (large_exchange_per_row); none otherwise.
std::optional<std::string> partition_hint(const sparse::PartitionSpec& spec,
                                          const sparse::PartitionMetrics& metrics,
                                          std::int64_t rows, int ranks);

/// The warning for a right-hand side that is zero: the default b = A * 1
/// (every row of A sums to 0, so A is singular and the all-ones vector is
/// not the only solution: error_inf is not reported), or the --rhs file's.
/// `option`: the command's words (--rhs FILE); else the library's, where
/// the caller's right-hand side is `rhs_path` (the Python API's b).
std::string zero_rhs_warning(const std::string& matrix_path, const std::string& rhs_path,
                             bool option = true);

}  // namespace asyncsolve::app
