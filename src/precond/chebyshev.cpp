// chebyshev: z = p(D^-1 A) D^-1 r, the Chebyshev iteration of DEGREE steps
// from z = 0 on A z = r with the Jacobi preconditioner D (Saad, Iterative
// Methods for Sparse Linear Systems, Algorithm 12.1), on the interval
// [lambda_min, lambda_max] of D^-1 A. Setup estimates the interval once with
// a few Jacobi-preconditioned CG steps: their coefficients are the Lanczos
// tridiagonal T of D^-1 A, whose extreme eigenvalues (Sturm bisection) are
// the estimates; lambda_max is raised by lambda_max_factor (a Ritz value lies
// below the true largest eigenvalue, and the polynomial is positive only up
// to the interval's end).
//
// Per apply (one rank, per unknown): DEGREE mat-vecs (each one halo
// exchange), no inner product, so no global reduction; memory 16 B for
// d = D^-1 r / theta, then per step 16 (A d) + 56 (res -= A d, d and z
// updated).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "pc_option_specs.hpp"
#include "precond_impl.hpp"

namespace asyncsolve::precond::detail {

namespace {

using grid::Field;

/// Calls f(offset) for every interior point of `f`'s shape.
template <class F>
void for_each_point(const Field& shape, F&& f) {
  const grid::Int3& n = shape.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j) {
      const std::ptrdiff_t base = shape.index(0, j, k);
      for (int i = 0; i < n[0]; ++i) f(base + i);
    }
}

/// D^-1 at `at` of a Scaling.
double at(const ops::Scaling& s, std::ptrdiff_t offset) {
  return s.values != nullptr ? s.values->origin()[offset] : s.constant;
}

/// Eigenvalues of T (diagonal `a`, off-diagonal `b`) below x (Sturm count).
int count_below(const std::vector<double>& a, const std::vector<double>& b, double x) {
  int count = 0;
  double q = 1.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double off = i == 0 ? 0.0 : b[i - 1] * b[i - 1];
    q = a[i] - x - (i == 0 ? 0.0 : off / q);
    if (q == 0.0) q = -std::numeric_limits<double>::epsilon() * (std::abs(x) + 1.0);
    if (q < 0.0) ++count;
  }
  return count;
}

/// The `index`-th smallest eigenvalue of T by bisection.
double tridiagonal_eigenvalue(const std::vector<double>& a, const std::vector<double>& b,
                              int index) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double r = (i > 0 ? std::abs(b[i - 1]) : 0.0) + (i < b.size() ? std::abs(b[i]) : 0.0);
    lo = std::min(lo, a[i] - r);
    hi = std::max(hi, a[i] + r);
  }
  for (int step = 0; step < 200 && hi - lo > 1e-14 * std::max(1.0, std::abs(hi)); ++step) {
    const double mid = 0.5 * (lo + hi);
    if (count_below(a, b, mid) > index) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return 0.5 * (lo + hi);
}

class Chebyshev final : public Preconditioner {
 public:
  Chebyshev(const PcSettings& settings, PcOperator& op)
      : op_(op),
        dinv_(op.inverse_diagonal()),
        degree_(settings.degree),
        d_(op.make_vector()),
        res_(op.make_vector()),
        q_(op.make_vector()) {
    const double t0 = core::now_s();
    report_.name = "chebyshev";
    const int steps = settings.chebyshev.lanczos_steps;
    const double factor = settings.chebyshev.lambda_max_factor;
    const auto [ritz_min, ritz_max, done] = estimate(steps);
    lambda_min_ = ritz_min;
    lambda_max_ = factor * ritz_max;
    if (!(lambda_min_ > 0.0) || !(lambda_max_ > lambda_min_)) {
      throw core::InputError(fmt::format(
          "--pc chebyshev: the Lanczos steps estimate the eigenvalues of D^-1 A in [{:.6e}, "
          "{:.6e}]: expected a positive definite A",
          ritz_min, ritz_max));
    }
    report_.numbers = {{"degree", degree_},         {"lanczos_steps", done},
                       {"ritz_min", ritz_min},      {"ritz_max", ritz_max},
                       {"lambda_min", lambda_min_}, {"lambda_max", lambda_max_}};
    for (const PcOptionSpec& spec : pc_option_specs(PcKind::chebyshev))
      report_.settings.emplace_back(std::string(spec.name), pc_option_value(spec, settings));
    report_.setup_s = core::now_s() - t0;
  }

