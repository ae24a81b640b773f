// Bounds of rho(|D^-1 (A - D)|) (see jacobi_rho.hpp): the dominance proof
// (jacobi_rho_dominance.cpp), then power iterations whose Collatz-Wielandt
// bounds decide what dominance leaves open.
#include "asyncsolve/solvers/jacobi_rho.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/par/check.hpp"
#include "jacobi_rho_dominance.hpp"

namespace asyncsolve::solvers {
namespace {

/// y = |D^-1 (A - D)| x over this rank's rows (x's ghosts in `ghosts`).
void abs_jacobi_matvec(const sparse::DistMatrix& m, const std::vector<double>& x,
                       const std::vector<double>& ghosts, std::vector<double>& y) {
  const int n = m.local_rows();
  for (int i = 0; i < n; ++i) {
    double sum = 0.0;
    double diagonal = 0.0;
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
      const std::int32_t c = m.col()[k];
      if (c == i) {
        diagonal += std::abs(m.val()[k]);
        continue;
      }
      sum += std::abs(m.val()[k]) * (c < n ? x[c] : ghosts[c - n]);
    }
    y[i] = sum / diagonal;
  }
}

double reduce(const par::Comm& comm, double local, MPI_Op op) {
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_DOUBLE, op, comm.get()),
                 "MPI_Allreduce");
  return local;
}

/// Power iterations on M with the Collatz-Wielandt bounds of every iterate.
class PowerIteration {
 public:
  explicit PowerIteration(const sparse::DistMatrix& m)
      : m_(m),
        x_(static_cast<std::size_t>(m.local_rows()), 1.0),
        y_(x_.size(), 0.0),
        ghosts_(static_cast<std::size_t>(m.plan().ghosts) + 1, 0.0) {
    // (M x)_i is a sum of row i's products divided by a_ii: within
    // (terms + 2) eps of its exact value, relative; twice that, for safety.
    double longest = 0.0;
    for (int i = 0; i < m.local_rows(); ++i)
      longest = std::max(longest, static_cast<double>(m.row_ptr()[i + 1] - m.row_ptr()[i]));
    margin_ =
        2.0 * (reduce(m.comm(), longest, MPI_MAX) + 2.0) * std::numeric_limits<double>::epsilon();
    xx_ = reduce(m.comm(), static_cast<double>(x_.size()), MPI_SUM);
  }

  /// One iteration: y = M x, the estimate ||y|| / ||x||, the bounds of x;
  /// then x = y / ||y||, kept positive (entries below 1e-12 of the largest
  /// raised to it, so that the next upper bound exists). Collective.
  void step(JacobiRho& out) {
    // y = M x
    m_.exchange_ghosts(x_, ghosts_);
    abs_jacobi_matvec(m_, x_, ghosts_, y_);
    // ||y||^2; max and min of y_i / x_i (x > 0)
    double yy = 0.0;
    std::array<double, 2> ratios{0.0, -std::numeric_limits<double>::infinity()};
    for (std::size_t i = 0; i < y_.size(); ++i) {
      yy += y_[i] * y_[i];
      const double r = y_[i] / x_[i];
      ratios[0] = std::max(ratios[0], r);
      ratios[1] = std::max(ratios[1], -r);
    }
    yy = reduce(m_.comm(), yy, MPI_SUM);
    par::check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, ratios.data(), 2, MPI_DOUBLE, MPI_MAX, m_.comm().get()),
        "MPI_Allreduce");
    ++out.iterations;
    previous_ = out.estimate;
    out.estimate = std::sqrt(yy / xx_);
    out.upper_bound = std::min(out.upper_bound, ratios[0] * (1.0 + margin_));
    out.lower_bound = std::max(out.lower_bound, -ratios[1] * (1.0 - margin_));
    null_ = yy == 0.0;  // M x = 0 for an x > 0: M = 0, rho = 0 (the bounds say so)
    if (null_) return;
    // x = y / ||y||, floored
    const double norm = std::sqrt(yy);
    double largest = 0.0;
    for (std::size_t i = 0; i < x_.size(); ++i) {
      x_[i] = y_[i] / norm;
      largest = std::max(largest, x_[i]);
    }
    const double floor = 1e-12 * reduce(m_.comm(), largest, MPI_MAX);
    for (double& v : x_) v = std::max(v, floor);
    xx_ = 0.0;
    for (const double v : x_) xx_ += v * v;
    xx_ = reduce(m_.comm(), xx_, MPI_SUM);
  }

  /// Raises out.lower_bound with the lower bounds of x cut to its entries
  /// of at least a fraction of the largest (1e-3, 0.1, 0.5): where a part of
  /// M with a larger radius than the rest has come to dominate the iterate,
  /// its rows alone bound rho from below. Three mat-vecs. Collective.
  void cut_lower_bounds(JacobiRho& out) {
    double largest = 0.0;
    for (const double v : x_) largest = std::max(largest, v);
    largest = reduce(m_.comm(), largest, MPI_MAX);
    std::vector<double> cut(x_.size());
    for (const double fraction : {1e-3, 0.1, 0.5}) {
      for (std::size_t i = 0; i < x_.size(); ++i) cut[i] = x_[i] >= fraction * largest ? x_[i] : 0;
      m_.exchange_ghosts(cut, ghosts_);
      abs_jacobi_matvec(m_, cut, ghosts_, y_);
      // min over the cut's support of (M cut)_i / cut_i
      double low = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < cut.size(); ++i)
        if (cut[i] > 0.0) low = std::min(low, y_[i] / cut[i]);
      low = reduce(m_.comm(), low, MPI_MIN);
      if (std::isfinite(low)) out.lower_bound = std::max(out.lower_bound, low * (1.0 - margin_));
    }
  }

  /// True when the last estimate changed by less than rtol (relative), or M x = 0.
  bool settled(const JacobiRho& out, double rtol) const {
    return null_ || std::abs(out.estimate - previous_) <= rtol * out.estimate;
  }

 private:
  const sparse::DistMatrix& m_;
  std::vector<double> x_, y_, ghosts_;
  double xx_ = 0.0;
  double margin_ = 0.0;
  double previous_ = -1.0;
  bool null_ = false;
};

