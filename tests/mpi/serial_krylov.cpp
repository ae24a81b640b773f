#include "serial_krylov.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace asyncsolve::reference {
namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

SerialCsr from_rows(std::int64_t n, const std::vector<std::map<std::int64_t, double>>& rows,
                    std::string name) {
  SerialCsr a;
  a.n = n;
  a.name = std::move(name);
  for (const auto& row : rows) {
    for (const auto& [c, v] : row) {
      a.col.push_back(c);
      a.val.push_back(v);
    }
    a.ptr.push_back(static_cast<std::int64_t>(a.col.size()));
  }
  return a;
}

/// z = M^-1 v for M = diag(A) (jacobi) or I, multiplying by 1 / a_ii as
/// PETSc's PCJACOBI does (BiCGStab's count is sensitive to that rounding).
std::vector<double> precondition(const SerialCsr& a, const std::vector<double>& v, bool jacobi) {
  if (!jacobi) return v;
  std::vector<double> z(v.size());
  for (std::int64_t i = 0; i < a.n; ++i) {
    double d = 0.0;
    for (std::int64_t e = a.ptr[i]; e < a.ptr[i + 1]; ++e)
      if (a.col[e] == i) d = a.val[e];
    z[i] = (1.0 / d) * v[i];
  }
  return z;
}

}  // namespace

SerialCsr convection_diffusion(int n, int dims, double peclet) {
  const double h = 1.0 / (n + 1);
  const double w[3] = {peclet, 0.5 * peclet, 0.25 * peclet};
  const int nz = dims == 3 ? n : 1;
  const std::int64_t size = static_cast<std::int64_t>(n) * n * nz;
  std::vector<std::map<std::int64_t, double>> rows(static_cast<std::size_t>(size));
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const std::int64_t row =
            i + static_cast<std::int64_t>(n) * (j + static_cast<std::int64_t>(n) * k);
        auto& r = rows[static_cast<std::size_t>(row)];
        const int at[3] = {i, j, k};
        const std::int64_t stride[3] = {1, n, static_cast<std::int64_t>(n) * n};
        for (int d = 0; d < dims; ++d) {
          // -u'' (2, -1, -1) and the upwind w u' (w h, -w h on the upwind side)
          r[row] += 2.0 + w[d] * h;
          if (at[d] > 0) r[row - stride[d]] += -1.0 - w[d] * h;
          if (at[d] < n - 1) r[row + stride[d]] += -1.0;
        }
      }
  return from_rows(size, rows,
                   "convection-diffusion " + std::to_string(dims) + "-D n=" + std::to_string(n) +
                       " Pe=" + std::to_string(static_cast<int>(peclet)));
}

SerialCsr grcar(int n) {
  std::vector<std::map<std::int64_t, double>> rows(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (i > 0) rows[i][i - 1] = -1.0;
    for (int d = 0; d <= 3 && i + d < n; ++d) rows[i][i + d] = 1.0;
  }
  return from_rows(n, rows, "grcar n=" + std::to_string(n));
}

SerialCsr skew(int n) {
  std::vector<std::map<std::int64_t, double>> rows(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (i > 0) rows[i][i - 1] = -1.0;
    if (i + 1 < n) rows[i][i + 1] = 1.0;
  }
  return from_rows(n, rows, "skew n=" + std::to_string(n));
}

std::vector<double> multiply(const SerialCsr& a, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(a.n), 0.0);
  for (std::int64_t i = 0; i < a.n; ++i)
    for (std::int64_t e = a.ptr[i]; e < a.ptr[i + 1]; ++e) y[i] += a.val[e] * x[a.col[e]];
  return y;
}

