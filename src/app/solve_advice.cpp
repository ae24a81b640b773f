#include "solve_advice.hpp"

#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/solvers/krylov.hpp"

namespace asyncsolve::app {
namespace {

using solvers::RhoProof;
using solvers::RhoVerdict;

/// A bound as the messages print it: six decimals, more where six would
/// round it onto 1 (a bound of 0.9999996 is not "1.000000 < 1").
std::string bound_text(double v) {
  const bool near_one = v != 1.0 && std::abs(v - 1.0) < 5e-7;
  return near_one ? fmt::format("{:.15f}", v) : fmt::format("{:.6f}", v);
}

/// This build's Krylov methods for nonsymmetric and indefinite matrices.
std::vector<std::string_view> general_methods() {
  std::vector<std::string_view> general;
  for (const std::string_view method : {"gmres", "bicgstab"})
    if (solvers::parse_krylov_method(method)) general.push_back(method);
  return general;
}

}  // namespace

std::string rho_statement(const solvers::JacobiRho& r) {
  const std::string rho = "rho(|D^-1 (A - D)|)";
  if (r.verdict == RhoVerdict::below_one && r.proof == RhoProof::dominance) {
    return fmt::format(
        "{} < 1, proven by diagonal dominance (every row is at least as heavy as its "
        "off-diagonal entries and reaches, in the graph of A, a row that is heavier; estimate "
        "{:.6f})",
        rho, r.estimate);
  }
  if (r.verdict == RhoVerdict::below_one) {
    return fmt::format("{} <= {} < 1 (proven; estimate {:.6f}, {} power iterations)", rho,
                       bound_text(r.upper_bound), r.estimate, r.iterations);
  }
  if (r.verdict == RhoVerdict::at_least_one && r.proof == RhoProof::dominance) {
    return fmt::format(
        "{} = 1, proven by diagonal dominance (rows exactly as heavy as their off-diagonal "
        "entries that reach no heavier row; estimate {:.6f})",
        rho, r.estimate);
  }
  if (r.verdict == RhoVerdict::at_least_one) {
    return fmt::format("{} >= {} >= 1 (proven; estimate {:.6f}, {} power iterations)", rho,
                       bound_text(r.lower_bound), r.estimate, r.iterations);
  }
  return fmt::format(
      "{} is between {} and {} after {} power iterations (estimate {:.6f}): not proven below 1",
      rho, bound_text(r.lower_bound), bound_text(r.upper_bound), r.iterations, r.estimate);
}

std::string indefinite_methods() {
  const std::vector<std::string_view> general = general_methods();
  if (general.empty()) {
    return "no method of this build (the CG family and Chebyshev need a positive definite "
           "matrix, Jacobi rho(D^-1 (A - D)) < 1)";
  }
  return fmt::format("--method {}", fmt::join(general, " or "));
}

std::string not_positive_definite(const precond::NotPositiveDefinite& refusal) {
  return fmt::format("{}; what can work: {}", refusal.what(), indefinite_methods());
}

std::string methods_that_fit(Symmetry symmetry) {
  std::string spd =
      fmt::format("--method pcg1 with --pc chebyshev{} for a symmetric positive definite matrix",
                  precond::boomeramg_available() ? " or boomeramg" : "");
  const std::vector<std::string_view> general = general_methods();
  const std::string other = general.empty() ? std::string()
                                            : fmt::format("--method {} for a nonsymmetric one",
                                                          fmt::join(general, " or "));
  switch (symmetry) {
    case Symmetry::symmetric:
      return spd;
    case Symmetry::nonsymmetric:
      return other.empty() ? std::string(
                                 "no method of this build for a nonsymmetric matrix (the "
                                 "CG family needs a symmetric positive definite one)")
                           : other;
    case Symmetry::unknown:
      break;
  }
  return other.empty() ? spd : spd + ", " + other;
}

std::string rho_line(const solvers::JacobiRho& rho, Variant variant) {
  const bool below = rho.verdict == RhoVerdict::below_one;
  std::string_view meaning;
  if (variant == Variant::sync) {
    meaning = below ? "Jacobi converges (rho(D^-1 (A - D)) is no larger)"
                    : "this does not decide whether synchronous Jacobi converges (it needs "
                      "rho(D^-1 (A - D)) < 1)";
  } else {
    meaning = below ? "asynchronous Jacobi converges for every delay pattern"
              : rho.verdict == RhoVerdict::at_least_one
                  ? "asynchronous Jacobi diverges for some delay pattern (Chazan-Miranker)"
                  : "asynchronous Jacobi is not guaranteed to converge";
  }
  return fmt::format("asyncsolve: {}: {}", rho_statement(rho), meaning);
}

void check_async_rho(const solvers::JacobiRho& rho, Variant variant, bool force,
                     Symmetry symmetry) {
  if (variant == Variant::sync || force || rho.verdict == RhoVerdict::below_one) return;
  const std::string proven =
      rho.verdict == RhoVerdict::at_least_one
          ? fmt::format(
                "at least {} (proven), so asynchronous Jacobi diverges for some delay "
                "pattern",
                bound_text(rho.lower_bound))
          : fmt::format(
                "between {} and {} after {} power iterations, not proven below 1, so "
                "asynchronous Jacobi may diverge",
                bound_text(rho.lower_bound), bound_text(rho.upper_bound), rho.iterations);
  throw core::InputError(fmt::format(
      "--variant {}: rho(|D^-1 (A - D)|) is about {:.6f}, {} (Chazan-Miranker); expected a matrix "
      "with rho < 1, or --force to run anyway. No rescaling changes rho (it is similar to "
      "itself under diagonal scalings); what can work: {}",
      name(variant), rho.estimate, proven, methods_that_fit(symmetry)));
}

std::optional<std::string> divergence_hint(const SolveConfig& config,
                                           const solvers::SolveResult& result, Symmetry symmetry) {
  if (config.method != Method::jacobi || result.reason != solvers::StopReason::diverged)
    return std::nullopt;
  return fmt::format(
      "Jacobi diverges on this matrix (its residual grew a millionfold over the smallest it "
      "reached, as it does where rho(D^-1 (A - D)) >= 1, which neither more iterations nor a "
      "diagonal rescaling change); try {}",
      methods_that_fit(symmetry));
}

std::optional<std::string> partition_hint(const sparse::PartitionSpec& spec,
                                          const sparse::PartitionMetrics& metrics,
                                          std::int64_t rows, int ranks) {
  if (spec.method != sparse::Partitioner::block || ranks < 2 || rows < 1) return std::nullopt;
  const double per_row = static_cast<double>(metrics.volume) / static_cast<double>(rows);
  if (per_row < large_exchange_per_row) return std::nullopt;
  std::vector<std::string_view> graph;
  for (const sparse::Partitioner p : {sparse::Partitioner::metis, sparse::Partitioner::scotch})
    if (sparse::partitioner_available(p)) graph.push_back(sparse::name(p));
  if (graph.empty()) return std::nullopt;
  return fmt::format(
      "the block partition exchanges {:.2f} values per row each iteration ({} values for {} "
      "rows; from {} on, the exchange costs a noticeable part of an iteration, which streams "
      "about 100 bytes a row): a graph partitioner cuts along the matrix's graph rather than "
      "the file's row order, try --partition {}",
      per_row, metrics.volume, rows, large_exchange_per_row, fmt::join(graph, " or "));
}

std::string zero_rhs_warning(const std::string& matrix_path, const std::string& rhs_path,
                             bool option) {
  if (rhs_path.empty()) {
    return fmt::format(
        "b = A * 1 is zero (every row of {} sums to 0): A is singular, x = 0 solves A x = b, and "
        "the all-ones vector is not the only solution, so no error against it is reported; "
        "give a right-hand side in the range of A ({})",
        matrix_path, option ? "--rhs" : "b");
  }
  return fmt::format(
      "{}{} is zero: x = 0 is the solution, and residuals are measured against 1 instead "
      "of ||b||",
      option ? "--rhs " : "", rhs_path);
}

}  // namespace asyncsolve::app
