// Subdomains and additive Schwarz against a serial computation of the same
// thing on the whole matrix, which every rank builds: the subdomain's rows
// (a breadth-first search from the owned rows), its matrix, its halo, the
// plans (exchanging global indices through them), and the preconditioner
// applied (basic, restricted, with and without the coarse space, every
// local solver), compared with dense solves of the same subdomain blocks.
// The Schwarz iteration (--method schwarz): sync against the serial RAS
// Richardson iterates, async and racy over mpi and rma to the direct solution.
// Odd rank counts (3) and a grid whose blocks cut rows unevenly catch what
// powers of two hide.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/channel_tree.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/precond/coarse.hpp"
#include "asyncsolve/precond/local_solver.hpp"
#include "asyncsolve/precond/schwarz.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/schwarz_iteration.hpp"
#include "asyncsolve/sparse/csr.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "asyncsolve/sparse/subdomain.hpp"

using namespace asyncsolve;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

/// A 2-D 5-point Laplacian on nx x ny points with Dirichlet rows
/// eliminated, diagonal 4 + shift; `skew` adds a nonsymmetric term.
sparse::CsrMatrix laplacian(int nx, int ny, double shift = 0.0, double skew = 0.0) {
  sparse::CsrMatrix a;
  a.rows = a.cols = static_cast<std::int64_t>(nx) * ny;
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i < nx; ++i) {
      const auto add = [&](int ii, int jj, double v) {
        if (ii < 0 || jj < 0 || ii >= nx || jj >= ny) return;
        a.col.push_back(jj * nx + ii);
        a.val.push_back(v);
      };
      add(i, j - 1, -1.0);
      add(i - 1, j, -1.0 - skew);
      add(i, j, 4.0 + shift);
      add(i + 1, j, -1.0 + skew);
      add(i, j + 1, -1.0);
      a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
    }
  }
  return a;
}

/// Collective: `a` distributed in contiguous blocks (the first rows % P
/// ranks one row longer).
sparse::DistMatrix distribute(const sparse::CsrMatrix& a) {
  const par::Comm c = world();
  const std::int64_t p = c.size();
  const std::int64_t r = c.rank();
  const std::int64_t base = a.rows / p;
  const std::int64_t first = r * base + std::min(r, a.rows % p);
  const std::int64_t n = base + (r < a.rows % p ? 1 : 0);
  std::vector<std::int64_t> ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  for (std::int64_t i = first; i < first + n; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      col.push_back(a.col[k]);
      val.push_back(a.val[k]);
    }
    ptr.push_back(static_cast<std::int64_t>(col.size()));
  }
  return sparse::DistMatrix::from_rows(c, a.rows, {ptr, col, val});
}

/// The serial subdomain of rows [first, last): global row -> layer.
std::map<std::int64_t, int> serial_subdomain(const sparse::CsrMatrix& a, std::int64_t first,
                                             std::int64_t last, int overlap) {
  std::map<std::int64_t, int> layer;
  std::vector<std::int64_t> frontier;
  for (std::int64_t i = first; i < last; ++i) {
    layer[i] = 0;
    frontier.push_back(i);
  }
  for (int l = 1; l <= overlap; ++l) {
    std::vector<std::int64_t> next;
    for (const std::int64_t i : frontier) {
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        if (layer.emplace(a.col[k], l).second) next.push_back(a.col[k]);
      }
    }
    frontier = next;
  }
  return layer;
}

/// The subdomain rows in subdomain order: owned, then the rest ascending.
std::vector<std::int64_t> subdomain_order(const std::map<std::int64_t, int>& layer,
                                          std::int64_t first, std::int64_t last) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = first; i < last; ++i) out.push_back(i);
  for (const auto& [g, l] : layer)
    if (g < first || g >= last) out.push_back(g);
  return out;
}

double entry(const sparse::CsrMatrix& a, std::int64_t i, std::int64_t j) {
  for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
    if (a.col[k] == j) return a.val[k];
  return 0.0;
}