SerialKrylov serial_gmres(const SerialCsr& a, const std::vector<double>& b, int m, bool jacobi,
                          double tol, long max_iters) {
  const std::size_t n = b.size();
  SerialKrylov out;
  out.x.assign(n, 0.0);
  const double bnorm = std::sqrt(dot(b, b));
  for (;;) {
    // r = b - A x, v_0 = r / beta
    std::vector<double> r = multiply(a, out.x);
    for (std::size_t i = 0; i < n; ++i) r[i] = b[i] - r[i];
    const double beta = std::sqrt(dot(r, r));
    out.history.push_back(beta / bnorm);
    if (beta / bnorm < tol) {
      out.converged = true;
      return out;
    }
    if (out.iterations >= max_iters) return out;
    std::vector<std::vector<double>> v{r};
    for (double& e : v[0]) e /= beta;
    std::vector<std::vector<double>> h(static_cast<std::size_t>(m + 1),
                                       std::vector<double>(static_cast<std::size_t>(m), 0.0));
    std::vector<double> c(static_cast<std::size_t>(m)), s(c.size()), g(c.size() + 1, 0.0);
    g[0] = beta;
    int j = 0;
    bool stop = false;
    for (; j < m && !stop; ++j) {
      std::vector<double> w = multiply(a, precondition(a, v[j], jacobi));
      // classical Gram-Schmidt, a second pass if ||w|| < ||h||
      for (int pass = 0; pass < 2; ++pass) {
        std::vector<double> hj(static_cast<std::size_t>(j) + 1);
        for (int q = 0; q <= j; ++q) hj[q] = dot(v[q], w);
        for (int q = 0; q <= j; ++q)
          for (std::size_t i = 0; i < n; ++i) w[i] -= hj[q] * v[q][i];
        double hn = 0.0;
        for (int q = 0; q <= j; ++q) {
          h[q][j] += hj[q];
          hn += hj[q] * hj[q];
        }
        if (pass == 0 && !(std::sqrt(dot(w, w)) < std::sqrt(hn))) break;
      }
      const double wn = std::sqrt(dot(w, w));
      h[j + 1][j] = wn;
      if (wn > 0.0) {
        for (double& e : w) e /= wn;
      }
      v.push_back(w);
      // the rotations
      for (int q = 0; q < j; ++q) {
        const double t = h[q][j];
        h[q][j] = c[q] * t + s[q] * h[q + 1][j];
        h[q + 1][j] = -s[q] * t + c[q] * h[q + 1][j];
      }
      const double norm = std::hypot(h[j][j], h[j + 1][j]);
      c[j] = h[j][j] / norm;
      s[j] = h[j + 1][j] / norm;
      h[j][j] = norm;
      h[j + 1][j] = 0.0;
      g[j + 1] = -s[j] * g[j];
      g[j] = c[j] * g[j];
      ++out.iterations;
      out.history.push_back(std::abs(g[j + 1]) / bnorm);
      stop = std::abs(g[j + 1]) / bnorm < tol || out.iterations >= max_iters;
    }
    // x += M^-1 V y
    std::vector<double> y(static_cast<std::size_t>(j));
    for (int i = j - 1; i >= 0; --i) {
      double t = g[i];
      for (int q = i + 1; q < j; ++q) t -= h[i][q] * y[q];
      y[i] = t / h[i][i];
    }
    std::vector<double> u(n, 0.0);
    for (int q = 0; q < j; ++q)
      for (std::size_t i = 0; i < n; ++i) u[i] += y[q] * v[q][i];
    const std::vector<double> du = precondition(a, u, jacobi);
    for (std::size_t i = 0; i < n; ++i) out.x[i] += du[i];
    if (stop) {
      out.converged = out.history.back() < tol;
      return out;
    }
  }
}

SerialKrylov serial_bicgstab(const SerialCsr& a, const std::vector<double>& b, bool jacobi,
                             double tol, long max_iters) {
  const std::size_t n = b.size();
  SerialKrylov out;
  out.x.assign(n, 0.0);
  std::vector<double> r = b;
  const std::vector<double> r0 = b;
  std::vector<double> p(n, 0.0), v(n, 0.0), s(n), t(n);
  const double bnorm = std::sqrt(dot(b, b));
  out.history.push_back(1.0);
  double rho_old = 1.0, alpha = 1.0, omega = 1.0;
  while (out.iterations < max_iters) {
    const double rho = dot(r, r0);
    const double beta = (rho / rho_old) * (alpha / omega);
    for (std::size_t i = 0; i < n; ++i) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    const std::vector<double> phat = precondition(a, p, jacobi);
    v = multiply(a, phat);
    alpha = rho / dot(v, r0);
    for (std::size_t i = 0; i < n; ++i) s[i] = r[i] - alpha * v[i];
    const std::vector<double> shat = precondition(a, s, jacobi);
    t = multiply(a, shat);
    omega = dot(t, s) / dot(t, t);
    for (std::size_t i = 0; i < n; ++i) {
      out.x[i] += alpha * phat[i] + omega * shat[i];
      r[i] = s[i] - omega * t[i];
    }
    rho_old = rho;
    ++out.iterations;
    out.history.push_back(std::sqrt(dot(r, r)) / bnorm);
    if (out.history.back() < tol) {
      out.converged = true;
      break;
    }
  }
  return out;
}

}  // namespace asyncsolve::reference
