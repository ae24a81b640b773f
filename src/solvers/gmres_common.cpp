#include "gmres_common.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "asyncsolve/solvers/norm.hpp"

namespace asyncsolve::solvers::detail {

using grid::Field;

// ---- RightPreconditioner ----------------------------------------------------

RightPreconditioner::RightPreconditioner(KrylovContext& k)
    : k_(k),
      general_(k.has_preconditioner()),
      identity_(!general_ && k.options().pc.kind != precond::PcKind::jacobi),
      minv_(k.options().pc.kind == precond::PcKind::jacobi && !general_ ? k.inverse_diagonal()
                                                                        : ops::Scaling{}) {}

Field& RightPreconditioner::apply(Field& v, Field& z) {
  if (identity_) return v;
  if (general_) {
    k_.apply_preconditioner(v, z);
    return z;
  }
  // z = D^-1 v
  const double t0 = core::now_s();
  ops::scale(minv_, v, z);
  k_.add_time(precond_phase, core::now_s() - t0);
  return z;
}

// ---- ArnoldiLsq -------------------------------------------------------------

ArnoldiLsq::ArnoldiLsq(int m)
    : m_(m),
      h_(static_cast<std::size_t>(m + 1) * static_cast<std::size_t>(m)),
      r_(h_.size()),
      c_(static_cast<std::size_t>(m)),
      s_(static_cast<std::size_t>(m)),
      g_(static_cast<std::size_t>(m + 1)) {}

void ArnoldiLsq::start(double beta) {
  std::fill(h_.begin(), h_.end(), 0.0);
  std::fill(g_.begin(), g_.end(), 0.0);
  g_[0] = beta;
}

double ArnoldiLsq::rotate(int j, long iteration) {
  // R's column j = H's column j with the rotations of columns 0 .. j-1 applied
  for (int i = 0; i <= j + 1; ++i) r_[index(i, j)] = h_[index(i, j)];
  for (int i = 0; i < j; ++i) {
    const double a = r_[index(i, j)];
    const double b = r_[index(i + 1, j)];
    r_[index(i, j)] = c_[i] * a + s_[i] * b;
    r_[index(i + 1, j)] = -s_[i] * a + c_[i] * b;
  }
  // the rotation that zeroes H(j+1, j), applied to the column and to g
  const double a = r_[index(j, j)];
  const double b = r_[index(j + 1, j)];
  const double norm = std::hypot(a, b);
  if (!std::isfinite(norm)) {
    throw Breakdown{fmt::format("a Hessenberg entry = {} at iteration {}", norm, iteration)};
  }
  if (norm == 0.0) {
    throw Breakdown{
        fmt::format("a zero Krylov vector at iteration {}: A M^-1 v_j = 0 (the matrix or the "
                    "preconditioner is singular)",
                    iteration)};
  }
  c_[j] = a / norm;
  s_[j] = b / norm;
  r_[index(j, j)] = norm;
  r_[index(j + 1, j)] = 0.0;
  g_[j + 1] = -s_[j] * g_[j];
  g_[j] = c_[j] * g_[j];
  return std::abs(g_[j + 1]);
}

std::vector<double> ArnoldiLsq::solve(int n, long iteration) const {
  std::vector<double> y(static_cast<std::size_t>(n));
  // R y = g by back substitution
  for (int i = n - 1; i >= 0; --i) {
    double t = g_[i];
    for (int j = i + 1; j < n; ++j) t -= r_[index(i, j)] * y[j];
    const double d = r_[index(i, i)];
    if (d == 0.0) {
      throw Breakdown{fmt::format("R({}, {}) = 0 in GMRES's least-squares problem at iteration {}",
                                  i, i, iteration)};
    }
    y[i] = t / d;
  }
  return y;
}

// ---- Basis ------------------------------------------------------------------

Basis::Basis(KrylovContext& k, int vectors) {
  v.reserve(static_cast<std::size_t>(vectors));
  for (int i = 0; i < vectors; ++i) v.push_back(k.make_field());
  for (Field& f : v) pointers.push_back(&f);
  scale.assign(static_cast<std::size_t>(vectors), 1.0);
}

// ---- GmresCycle -------------------------------------------------------------

GmresCycle::GmresCycle(KrylovContext& k)
    : k_(k),
      m_(k.options().restart),
      basis_(k, m_ + 1),
      lsq_(m_),
      dots_(k.add_inner_product(static_cast<std::size_t>(m_) + 1, reduce_start_phase,
                                reduce_wait_phase)),
      norm_(k.add_inner_product(1, reduce_start_phase, reduce_wait_phase)),
      local_(2 * static_cast<std::size_t>(m_) + 3),
      global_(local_.size()),
      coef_(local_.size()),
      delayed_(k.options().refinement == CgsRefinement::delayed) {
  if (delayed_) {
    pair_ = &k.add_inner_product(local_.size(), reduce_start_phase, reduce_wait_phase);
    t_.assign(static_cast<std::size_t>(m_ + 1) * static_cast<std::size_t>(m_), 0.0);
    rho_.assign(static_cast<std::size_t>(m_), 1.0);
    sigma_.assign(static_cast<std::size_t>(m_), 1.0);
  }
}

bool GmresCycle::begin() {
  // r = b - A x into V[0] (V[1] holds A x meanwhile); beta = ||r||
  const double rr = k_.initial_residual(basis_.v[1], basis_.v[0], norm_);
  check_finite("r^T r", rr, 0);
  if (k_.stop(0, rr, ops::dot(basis_.v[0], basis_.v[0]))) return true;
  beta_ = std::sqrt(rr);
  basis_.scale[0] = delayed_ ? 1.0 : 1.0 / beta_;  // v_0 = r / beta
  lsq_.start(beta_);
  estimate_ = beta_;
  columns_ = 0;
  if (delayed_) start_delayed();
  return false;
}

bool GmresCycle::step(int j, Field& z) {
  if (delayed_) return step_delayed(j, z);
  Field& w = basis_.v[static_cast<std::size_t>(j) + 1];
  // w = A z = A M^-1 V[j]
  k_.matvec(z, w);
  // H(0..j+1, j); V[j+1] = w orthogonalised (normalised through its scale)
  (void)orthogonalise(j, w);
  // the Givens rotations: the residual norm estimate |g_{j+1}|
  estimate_ = k_.timed(orthog_phase, [&] { return lsq_.rotate(j, iterations_ + 1); });
  ++iterations_;
  columns_ = j + 1;
  // stop when estimate / ||b|| < tol (or at max_iters, max_time); a happy
  // breakdown (H(j+1, j) = 0) makes the estimate 0
  return k_.stop(iterations_, estimate_ * estimate_, -1.0);
}

/// Adds the reduced c_q = V[q] . w (w = A M^-1 V[j], the true vector s_j w)
/// to H's column j as v_q . (s_j w), sets the update's coefficients
/// (w -= (v_q . w) v_q) and returns the squared norm of the projections.
double GmresCycle::project(int j, long iteration) {
  const double sj = basis_.scale[static_cast<std::size_t>(j)];
  double hn2 = 0.0;
  for (int q = 0; q <= j; ++q) {
    check_finite("v_k^T A M^-1 v_j", global_[q], iteration);
    const double sq = basis_.scale[static_cast<std::size_t>(q)];
    const double hq = sq * sj * global_[q];
    lsq_.h(q, j) += hq;
    hn2 += hq * hq;
    coef_[q] = -sq * sq * global_[q];
  }
  return hn2;
}

/// Classical Gram-Schmidt of w = A M^-1 V[j] against v_k = s_k V[k], k <= j:
/// one block of j+1 inner products (one reduction), then the update of w.
/// Without refinement the update computes ||w||^2 (one reduction). With it,
/// the update also computes the second pass's inner products with ||w||^2
/// (one reduction of j+2 values: the pass costs no extra memory traffic when
/// it turns out unneeded); a second update, with ||w||^2 (one reduction),
/// follows when PETSc's test asks for it. Returns H(j+1, j).
double GmresCycle::orthogonalise(int j, Field& w) {
  const int n = j + 1;
  const double sj = basis_.scale[static_cast<std::size_t>(j)];
  const CgsRefinement refinement = k_.options().refinement;
  const long iteration = iterations_ + 1;
  // c_k = V[k] . w (local, then reduced)
  k_.timed(orthog_phase, [&] { ops::mdot(basis_.first(n), w, local_); });
  std::fill(local_.begin() + n, local_.end(), 0.0);
  const std::size_t size = static_cast<std::size_t>(m_) + 1;
  dots_.start(std::span(local_).first(size));
  dots_.wait(std::span(global_).first(size));
  const double hn2 = project(j, iteration);
  double wn2 = 0.0;
  if (refinement == CgsRefinement::never) {
    // w -= sum_k (v_k . w) v_k; ||w||^2 in the same pass
    const double local_norm =
        k_.timed(orthog_phase, [&] { return ops::maxpy_norm(basis_.first(n), coef_, w); });
    wn2 = norm_.reduce(local_norm);
  } else {
    // w -= sum_k (v_k . w) v_k; the second pass's V[k] . w and ||w||^2 in the same pass
    k_.timed(orthog_phase, [&] { ops::maxpy_mdot_norm(basis_.first(n), coef_, w, local_); });
    std::fill(local_.begin() + n + 1, local_.begin() + static_cast<std::ptrdiff_t>(size), 0.0);
    dots_.start(std::span(local_).first(size));
    dots_.wait(std::span(global_).first(size));
    wn2 = global_[static_cast<std::size_t>(n)];
    check_finite("||w||^2", wn2, iteration);
    // PETSc's "if needed": a second pass when the projected vector is shorter
    // than its projections (cancellation lost orthogonality)
    if (refinement == CgsRefinement::always || sj * sj * wn2 < hn2) {
      k_.note_refinement();
      (void)project(j, iteration);
      // w -= sum_k (v_k . w) v_k again; ||w||^2 in the same pass
      const double local_norm =
          k_.timed(orthog_phase, [&] { return ops::maxpy_norm(basis_.first(n), coef_, w); });
      wn2 = norm_.reduce(local_norm);
    }
  }
  check_finite("||w||^2", wn2, iteration);
  const double norm = std::sqrt(std::max(wn2, 0.0));
  const double hnext = sj * norm;
  lsq_.h(n, j) = hnext;
  basis_.scale[static_cast<std::size_t>(n)] = norm > 0.0 ? 1.0 / norm : 0.0;
  return hnext;
}

std::vector<double> GmresCycle::coefficients(int n, bool kept) const {
  std::vector<double> y = lsq_.solve(n, iterations_);
  if (!delayed_) {
    for (int q = 0; q < n; ++q) y[q] *= basis_.scale[static_cast<std::size_t>(q)];
    return y;
  }
  const auto un = static_cast<std::size_t>(n);
  // delayed: y holds the coefficients of u_k / rho_k
  if (kept) {
    for (std::size_t q = 0; q < un; ++q) y[q] /= rho_[q];
    return y;
  }
  // in the orthonormal basis: c = T y (T upper triangular)
  std::vector<double> c(un, 0.0);
  const auto rows = static_cast<std::size_t>(m_) + 1;
  for (std::size_t q = 0; q < un; ++q)
    for (std::size_t i = 0; i <= q; ++i) c[i] += t_[q * rows + i] * y[q];
  return c;
}

bool GmresCycle::restart() {
  // r = b - A x: the true residual
  const double rr = k_.initial_residual(basis_.v[1], basis_.v[0], norm_);
  check_finite("r^T r", rr, iterations_);
  k_.note_restart(iterations_, RestartReason::cycle, rr, estimate_ * estimate_);
  if (k_.stop(iterations_, rr, ops::dot(basis_.v[0], basis_.v[0]))) return true;
  const double true_norm = std::sqrt(rr);
  if (true_norm - estimate_ > 0.1 * beta_) {
    throw Breakdown{fmt::format(
        "the residual estimate {:.6e} of the cycle ending at iteration {} is far from the true "
        "residual {:.6e} (the cycle started at {:.6e}): the recurrence lost accuracy",
        estimate_ / k_.b_norm(), iterations_, true_norm / k_.b_norm(), beta_ / k_.b_norm())};
  }
  progress_.check(beta_, true_norm, iterations_, k_.b_norm());
  beta_ = true_norm;
  basis_.scale[0] = delayed_ ? 1.0 : 1.0 / beta_;
  lsq_.start(beta_);
  estimate_ = beta_;
  columns_ = 0;
  if (delayed_) start_delayed();
  return false;
}

void CycleProgress::check(double start, double end, long iteration, double b_norm) {
  constexpr double least = 1e-12;  // the relative decrease that counts as progress
  if (end < (1.0 - least) * start || !(end > stagnation_floor * b_norm)) {
    stagnant_ = 0;
    return;
  }
  if (++stagnant_ < 2) return;
  throw Breakdown{fmt::format(
      "stagnation at iteration {}: two restart cycles in a row left the true residual at {:.6e}, "
      "where they began ({:.6e}), and {} would repeat the same cycle from the same iterate (the "
      "system may be singular and inconsistent; if not, try a larger --restart or a stronger --pc)",
      iteration, end / b_norm, start / b_norm, method_)};
}

void RestartProgress::restarted(double true_norm, long iteration, double b_norm, bool refusal) {
  constexpr double least = 1e-3;  // the relative decrease that counts as progress
  constexpr int limit = 10;       // restarts in a row without it
  const bool rounding = !(true_norm > stagnation_floor * b_norm);
  // Above the rounding level a breakdown's restart is no verdict: BiCGStab's
  // residual may rise 10^5-fold through a run of them on its way (a Grcar
  // matrix does it).
  if (!rounding && !refusal) return;
  if (best_ == 0.0 || true_norm < (rounding ? 1.0 : 1.0 - least) * best_) {
    best_ = best_ == 0.0 ? true_norm : std::min(best_, true_norm);
    stagnant_ = 0;
    return;
  }
  if (++stagnant_ < limit) return;
  throw Breakdown{fmt::format(
      "stagnation at iteration {}: the true residual at the last {} restarts (estimates it "
      "refused, or breakdowns) stayed above its smallest at a restart, {:.6e} (now {:.6e}); {}",
      iteration, limit, best_ / b_norm, true_norm / b_norm,
      rounding ? "it is at the rounding level of double precision, which --tol is below "
                 "(expected a tolerance the arithmetic can reach, e.g. 1e-12)"
               : fmt::format("{} cannot reach the tolerance from here (the system may be "
                             "singular and inconsistent)",
                             method_))};
}

void BreakdownRestarts::check(std::string_view quantity, double value, long iteration) {
  if (last_ == iteration) {
    throw Breakdown{fmt::format(
        "{} = {:.6e} ~ 0 at iteration {}, right after a restart for the same cause: {} cannot "
        "proceed",
        quantity, value, iteration, method_)};
  }
  last_ = iteration;
}

bool is_breakdown(double dot, double aa, double bb) {
  constexpr double cosine = 1e-14;
  // The norms' product, not their squares' (that overflows once the norms'
  // product passes 1e154, and any finite dot then counted as ~ 0).
  return std::abs(dot) <= cosine * (std::sqrt(std::max(aa, 0.0)) * std::sqrt(std::max(bb, 0.0)));
}

// ---- the correction of x -------------------------------------------------------

void add_correction(KrylovContext& k, ops::FieldList z, const std::vector<double>& y,
                    RightPreconditioner* pc, Field& tmp, Field& tmp2) {
  if (y.empty()) return;
  if (pc == nullptr || pc->is_identity()) {
    // x += sum_k y_k z_k
    k.timed(axpy_phase, [&] { (void)ops::maxpy_norm(z, y, k.x()); });
    return;
  }
  // tmp = sum_k y_k v_k; x += M^-1 tmp
  k.timed(axpy_phase, [&] { ops::combine(z, y, tmp); });
  Field& correction = pc->apply(tmp, tmp2);
  k.timed(axpy_phase, [&] { ops::axpy(1.0, correction, k.x()); });
}

}  // namespace asyncsolve::solvers::detail
