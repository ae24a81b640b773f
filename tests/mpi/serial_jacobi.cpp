#include "serial_jacobi.hpp"

#include <cmath>

namespace asyncsolve::reference {

SerialJacobi serial_jacobi(const grid::Problem& problem, const grid::Int3& n, double tol,
                           long max_iters, int check_every) {
  const int ex = n[0] + 2;
  const int ey = n[1] + 2;
  const int ez = n[2] + 2;
  auto at = [&](int i, int j, int k) {  // global point indices 0..N+1
    return static_cast<std::size_t>(i) +
           static_cast<std::size_t>(ex) *
               (static_cast<std::size_t>(j) + static_cast<std::size_t>(ey) * k);
  };
  std::vector<double> u(static_cast<std::size_t>(ex) * ey * ez, 0.0);
  for (int k = 0; k < ez; ++k)
    for (int j = 0; j < ey; ++j)
      for (int i = 0; i < ex; ++i) {
        const bool boundary =
            i == 0 || j == 0 || k == 0 || i == ex - 1 || j == ey - 1 || k == ez - 1;
        u[at(i, j, k)] = boundary ? problem.boundary_value({i, j, k}, n) : problem.initial_value();
      }
  std::vector<double> v = u;

  auto neighbours = [&](const std::vector<double>& w, int i, int j, int k) {
    return w[at(i - 1, j, k)] + w[at(i + 1, j, k)] + w[at(i, j - 1, k)] + w[at(i, j + 1, k)] +
           w[at(i, j, k - 1)] + w[at(i, j, k + 1)];
  };
  auto is_boundary = [&](int i, int j, int k) {
    return i == 0 || j == 0 || k == 0 || i == ex - 1 || j == ey - 1 || k == ez - 1;
  };

  SerialJacobi out;
  double b2 = 0;
  for (int k = 1; k <= n[2]; ++k)
    for (int j = 1; j <= n[1]; ++j)
      for (int i = 1; i <= n[0]; ++i) {
        double b = 0;
        const int nb[6][3] = {{i - 1, j, k}, {i + 1, j, k}, {i, j - 1, k},
                              {i, j + 1, k}, {i, j, k - 1}, {i, j, k + 1}};
        for (const auto& p : nb)
          if (is_boundary(p[0], p[1], p[2])) b += u[at(p[0], p[1], p[2])];
        b2 += b * b;
      }
  out.b_norm = std::sqrt(b2) > 0 ? std::sqrt(b2) : 1.0;

  for (long it = 0;; ++it) {
    // Checked every check_every iterations, and at max_iters: the residual
    // reported is the last iterate's.
    if (it % check_every == 0 || it >= max_iters) {
      double r2 = 0;
      for (int k = 1; k <= n[2]; ++k)
        for (int j = 1; j <= n[1]; ++j)
          for (int i = 1; i <= n[0]; ++i) {
            const double r = neighbours(u, i, j, k) - 6.0 * u[at(i, j, k)];
            r2 += r * r;
          }
      out.residual = std::sqrt(r2) / out.b_norm;
      if (out.residual < tol) {
        out.converged = true;
        out.iterations = it;
        break;
      }
    }
    if (it >= max_iters) {
      out.iterations = it;
      break;
    }
    for (int k = 1; k <= n[2]; ++k)
      for (int j = 1; j <= n[1]; ++j)
        for (int i = 1; i <= n[0]; ++i) v[at(i, j, k)] = neighbours(u, i, j, k) * (1.0 / 6.0);
    std::swap(u, v);
  }
  out.u.reserve(static_cast<std::size_t>(n[0]) * n[1] * n[2]);
  for (int k = 1; k <= n[2]; ++k)
    for (int j = 1; j <= n[1]; ++j)
      for (int i = 1; i <= n[0]; ++i) out.u.push_back(u[at(i, j, k)]);
  return out;
}

}  // namespace asyncsolve::reference
