// The solvers on the distributed CSR operator: the model problems assembled
// (--assemble) give the matrix-free path's iterates to 1e-12 and its
// iteration counts, for every Krylov method, both stencils and every halo
// strategy; the Jacobi preconditioner refuses a non-positive diagonal.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/solvers/assemble.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/krylov.hpp"

using namespace asyncsolve;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

/// x of the matrix-free path, in field interior order (x fastest).
std::vector<double> interior_values(const grid::Field& f) {
  std::vector<double> out;
  const auto& n = f.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) out.push_back(f(i, j, k));
  return out;
}

struct Runs {
  solvers::SolveResult stencil;
  solvers::SolveResult csr;
  double max_difference = 0;  ///< max |x_stencil - x_csr| over every rank
  double max_value = 0;       ///< max |x_stencil|
};

Runs run_both(const std::string& problem_name, solvers::KrylovOptions options,
              comm::HaloStrategy strategy = comm::HaloStrategy::waitall) {
  const auto problem = grid::make_problem(problem_name, {});
  grid::Decomposition d = grid::Decomposition::create(
      world(), {.global = grid::Int3{11, 9, 8}, .local = {}, .dims = {}});
  Runs runs;
  // The matrix-free path.
  solvers::KrylovSystem system = solvers::make_krylov_system(*problem, d, 0.0);
  const auto neighbourhood =
      problem->stencil_points() == 27 ? comm::Neighbourhood::full : comm::Neighbourhood::faces;
  auto halo = comm::make_halo_exchange(comm::HaloStrategy::waitall, d, system.x, neighbourhood);
  runs.stencil = solvers::krylov_solve(system, d, *halo, options);
  halo->close();
  // The assembled path.
  solvers::AssembledSystem assembled = solvers::assemble(*problem, d, 0.0);
  solvers::CsrSystem csr = solvers::make_csr_system(assembled.matrix, assembled.b, assembled.x0);
  auto sparse_halo = comm::make_sparse_halo_exchange(strategy, assembled.matrix);
  runs.csr = solvers::krylov_solve(csr, assembled.matrix, *sparse_halo, options);
  sparse_halo->close();
  const std::vector<double> xs = interior_values(system.x);
  double diff[2] = {0.0, 0.0};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    diff[0] = std::max(diff[0], std::abs(xs[i] - csr.x.origin()[i]));
    diff[1] = std::max(diff[1], std::abs(xs[i]));
  }
  MPI_Allreduce(MPI_IN_PLACE, diff, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  runs.max_difference = diff[0];
  runs.max_value = diff[1];
  assembled.matrix.free();
  d.free();
  return runs;
}

struct Case {
  solvers::KrylovMethod method;
  std::string problem;
};

class Assembled : public testing::TestWithParam<Case> {};

}  // namespace

TEST_P(Assembled, IteratesMatchTheMatrixFreePath) {
  solvers::KrylovOptions options;
  options.method = GetParam().method;
  options.pc.kind = precond::PcKind::jacobi;  // pipecg with the Jacobi preconditioner
  options.tol = 0.0;                          // never stops: compare the iterates of 12 iterations
  options.max_iters = 12;
  const Runs fixed = run_both(GetParam().problem, options);
  EXPECT_EQ(fixed.stencil.iterations, fixed.csr.iterations);
  EXPECT_LE(fixed.max_difference, 1e-12 * fixed.max_value)
      << "max |x_stencil - x_csr| = " << fixed.max_difference;
  // To convergence: the same iteration counts and residuals.
  options.tol = 1e-8;
  options.max_iters = 1000;
  const Runs solved = run_both(GetParam().problem, options);
  EXPECT_TRUE(solved.stencil.converged);
  EXPECT_TRUE(solved.csr.converged);
  EXPECT_EQ(solved.stencil.iterations, solved.csr.iterations);
  EXPECT_NEAR(solved.stencil.true_residual, solved.csr.true_residual, 1e-10);
  EXPECT_EQ(solved.csr.halo_exchanges, solved.stencil.halo_exchanges);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& name : solvers::krylov_method_names())
    for (const std::string problem : {"plume", "laplace27"})
      out.push_back({*solvers::parse_krylov_method(name), problem});
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryMethod, Assembled, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& c) {
                           std::string name(solvers::krylov_method_name(c.param.method));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name + "_" + c.param.problem;
                         });

TEST(CsrKrylov, EveryHaloStrategyGivesTheSameBits) {
  solvers::KrylovOptions options;
  options.method = solvers::KrylovMethod::pcg_overlap;
  options.tol = 0.0;
  options.max_iters = 8;
  const auto problem = grid::make_problem("laplace27", {});
  grid::Decomposition d = grid::Decomposition::create(
      world(), {.global = grid::Int3{9, 8, 7}, .local = {}, .dims = {}});
  solvers::AssembledSystem a = solvers::assemble(*problem, d, 0.0);
  std::vector<double> first;
  for (const comm::HaloStrategy s :
       {comm::HaloStrategy::waitall, comm::HaloStrategy::alltoallv, comm::HaloStrategy::ialltoallv,
        comm::HaloStrategy::neighbor, comm::HaloStrategy::persistent}) {
    solvers::CsrSystem csr = solvers::make_csr_system(a.matrix, a.b, a.x0);
    auto halo = comm::make_sparse_halo_exchange(s, a.matrix);
    const solvers::SolveResult r = solvers::krylov_solve(csr, a.matrix, *halo, options);
    halo->close();
    EXPECT_EQ(r.iterations, 8);
    std::vector<double> x(csr.x.origin(), csr.x.origin() + a.matrix.local_rows());
    if (first.empty()) {
      first = x;
    } else {
      EXPECT_EQ(x, first) << comm::halo_strategy_name(s);
    }
  }
  a.matrix.free();
  d.free();
}

TEST(CsrKrylov, JacobiPreconditionerRefusesANonPositiveDiagonal) {
  const par::Comm w = world();
  // A 1-D matrix, one row per rank plus one, the last row's diagonal zero.
  const std::int64_t n = w.size() + 1;
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  const std::int64_t first = w.rank();
  const std::int64_t rows = w.rank() == w.size() - 1 ? 2 : 1;
  for (std::int64_t i = first; i < first + rows; ++i) {
    if (i > 0) {
      col.push_back(i - 1);
      val.push_back(-1.0);
    }
    col.push_back(i);
    val.push_back(i == n - 1 ? 0.0 : 2.0);
    if (i + 1 < n) {
      col.push_back(i + 1);
      val.push_back(-1.0);
    }
    row_ptr.push_back(static_cast<std::int64_t>(col.size()));
  }
  sparse::DistMatrix m = sparse::DistMatrix::from_rows(w, n, {row_ptr, col, val});
  std::vector<double> b(static_cast<std::size_t>(rows), 1.0);
  solvers::CsrSystem s = solvers::make_csr_system(m, b);
  auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, m);
  solvers::KrylovOptions options;
  options.method = solvers::KrylovMethod::pcg1;
  try {
    solvers::krylov_solve(s, m, *halo, options);
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("global row " + std::to_string(n - 1)), std::string::npos)
        << e.what();
  }
  halo->close();
  m.free();
}
