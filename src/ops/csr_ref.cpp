// The CSR operator's references: plain loops over the matrix's own local
// CSR, one branch per entry for an owned or a ghost column (csr.hpp).
#include <cstdint>

#include "asyncsolve/ops/csr.hpp"
#include "csr_build.hpp"

namespace asyncsolve::ops {
namespace {

/// Row i of the plain reference product: sum over the row's non-zeros in
/// stored order, owned columns from x and ghost columns from ghosts.
double row_ref(const sparse::DistMatrix& m, int i, const double* x, const double* ghosts) noexcept {
  const int n = m.local_rows();
  double sum = 0.0;
  for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
    const std::int32_t c = m.col()[k];
    sum += m.val()[k] * (c < n ? x[c] : ghosts[c - n]);
  }
  return sum;
}

}  // namespace

double spmv_ref(const sparse::DistMatrix& m, const double* x, const double* ghosts,
                double* y) noexcept {
  double dot = 0.0;
  for (int i = 0; i < m.local_rows(); ++i) {
    const double sum = row_ref(m, i, x, ghosts);
    y[i] = sum;
    dot += x[i] * sum;
  }
  return dot;
}

double jacobi_ref(const sparse::DistMatrix& m, const double* b, const double* u,
                  const double* ghosts, double* u_new) noexcept {
  double rr = 0.0;
  for (int i = 0; i < m.local_rows(); ++i) {
    const double r = b[i] - row_ref(m, i, u, ghosts);
    u_new[i] = u[i] + r / detail::diagonal_of(m, i);
    rr += r * r;
  }
  return rr;
}

double residual_ref(const sparse::DistMatrix& m, const double* b, const double* u,
                    const double* ghosts, double* r) noexcept {
  double rr = 0.0;
  for (int i = 0; i < m.local_rows(); ++i) {
    const double ri = b[i] - row_ref(m, i, u, ghosts);
    if (r != nullptr) r[i] = ri;
    rr += ri * ri;
  }
  return rr;
}

}  // namespace asyncsolve::ops
