#include "asyncsolve/solvers/norm.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/ops/norm.hpp"
#include "asyncsolve/ops/stencil7.hpp"

namespace asyncsolve::solvers {

namespace {

/// Below this a plain sum of squares may have lost squares to underflow
/// (each below ~1e-308); above it, and finite, it is exact to rounding.
constexpr double plain_sum_floor = 1e-250;

}  // namespace

double scaled_norm(collectives::Allreduce* reduction, double local_sum_sq,
                   const std::function<double()>& local_max_abs,
                   const std::function<double(int exponent)>& local_sum_sq_scaled) {
  const double plain = reduction != nullptr ? reduction->sum(local_sum_sq) : local_sum_sq;
  if (std::isnan(plain)) return plain;
  if (std::isfinite(plain) && plain >= plain_sum_floor) return std::sqrt(plain);
  // The same M on every rank, so every rank takes the same branches below.
  const double m = reduction != nullptr ? reduction->max(local_max_abs()) : local_max_abs();
  if (!std::isfinite(m)) return m;  // NaN or infinity somewhere: no norm to speak of
  // (every rank still takes part in the second reduction)
  int e = 0;
  if (m > 0.0) std::frexp(m, &e);  // m = f 2^e, 0.5 <= f < 1: each (x 2^-e)^2 < 1
  const double local = m > 0.0 ? local_sum_sq_scaled(e) : 0.0;
  const double sum = reduction != nullptr ? reduction->sum(local) : local;
  return std::ldexp(std::sqrt(sum), e);
}

double field_norm(const grid::Field& x, collectives::Allreduce* reduction) {
  return scaled_norm(
      reduction, ops::sum_sq_scaled(x, 0), [&] { return ops::max_abs(x); },
      [&](int e) { return ops::sum_sq_scaled(x, e); });
}

double jacobi_residual_norm(const grid::Field& u, collectives::Allreduce* reduction) {
  const int nz = u.interior()[2];
  return scaled_norm(
      reduction, ops::residual_norm_sq(u), [&] { return ops::jacobi_residual_max_abs(u, 0, nz); },
      [&](int e) { return ops::jacobi_residual_sum_sq_scaled(u, e, 0, nz); });
}

bool breaks_down(double residual) noexcept { return !std::isfinite(residual); }

void set_breakdown(SolveResult& result, double residual, long iteration) {
  result.converged = false;
  if (std::isfinite(result.best_residual) && result.best_residual > 0.0) {
    // A finite residual was checked before: the iteration grew past the
    // range of a double between two checks (an asynchronous round that took
    // hundreds of sweeps under load, a long --check-every), which is
    // divergence, not a breakdown of the method.
    mark_diverged(result, result.best_residual, result.best_iteration, residual, iteration,
                  divergence_factor);
    return;
  }
  result.reason = StopReason::breakdown;
  result.detail = fmt::format("residual = {} at iteration {}", residual, iteration);
}

bool check_divergence(SolveResult& result, double residual, long iteration, double floor) {
  if (residual < result.best_residual) {
    result.best_residual = residual;
    result.best_iteration = iteration;
    return false;
  }
  if (!(result.best_residual > 0.0) || !(residual >= divergence_factor * result.best_residual) ||
      !(residual > floor))
    return false;
  mark_diverged(result, result.best_residual, result.best_iteration, residual, iteration,
                divergence_factor);
  return true;
}

/// The rounding level's rule of check_stagnation: true, with `result`
/// marked, when the residual is below stagnation_floor and none of the last
/// rounding_checks checks found a residual below the smallest before them.
bool check_rounding_level(SolveResult& result, long iteration) {
  const std::vector<HistoryPoint>& h = result.history;
  if (h.size() <= rounding_checks || !(h.back().residual < stagnation_floor)) return false;
  if (!(h[h.size() - 1 - rounding_checks].iteration >= result.best_iteration)) return false;
  result.converged = false;
  result.reason = StopReason::breakdown;
  result.detail = fmt::format(
      "stagnation at iteration {}: the residual has not fallen below its smallest, {:.3e} at "
      "iteration {}, in the last {} checks{}",
      iteration, result.best_residual, result.best_iteration, rounding_checks,
      rounding_level_causes);
  return true;
}

bool check_stagnation(SolveResult& result, long iteration, long min_span) {
  const std::vector<HistoryPoint>& h = result.history;
  if (check_rounding_level(result, iteration)) return true;
  if (h.size() <= stagnation_checks) return false;
  // The window: the last stagnation_checks + 1 checks, widened back to span
  // min_span iterations at least (with --check-every 1, 1000 checks).
  std::size_t start = h.size() - 1 - stagnation_checks;
  while (start > 0 && h.back().iteration - h[start].iteration < min_span) --start;
  const HistoryPoint& first = h[start];
  if (h.back().iteration - first.iteration < min_span) return false;
  if (!(first.residual > stagnation_floor)) return false;
  double low = first.residual;
  double high = first.residual;
  for (std::size_t i = start + 1; i < h.size(); ++i) {
    low = std::min(low, h[i].residual);
    high = std::max(high, h[i].residual);
  }
  const auto span = static_cast<double>(h.back().iteration - first.iteration);
  if (!(high - low <= stagnation_rate * span * low)) return false;  // NaN: not standing
  const std::size_t checks = h.size() - start;
  result.converged = false;
  result.reason = StopReason::breakdown;
  result.detail =
      high == low ? fmt::format(
                        "stagnation at iteration {}: the residual {:.6e} was the same, bit for "
                        "bit, at the last {} checks (since iteration {})",
                        iteration, first.residual, checks, first.iteration)
                  : fmt::format(
                        "stagnation at iteration {}: the residual stayed between {:.9e} and "
                        "{:.9e} at the last {} checks (since iteration {}), a change below {:.0e} "
                        "per iteration",
                        iteration, low, high, checks, first.iteration, stagnation_rate);
  result.detail += stagnation_causes;
  return true;
}

void mark_diverged(SolveResult& result, double from, long from_iteration, double to, long iteration,
                   double factor) {
  result.converged = false;
  result.reason = StopReason::diverged;
  result.detail = fmt::format(
      "the residual grew from {:.3e} at iteration {} to {:.3e} at iteration {} (more than {:.0e} "
      "times): the iteration diverges",
      from, from_iteration, to, iteration, factor);
}

void confirm_convergence(SolveResult& result, double tol) {
  if (breaks_down(result.true_residual)) {
    result.converged = false;
    // A divergence keeps its reason: its iterate may well have overflowed.
    if (result.reason != StopReason::breakdown && result.reason != StopReason::diverged) {
      result.reason = StopReason::breakdown;
      result.detail = fmt::format("true residual = {} after the solve", result.true_residual);
    }
    return;
  }
  if (!result.converged || result.true_residual < tol) return;
  mark_unconfirmed(result, result.residual_estimate, tol, 0);
}

void note_rounding_level(SolveResult& result, double tol) {
  const double truth = result.true_residual;
  if (!(truth <= stagnation_floor) || truth < tol) return;
  if (result.detail.find("rounding level") != std::string::npos) return;
  result.detail +=
      fmt::format(", with the true residual at {:.3e}{}", truth, rounding_level_causes);
}

void mark_unconfirmed(SolveResult& result, double estimate, double tol, long sync_iterations) {
  result.converged = false;
  result.reason = StopReason::unconfirmed;
  const double truth = result.true_residual;
  if (fmt::format("{:.3e}", estimate) == fmt::format("{:.3e}", truth)) {
    // The same to four digits: all of them, and where they differ in the
    // last few only, why.
    result.detail = fmt::format(
        "the residual estimate {:.17g} met the tolerance {:.17g}, the true residual {:.17g} did "
        "not{}",
        estimate, tol, truth,
        std::abs(truth - estimate) <= 1e-12 * truth
            ? ": the two differ by rounding only (one residual computed two ways), and a "
              "tolerance this close to it leaves the verdict to rounding (expected a --tol "
              "below the residual reached)"
            : "");
  } else {
    result.detail = fmt::format(
        "the residual estimate {:.3e} met the tolerance {:.1e}, the true residual {:.3e} did not",
        estimate, tol, truth);
  }
  if (sync_iterations > 0) {
    result.detail +=
        fmt::format(", after {} synchronous iteration{} that tried to confirm the stop",
                    sync_iterations, sync_iterations == 1 ? "" : "s");
  }
}

}  // namespace asyncsolve::solvers
