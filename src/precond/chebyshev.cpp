// chebyshev: z = p(D^-1 A) D^-1 r, the Chebyshev iteration of DEGREE steps
// from z = 0 on A z = r with the Jacobi preconditioner D (Saad, Iterative
// Methods for Sparse Linear Systems, Algorithm 12.1), on the interval
// [lambda_min, lambda_max] of D^-1 A. Setup estimates the interval once with
// a few Jacobi-preconditioned CG steps: their coefficients are the Lanczos
// tridiagonal T of D^-1 A, whose extreme eigenvalues (Ritz values, LAPACK
// dstev) are the estimates.
//
// lambda_max must not fall short. The residual polynomial after DEGREE
// steps, q(t) = T_k((theta - t) / delta) / T_k(theta / delta), has degree
// k = DEGREE + 1, and M^-1 = p(D^-1 A) D^-1 with t p(t) = 1 - q(t) is
// positive definite exactly when q < 1 on the spectrum: always for odd k,
// but for even k only below lambda_min + lambda_max. A Ritz value lies
// below the true largest eigenvalue, so lambda_max is the largest Ritz value
// raised by lambda_max_factor -- when the Lanczos steps have found it: its
// residual |beta_{m+1} s_m| (an eigenvalue lies that close to it) fits in
// the factor's margin. Otherwise (too few steps: a Ritz value of 2 steps on
// a Poisson matrix is some 35% short) lambda_max is the Gershgorin bound of
// D^-1 A, max_i sum_j |a_ij| / |a_ii|, which no eigenvalue exceeds; and
// never more than that bound. A Ritz value <= 0, or p^T A p <= 0 in a
// Lanczos step, shows that A is not positive definite: refused at setup
// (NotPositiveDefinite), before the solve.
//
// Per apply (one rank, per unknown): DEGREE mat-vecs (each one halo
// exchange), no inner product, so no global reduction; memory 16 B for
// d = D^-1 r / theta, then per step 16 (A d) + 56 (res -= A d, d and z
// updated).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "pc_option_specs.hpp"
#include "precond_impl.hpp"

// LAPACK's symmetric tridiagonal eigensolver (gfortran calling convention:
// the character argument's hidden length at the end).
extern "C" void dstev_(const char* jobz, const int* n, double* d, double* e, double* z,
                       const int* ldz, double* work, int* info, std::size_t jobz_len);

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

/// The extreme eigenvalues of the symmetric tridiagonal T (diagonal `a`,
/// off-diagonal `b`, one shorter) and the last component of the unit
/// eigenvector of the largest (LAPACK dstev).
struct TridiagonalExtremes {
  double smallest;
  double largest;
  double largest_last;  ///< s_m of the largest eigenvalue's eigenvector
};

TridiagonalExtremes tridiagonal_extremes(std::vector<double> a, std::vector<double> b) {
  const int n = static_cast<int>(a.size());
  b.resize(a.size());  // dstev's e has n - 1 entries, and room for n
  std::vector<double> z(a.size() * a.size());
  std::vector<double> work(2 * a.size());
  int info = 0;
  dstev_("V", &n, a.data(), b.data(), z.data(), &n, work.data(), &info, 1);
  if (info != 0) {
    throw core::CollectiveFailure(fmt::format(
        "--pc chebyshev: LAPACK dstev failed on the Lanczos tridiagonal (info {})", info));
  }
  return {a.front(), a.back(), z.back()};  // ascending; the last column's last entry
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
    const Estimate e = estimate(steps);
    if (!(e.ritz_min > 0.0)) {
      throw NotPositiveDefinite(fmt::format(
          "--pc chebyshev: D^-1 A has an eigenvalue at or below {:.6e} (the smallest Ritz value "
          "of {} Lanczos steps), so A is not positive definite, which Chebyshev and the CG "
          "methods need",
          e.ritz_min, e.steps));
    }
    // lambda_max: the largest Ritz value raised by the factor where the
    // Lanczos steps have found it (its residual within the factor's margin),
    // else the Gershgorin bound; never above that bound.
    const double gershgorin = op.gershgorin_bound();
    const bool found = e.ritz_max + e.ritz_max_residual <= factor * e.ritz_max;
    lambda_min_ = e.ritz_min;
    lambda_max_ = std::min(found ? factor * e.ritz_max : gershgorin, gershgorin);
    // Every eigenvalue equal (D^-1 A = I): any interval about it will do.
    if (!(lambda_max_ > lambda_min_)) lambda_min_ = 0.5 * lambda_max_;
    report_.numbers = {{"degree", degree_},
                       {"lanczos_steps", e.steps},
                       {"ritz_min", e.ritz_min},
                       {"ritz_max", e.ritz_max},
                       {"ritz_max_residual", e.ritz_max_residual},
                       {"gershgorin_bound", gershgorin},
                       {"lambda_max_from_ritz", found ? 1.0 : 0.0},
                       {"lambda_min", lambda_min_},
                       {"lambda_max", lambda_max_}};
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
    double ritz_max_residual;  ///< |beta_{m+1} s_m|: an eigenvalue lies this close to ritz_max
  };

  /// Collective: `steps` CG steps on A x = v with M = D from x = 0 (v a
  /// fixed pseudo-random vector), two blocking reductions each; the
  /// extreme eigenvalues of their Lanczos tridiagonal, and the residual of
  /// the largest.
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
      if (!std::isfinite(pq)) {
        throw core::InputError(fmt::format(
            "--pc chebyshev: p^T A p = {} at Lanczos step {}: expected finite values", pq, j + 1));
      }
      if (!(pq > 0.0)) {
        throw NotPositiveDefinite(fmt::format(
            "--pc chebyshev: p^T A p = {:.6e} <= 0 at Lanczos step {}, so A is not positive "
            "definite, which Chebyshev and the CG methods need",
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
    // T's next off-diagonal entry, where the steps went on: beta_{m+1}
    const double beta_next = off.size() == diag.size() ? off.back() : 0.0;
    off.resize(diag.size() - 1);
    const int n = static_cast<int>(diag.size());
    const TridiagonalExtremes t = tridiagonal_extremes(diag, off);
    return {t.smallest, t.largest, n, std::abs(beta_next * t.largest_last)};
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