/// x = M^-1 b for a dense row-major m x m matrix (Gaussian elimination with
/// partial pivoting).
std::vector<double> dense_solve(std::vector<double> m, std::vector<double> b) {
  const auto n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(m[r * n + c]) > std::abs(m[p * n + c])) p = r;
    for (std::size_t k = 0; k < n; ++k) std::swap(m[c * n + k], m[p * n + k]);
    std::swap(b[c], b[p]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = m[r * n + c] / m[c * n + c];
      for (std::size_t k = c; k < n; ++k) m[r * n + k] -= f * m[c * n + k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (std::size_t r = n; r-- > 0;) {
    double s = b[r];
    for (std::size_t k = r + 1; k < n; ++k) s -= m[r * n + k] * x[k];
    x[r] = s / m[r * n + r];
  }
  return x;
}

TEST(Subdomain, GrowthMatrixAndPlansMatchSerial) {
  const sparse::CsrMatrix a = laplacian(11, 7, 0.0, 0.3);  // unsymmetric values
  sparse::DistMatrix m = distribute(a);
  const std::int64_t first = m.first_row();
  const std::int64_t last = first + m.local_rows();
  for (int overlap = 0; overlap <= 3; ++overlap) {
    SCOPED_TRACE("overlap " + std::to_string(overlap));
    const sparse::Subdomain s = sparse::grow_subdomain(m, overlap);
    const auto layer = serial_subdomain(a, first, last, overlap);
    const std::vector<std::int64_t> rows = subdomain_order(layer, first, last);
    ASSERT_EQ(s.globals, rows);
    for (int k = 0; k < s.overlap_rows(); ++k)
      EXPECT_EQ(s.layer[k], layer.at(rows[m.local_rows() + k]));
    // A_i: every entry of the subdomain's rows and columns, nothing else.
    ASSERT_EQ(s.matrix.rows(), static_cast<int>(rows.size()));
    std::int64_t expected_nnz = 0;
    for (std::size_t p = 0; p < rows.size(); ++p) {
      for (std::size_t q = 0; q < rows.size(); ++q) {
        if (entry(a, rows[p], rows[q]) != 0.0) ++expected_nnz;
      }
      for (std::int64_t k = s.matrix.row_ptr[p]; k < s.matrix.row_ptr[p + 1]; ++k)
        EXPECT_EQ(s.matrix.val[k], entry(a, rows[p], rows[s.matrix.col[k]]));
    }
    EXPECT_EQ(s.matrix.nnz(), expected_nnz);
    // The halo: what the subdomain holds or references outside the owned rows.
    std::set<std::int64_t> halo;
    for (const std::int64_t g : rows) {
      if (g < first || g >= last) halo.insert(g);
      for (std::int64_t k = a.row_ptr[g]; k < a.row_ptr[g + 1]; ++k)
        if (a.col[k] < first || a.col[k] >= last) halo.insert(a.col[k]);
    }
    EXPECT_EQ(s.halo_globals, std::vector<std::int64_t>(halo.begin(), halo.end()));
    // The whole rows in the extended numbering.
    for (std::size_t p = 0; p < rows.size(); ++p) {
      double sum = 0.0;
      for (std::int64_t k = s.rows.row_ptr[p]; k < s.rows.row_ptr[p + 1]; ++k) {
        const int c = s.rows.col[k];
        const std::int64_t g = c < s.owned ? first + c : s.halo_globals[c - s.owned];
        EXPECT_EQ(s.rows.val[k], entry(a, rows[p], g));
        sum += std::abs(s.rows.val[k]);
      }
      double whole = 0.0;
      for (std::int64_t k = a.row_ptr[rows[p]]; k < a.row_ptr[rows[p] + 1]; ++k)
        whole += std::abs(a.val[k]);
      EXPECT_EQ(sum, whole);
    }
    // The plans deliver the global indices they promise.
    std::vector<double> owned(static_cast<std::size_t>(m.local_rows()));
    for (int i = 0; i < m.local_rows(); ++i) owned[i] = static_cast<double>(first + i);
    std::vector<double> got(static_cast<std::size_t>(s.overlap_plan.ghosts) + 1);
    sparse::exchange_plan(m.comm(), s.overlap_plan, owned, got);
    for (int k = 0; k < s.overlap_rows(); ++k)
      EXPECT_EQ(got[k], static_cast<double>(rows[m.local_rows() + k]));
    got.assign(static_cast<std::size_t>(s.halo_plan.ghosts) + 1, 0.0);
    sparse::exchange_plan(m.comm(), s.halo_plan, owned, got);
    for (std::size_t k = 0; k < s.halo_globals.size(); ++k)
      EXPECT_EQ(got[k], static_cast<double>(s.halo_globals[k]));
    for (std::size_t k = 0; k < s.overlap_in_halo.size(); ++k)
      EXPECT_EQ(s.halo_globals[s.overlap_in_halo[k]], rows[m.local_rows() + k]);
    // The reverse plan: every overlap entry travels back to its owner, which
    // hears it once per other subdomain that holds the row.
    const sparse::NeighbourPlan reverse = s.reverse_plan();
    std::vector<double> sub(rows.size(), 1.0);
    got.assign(static_cast<std::size_t>(reverse.ghosts) + 1, 0.0);
    sparse::exchange_plan(m.comm(), reverse, sub, got);
    std::vector<double> heard(static_cast<std::size_t>(m.local_rows()), 0.0);
    for (std::size_t l = 0; l < reverse.recvs.size(); ++l)
      for (int k = 0; k < reverse.recvs[l].count; ++k)
        heard[s.overlap_plan.sends[l].indices[k]] += got[reverse.recvs[l].offset + k];
    const auto& offsets = m.row_offsets();
    for (int i = 0; i < m.local_rows(); ++i) {
      int holders = 0;
      for (int r = 0; r < m.comm().size(); ++r) {
        if (r == m.comm().rank()) continue;
        holders += serial_subdomain(a, offsets[r], offsets[r + 1], overlap).contains(first + i);
      }
      EXPECT_EQ(heard[i], holders) << "row " << first + i;
    }
    // Metrics agree with the plans on every rank.
    std::int64_t volume = s.overlap_plan.ghosts;
    MPI_Allreduce(MPI_IN_PLACE, &volume, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(s.metrics.overlap_volume, volume);
  }
  EXPECT_THROW(sparse::grow_subdomain(m, 9), core::InputError);
  m.free();
}

/// The serial Schwarz preconditioner: sum over ranks' subdomains of
/// R_i^T A_i^-1 R_i r (restricted: owned rows only), plus the coarse
/// correction with one constant per rank.
std::vector<double> serial_schwarz(const sparse::CsrMatrix& a,
                                   const std::vector<std::int64_t>& offsets,
                                   const std::vector<double>& r, int overlap, bool restricted,
                                   bool coarse) {
  const auto ranks = static_cast<int>(offsets.size()) - 1;
  std::vector<double> z(r.size(), 0.0);
  for (int p = 0; p < ranks; ++p) {
    const auto layer = serial_subdomain(a, offsets[p], offsets[p + 1], overlap);
    const auto rows = subdomain_order(layer, offsets[p], offsets[p + 1]);
    const std::size_t n = rows.size();
    std::vector<double> m(n * n);
    std::vector<double> b(n);
    for (std::size_t i = 0; i < n; ++i) {
      b[i] = r[rows[i]];
      for (std::size_t j = 0; j < n; ++j) m[i * n + j] = entry(a, rows[i], rows[j]);
    }
    const std::vector<double> y = dense_solve(m, b);
    for (std::size_t i = 0; i < n; ++i) {
      const bool owned = rows[i] >= offsets[p] && rows[i] < offsets[p + 1];
      if (owned || !restricted) z[rows[i]] += y[i];
    }
  }
  if (coarse) {
    std::vector<double> e(static_cast<std::size_t>(ranks) * ranks, 0.0);
    std::vector<double> g(static_cast<std::size_t>(ranks), 0.0);
    const auto owner = [&](std::int64_t row) {
      return static_cast<int>(std::upper_bound(offsets.begin(), offsets.end(), row) -
                              offsets.begin()) -
             1;
    };
    for (std::int64_t i = 0; i < a.rows; ++i) {
      g[owner(i)] += r[i];
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
        e[owner(i) * ranks + owner(a.col[k])] += a.val[k];
    }
    const std::vector<double> c = dense_solve(e, g);
    for (std::int64_t i = 0; i < a.rows; ++i) z[i] += c[owner(i)];
  }
  return z;
}

struct ApplyCase {
  precond::LocalSolverKind solver;
  int overlap;
  bool restricted;
  bool coarse;
};

TEST(Schwarz, ApplyMatchesSerialReference) {
  const sparse::CsrMatrix a = laplacian(9, 8, 0.05);
  sparse::DistMatrix m = distribute(a);
  std::vector<double> r(static_cast<std::size_t>(a.rows));
  for (std::int64_t i = 0; i < a.rows; ++i) r[i] = std::sin(0.7 * static_cast<double>(i)) + 0.3;
  std::vector<ApplyCase> cases;
  const bool ss = precond::suitesparse_available();
  for (int overlap : {0, 1, 2}) {
    for (bool restricted : {false, true}) {
      for (bool coarse : {false, true}) {
        if (ss) cases.push_back({precond::LocalSolverKind::cholmod, overlap, restricted, coarse});
        if (ss) cases.push_back({precond::LocalSolverKind::umfpack, overlap, restricted, coarse});
      }
    }
  }
  if (ss) cases.push_back({precond::LocalSolverKind::automatic, 1, false, true});
  for (const ApplyCase& c : cases) {
    SCOPED_TRACE(std::string(precond::local_solver_name(c.solver)) + " overlap " +
                 std::to_string(c.overlap) + (c.restricted ? " restricted" : " basic") +
                 (c.coarse ? " coarse" : ""));
    precond::SchwarzSettings s;
    s.overlap = c.overlap;
    s.local_solver = c.solver;
    s.type = c.restricted ? precond::SchwarzType::restricted : precond::SchwarzType::basic;
    s.coarse = c.coarse ? precond::CoarseKind::nicolaides : precond::CoarseKind::none;
    precond::Schwarz pc(m, s, nullptr);
    const std::vector<double> mine(r.begin() + m.first_row(),
                                   r.begin() + m.first_row() + m.local_rows());
    std::vector<double> z(mine.size());
    pc.apply(mine, z);
    pc.apply(mine, z);  // twice: nothing left over from the first
    const std::vector<double> expected =
        serial_schwarz(a, m.row_offsets(), r, c.overlap, c.restricted, c.coarse);
    for (int i = 0; i < m.local_rows(); ++i)
      EXPECT_NEAR(z[i], expected[m.first_row() + i], 1e-11) << "row " << m.first_row() + i;
    pc.close();
  }
  m.free();
}

/// A nonsymmetric system for the Schwarz iteration, b and its direct solution.
struct IterationCase {
  sparse::CsrMatrix a = laplacian(9, 8, 0.05, 0.3);
  std::vector<double> b;
  std::vector<double> solution;
  IterationCase() { reset(); }
  void reset() {
    b.resize(static_cast<std::size_t>(a.rows));
    for (std::int64_t i = 0; i < a.rows; ++i) b[i] = std::cos(0.3 * static_cast<double>(i)) + 1.0;
    const auto n = static_cast<std::size_t>(a.rows);
    std::vector<double> dense(n * n, 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i)
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
        dense[static_cast<std::size_t>(i) * n + a.col[k]] = a.val[k];
    solution = dense_solve(dense, b);
  }
  std::vector<double> local(const sparse::DistMatrix& m, const std::vector<double>& v) const {
    return {v.begin() + m.first_row(), v.begin() + m.first_row() + m.local_rows()};
  }
};

solvers::SchwarzIterationOptions iteration_options(double tol, long max_iters) {
  solvers::SchwarzIterationOptions o;
  o.async.base.tol = tol;
  o.async.base.max_iters = max_iters;
  o.async.base.check_every = 1;
  o.async.max_in_flight = 1;
  o.async.idle = false;
  o.schwarz.overlap = 1;
  o.schwarz.type = precond::SchwarzType::restricted;
  return o;
}

TEST(SchwarzIteration, SyncMatchesSerialRichardson) {
  if (!precond::suitesparse_available()) GTEST_SKIP() << "no SuiteSparse";
  const IterationCase c;
  sparse::DistMatrix m = distribute(c.a);
  for (const int transport : {AS_TRANSPORT_MPI, AS_TRANSPORT_RMA}) {
    SCOPED_TRACE(transport == AS_TRANSPORT_MPI ? "mpi" : "rma");
    solvers::CsrSystem system = solvers::make_csr_system(m, c.local(m, c.b));
    auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, m);
    auto reduction = collectives::make_allreduce("mpi", m.comm());
    solvers::SchwarzIterationOptions o = iteration_options(1e-300, 6);
    o.async.transport = transport;
    const solvers::SolveResult r = solvers::schwarz_solve(system, m, *halo, *reduction, nullptr, o);
    EXPECT_EQ(r.iterations, 6);
    EXPECT_EQ(r.pc.name, "schwarz");
    // x_{k+1} = x_k + sum_i R~_i^T A_i^-1 R_i (b - A x_k) from x_0 = 0
    std::vector<double> x(c.b.size(), 0.0);
    for (long k = 0; k < r.iterations; ++k) {
      std::vector<double> res = c.b;
      for (std::int64_t i = 0; i < c.a.rows; ++i)
        for (std::int64_t j = c.a.row_ptr[i]; j < c.a.row_ptr[i + 1]; ++j)
          res[i] -= c.a.val[j] * x[c.a.col[j]];
      const std::vector<double> z = serial_schwarz(c.a, m.row_offsets(), res, 1, true, false);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += z[i];
    }
    for (int i = 0; i < m.local_rows(); ++i)
      EXPECT_NEAR(system.x.origin()[i], x[m.first_row() + i], 1e-11) << "row " << m.first_row() + i;
    halo->close();
  }
  m.free();
}

/// Two levels against the serial computation; skew 0: symmetric E (its
/// eigendecomposition), else nonsymmetric (its SVD).
void check_two_levels(double skew) {
  // The coarse correction from r, then the local solves on r - A w.
  IterationCase c;
  c.a = laplacian(9, 8, 0.05, skew);
  c.reset();
  sparse::DistMatrix m = distribute(c.a);
  solvers::CsrSystem system = solvers::make_csr_system(m, c.local(m, c.b));
  auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, m);
  auto reduction = collectives::make_allreduce("mpi", m.comm());
  solvers::SchwarzIterationOptions o = iteration_options(1e-300, 4);
  o.schwarz.coarse = precond::CoarseKind::nicolaides;
  const solvers::SolveResult r = solvers::schwarz_solve(system, m, *halo, *reduction, nullptr, o);
  EXPECT_EQ(r.iterations, 4);
  const auto times_a = [&](const std::vector<double>& v) {
    std::vector<double> out(v.size(), 0.0);
    for (std::int64_t i = 0; i < c.a.rows; ++i)
      for (std::int64_t j = c.a.row_ptr[i]; j < c.a.row_ptr[i + 1]; ++j)
        out[i] += c.a.val[j] * v[c.a.col[j]];
    return out;
  };
  std::vector<double> x(c.b.size(), 0.0);
  for (long k = 0; k < r.iterations; ++k) {
    const std::vector<double> ax = times_a(x);
    std::vector<double> res(c.b.size());
    for (std::size_t i = 0; i < res.size(); ++i) res[i] = c.b[i] - ax[i];
    // w = Z E^-1 Z^T r: serial_schwarz with the coarse level less without it
    const std::vector<double> both = serial_schwarz(c.a, m.row_offsets(), res, 1, true, true);
    const std::vector<double> local = serial_schwarz(c.a, m.row_offsets(), res, 1, true, false);
    std::vector<double> w(res.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = both[i] - local[i];
    const std::vector<double> aw = times_a(w);
    for (std::size_t i = 0; i < res.size(); ++i) res[i] -= aw[i];
    const std::vector<double> z = serial_schwarz(c.a, m.row_offsets(), res, 1, true, false);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += w[i] + z[i];
  }
  for (int i = 0; i < m.local_rows(); ++i)
    EXPECT_NEAR(system.x.origin()[i], x[m.first_row() + i], 1e-10) << "row " << m.first_row() + i;
  halo->close();
  m.free();
}

TEST(SchwarzIteration, SyncTwoLevelsMatchSerial) {
  if (!precond::suitesparse_available()) GTEST_SKIP() << "no SuiteSparse";
  {
    SCOPED_TRACE("symmetric");
    check_two_levels(0.0);
  }
  {
    SCOPED_TRACE("nonsymmetric");
    check_two_levels(0.3);
  }
}

TEST(SchwarzIteration, AsyncAndRacyReachTheDirectSolution) {
  if (!precond::suitesparse_available()) GTEST_SKIP() << "no SuiteSparse";
  const IterationCase c;
  sparse::DistMatrix m = distribute(c.a);
  for (const int transport : {AS_TRANSPORT_MPI, AS_TRANSPORT_RMA}) {
    for (const bool racy : {false, true}) {
      SCOPED_TRACE(std::string(transport == AS_TRANSPORT_MPI ? "mpi" : "rma") +
                   (racy ? " racy" : " async"));
      solvers::CsrSystem system = solvers::make_csr_system(m, c.local(m, c.b));
      auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, m);
      auto reduction = collectives::make_allreduce("mpi", m.comm());
      auto convergence = collectives::make_convergence_allreduce(
          "tree", m.comm(), solvers::async_convergence_values, transport);
      solvers::SchwarzIterationOptions o = iteration_options(1e-9, 100000);
      o.asynchronous = true;
      o.async.racy = racy;
      o.async.transport = transport;
      const solvers::SolveResult r =
          solvers::schwarz_solve(system, m, *halo, *reduction, convergence.get(), o);
      EXPECT_TRUE(r.converged);
      EXPECT_LT(r.true_residual, 1e-9);
      for (int i = 0; i < m.local_rows(); ++i)
        EXPECT_NEAR(system.x.origin()[i], c.solution[m.first_row() + i], 1e-7);
      convergence->free();
      halo->close();
    }
  }
  m.free();
}

