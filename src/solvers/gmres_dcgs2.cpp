// GMRES's Arnoldi step with delayed classical Gram-Schmidt (DCGS2 of
// Swirydowicz, Langou, Ananthan, Yang and Thomas, Numer. Linear Algebra
// Appl. 2021; Bielich, Langou, Thomas, Swirydowicz, Yamazaki and Boman,
// Parallel Comput. 2022), --cgs-refinement delayed. Every vector is
// projected twice, as with `always`, but its second pass is made one
// iteration later, fused with the next vector's first pass: an iteration
// makes one reduction and reads the basis twice, where `always` makes three
// and reads it three times.
//
// Step j holds the orthonormal q_0 .. q_{j-1} and u_j, the vector the
// previous step projected once (r_0 at j = 0). It computes w = A M^-1 u_j,
// then, in one pass and one reduction, a = Q^T u_j, b = Q^T w, u_j . u_j and
// u_j . w. Then:
//   r = ||u_j - Q a|| = sqrt(u.u - a.a)           (Pythagoras)
//   q_j = (u_j - Q a) / r                           (the delayed second pass)
//   gamma = q_j . w = (u.w - a.b) / r
//   u_{j+1} = (w - Q b - gamma q_j) / sigma_j
// (one pass writes both), sigma_j^2 = w.w - b.b - gamma^2 the projected
// vector's norm by Pythagoras (a scale only: it keeps the stored vectors
// near unit length, whatever the size of the operator; a poor value where
// the subtraction cancels costs nothing but that). H's column j - 1 is
// completed with a and r, and rotated: the residual estimate of iteration j
// lags the mat-vec by one step. The operator is applied to u_j, not to
// q_j, so H is the Hessenberg matrix of A M^-1 U~ = Q H with
// U~ = (u_k / rho_k), rho_k = ||u_k||: the correction of x is M^-1 U~ y,
// rewritten over the orthonormal basis with the triangular T of
// u_k / rho_k = Q t_k (t_k = (a_k, r_k) / rho_k), or, for fgmres, over the
// kept z_k = M_k^-1 u_k directly.
//
// Safeguard: where u.u - a.a falls below 1e-8 u.u (u_j nearly in span(Q):
// the subtraction has lost half its digits), u_j's second pass is made
// explicitly with its norm (one more reduction) and w is projected against
// the completed basis in its own pass (classical Gram-Schmidt, one more
// reduction): the step costs what `always` costs, and no digit is lost.
#include <cmath>
#include <numeric>

#include "asyncsolve/ops/multi_vector.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "gmres_common.hpp"

