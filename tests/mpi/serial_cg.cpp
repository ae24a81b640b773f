#include "serial_cg.hpp"

#include <cmath>
#include <cstddef>

namespace asyncsolve::reference {
namespace {

std::size_t at(const grid::Int3& n, int i, int j, int k) {
  return static_cast<std::size_t>(i) +
         static_cast<std::size_t>(n[0]) *
             (static_cast<std::size_t>(j) +
              static_cast<std::size_t>(n[1]) * static_cast<std::size_t>(k));
}

bool inside(const grid::Int3& n, int i, int j, int k) {
  return i >= 0 && j >= 0 && k >= 0 && i < n[0] && j < n[1] && k < n[2];
}

/// Calls f(di, dj, dk) for every neighbour offset of the problem's stencil.
template <class F>
void for_neighbours(const grid::Problem& problem, F&& f) {
  const bool seven = problem.stencil_points() == 7;
  for (int dk = -1; dk <= 1; ++dk)
    for (int dj = -1; dj <= 1; ++dj)
      for (int di = -1; di <= 1; ++di) {
        const int d = std::abs(di) + std::abs(dj) + std::abs(dk);
        if (d == 0 || (seven && d != 1)) continue;
        f(di, dj, dk);
      }
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

std::vector<double> serial_apply(const grid::Problem& problem, const grid::Int3& n, double shift,
                                 const std::vector<double>& x) {
  const double diagonal = (problem.stencil_points() == 7 ? 6.0 : 26.0) + shift;
  std::vector<double> y(x.size());
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        double v = diagonal * x[at(n, i, j, k)];
        for_neighbours(problem, [&](int di, int dj, int dk) {
          if (inside(n, i + di, j + dj, k + dk)) v -= x[at(n, i + di, j + dj, k + dk)];
        });
        y[at(n, i, j, k)] = v;
      }
  return y;
}

std::vector<double> serial_rhs(const grid::Problem& problem, const grid::Int3& n) {
  std::vector<double> b(static_cast<std::size_t>(n[0]) * n[1] * n[2]);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        double v = problem.source();
        for_neighbours(problem, [&](int di, int dj, int dk) {
          if (!inside(n, i + di, j + dj, k + dk)) {
            // Global point indices count the boundary layer as 0.
            v += problem.boundary_value({i + 1 + di, j + 1 + dj, k + 1 + dk}, n);
          }
        });
        b[at(n, i, j, k)] = v;
      }
  return b;
}

SerialCg serial_cg(const grid::Problem& problem, const grid::Int3& n, double shift, double tol,
                   long max_iters) {
  SerialCg out;
  const std::vector<double> b = serial_rhs(problem, n);
  out.x.assign(b.size(), problem.initial_value());
  std::vector<double> r = serial_apply(problem, n, shift, out.x);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = b[i] - r[i];
  std::vector<double> p = r;
  const double b_norm = std::sqrt(dot(b, b));
  double rr = dot(r, r);
  for (long it = 0;; ++it) {
    const double residual = std::sqrt(rr) / b_norm;
    out.history.push_back(residual);
    out.iterations = it;
    if (residual < tol) {
      out.converged = true;
      return out;
    }
    if (it >= max_iters) return out;
    const std::vector<double> ap = serial_apply(problem, n, shift, p);
    const double alpha = rr / dot(p, ap);
    for (std::size_t i = 0; i < r.size(); ++i) {
      out.x[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
    }
    const double rr_new = dot(r, r);
    for (std::size_t i = 0; i < r.size(); ++i) p[i] = r[i] + rr_new / rr * p[i];
    rr = rr_new;
  }
}

}  // namespace asyncsolve::reference
