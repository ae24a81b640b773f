#include "asyncsolve/kernels/lanczos.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/kernels/tridiagonal.hpp"

namespace asyncsolve::kernels {

SpinOperator::SpinOperator(const kernels::TfimHamiltonian& hamiltonian,
                           kernels::SpinExchange& exchange, const par::Comm& comm)
    : h_(hamiltonian), exchange_(exchange) {
  const int m = exchange.partners();
  if ((1 << m) != comm.size()) {
    throw std::invalid_argument("SpinOperator: the exchange's rank count differs");
  }
  local_bits_ = h_.sites() - m;
  if (local_bits_ < 1) throw std::invalid_argument("SpinOperator: fewer than one local bit");
  block_ = std::size_t{1} << local_bits_;
  if (exchange.block() != block_) throw std::invalid_argument("SpinOperator: block size differs");
  first_state_ = static_cast<std::uint64_t>(comm.rank()) << local_bits_;
}

void SpinOperator::apply(std::span<const double> x, std::span<double> y, core::PhaseTimers* timers,
                         PhaseIds ids) const {
  double t0 = core::now_s();
  // Send x to the m partners first, so that it travels while the local part
  // is computed (paper 004: MSG_NB, then L4).
  exchange_.start(x);
  double t1 = core::now_s();
  // y = D x + Gamma sum_{k < n-m} x_{i ^ 2^k}
  h_.apply_local(x, y, first_state_, local_bits_);
  double t2 = core::now_s();
  // y += Gamma x_{rank ^ 2^k} for the m high bits
  exchange_.finish(y, h_.field());
  double t3 = core::now_s();
  if (timers != nullptr) {
    timers->add(ids.remote, (t1 - t0) + (t3 - t2));
    timers->add(ids.local, t2 - t1);
  }
}

namespace {

enum Phase : std::size_t { local, remote, reduce, tridiagonal, vector, start };

double local_dot(std::span<const double> a, std::span<const double> b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

LanczosResult lanczos_ground_state(const SpinOperator& op, collectives::Allreduce& reduce_sum,
                                   const LanczosOptions& options) {
  if (options.max_iters < 1) throw std::invalid_argument("lanczos: max_iters must be >= 1");
  LanczosResult r;
  const double t_begin = core::now_s();
  const std::size_t n = op.block();
  std::vector<double> v_prev(n, 0.0);
  std::vector<double> v(n);
  std::vector<double> w(n);
  {
    const auto timer = r.phases.time(Phase::start);
    for (std::size_t i = 0; i < n; ++i) v[i] = kernels::tfim_start_value(op.first_state() + i);
  }
  // v_1 = start / ||start||
  double norm2 = 0.0;
  {
    const auto timer = r.phases.time(Phase::reduce);
    norm2 = reduce_sum.sum(local_dot(v, v));
  }
  {
    const auto timer = r.phases.time(Phase::vector);
    const double inv = 1.0 / std::sqrt(norm2);
    for (double& x : v) x *= inv;
  }

  std::vector<double> alpha;
  std::vector<double> beta_off;  // beta_2 .. beta_j: T's off-diagonal
  double beta = 0.0;             // beta_j
  double scale = 0.0;            // max |alpha_i|, beta_i so far
  double previous = std::numeric_limits<double>::quiet_NaN();
  const SpinOperator::PhaseIds ids{Phase::local, Phase::remote};

  // Per iteration: one mat-vec (m remote blocks), two single-double
  // reductions, three vector sweeps, one O(j) tridiagonal solve.
  for (long j = 1; j <= options.max_iters; ++j) {
    // w = H v_j
    op.apply(v, w, &r.phases, ids);
    double a = 0.0;
    {
      // w -= beta_j v_{j-1}; local part of alpha_j = (w, v_j)
      const auto timer = r.phases.time(Phase::vector);
      if (j > 1) {
        for (std::size_t i = 0; i < n; ++i) w[i] -= beta * v_prev[i];
      }
      a = local_dot(w, v);
    }
    {
      const auto timer = r.phases.time(Phase::reduce);
      a = reduce_sum.sum(a);
    }
    double b2 = 0.0;
    {
      // w -= alpha_j v_j; local part of beta_{j+1}^2 = (w, w)
      const auto timer = r.phases.time(Phase::vector);
      for (std::size_t i = 0; i < n; ++i) w[i] -= a * v[i];
      b2 = local_dot(w, w);
    }
    {
      const auto timer = r.phases.time(Phase::reduce);
      b2 = reduce_sum.sum(b2);
    }
    if (!std::isfinite(a) || !std::isfinite(b2)) {
      // Reduced values, the same on every rank: all stop here.
      r.iterations = j;
      r.reason = "breakdown";
      r.detail = std::isfinite(a)
                     ? "beta^2 = " + std::to_string(b2) + " at iteration " + std::to_string(j)
                     : "alpha = " + std::to_string(a) + " at iteration " + std::to_string(j);
      break;
    }
    const double b_next = std::sqrt(std::max(b2, 0.0));
    alpha.push_back(a);
    if (j > 1) beta_off.push_back(beta);
    scale = std::max({scale, std::abs(a), beta});

    LowestEigenpair theta;
    {
      const auto timer = r.phases.time(Phase::tridiagonal);
      try {
        theta = lowest_eigenpair(alpha, beta_off);
      } catch (const std::runtime_error& e) {
        // Every rank holds the same alpha and beta: every rank fails alike.
        throw core::CollectiveFailure(std::string(e.what()) + " on the " + std::to_string(j) +
                                      " x " + std::to_string(j) + " tridiagonal matrix");
      }
    }
    LanczosPoint p;
    p.iteration = j;
    p.time_s = core::now_s() - t_begin;
    p.energy = theta.value;
    const double diff = std::abs(theta.value - previous);
    p.change = theta.value != 0.0 ? diff / std::abs(theta.value) : diff;
    p.alpha = a;
    p.beta = b_next;
    p.residual_bound = b_next * theta.last_component;
    r.history.push_back(p);
    if (options.monitor) options.monitor(p);
    r.iterations = j;
    r.energy = theta.value;
    r.change = p.change;
    r.residual_bound = p.residual_bound;

    if (b_next <= options.breakdown * scale) {
      // H maps the Krylov space into itself: T_j's eigenvalues are exact.
      r.converged = true;
      r.reason = "invariant_subspace";
      break;
    }
    if (j > 1 && p.change <= options.tol) {
      r.converged = true;
      r.reason = "tolerance";
      break;
    }
    previous = theta.value;
    beta = b_next;
    {
      // v_{j+1} = w / beta_{j+1}; the old v_{j-1} storage becomes the next w
      const auto timer = r.phases.time(Phase::vector);
      const double inv = 1.0 / b_next;
      for (double& x : w) x *= inv;
      std::swap(v_prev, v);
      std::swap(v, w);
    }
  }
  if (!r.converged && r.reason.empty()) r.reason = "max_iters";
  r.time_s = core::now_s() - t_begin;
  return r;
}

}  // namespace asyncsolve::kernels
