// The Krylov solvers on P ranks: the split mat-vec over every halo strategy
// against a serial one; every method on every problem to the tolerance,
// agreeing with each other and with an independent serial CG; breakdown.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "../support/world.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/grid/gather.hpp"
#include "asyncsolve/grid/split.hpp"
#include "asyncsolve/ops/stencil.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "serial_cg.hpp"

using namespace asyncsolve;
using grid::Int3;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

/// A value for global interior point g that is not symmetric in anything.
double value_at(const Int3& g) {
  const double x = 0.37 * g[0] + 1.13 * g[1] * g[1] - 0.71 * g[2] + 0.01 * g[0] * g[2];
  return std::sin(x) + 0.25 * std::cos(3.0 * x + g[1]);
}

comm::Neighbourhood neighbourhood_of(ops::Stencil s) {
  return s == ops::Stencil::seven_point ? comm::Neighbourhood::faces : comm::Neighbourhood::full;
}

struct MatvecCase {
  std::string halo;
  ops::Stencil stencil;
};

class SplitMatvec : public testing::TestWithParam<MatvecCase> {};

// q = A p computed as the solvers do (start, interior in planes with a test
// after each, finish, boundary boxes) equals the same kernel applied to the
// whole global grid on one rank, bit for bit.
TEST_P(SplitMatvec, EqualsTheSerialMatvec) {
  const auto& param = GetParam();
  for (const Int3 global : {Int3{13, 11, 9}, Int3{8, 17, 10}, Int3{20, 3, 7}}) {
    grid::DecompositionSpec spec;
    spec.global = global;
    grid::Decomposition d = grid::Decomposition::create(world(), spec);
    grid::Field p(d.local(), 1);
    grid::Field q(d.local(), 1);
    p.fill(0.0);
    q.fill(0.0);
    const Int3& n = d.local();
    const Int3& o = d.offset();
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) p(i, j, k) = value_at({o[0] + i, o[1] + j, o[2] + k});
    const ops::StencilOperator a{param.stencil, 0.5};
    auto halo = comm::make_halo_exchange(param.halo, d, p, neighbourhood_of(param.stencil));
    const grid::OverlapSplit split = grid::split_for_overlap(d);

    // The split tiles the block: every point exactly once.
    grid::Field count(n, 0);
    count.fill(0.0);
    std::vector<grid::Box> boxes = split.boundary;
    boxes.push_back(split.interior);
    for (const grid::Box& b : boxes)
      for (int k = b.lo[2]; k < b.hi[2]; ++k)
        for (int j = b.lo[1]; j < b.hi[1]; ++j)
          for (int i = b.lo[0]; i < b.hi[0]; ++i) count(i, j, k) += 1.0;
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) ASSERT_EQ(count(i, j, k), 1.0) << i << "," << j << "," << k;

    double dot = 0.0;
    for (int rep = 0; rep < 2; ++rep) {  // twice: buffers are reused
      dot = 0.0;
      halo->start(p);
      for (int k = split.interior.lo[2]; k < split.interior.hi[2]; ++k) {
        dot += ops::apply(a, p, q, grid::planes(split.interior, k, k + 1));
        halo->test();
      }
      halo->finish(p);
      for (const grid::Box& b : split.boundary) dot += ops::apply(a, p, q, b);
    }
    double global_dot = 0.0;
    MPI_Allreduce(&dot, &global_dot, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const std::vector<double> gathered = grid::gather_to_root(d, q);
    if (d.comm().is_root()) {
      grid::Field whole_p(global, 1);
      grid::Field whole_q(global, 1);
      whole_p.fill(0.0);
      for (int k = 0; k < global[2]; ++k)
        for (int j = 0; j < global[1]; ++j)
          for (int i = 0; i < global[0]; ++i) whole_p(i, j, k) = value_at({i, j, k});
      const double serial_dot = ops::apply(a, whole_p, whole_q, whole_p.interior_box());
      grid::Field ref_q(global, 1);
      ops::apply_ref(a, whole_p, ref_q, whole_p.interior_box());
      std::size_t at = 0;
      for (int k = 0; k < global[2]; ++k)
        for (int j = 0; j < global[1]; ++j)
          for (int i = 0; i < global[0]; ++i, ++at) {
            ASSERT_EQ(gathered[at], whole_q(i, j, k))
                << param.halo << " at " << i << "," << j << "," << k;
            ASSERT_NEAR(gathered[at], ref_q(i, j, k), 1e-12);
          }
      EXPECT_NEAR(global_dot, serial_dot, 1e-11 * std::abs(serial_dot));
    }
    halo->close();
    d.free();
  }
}