TEST(SchwarzIteration, RefusesTheBasicTypeAndAnAsynchronousCoarseSpace) {
  const IterationCase c;
  sparse::DistMatrix m = distribute(c.a);
  solvers::CsrSystem system = solvers::make_csr_system(m, c.local(m, c.b));
  auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, m);
  auto reduction = collectives::make_allreduce("mpi", m.comm());
  solvers::SchwarzIterationOptions o = iteration_options(1e-6, 10);
  o.schwarz.type = precond::SchwarzType::basic;
  EXPECT_THROW(solvers::schwarz_solve(system, m, *halo, *reduction, nullptr, o), core::InputError);
  o.schwarz.type = precond::SchwarzType::restricted;
  o.schwarz.coarse = precond::CoarseKind::nicolaides;
  o.asynchronous = true;  // the two-level iteration is synchronous
  EXPECT_THROW(solvers::schwarz_solve(system, m, *halo, *reduction, nullptr, o), core::InputError);
  halo->close();
  m.free();
}

TEST(LocalSolver, Ic0IsExactOnATridiagonalMatrix) {
  // IC(0) keeps A's pattern; a tridiagonal matrix's Cholesky factor has no
  // fill, so IC(0) is exact there.
  const sparse::CsrMatrix a = laplacian(12, 1);
  sparse::LocalCsr l;
  l.row_ptr = a.row_ptr;
  l.col.assign(a.col.begin(), a.col.end());
  l.val = a.val;
  auto solver = precond::make_local_solver(precond::LocalSolverKind::ic0, l);
  std::vector<double> b(12);
  for (int i = 0; i < 12; ++i) b[i] = 1.0 + i;
  std::vector<double> x(12);
  solver->solve(b, x);
  std::vector<double> ax(12);
  sparse::multiply(a, x, ax);
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(ax[i], b[i], 1e-12);
  EXPECT_EQ(solver->report().nnz_factor, 12 + 11);
  // Exact here by luck of the pattern, not by construction: the Schwarz
  // iteration must not treat an IC(0) sweep as a repeatable exact solve.
  EXPECT_FALSE(solver->report().exact);
  if (precond::suitesparse_available()) {
    for (const auto kind : {precond::LocalSolverKind::cholmod, precond::LocalSolverKind::umfpack}) {
      EXPECT_TRUE(precond::make_local_solver(kind, l)->report().exact)
          << precond::local_solver_name(kind);
    }
  }
}

