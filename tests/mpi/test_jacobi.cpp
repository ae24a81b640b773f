// Synchronous Jacobi on P ranks against a serial reference: same iterates to
// 1e-12, same iteration count, on both problems and several decompositions.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <numbers>

#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/grid/gather.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "serial_jacobi.hpp"

using namespace asyncsolve;
using grid::Int3;

namespace {

struct ParallelRun {
  solvers::SolveResult result;
  std::vector<double> u;  // gathered on rank 0
  Int3 global{};
  Int3 local{};
};

ParallelRun run_parallel(const grid::Problem& problem, const grid::DecompositionSpec& spec,
                         const solvers::JacobiOptions& options, int channel_transport = -1) {
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  grid::Decomposition d = grid::Decomposition::create(world, spec);
  grid::Field u(d.local(), 1);
  grid::apply_initial_guess(problem, u);
  grid::apply_boundary(problem, d, u);
  auto halo = channel_transport < 0
                  ? comm::make_halo_exchange("waitall", d, u, comm::Neighbourhood::faces)
                  : comm::make_channel_halo_exchange(d, u, channel_transport);
  auto reduction = collectives::make_allreduce("mpi", d.comm());
  ParallelRun run;
  run.result = solvers::jacobi_sync(problem, d, u, *halo, *reduction, options);
  run.u = grid::gather_to_root(d, u);
  run.global = d.global();
  run.local = d.local();
  halo->close();
  halo.reset();
  reduction.reset();
  d.free();
  return run;
}

bool is_root() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void expect_matches_serial(const std::string& problem_name, double offset,
                           const grid::DecompositionSpec& spec, double tol, int check_every,
                           long max_iters = 100000) {
  const auto problem = grid::make_problem(problem_name, {offset});
  solvers::JacobiOptions options;
  options.tol = tol;
  options.check_every = check_every;
  options.max_iters = max_iters;
  const ParallelRun run = run_parallel(*problem, spec, options);
  // Every rank did the same number of iterations.
  long lo = run.result.iterations;
  long hi = run.result.iterations;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo, hi);
  if (!is_root()) return;
  const auto ref = reference::serial_jacobi(*problem, run.global, tol, max_iters, check_every);
  EXPECT_EQ(run.result.iterations, ref.iterations) << problem_name;
  EXPECT_EQ(run.result.converged, ref.converged);
  EXPECT_NEAR(run.result.residual_estimate, ref.residual, 1e-12 * ref.residual + 1e-15);
  ASSERT_EQ(run.u.size(), ref.u.size());
  double max_diff = 0;
  for (std::size_t i = 0; i < ref.u.size(); ++i)
    max_diff = std::max(max_diff, std::abs(run.u[i] - ref.u[i]));
  EXPECT_LE(max_diff, 1e-12) << problem_name << " on " << world_size() << " ranks";
}

}  // namespace

TEST(JacobiSync, PlumeWeakScalingMatchesSerial) {
  grid::DecompositionSpec spec;
  spec.local = Int3{6, 5, 4};
  expect_matches_serial("plume", 0.0, spec, 1e-4, 100);
}

TEST(JacobiSync, PlumeUnevenGlobalGridMatchesSerial) {
  grid::DecompositionSpec spec;
  spec.global = Int3{13, 11, 9};
  expect_matches_serial("plume", 0.0, spec, 1e-5, 10);
}

TEST(JacobiSync, PlumeWithOffsetMatchesSerial) {
  grid::DecompositionSpec spec;
  spec.global = Int3{10, 9, 8};
  expect_matches_serial("plume", 1.0, spec, 1e-4, 25);
}

TEST(JacobiSync, OnesMatchesSerialCheckingEveryIteration) {
  grid::DecompositionSpec spec;
  spec.global = Int3{12, 9, 10};
  expect_matches_serial("ones", 0.0, spec, 1e-6, 1);
}

TEST(JacobiSync, SlabDecompositionsMatchSerial) {
  const int p = world_size();
  grid::DecompositionSpec spec;
  spec.global = Int3{9, 10, 11};
  spec.dims = Int3{1, 1, p};
  expect_matches_serial("plume", 0.0, spec, 1e-4, 20);
  spec.dims = Int3{p, 1, 1};
  expect_matches_serial("ones", 0.0, spec, 1e-4, 20);
}

TEST(JacobiSync, StopsAtMaxItersWithoutConverging) {
  grid::DecompositionSpec spec;
  spec.global = Int3{10, 10, 10};
  expect_matches_serial("plume", 0.0, spec, 1e-12, 7, /*max_iters=*/40);
  const auto problem = grid::make_problem("plume", {});
  solvers::JacobiOptions options;
  options.tol = 1e-12;
  options.max_iters = 40;
  const ParallelRun run = run_parallel(*problem, spec, options);
  EXPECT_FALSE(run.result.converged);
  EXPECT_EQ(run.result.reason, solvers::StopReason::max_iters);
  EXPECT_EQ(run.result.iterations, 40);
  EXPECT_GT(run.result.true_residual, 1e-12);
}

