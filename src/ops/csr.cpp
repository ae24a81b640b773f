// The distributed CSR operator's kernels (see csr.hpp for the storage).
//
// Every fast kernel is one traversal of a block: for each run of rows, for
// each row, the sum of val[k] * x[col[k]] over its entries, handed to a
// per-row step (store y, or the Jacobi update, or the residual). The row
// loop has no branch; the entries are streamed once, in storage order.
#include "asyncsolve/ops/csr.hpp"

#include <algorithm>
#include <stdexcept>

namespace asyncsolve::ops {
namespace {

/// Appends local row `row` of `m` to `block` (entries whose local column
/// satisfies `keep`, shifted by `shift`), extending the last run or starting one.
template <class Keep>
void append_row(CsrBlock& block, const sparse::DistMatrix& m, int row, Keep&& keep, int shift) {
  const auto& ptr = m.row_ptr();
  for (std::int64_t k = ptr[row]; k < ptr[row + 1]; ++k) {
    const std::int32_t c = m.col()[k];
    if (!keep(c)) continue;
    block.col.push_back(c - shift);
    block.val.push_back(m.val()[k]);
  }
  if (block.val.size() > static_cast<std::size_t>(INT32_MAX))
    throw std::length_error("CsrOperator: more than 2^31 - 1 entries on one rank");
  block.ptr.push_back(static_cast<std::int32_t>(block.col.size()));
  const int position = block.rows() - 1;
  if (!block.runs.empty() && block.runs.back().first + block.runs.back().count == row) {
    ++block.runs.back().count;
  } else {
    block.runs.push_back({row, 1, position});
  }
}

/// sum over k in [k0, k1) of val[k] * x[col[k]], in storage order. (Four
/// partial sums to shorten the chain of adds measured no faster: the
/// mat-vec is bound by memory, 12 bytes per non-zero.)
[[gnu::always_inline]] inline double row_sum(const std::int32_t* __restrict col,
                                             const double* __restrict val,
                                             const double* __restrict x, std::int32_t k0,
                                             std::int32_t k1) noexcept {
  double sum = 0.0;
  for (std::int32_t k = k0; k < k1; ++k) sum += val[k] * x[col[k]];
  return sum;
}

/// Calls step(row, (A x)_row) for the rows stored at positions [begin, end)
/// of `block`, x indexed by the block's columns.
template <class Step>
inline void traverse(const CsrBlock& block, const double* __restrict x, int begin, int end,
                     Step&& step) {
  const std::int32_t* __restrict ptr = block.ptr.data();
  const std::int32_t* __restrict col = block.col.data();
  const double* __restrict val = block.val.data();
  auto run = std::upper_bound(block.runs.begin(), block.runs.end(), begin,
                              [](int p, const RowRun& r) { return p < r.position + r.count; });
  for (; run != block.runs.end() && run->position < end; ++run) {
    const int lo = std::max(begin, run->position);
    const int hi = std::min(end, run->position + run->count);
    int row = run->first + (lo - run->position);
    for (int p = lo; p < hi; ++p, ++row) step(row, row_sum(col, val, x, ptr[p], ptr[p + 1]));
  }
}

/// The same for the boundary rows: owned columns from x, then ghost
/// columns from `ghosts`.
template <class Step>
inline void traverse_boundary(const CsrOperator& a, const double* __restrict x,
                              const double* __restrict ghosts, Step&& step) {
  const CsrBlock& lb = a.boundary_local();
  const CsrBlock& gb = a.boundary_ghost();
  const std::int32_t* __restrict lptr = lb.ptr.data();
  const std::int32_t* __restrict lcol = lb.col.data();
  const double* __restrict lval = lb.val.data();
  const std::int32_t* __restrict gptr = gb.ptr.data();
  const std::int32_t* __restrict gcol = gb.col.data();
  const double* __restrict gval = gb.val.data();
  for (const RowRun& run : lb.runs) {
    int row = run.first;
    for (int p = run.position; p < run.position + run.count; ++p, ++row) {
      step(row, row_sum(lcol, lval, x, lptr[p], lptr[p + 1]) +
                    row_sum(gcol, gval, ghosts, gptr[p], gptr[p + 1]));
    }
  }
}

/// The diagonal entry of local row i of m, 0 if there is none.
double diagonal_of(const sparse::DistMatrix& m, int i) noexcept {
  const auto& ptr = m.row_ptr();
  for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k)
    if (m.col()[k] == i) return m.val()[k];
  return 0.0;
}

}  // namespace

CsrOperator::CsrOperator(const sparse::DistMatrix& m)
    : rows_(m.local_rows()), ghosts_(m.plan().ghosts) {
  const int n = rows_;
  diagonal_.resize(static_cast<std::size_t>(n));
  const auto owned = [n](std::int32_t c) { return c < n; };
  const auto ghost = [n](std::int32_t c) { return c >= n; };
  for (int i = 0; i < n; ++i) {
    diagonal_[i] = diagonal_of(m, i);
    bool interior = true;
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
      interior = interior && m.col()[k] < n;
    if (interior) {
      append_row(interior_, m, i, owned, 0);
    } else {
      append_row(boundary_local_, m, i, owned, 0);
      append_row(boundary_ghost_, m, i, ghost, n);
    }
  }
}

double spmv_interior(const CsrOperator& a, const double* x, double* y, int begin,
                     int end) noexcept {
  double dot = 0.0;
  traverse(a.interior(), x, begin, end, [&](int row, double ax) {
    y[row] = ax;
    dot += x[row] * ax;
  });
  return dot;
}

double spmv_boundary(const CsrOperator& a, const double* x, const double* ghosts,
                     double* y) noexcept {
  double dot = 0.0;
  traverse_boundary(a, x, ghosts, [&](int row, double ax) {
    y[row] = ax;
    dot += x[row] * ax;
  });
  return dot;
}

double jacobi_interior(const CsrOperator& a, const double* b, const double* dinv, const double* u,
                       double* u_new, int begin, int end) noexcept {
  double rr = 0.0;
  traverse(a.interior(), u, begin, end, [&](int row, double au) {
    const double r = b[row] - au;
    u_new[row] = u[row] + dinv[row] * r;
    rr += r * r;
  });
  return rr;
}

double jacobi_boundary(const CsrOperator& a, const double* b, const double* dinv, const double* u,
                       const double* ghosts, double* u_new) noexcept {
  double rr = 0.0;
  traverse_boundary(a, u, ghosts, [&](int row, double au) {
    const double r = b[row] - au;
    u_new[row] = u[row] + dinv[row] * r;
    rr += r * r;
  });
  return rr;
}

double residual(const CsrOperator& a, const double* b, const double* u, const double* ghosts,
                double* r) noexcept {
  double rr = 0.0;
  const auto step = [&](int row, double au) {
    const double ri = b[row] - au;
    if (r != nullptr) r[row] = ri;
    rr += ri * ri;
  };
  traverse(a.interior(), u, 0, a.interior_rows(), step);
  traverse_boundary(a, u, ghosts, step);
  return rr;
}

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
    u_new[i] = u[i] + r / diagonal_of(m, i);
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