/// The pure Neumann Laplacian of an nx x ny grid (each row sums to zero):
/// singular, positive semidefinite.
sparse::LocalCsr neumann(int nx, int ny) {
  sparse::CsrMatrix a = laplacian(nx, ny);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double off = 0;
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col[k] != i) off += a.val[k];
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col[k] == i) a.val[k] = -off;
  }
  sparse::LocalCsr l;
  l.row_ptr = a.row_ptr;
  l.col.assign(a.col.begin(), a.col.end());
  l.val = a.val;
  return l;
}

TEST(LocalSolver, RefusesWhatItCannotFactorise) {
  // The exact factorisations meet the 2-D Neumann block's singularity;
  // IC(0) only where it is exact (a tridiagonal matrix has no fill): on a
  // 2-D grid the dropped fill keeps its pivots positive.
  const sparse::LocalCsr plane = neumann(6, 5);
  const sparse::LocalCsr line = neumann(12, 1);
  EXPECT_THROW(precond::make_local_solver(precond::LocalSolverKind::ic0, line),
               precond::FactorisationError);
  std::vector<precond::LocalSolverKind> kinds{precond::LocalSolverKind::ic0};
  if (precond::suitesparse_available()) {
    kinds.push_back(precond::LocalSolverKind::cholmod);
    kinds.push_back(precond::LocalSolverKind::umfpack);
    for (const auto kind : {precond::LocalSolverKind::cholmod, precond::LocalSolverKind::umfpack}) {
      SCOPED_TRACE(std::string(precond::local_solver_name(kind)));
      EXPECT_THROW(precond::make_local_solver(kind, plane), precond::FactorisationError);
    }
  }
  // -A of a definite matrix: the first pivot is negative.
  sparse::LocalCsr negative = neumann(6, 5);
  for (std::size_t k = 0; k < negative.val.size(); ++k) negative.val[k] = -negative.val[k];
  for (int i = 0; i < negative.rows(); ++i) {
    for (std::int64_t k = negative.row_ptr[i]; k < negative.row_ptr[i + 1]; ++k)
      if (negative.col[k] == i) negative.val[k] -= 0.5;  // -(A_neumann + 0.5 I)
  }
  for (const auto kind : kinds) {
    if (kind == precond::LocalSolverKind::umfpack) continue;  // LU takes indefinite matrices
    SCOPED_TRACE(std::string(precond::local_solver_name(kind)));
    try {
      precond::make_local_solver(kind, negative);
      ADD_FAILURE() << "factorised a negative definite matrix";
    } catch (const precond::FactorisationError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.find("not positive definite") != std::string::npos ||
                  what.find("positive pivots") != std::string::npos)
          << what;
    }
  }
  if (precond::suitesparse_available()) {
    // UMFPACK solves the negative definite matrix exactly.
    auto lu = precond::make_local_solver(precond::LocalSolverKind::umfpack, negative);
    std::vector<double> b(static_cast<std::size_t>(negative.rows()), 1.0);
    std::vector<double> x(b.size());
    lu->solve(b, x);
    for (int i = 0; i < negative.rows(); ++i) {
      double ax = 0.0;
      for (std::int64_t k = negative.row_ptr[i]; k < negative.row_ptr[i + 1]; ++k)
        ax += negative.val[k] * x[negative.col[k]];
      EXPECT_NEAR(ax, 1.0, 1e-12);
    }
  }
}