TEST(JacobiSync, HaloOverChannelsGivesTheSameIterates) {
  // Synchronous Jacobi with its halos carried by channels (one message in
  // flight) over MPI two-sided and over MPI-3 one-sided.
  const auto problem = grid::make_problem("plume", {});
  grid::DecompositionSpec spec;
  spec.global = Int3{11, 10, 9};
  solvers::JacobiOptions options;
  options.check_every = 10;
  const ParallelRun waitall = run_parallel(*problem, spec, options);
  for (const int transport : {AS_TRANSPORT_MPI, AS_TRANSPORT_RMA}) {
    const ParallelRun channels = run_parallel(*problem, spec, options, transport);
    EXPECT_EQ(channels.result.iterations, waitall.result.iterations);
    if (is_root()) {
      EXPECT_EQ(channels.u, waitall.u) << "transport " << transport;
    }
  }
}

TEST(JacobiSync, CopyLoopGivesTheSameIterates) {
  const auto problem = grid::make_problem("plume", {});
  grid::DecompositionSpec spec;
  spec.global = Int3{11, 10, 9};
  solvers::JacobiOptions options;
  options.check_every = 10;
  const ParallelRun swapped = run_parallel(*problem, spec, options);
  options.copy = true;
  const ParallelRun copied = run_parallel(*problem, spec, options);
  EXPECT_EQ(swapped.result.iterations, copied.result.iterations);
  if (is_root()) {
    EXPECT_EQ(swapped.u, copied.u);
  }
  EXPECT_GT(copied.result.phases.seconds(solvers::copy_phase), 0.0);
  EXPECT_EQ(swapped.result.phases.seconds(solvers::copy_phase), 0.0);
}

TEST(JacobiSync, OnesConvergesToOneWithinTheResidualBound) {
  // ||u - 1||_inf <= ||u - 1||_2 <= ||b - A u||_2 / lambda_min(A), and
  // lambda_min = sum_d 4 sin^2(pi / (2 (N_d + 1))) for the 7-point operator.
  const auto problem = grid::make_problem("ones", {});
  grid::DecompositionSpec spec;
  spec.global = Int3{12, 10, 8};
  for (const double tol : {1e-4, 1e-9}) {
    solvers::JacobiOptions options;
    options.tol = tol;
    options.check_every = 10;
    const ParallelRun run = run_parallel(*problem, spec, options);
    ASSERT_TRUE(run.result.converged);
    ASSERT_TRUE(run.result.error_inf.has_value());
    double lambda_min = 0;
    for (int a = 0; a < 3; ++a) {
      const double s = std::sin(std::numbers::pi / (2.0 * (spec.global->at(a) + 1)));
      lambda_min += 4 * s * s;
    }
    const auto ref = reference::serial_jacobi(*problem, *spec.global, tol, 100000, 10);
    const double bound = run.result.true_residual * ref.b_norm / lambda_min;
    EXPECT_LE(*run.result.error_inf, bound) << "tol " << tol;
    EXPECT_GT(*run.result.error_inf, 0.0);
    if (tol == 1e-9) {
      EXPECT_LT(*run.result.error_inf, 1e-7);
    }
    if (is_root()) {
      for (const double v : run.u) ASSERT_NEAR(v, 1.0, bound);
    }
  }
}

TEST(JacobiSync, HaloEveryNStillConvergesToTheTolerance) {
  const auto problem = grid::make_problem("plume", {});
  grid::DecompositionSpec spec;
  spec.global = Int3{12, 12, 12};
  solvers::JacobiOptions options;
  options.check_every = 20;
  const ParallelRun every = run_parallel(*problem, spec, options);
  options.halo_every = 8;
  const ParallelRun sparse = run_parallel(*problem, spec, options);
  EXPECT_TRUE(sparse.result.converged);
  EXPECT_LT(sparse.result.true_residual, options.tol);
  EXPECT_EQ(sparse.result.true_residual, sparse.result.residual_estimate);
  // Fewer exchanges: one every 8 iterations plus one per check.
  if (world_size() > 1) {
    EXPECT_LT(sparse.result.halo_exchanges, every.result.halo_exchanges);
  }
}

TEST(JacobiSync, ResultCarriesHistoryAndPhases) {
  const auto problem = grid::make_problem("plume", {});
  grid::DecompositionSpec spec;
  spec.global = Int3{10, 10, 10};
  solvers::JacobiOptions options;
  options.check_every = 10;
  long calls = 0;
  options.monitor = [&](const solvers::HistoryPoint&) { ++calls; };
  const ParallelRun run = run_parallel(*problem, spec, options);
  ASSERT_FALSE(run.result.history.empty());
  EXPECT_EQ(static_cast<long>(run.result.history.size()), calls);
  EXPECT_EQ(run.result.history.front().iteration, 0);
  EXPECT_DOUBLE_EQ(run.result.history.front().residual, 1.0);  // x0 = 0 gives r = b
  EXPECT_EQ(run.result.history.back().iteration, run.result.iterations);
  for (std::size_t i = 1; i < run.result.history.size(); ++i) {
    EXPECT_LT(run.result.history[i].residual, run.result.history[i - 1].residual);
  }
  EXPECT_EQ(run.result.phases.names().size(), 5u);
  EXPECT_GT(run.result.phases.seconds(solvers::sweep_phase), 0.0);
  EXPECT_EQ(run.result.sweep_bytes,
            16.0 * static_cast<double>(run.result.iterations * core::product(run.local)));
}