/// The verdict the bounds prove, if any.
RhoVerdict bounds_verdict(const JacobiRho& r) {
  if (r.upper_bound < 1.0) return RhoVerdict::below_one;
  if (r.lower_bound >= 1.0) return RhoVerdict::at_least_one;
  return RhoVerdict::undecided;
}

}  // namespace

std::string_view rho_verdict_name(RhoVerdict verdict) noexcept {
  static constexpr std::array<std::string_view, 3> names{"below_one", "at_least_one", "undecided"};
  return core::enum_name(names, verdict);
}

std::string_view rho_proof_name(RhoProof proof) noexcept {
  static constexpr std::array<std::string_view, 3> names{"none", "dominance", "bounds"};
  return core::enum_name(names, proof);
}

JacobiRho estimate_jacobi_rho(const sparse::DistMatrix& matrix, const ops::CsrOperator& op,
                              const RhoOptions& options) {
  for (const double d : op.diagonal())
    if (d == 0.0) throw std::invalid_argument("estimate_jacobi_rho: a zero diagonal entry");
  JacobiRho out;
  out.upper_bound = std::numeric_limits<double>::infinity();
  const RhoVerdict dominance = detail::dominance_verdict(matrix);
  if (dominance != RhoVerdict::undecided) {
    out.verdict = dominance;
    out.proof = RhoProof::dominance;
  }
  PowerIteration power(matrix);
  // Per iteration: one ghost exchange, one pass over the rows (M x), four
  // reductions of one or two doubles; every 10th while undecided, three
  // more of each for the cut lower bounds.
  for (int it = 1; it <= std::max(options.iterations, options.max_iterations); ++it) {
    power.step(out);
    const bool settled = power.settled(out, options.rtol);
    if (out.proof != RhoProof::dominance) {
      if (bounds_verdict(out) == RhoVerdict::undecided &&
          (settled || it % 10 == 0 || it == options.max_iterations)) {
        power.cut_lower_bounds(out);
      }
      out.verdict = bounds_verdict(out);
      out.proof = out.verdict == RhoVerdict::undecided ? RhoProof::none : RhoProof::bounds;
    }
    // The estimate is wanted until it settles (or for `iterations`); the
    // verdict, until the bounds decide (or for `max_iterations`).
    const bool estimate_done = settled || it >= options.iterations;
    if (estimate_done && out.verdict != RhoVerdict::undecided) break;
    if (settled && power.settled(out, 0.0)) break;  // M x = 0: nothing more to learn
  }
  // Weak dominance: rho <= 1 whatever the iterates gave.
  if (out.proof == RhoProof::dominance) out.upper_bound = std::min(out.upper_bound, 1.0);
  if (out.verdict == RhoVerdict::at_least_one && out.proof == RhoProof::dominance)
    out.lower_bound = std::max(out.lower_bound, 1.0);
  return out;
}

}  // namespace asyncsolve::solvers
