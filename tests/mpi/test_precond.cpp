// The preconditioners behind --pc (chebyshev, boomeramg) with every
// preconditioned CG method, on the structured stencils (7 and 27 points)
// and on the assembled CSR matrix: each reaches the tolerance with the true
// residual; the stencil and the assembled matrix give BoomerAMG the same
// rows (the same iteration count); pcg-overlap and pipecg keep a reduction
// in flight behind every apply of the loop, pcg1 and pcg2 behind none;
// N solves after one setup (--repeat-solve) take the iterations of one
// solve and reach its solution, bit for bit, every time.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/solvers/assemble.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/krylov.hpp"

using namespace asyncsolve;
using grid::Int3;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

struct Case {
  std::string problem;  ///< ones or laplace27
  bool assembled;       ///< on the distributed CSR matrix (--assemble)
  std::string method;
  std::string pc;  ///< --pc text
};

solvers::KrylovOptions options_for(const Case& c) {
  solvers::KrylovOptions o;
  o.method = solvers::parse_krylov_method(c.method).value();
  o.tol = 1e-8;
  o.max_iters = 500;
  o.test_every = 2;
  o.allreduce = collectives::parse_allreduce(
      c.method == "pcg-overlap" || c.method == "pipecg" ? "impi" : "mpi");
  precond::parse_pc(c.pc, o.pc);
  return o;
}

grid::DecompositionSpec spec_of(const std::string& problem) {
  grid::DecompositionSpec s;
  if (problem == "laplace27") {
    s.local = {8, 7, 6};
  } else {
    s.global = {16, 15, 14};
  }
  return s;
}

/// This rank's unknowns of `x` (interior points, x fastest).
std::vector<double> owned(const grid::Field& x) {
  std::vector<double> out;
  const Int3& n = x.interior();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) out.push_back(x(i, j, k));
  return out;
}

/// Collective: solves case `c` `repeat_solves` times after one setup;
/// the last solution's owned unknowns go to `x` when it is given.
solvers::SolveResult solve(const Case& c, int repeat_solves = 1, std::vector<double>* x = nullptr) {
  auto problem = grid::make_problem(c.problem, {});
  grid::Decomposition d = grid::Decomposition::create(world(), spec_of(c.problem));
  solvers::KrylovOptions o = options_for(c);
  o.repeat_solves = repeat_solves;
  solvers::SolveResult result;
  if (c.assembled) {
    solvers::AssembledSystem a = solvers::assemble(*problem, d, 0.0);
    solvers::CsrSystem csr = solvers::make_csr_system(a.matrix, a.b, a.x0);
    auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, a.matrix);
    result = solvers::krylov_solve(csr, a.matrix, *halo, o);
    if (x != nullptr) *x = owned(csr.x);
    halo->close();
    halo.reset();
    a.matrix.free();
  } else {
    solvers::KrylovSystem system = solvers::make_krylov_system(*problem, d, 0.0);
    const auto hood = system.op.stencil == ops::Stencil::twenty_seven_point
                          ? comm::Neighbourhood::full
                          : comm::Neighbourhood::faces;
    auto halo = comm::make_halo_exchange("waitall", d, system.x, hood);
    result = solvers::krylov_solve(system, d, *halo, o);
    if (x != nullptr) *x = owned(system.x);
    halo->close();
  }
  d.free();
  return result;
}

std::vector<std::string> pcs() {
  std::vector<std::string> p{"chebyshev", "chebyshev:1", "chebyshev:6"};
  if (precond::boomeramg_available()) p.emplace_back("boomeramg");
  return p;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const std::string& pc : pcs())
    for (const std::string method : {"pcg1", "pcg2", "pcg-overlap", "pipecg"}) {
      all.push_back({"ones", false, method, pc});
      all.push_back({"laplace27", false, method, pc});
      all.push_back({"ones", true, method, pc});
    }
  return all;
}

class Preconditioned : public testing::TestWithParam<Case> {};

TEST_P(Preconditioned, ReachesTheToleranceWithTheTrueResidual) {
  const Case& c = GetParam();
  const solvers::SolveResult r = solve(c);
  EXPECT_TRUE(r.converged) << solvers::stop_reason_name(r.reason) << " " << r.detail;
  EXPECT_EQ(r.reason, solvers::StopReason::tolerance);
  EXPECT_LT(r.true_residual, 1e-7);  // the recursive residual met 1e-8
  EXPECT_GT(r.iterations, 0);
  const precond::PcReport& pc = r.pc;
  EXPECT_EQ(pc.name, c.pc.substr(0, c.pc.find(':')));
  EXPECT_GE(pc.applies, r.iterations);
  EXPECT_GE(pc.setup_s, 0.0);
  if (pc.name == "chebyshev") {
    const int degree = c.pc == "chebyshev" ? 3 : std::stoi(c.pc.substr(c.pc.find(':') + 1));
    EXPECT_EQ(pc.matvecs, pc.applies * degree);
    double lambda_min = 0;
    double lambda_max = 0;
    for (const auto& [k, v] : pc.numbers) {
      if (k == "lambda_min") lambda_min = v;
      if (k == "lambda_max") lambda_max = v;
    }
    // D^-1 A of these M-matrices has its spectrum in (0, 2)
    EXPECT_GT(lambda_min, 0.0);
    EXPECT_GT(lambda_max, lambda_min);
    EXPECT_LT(lambda_max, 2.0 * 1.1 + 1e-12);
  }
  // The reduction in flight behind the apply: every apply of the loop in
  // pcg-overlap (iprod) and pipecg (the three dots); the first apply, before
  // the loop, and every apply of pcg1 and pcg2 behind none.
  const bool overlapped = c.method == "pcg-overlap" || c.method == "pipecg";
  EXPECT_EQ(r.pc_applies_behind_reduction, overlapped ? pc.applies - 1 : 0) << c.method;
  const auto& names = r.phases.names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "precond_hidden") continue;
    if (overlapped) {
      EXPECT_GT(r.phases.seconds(i), 0.0);
    } else {
      EXPECT_EQ(r.phases.seconds(i), 0.0);
    }
  }
}