TEST(Schwarz, FactorisationFailureStopsEveryRank) {
  // Rank 0's rows negated: its subdomain is not positive definite; every
  // rank must throw the same CollectiveBreakdown naming rank 0.
  if (!precond::suitesparse_available()) GTEST_SKIP() << "no SuiteSparse";
  sparse::CsrMatrix a = laplacian(8, 6);
  const par::Comm c = world();
  sparse::DistMatrix m = distribute(a);
  // A matrix whose rank-0 block is negative definite.
  std::vector<std::int64_t> ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  const auto& off = m.row_offsets();
  for (std::int64_t i = off[c.rank()]; i < off[c.rank() + 1]; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      col.push_back(a.col[k]);
      val.push_back(c.rank() == 0 ? -a.val[k] : a.val[k]);
    }
    ptr.push_back(static_cast<std::int64_t>(col.size()));
  }
  m.free();
  sparse::DistMatrix bad = sparse::DistMatrix::from_rows(c, a.rows, {ptr, col, val});
  precond::SchwarzSettings s;
  s.overlap = 0;
  s.local_solver = precond::LocalSolverKind::cholmod;
  try {
    precond::Schwarz pc(bad, s, nullptr);
    ADD_FAILURE() << "no breakdown";
  } catch (const core::CollectiveBreakdown& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0's subdomain"), std::string::npos) << e.what();
  }
  bad.free();
}

}  // namespace