namespace asyncsolve::solvers::detail {

using grid::Field;

namespace {

/// Below this fraction of ||u||^2, ||u||^2 - ||a||^2 has lost half its digits.
constexpr double pythagoras_floor = 1e-8;

/// The scale of w's projection: sqrt(ww - cc) (w.w and the squared norm of
/// its projections), at least 1e-8 ||w|| where the difference cancels, and
/// 1 for a zero w.
double projected_norm(double ww, double cc) {
  const double floor = 1e-16 * ww;
  const double d = std::max(ww - cc, floor);
  return d > 0.0 ? std::sqrt(d) : 1.0;
}

}  // namespace

bool GmresCycle::step_delayed(int j, Field& z) {
  const auto n = static_cast<std::size_t>(j);
  Field& u = basis_.v[n];
  Field& w = basis_.v[n + 1];
  const long iteration = iterations_ + 1;
  // w = A z = A M^-1 u_j
  k_.matvec(z, w);
  // a = Q^T u_j, b = Q^T w, u_j . u_j, u_j . w, w . w: one pass, one reduction
  const std::size_t size = local_.size();
  k_.timed(orthog_phase, [&] { ops::mdot_pair(basis_.first(j), u, w, local_); });
  std::fill(local_.begin() + static_cast<std::ptrdiff_t>(2 * n + 3), local_.end(), 0.0);
  pair_->start(std::span(local_).first(size));
  pair_->wait(std::span(global_).first(size));
  for (std::size_t i = 0; i < 2 * n + 3; ++i) {
    check_finite("a Gram-Schmidt inner product", global_[i], iteration);
  }
  const std::vector<double> a(global_.begin(), global_.begin() + static_cast<std::ptrdiff_t>(n));
  const std::span<const double> b(global_.data() + n, n);
  const double uu = global_[2 * n];
  const double uw = global_[2 * n + 1];
  const double ww = global_[2 * n + 2];
  // u_j's second pass: its norm after it, and column j - 1 completed
  bool explicit_pass = false;
  const double r = reorthogonalised_norm(j, a, uu, u, explicit_pass);
  if (j > 0 && complete_column(j, a, r)) return true;
  const double rho = std::sqrt(uu);
  // r_0 = beta u_0 = beta r q_0
  if (j == 0) lsq_.start(beta_ * r);
  if (explicit_pass) {
    sigma_[n] = project_explicitly(j, rho, r, ww, u, w);
  } else {
    // q_j = (u_j - Q a) / r; u_{j+1} = (w - Q b - gamma q_j) / sigma
    const double gamma = (uw - std::inner_product(a.begin(), a.end(), b.begin(), 0.0)) / r;
    const double sigma =
        projected_norm(ww, std::inner_product(b.begin(), b.end(), b.begin(), gamma * gamma));
    for (std::size_t i = 0; i < n; ++i) {
      lsq_.h(static_cast<int>(i), j) = b[i] / rho;
      coef_[i] = b[i] - gamma * a[i] / r;
    }
    lsq_.h(j, j) = gamma / rho;
    k_.timed(orthog_phase, [&] {
      ops::dcgs2_update(basis_.first(j), a, std::span(coef_).first(n), gamma / r, 1.0 / r,
                        1.0 / sigma, u, w);
    });
    sigma_[n] = sigma;
  }
  // u_j / rho_j = Q t_j
  const auto rows = static_cast<std::size_t>(m_) + 1;
  for (std::size_t i = 0; i < n; ++i) t_[n * rows + i] = a[i] / rho;
  t_[n * rows + n] = r / rho;
  rho_[n] = rho;
  return false;
}

bool GmresCycle::close() {
  if (!delayed_) return false;
  // u_m's inner products with the basis and itself, its second pass, the
  // cycle's last column
  const int j = m_;
  const auto n = static_cast<std::size_t>(j);
  Field& u = basis_.v[n];
  const std::size_t size = local_.size();
  k_.timed(orthog_phase, [&] { ops::mdot(basis_.first(j + 1), u, local_); });
  std::fill(local_.begin() + static_cast<std::ptrdiff_t>(n + 1), local_.end(), 0.0);
  pair_->start(std::span(local_).first(size));
  pair_->wait(std::span(global_).first(size));
  for (std::size_t i = 0; i <= n; ++i) {
    check_finite("a Gram-Schmidt inner product", global_[i], iterations_ + 1);
  }
  const std::vector<double> a(global_.begin(), global_.begin() + static_cast<std::ptrdiff_t>(n));
  bool explicit_pass = false;
  const double r = reorthogonalised_norm(j, a, global_[n], u, explicit_pass);
  return complete_column(j, a, r);
}

/// ||u_j - Q a||, by Pythagoras from uu = ||u_j||^2, or, where that has lost
/// half its digits, by making the pass (u_j -= Q a, sets `explicit_pass`)
/// and reducing its norm.
double GmresCycle::reorthogonalised_norm(int j, std::span<const double> a, double uu, Field& u,
                                         bool& explicit_pass) {
  const double aa = std::inner_product(a.begin(), a.end(), a.begin(), 0.0);
  const double r2 = uu - aa;
  if (r2 >= pythagoras_floor * uu) return std::sqrt(r2);
  explicit_pass = true;
  const auto n = static_cast<std::size_t>(j);
  for (std::size_t i = 0; i < n; ++i) coef_[i] = -a[i];
  const double local = k_.timed(
      orthog_phase, [&] { return ops::maxpy_norm(basis_.first(j), std::span(coef_).first(n), u); });
  const double exact = norm_.reduce(local);
  check_finite("||u||^2", exact, iterations_ + 1);
  return std::sqrt(std::max(exact, 0.0));
}

/// H's column j - 1 (first pass's coefficients in place) completed by u_j's
/// second pass: += f a, H(j, j - 1) = f r (f = sigma / rho of step j - 1);
/// rotated; the stopping test. True when
/// the method stops (a zero r, u_j in span(Q), is a happy breakdown).
bool GmresCycle::complete_column(int j, std::span<const double> a, double r) {
  // A M^-1 u~_{j-1} = Q c + (sigma_{j-1} / rho_{j-1}) u_j, u_j = Q a + r q_j
  const auto last = static_cast<std::size_t>(j - 1);
  const double f = sigma_[last] / rho_[last];
  for (int i = 0; i < j; ++i) lsq_.h(i, j - 1) += f * a[static_cast<std::size_t>(i)];
  lsq_.h(j, j - 1) = f * r;
  k_.note_refinement();
  estimate_ = k_.timed(orthog_phase, [&] { return lsq_.rotate(j - 1, iterations_ + 1); });
  ++iterations_;
  columns_ = j;
  const bool stop = k_.stop(iterations_, estimate_ * estimate_, -1.0);
  return stop || r == 0.0;
}

/// The safeguard's end of step j, u_j already reorthogonalised (norm r, not
/// yet scaled): q_j = u_j / r, then w projected once against q_0 .. q_j in
/// its own pass and scaled by 1 / sigma (returned; ww = w . w).
void GmresCycle::start_delayed() {
  // u_0 = r / beta: the cycle's vectors near unit length from the start
  k_.timed(orthog_phase, [&] { ops::scal(1.0 / beta_, basis_.v[0]); });
}

double GmresCycle::project_explicitly(int j, double rho, double r, double ww, Field& u, Field& w) {
  const auto n = static_cast<std::size_t>(j) + 1;
  const std::size_t size = static_cast<std::size_t>(m_) + 1;
  // q_j = u_j / r (the update with an empty basis: w unchanged)
  k_.timed(orthog_phase, [&] {
    ops::dcgs2_update(basis_.first(0), {}, {}, 0.0, 1.0 / r, 1.0, u, w);
    ops::mdot(basis_.first(j + 1), w, local_);
  });
  std::fill(local_.begin() + static_cast<std::ptrdiff_t>(n), local_.end(), 0.0);
  dots_.start(std::span(local_).first(size));
  dots_.wait(std::span(global_).first(size));
  double cc = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    check_finite("v_k^T A M^-1 v_j", global_[i], iterations_ + 1);
    lsq_.h(static_cast<int>(i), j) = global_[i] / rho;
    cc += global_[i] * global_[i];
  }
  const double sigma = projected_norm(ww, cc);
  // w = (w - sum_{k<j} c_k q_k - c_j q_j) / sigma (q_j unchanged: coefficients 0)
  const std::vector<double> zero(n - 1, 0.0);
  k_.timed(orthog_phase, [&] {
    ops::dcgs2_update(basis_.first(j), zero, std::span(global_).first(n - 1), global_[n - 1], 1.0,
                      1.0 / sigma, u, w);
  });
  return sigma;
}

}  // namespace asyncsolve::solvers::detail