std::string case_name(const testing::TestParamInfo<Case>& p) {
  std::string n =
      p.param.problem + (p.param.assembled ? "_csr_" : "_") + p.param.method + "_" + p.param.pc;
  for (char& ch : n)
    if (ch == '-' || ch == ':') ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(All, Preconditioned, testing::ValuesIn(cases()), case_name);

// BoomerAMG set up from the stencil's rows and from the assembled matrix
// sees the same matrix: the same iterations.
TEST(BoomerAmg, StencilAndAssembledAgree) {
  if (!precond::boomeramg_available()) GTEST_SKIP() << "built without hypre";
  for (const std::string problem : {"ones", "laplace27"}) {
    const solvers::SolveResult s = solve({problem, false, "pcg1", "boomeramg"});
    const solvers::SolveResult a = solve({problem, true, "pcg1", "boomeramg"});
    EXPECT_EQ(s.iterations, a.iterations) << problem;
  }
}

// --repeat-solve: the operator and the preconditioner set up once, then N
// solves from the same x0: each takes the iterations of a single solve and
// reaches its solution bit for bit (the same arithmetic in the same order);
// the result's other fields are the first solve's.
class Repeated : public testing::TestWithParam<Case> {};

TEST_P(Repeated, EverySolveIsTheSingleSolve) {
  const Case& c = GetParam();
  constexpr int solves = 3;
  std::vector<double> x_once;
  std::vector<double> x_last;
  const solvers::SolveResult once = solve(c, 1, &x_once);
  const solvers::SolveResult many = solve(c, solves, &x_last);
  ASSERT_TRUE(once.converged) << solvers::stop_reason_name(once.reason) << " " << once.detail;
  ASSERT_EQ(once.repeats.size(), 1U);
  EXPECT_EQ(once.repeats[0].iterations, once.iterations);
  EXPECT_EQ(once.repeats[0].time_s, once.time_s);
  ASSERT_EQ(many.repeats.size(), static_cast<std::size_t>(solves));
  EXPECT_TRUE(many.converged);
  EXPECT_EQ(many.iterations, once.iterations);
  EXPECT_EQ(many.history.size(), once.history.size());  // the first solve's
  EXPECT_EQ(many.repeats[0].time_s, many.time_s);
  for (const solvers::RepeatedSolve& r : many.repeats) {
    EXPECT_TRUE(r.converged) << solvers::stop_reason_name(r.reason);
    EXPECT_EQ(r.reason, solvers::StopReason::tolerance);
    EXPECT_EQ(r.iterations, once.iterations);
    EXPECT_EQ(r.true_residual, once.true_residual);
    EXPECT_EQ(r.change_inf, 0.0);  // the same solution as the first solve
    EXPECT_GT(r.time_s, 0.0);
  }
  // the last solve's solution is the single solve's, bit for bit
  EXPECT_EQ(x_last, x_once);
  if (c.pc != "jacobi") {
    // set up once: the report (applies, setup) is the first solve's
    EXPECT_EQ(many.pc.applies, once.pc.applies);
    EXPECT_EQ(many.pc.matvecs, once.pc.matvecs);
  }
}

std::vector<Case> repeated_cases() {
  std::vector<std::string> p{"jacobi", "chebyshev"};
  if (precond::boomeramg_available()) p.emplace_back("boomeramg");
  std::vector<Case> all;
  for (const std::string& pc : p)
    for (const std::string method : {"pcg1", "pcg2", "pcg-overlap", "pipecg"}) {
      all.push_back({"ones", false, method, pc});
      all.push_back({"ones", true, method, pc});
    }
  all.push_back({"laplace27", false, "pcg1", "chebyshev"});
  return all;
}

INSTANTIATE_TEST_SUITE_P(All, Repeated, testing::ValuesIn(repeated_cases()), case_name);

// --repeat-solve below 1 is refused.
TEST(Repeated, NoSolveIsRefused) {
  EXPECT_THROW(solve({"ones", false, "pcg1", "jacobi"}, 0), core::InputError);
}

// cg takes no preconditioner.
TEST(Preconditioner, CgRefusesOne) {
  EXPECT_THROW(solve({"ones", false, "cg", "chebyshev"}), core::InputError);
}

}  // namespace