std::vector<MatvecCase> matvec_cases() {
  std::vector<MatvecCase> cases;
  for (const auto& h : comm::halo_exchange_names())
    for (const auto s : {ops::Stencil::seven_point, ops::Stencil::twenty_seven_point})
      cases.push_back({h, s});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, SplitMatvec, testing::ValuesIn(matvec_cases()),
                         [](const testing::TestParamInfo<MatvecCase>& case_info) {
                           return case_info.param.halo + "_" +
                                  std::to_string(ops::points(case_info.param.stencil));
                         });

struct Solved {
  solvers::SolveResult result;
  std::vector<double> x;  // gathered on rank 0
  Int3 global{};
};

Solved solve(const std::string& problem_name, const grid::DecompositionSpec& spec,
             solvers::KrylovOptions options, double shift = 0.0, bool poison_b = false,
             const std::string& halo_name = "waitall") {
  const auto problem = grid::make_problem(problem_name, {});
  grid::Decomposition d = grid::Decomposition::create(world(), spec);
  solvers::KrylovSystem system = solvers::make_krylov_system(*problem, d, shift);
  if (poison_b && d.comm().is_root()) system.b(0, 0, 0) = std::numeric_limits<double>::quiet_NaN();
  auto halo = comm::make_halo_exchange(halo_name, d, system.x, neighbourhood_of(system.op.stencil));
  Solved run;
  run.result = solvers::krylov_solve(system, d, *halo, options);
  run.x = grid::gather_to_root(d, system.x);
  run.global = d.global();
  halo->close();
  d.free();
  return run;
}

solvers::KrylovOptions options_for(const std::string& method, double tol) {
  solvers::KrylovOptions o;
  o.method = solvers::parse_krylov_method(method).value();
  o.tol = tol;
  o.max_iters = 2000;
  o.test_every = 2;
  o.allreduce = collectives::parse_allreduce(method == "pcg-overlap" || method == "pipecg" ||
                                                     method == "pgmres" || method == "pipebicgstab"
                                                 ? "impi"
                                                 : "mpi");
  return o;
}

grid::DecompositionSpec global_spec(const Int3& g) {
  grid::DecompositionSpec s;
  s.global = g;
  return s;
}

grid::DecompositionSpec local_spec(const Int3& l) {
  grid::DecompositionSpec s;
  s.local = l;
  return s;
}

struct ProblemCase {
  std::string name;
  grid::DecompositionSpec spec;
};

std::vector<ProblemCase> problem_cases() {
  return {{"ones", global_spec({16, 15, 14})},
          {"plume", global_spec({17, 13, 15})},
          {"laplace27", local_spec({8, 7, 6})}};
}

class Methods : public testing::TestWithParam<ProblemCase> {};