  // z = p(D^-1 A) D^-1 r: theta and delta the interval's centre and half
  // width, sigma = theta / delta.
  void apply(Field& r, Field& z) override {
    const double theta = 0.5 * (lambda_max_ + lambda_min_);
    const double delta = 0.5 * (lambda_max_ - lambda_min_);
    const double sigma = theta / delta;
    double rho = 1.0 / sigma;
    // d = D^-1 r / theta; z = d; res = r
    for_each_point(r, [&](std::ptrdiff_t i) {
      const double ri = r.origin()[i];
      const double di = at(dinv_, i) * ri / theta;
      d_.origin()[i] = di;
      z.origin()[i] = di;
      res_.origin()[i] = ri;
    });
    for (int step = 1; step <= degree_; ++step) {
      // q = A d
      op_.apply(d_, q_);
      ++report_.matvecs;
      const double rho_next = 1.0 / (2.0 * sigma - rho);
      const double c_d = rho_next * rho;
      const double c_r = 2.0 * rho_next / delta;
      // res -= q; d = rho_next rho d + 2 rho_next / delta D^-1 res; z += d
      for_each_point(r, [&](std::ptrdiff_t i) {
        const double ri = res_.origin()[i] - q_.origin()[i];
        res_.origin()[i] = ri;
        const double di = c_d * d_.origin()[i] + c_r * at(dinv_, i) * ri;
        d_.origin()[i] = di;
        z.origin()[i] += di;
      });
      rho = rho_next;
    }
    ++report_.applies;
  }

  const PcReport& report() const override { return report_; }

 private:
  struct Estimate {
    double ritz_min;
    double ritz_max;
    int steps;
  };

  /// Collective: `steps` CG steps on A x = v with M = D from x = 0 (v a
  /// fixed pseudo-random vector), two blocking reductions each; the
  /// extreme eigenvalues of their Lanczos tridiagonal.
  Estimate estimate(int steps) {
    auto sum = collectives::make_allreduce(collectives::AllreduceAlgorithm{}, op_.comm());
    Field& r = res_;
    Field& p = d_;
    Field& q = q_;
    Field z = op_.make_vector();
    // r = v: entries in (0.5, 1.5), from a hash of the rank and the point
    std::uint64_t state = 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(op_.comm().rank());
    for_each_point(r, [&](std::ptrdiff_t i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      r.origin()[i] = 0.5 + static_cast<double>(state >> 11) * 0x1.0p-53;
      z.origin()[i] = at(dinv_, i) * r.origin()[i];
      p.origin()[i] = z.origin()[i];
    });
    double rz = sum->sum(ops::dot(r, z));
    const double rz0 = rz;
    std::vector<double> diag;
    std::vector<double> off;
    double alpha_old = 1.0;
    double beta_old = 0.0;
    for (int j = 0; j < steps; ++j) {
      // q = A p; alpha = r^T z / p^T A p
      op_.apply(p, q);
      const double pq = sum->sum(ops::dot(p, q));
      if (!(pq > 0.0) || !std::isfinite(pq)) {
        throw core::InputError(fmt::format(
            "--pc chebyshev: p^T A p = {:.6e} at Lanczos step {}: expected a positive definite "
            "A",
            pq, j + 1));
      }
      const double alpha = rz / pq;
      // r -= alpha q; z = D^-1 r
      for_each_point(r, [&](std::ptrdiff_t i) {
        r.origin()[i] -= alpha * q.origin()[i];
        z.origin()[i] = at(dinv_, i) * r.origin()[i];
      });
      const double rz_new = sum->sum(ops::dot(r, z));
      const double beta = rz_new / rz;
      // T(j, j) = 1/alpha_j + beta_{j-1}/alpha_{j-1}; T(j, j+1) = sqrt(beta_j)/alpha_j
      diag.push_back(1.0 / alpha + (j > 0 ? beta_old / alpha_old : 0.0));
      if (!(rz_new > 1e-28 * rz0) || !std::isfinite(rz_new)) break;
      off.push_back(std::sqrt(beta) / alpha);
      // p = z + beta p
      ops::xpby(z, beta, p);
      rz = rz_new;
      alpha_old = alpha;
      beta_old = beta;
    }
    off.resize(diag.size() > 0 ? diag.size() - 1 : 0);
    const int n = static_cast<int>(diag.size());
    return {tridiagonal_eigenvalue(diag, off, 0), tridiagonal_eigenvalue(diag, off, n - 1), n};
  }

  PcOperator& op_;
  ops::Scaling dinv_;
  int degree_;
  Field d_, res_, q_;
  double lambda_min_ = 0.0;
  double lambda_max_ = 0.0;
  PcReport report_;
};

}  // namespace

std::unique_ptr<Preconditioner> make_chebyshev(const PcSettings& settings, PcOperator& op) {
  return std::make_unique<Chebyshev>(settings, op);
}

}  // namespace asyncsolve::precond::detail