// Every method reaches the tolerance (true residual included); cg, pcg1,
// pcg2 and pcg-overlap agree on the iteration count (±1) and on the residual
// history (1e-8 relative, first 20 iterations); cg agrees with the serial CG.
TEST_P(Methods, ReachToleranceAndAgree) {
  const ProblemCase& pc = GetParam();
  constexpr double tol = 1e-8;
  const Solved cg = solve(pc.name, pc.spec, options_for("cg", tol));
  ASSERT_TRUE(cg.result.converged) << solvers::stop_reason_name(cg.result.reason);
  const auto problem = grid::make_problem(pc.name, {});
  const reference::SerialCg serial = reference::serial_cg(*problem, cg.global, 0.0, tol, 2000);
  ASSERT_TRUE(serial.converged);
  if (world_rank() == 0) {
    EXPECT_LE(std::abs(cg.result.iterations - serial.iterations), 1);
    ASSERT_GE(cg.result.history.size(), 2U);
    const std::size_t n =
        std::min<std::size_t>({20, serial.history.size(), cg.result.history.size()});
    for (std::size_t k = 0; k < n; ++k) {
      EXPECT_NEAR(cg.result.history[k].residual, serial.history[k], 1e-8 * serial.history[k])
          << "iteration " << k;
    }
    double worst = 0.0;
    double biggest = 0.0;
    for (std::size_t i = 0; i < serial.x.size(); ++i) {
      worst = std::max(worst, std::abs(cg.x[i] - serial.x[i]));
      biggest = std::max(biggest, std::abs(serial.x[i]));
    }
    EXPECT_LT(worst, 1e-6 * biggest);
  }

  for (const std::string method : {"pcg1", "pcg2", "pcg-overlap", "pipecg"}) {
    const Solved run = solve(pc.name, pc.spec, options_for(method, tol));
    EXPECT_TRUE(run.result.converged)
        << method << ": " << solvers::stop_reason_name(run.result.reason) << " "
        << run.result.detail;
    EXPECT_LT(run.result.residual_estimate, tol) << method;
    EXPECT_LT(run.result.true_residual, 10 * tol) << method;
    if (world_rank() != 0) continue;
    if (method == "pipecg") {
      // Pipelining reorders the recurrences: close, not equal.
      EXPECT_LE(std::abs(run.result.iterations - cg.result.iterations), 3) << method;
      continue;
    }
    EXPECT_LE(std::abs(run.result.iterations - cg.result.iterations), 1) << method;
    const std::size_t n =
        std::min<std::size_t>({20, run.result.history.size(), cg.result.history.size()});
    for (std::size_t k = 0; k < n; ++k) {
      EXPECT_NEAR(run.result.history[k].residual, cg.result.history[k].residual,
                  1e-8 * cg.result.history[k].residual)
          << method << " iteration " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllProblems, Methods, testing::ValuesIn(problem_cases()),
                         [](const testing::TestParamInfo<ProblemCase>& case_info) {
                           return case_info.param.name;
                         });

// ones: u = 1 exactly, and ||u - 1||_inf <= ||u - 1||_2 <= ||b - A u||_2 / lambda_min.
TEST(Krylov, OnesErrorWithinTheResidualBound) {
  const Int3 g{18, 14, 16};
  for (const std::string method : {"cg", "pcg-overlap"}) {
    const Solved run = solve("ones", global_spec(g), options_for(method, 1e-6));
    ASSERT_TRUE(run.result.converged);
    if (world_rank() != 0) continue;
    double lambda_min = 0.0;
    for (const int n : g) lambda_min += 2.0 * (1.0 - std::cos(std::numbers::pi / (n + 1)));
    const auto problem = grid::make_problem("ones", {});
    const std::vector<double> b = reference::serial_rhs(*problem, g);
    double bb = 0.0;
    for (const double v : b) bb += v * v;
    const double bound = run.result.true_residual * std::sqrt(bb) / lambda_min;
    double error = 0.0;
    for (const double v : run.x) error = std::max(error, std::abs(v - 1.0));
    EXPECT_LE(error, bound) << method;
    EXPECT_GT(error, 0.0);  // not trivially exact: the bound is what is tested
  }
}

/// The CG family: the methods that need a symmetric positive definite A.
std::vector<std::string> cg_family() {
  std::vector<std::string> out;
  for (const auto& method : solvers::krylov_method_names())
    if (solvers::needs_symmetric_matrix(*solvers::parse_krylov_method(method)))
      out.push_back(method);
  return out;
}

// A - 5.9 I is indefinite on this grid: every CG method must stop with a
// breakdown, not run on or report convergence (GMRES and BiCGStab solve it).
TEST(Krylov, IndefiniteOperatorBreaksDown) {
  for (const auto& method : cg_family()) {
    const Solved run = solve("ones", global_spec({12, 12, 12}), options_for(method, 1e-8), -5.9);
    EXPECT_FALSE(run.result.converged) << method;
    EXPECT_EQ(run.result.reason, solvers::StopReason::breakdown) << method;
    EXPECT_NE(run.result.detail.find("p^T A p"), std::string::npos) << run.result.detail;
    EXPECT_NE(run.result.detail.find("iteration"), std::string::npos) << run.result.detail;
  }
}

TEST(Krylov, NanIsABreakdown) {
  for (const auto& method : solvers::krylov_method_names()) {
    const Solved run = solve("ones", global_spec({10, 9, 8}), options_for(method, 1e-8), 0.0, true);
    EXPECT_FALSE(run.result.converged) << method;
    EXPECT_EQ(run.result.reason, solvers::StopReason::breakdown) << method;
    EXPECT_NE(run.result.detail.find("nan"), std::string::npos) << run.result.detail;
  }
}

TEST(Krylov, MaxItersStopsWithoutConverging) {
  for (const auto& method : solvers::krylov_method_names()) {
    solvers::KrylovOptions o = options_for(method, 1e-12);
    o.max_iters = 3;
    const Solved run = solve("plume", global_spec({12, 12, 12}), o);
    EXPECT_FALSE(run.result.converged) << method;
    EXPECT_EQ(run.result.reason, solvers::StopReason::max_iters) << method;
    EXPECT_EQ(run.result.iterations, 3) << method;
    // The returned x is the iterate the reported residual belongs to.
    EXPECT_NEAR(run.result.true_residual, run.result.residual_estimate,
                1e-10 + 1e-8 * run.result.residual_estimate)
        << method;
  }
}

TEST(Krylov, MaxTimeStopsEveryMethod) {
  for (const auto& method : solvers::krylov_method_names()) {
    // Rank 0 stops for 0.3 s after its first mat-vec: the 16 iterations
    // before the first check outlast the limit, long before the tolerance.
    par::FaultOptions pause;
    pause.pause_rank = 0;
    pause.pause_s = 0.3;
    pause.pause_after = 1;
    par::FaultInjector faults(pause, world_rank());
    solvers::KrylovOptions o = options_for(method, 1e-12);
    o.max_time_s = 0.2;
    o.faults = &faults;
    const Solved run = solve("plume", global_spec({16, 16, 16}), o);
    EXPECT_FALSE(run.result.converged) << method;
    EXPECT_EQ(run.result.reason, solvers::StopReason::max_time)
        << method << ": " << run.result.detail;
    double longest = run.result.time_s;  // the rank that saw the limit ran it
    MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_GE(longest, 0.2) << method;
    EXPECT_EQ(run.result.iterations % 16, 0) << method;  // checked every 16 iterations
  }
}

// The overlap really tests the halo exchange while the interior is computed:
// on ranks with a neighbour, every mat-vec made at least one test.
TEST(Krylov, HaloIsTestedDuringTheInterior) {
  solvers::KrylovOptions o = options_for("cg", 1e-6);
  o.test_every = 1;
  const Solved run = solve("ones", global_spec({12, 12, 24}), o);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) {
    EXPECT_EQ(run.result.halo_tests, 0);  // nothing to overlap
  } else {
    EXPECT_GE(run.result.halo_tests, run.result.halo_exchanges);
  }
  o.test_every = 0;
  const Solved quiet = solve("ones", global_spec({12, 12, 24}), o);
  EXPECT_EQ(quiet.result.halo_tests, 0);
  EXPECT_EQ(quiet.result.iterations, run.result.iterations);
}

TEST(Krylov, TreeAndImpiReductionsGiveTheSameIterations) {
  solvers::KrylovOptions o = options_for("pcg-overlap", 1e-8);
  const Solved impi = solve("plume", global_spec({14, 13, 12}), o);
  o.allreduce = collectives::parse_allreduce("tree");
  const Solved tree = solve("plume", global_spec({14, 13, 12}), o);
  EXPECT_TRUE(tree.result.converged);
  EXPECT_LE(std::abs(tree.result.iterations - impi.result.iterations), 1);
}

// Every reduction algorithm sums in its own order, so the iterates may differ
// in the last bits from MPI_Allreduce's; pcg-overlap must still take the same
// iterations with the same residual history to 1e-12 relative.
TEST(Krylov, EveryAllreduceAlgorithmSolvesTheSame) {
  solvers::KrylovOptions o = options_for("pcg-overlap", 1e-8);
  o.allreduce = collectives::parse_allreduce("mpi");
  const Solved reference = solve("plume", global_spec({14, 13, 12}), o);
  ASSERT_TRUE(reference.result.converged);
  for (const std::string algorithm : {"rd", "knomial:2", "knomial:3", "knomial:4", "twolevel:rd",
                                      "tree", "impi", "shm", "twolevel:shm+rd"}) {
    o.allreduce = collectives::parse_allreduce(algorithm);
    const Solved run = solve("plume", global_spec({14, 13, 12}), o);
    EXPECT_TRUE(run.result.converged) << algorithm;
    EXPECT_EQ(run.result.iterations, reference.result.iterations) << algorithm;
    if (world_rank() == 0) {
      ASSERT_EQ(run.result.history.size(), reference.result.history.size()) << algorithm;
      for (std::size_t k = 0; k < run.result.history.size(); ++k)
        EXPECT_NEAR(run.result.history[k].residual, reference.result.history[k].residual,
                    1e-12 * reference.result.history[k].residual)
            << algorithm << " iteration " << k;
    }
  }
  // pipecg, with and without Jacobi (its loop for M^-1 = c I), over the
  // shared-memory reduction against the blocking one.
  for (const bool jacobi : {false, true}) {
    solvers::KrylovOptions p = options_for("pipecg", 1e-8);
    p.pc.kind = jacobi ? precond::PcKind::jacobi : precond::PcKind::none;
    p.allreduce = collectives::parse_allreduce("mpi");
    const Solved blocking = solve("plume", global_spec({14, 13, 12}), p);
    p.allreduce = collectives::parse_allreduce("shm");
    const Solved shm = solve("plume", global_spec({14, 13, 12}), p);
    EXPECT_TRUE(shm.result.converged);
    EXPECT_EQ(shm.result.iterations, blocking.result.iterations) << "jacobi " << jacobi;
  }
}

// Every halo strategy computes the same mat-vec, so the same iterates.
TEST(Krylov, EveryHaloStrategySolvesTheSame) {
  const solvers::KrylovOptions o = options_for("pcg-overlap", 1e-8);
  const Solved reference = solve("laplace27", local_spec({6, 5, 7}), o, 0.0, false, "waitall");
  for (const auto& halo : comm::halo_exchange_names()) {
    const Solved run = solve("laplace27", local_spec({6, 5, 7}), o, 0.0, false, halo);
    EXPECT_TRUE(run.result.converged) << halo;
    EXPECT_EQ(run.result.iterations, reference.result.iterations) << halo;
    if (world_rank() == 0) {
      ASSERT_EQ(run.result.history.size(), reference.result.history.size());
      for (std::size_t k = 0; k < run.result.history.size(); ++k)
        EXPECT_EQ(run.result.history[k].residual, reference.result.history[k].residual) << halo;
    }
  }
}

// Noise and a straggler slow the solve down, never change its arithmetic.
TEST(Krylov, InjectedNoiseChangesNothingButTime) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  solvers::KrylovOptions o = options_for("pcg2", 1e-8);
  const Solved quiet = solve("plume", global_spec({16, 14, 12}), o);
  par::FaultInjector faults(par::FaultOptions{0, 1.5, 50.0, 2000.0, 7}, rank);
  o.faults = &faults;
  const Solved noisy = solve("plume", global_spec({16, 14, 12}), o);
  EXPECT_EQ(noisy.result.iterations, quiet.result.iterations);
  // Polling for noise cuts the interior into pieces on one rank too, which
  // changes the summation order of p^T A p: equal to rounding, not bitwise.
  EXPECT_NEAR(noisy.result.residual_estimate, quiet.result.residual_estimate,
              1e-9 * quiet.result.residual_estimate);
  EXPECT_GT(noisy.result.injected_s, 0.0);
}

TEST(Krylov, UnknownMethodIsBadInput) {
  const auto problem = grid::make_problem("ones", {});
  grid::Decomposition d = grid::Decomposition::create(world(), global_spec({6, 6, 6}));
  solvers::KrylovSystem system = solvers::make_krylov_system(*problem, d, 0.0);
  auto halo = comm::make_halo_exchange("waitall", d, system.x, comm::Neighbourhood::faces);
  solvers::KrylovOptions o;
  EXPECT_FALSE(solvers::parse_krylov_method("minres").has_value());
  for (const auto& name : solvers::krylov_method_names()) {
    const auto method = solvers::parse_krylov_method(name);
    ASSERT_TRUE(method.has_value()) << name;
    EXPECT_EQ(solvers::krylov_method_name(*method), name);
  }
  o.method = solvers::KrylovMethod::pcg1;
  system.op.shift = -6.0;  // diagonal 0: no Jacobi preconditioner
  EXPECT_THROW(solvers::krylov_solve(system, d, *halo, o), core::InputError);
  halo->close();
  d.free();
}

}  // namespace
