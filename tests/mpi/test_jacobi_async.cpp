// Asynchronous and racy Jacobi on P ranks: convergence on both problems with
// both convergence reductions, agreement with synchronous Jacobi, the final
// synchronous phase, max_iters, and termination under skew.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/channel_tree.hpp"
#include "asyncsolve/grid/gather.hpp"
#include "asyncsolve/ops/stencil.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "solvers/jacobi_check.hpp"
#include "solvers/linear_operator.hpp"
#include "solvers/stationary.hpp"

using namespace asyncsolve;
using grid::Int3;

namespace {

struct Outcome {
  solvers::SolveResult result;
  std::vector<double> u;  // gathered on rank 0
  long min_iterations = 0;
  long max_iterations = 0;
};

struct SolveSetup {
  std::string problem = "plume";
  Int3 global{12, 11, 10};
  std::string variant = "async";  // sync, async or racy
  std::string allreduce = "tree";
  solvers::JacobiOptions base{};
  int max_in_flight = 4;
  int final_sync = 0;
  int progress_planes = 0;
  int transport = AS_TRANSPORT_MPI;
  par::FaultOptions faults{};
  double late_start_s = 0;  // rank 1 (if any) enters late
  bool idle = true;
};

Outcome run(const SolveSetup& s) {
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  grid::DecompositionSpec spec;
  spec.global = s.global;
  grid::Decomposition d = grid::Decomposition::create(world, spec);
  const auto problem = grid::make_problem(s.problem, {});
  grid::Field u(d.local(), 1);
  grid::apply_initial_guess(*problem, u);
  grid::apply_boundary(*problem, d, u);
  auto halo = comm::make_halo_exchange("waitall", d, u, comm::Neighbourhood::faces);
  auto sum = collectives::make_allreduce("mpi", d.comm());
  par::FaultInjector faults(s.faults, d.rank());
  solvers::JacobiOptions base = s.base;
  if (faults.is_active()) base.faults = &faults;
  if (s.late_start_s > 0 && d.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::duration<double>(s.late_start_s));
  }
  Outcome out;
  if (s.variant == "sync") {
    out.result = solvers::jacobi_sync(*problem, d, u, *halo, *sum, base);
  } else {
    auto convergence = collectives::make_convergence_allreduce(
        s.allreduce, d.comm(), solvers::async_convergence_values, s.transport);
    solvers::AsyncJacobiOptions options;
    options.base = base;
    options.racy = s.variant == "racy";
    options.max_in_flight = s.max_in_flight;
    options.final_sync = s.final_sync;
    options.progress_planes = s.progress_planes;
    options.transport = s.transport;
    options.idle = s.idle;
    out.result = solvers::jacobi_async(*problem, d, u, *halo, *sum, *convergence, options);
    EXPECT_FALSE(convergence->active());
    EXPECT_EQ(convergence->outstanding_requests(), 0);
    convergence->free();
  }
  out.u = grid::gather_to_root(d, u);
  long it[2] = {-out.result.iterations, out.result.iterations};
  MPI_Allreduce(MPI_IN_PLACE, it, 2, MPI_LONG, MPI_MAX, d.comm().get());
  out.min_iterations = -it[0];
  out.max_iterations = it[1];
  // Nothing of the solve may be left on the wire.
  MPI_Barrier(d.comm().get());
  int stray = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, d.comm().get(), &stray, MPI_STATUS_IGNORE);
  EXPECT_EQ(stray, 0);
  halo.reset();
  sum.reset();
  d.free();
  return out;
}

bool is_root() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

// variant, allreduce, problem, transport
using Params = std::tuple<std::string, std::string, std::string, int>;

}  // namespace

class AsyncJacobi : public ::testing::TestWithParam<Params> {};

TEST_P(AsyncJacobi, ConvergesNearTheSynchronousSolution) {
  const auto& [variant, allreduce, problem, transport] = GetParam();
  SolveSetup s;
  s.transport = transport;
  s.problem = problem;
  s.variant = variant;
  s.allreduce = allreduce;
  s.base.tol = 1e-4;
  s.base.check_every = 5;
  const Outcome a = run(s);
  s.variant = "sync";
  s.base.check_every = 1;
  const Outcome ref = run(s);
  EXPECT_TRUE(a.result.converged);
  EXPECT_EQ(a.result.reason, solvers::StopReason::tolerance);
  EXPECT_LT(a.result.residual_estimate, s.base.tol);
  EXPECT_LT(a.result.true_residual, 10 * s.base.tol);
  EXPECT_GT(a.result.true_residual, 0.0);
  EXPECT_FALSE(a.result.history.empty());
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long batches = 0;
  for (const long n : a.result.batch_sizes) batches += n;
  if (size > 1) {
    EXPECT_GT(batches, 0);  // every recv call lands in the histogram
  }
  if (is_root()) {
    ASSERT_EQ(a.u.size(), ref.u.size());
    double diff = 0;
    for (std::size_t i = 0; i < a.u.size(); ++i) diff = std::max(diff, std::abs(a.u[i] - ref.u[i]));
    EXPECT_LT(diff, 10 * s.base.tol) << variant << " " << allreduce << " " << problem;
  }
}

INSTANTIATE_TEST_SUITE_P(All, AsyncJacobi,
                         ::testing::Combine(::testing::Values("async", "racy"),
                                            ::testing::Values("tree", "impi"),
                                            ::testing::Values("plume", "ones"),
                                            ::testing::Values(AS_TRANSPORT_MPI, AS_TRANSPORT_RMA)),
                         [](const ::testing::TestParamInfo<Params>& param_info) {
                           return std::get<0>(param_info.param) + "_" +
                                  std::get<1>(param_info.param) + "_" +
                                  std::get<2>(param_info.param) +
                                  (std::get<3>(param_info.param) == AS_TRANSPORT_RMA ? "_rma"
                                                                                     : "_mpi");
                         });

TEST(AsyncJacobiFinalSync, ReachesTheToleranceForReal) {
  for (const char* variant : {"async", "racy"}) {
    SolveSetup s;
    s.variant = variant;
    s.transport = variant[0] == 'r' ? AS_TRANSPORT_RMA : AS_TRANSPORT_MPI;
    s.base.tol = 1e-6;
    s.base.check_every = 10;
    s.final_sync = 5000;
    const Outcome a = run(s);
    EXPECT_TRUE(a.result.converged) << variant;
    EXPECT_LT(a.result.true_residual, s.base.tol) << variant;
  }
}

TEST(AsyncJacobiMaxIters, StopsEveryRankWithoutConverging) {
  for (const bool idle : {true, false}) {
    SolveSetup s;
    s.base.tol = 1e-12;
    s.base.max_iters = 30;
    s.base.check_every = 3;
    s.idle = idle;
    s.final_sync = 0;  // the asynchronous stop itself, no sync iterations after it
    const Outcome a = run(s);
    EXPECT_FALSE(a.result.converged);
    EXPECT_EQ(a.result.reason, solvers::StopReason::max_iters);
    // max_iters counts the slowest rank's sweeps: the solve ends once every
    // rank has made them. With idle off a rank that gets there first stops
    // sweeping; with idle on it goes on while its residual is not small.
    EXPECT_GE(a.min_iterations, 30) << "idle " << idle;
    if (!idle) {
      EXPECT_EQ(a.max_iterations, 30);
    }
    EXPECT_GT(a.result.true_residual, 1e-12);
  }
}

TEST(AsyncJacobiMaxIters, ZeroSweepsIsAMaxItersStopNotABreakdown) {
  // --max-iters 0: no rank has a residual to contribute (its part is +inf),
  // which is not a breakdown; the solve returns x0 with its true residual.
  // A rank past max_iters starts a round at once, whatever --check-every.
  for (const bool idle : {true, false}) {
    SolveSetup s;
    s.base.max_iters = 0;
    s.base.check_every = 100;
    s.idle = idle;
    s.final_sync = 0;
    const Outcome a = run(s);
    EXPECT_FALSE(a.result.converged) << "idle " << idle;
    EXPECT_EQ(a.result.reason, solvers::StopReason::max_iters) << "idle " << idle;
    // No rank sweeps, with idle on too (a rank past a limit above 0 sweeps
    // on while the stopping round is in flight, however long that takes).
    EXPECT_EQ(a.max_iterations, 0) << "idle " << idle;
    EXPECT_DOUBLE_EQ(a.result.true_residual, 1.0) << "idle " << idle;  // x0 = 0
  }
}

TEST(AsyncJacobiMaxTime, EndsAnUnreachableSolveOnTheClock) {
  // A tolerance no solve reaches and more iterations than the time allows:
  // the wall-clock guard ends it, with the same verdict on every rank. On a
  // grid whose rounding level takes thousands of sweeps to reach (sync
  // Jacobi stops there with reason breakdown, norm.hpp's rounding_checks).
  for (const char* variant : {"sync", "async", "racy"}) {
    SolveSetup s;
    s.global = {60, 60, 60};
    s.variant = variant;
    s.base.tol = 1e-300;
    s.base.max_iters = 1L << 40;
    s.base.check_every = 5;
    s.base.max_time_s = 0.3;
    s.transport = variant[0] == 'r' ? AS_TRANSPORT_RMA : AS_TRANSPORT_MPI;
    const Outcome a = run(s);
    EXPECT_FALSE(a.result.converged) << variant;
    EXPECT_EQ(a.result.reason, solvers::StopReason::max_time) << variant;
    // Each rank times from its own start: the one that saw the limit first ran it.
    double longest = a.result.time_s;
    MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_GE(longest, 0.3) << variant;
    if (variant[0] == 's') {
      // Sync checks at iteration 0 too, against the clock of each rank's own
      // start: a rank whose first halo exchange waited 0.3 s for a late
      // neighbour stops every rank there, after its first check.
      EXPECT_GE(a.min_iterations, 0) << variant;
      EXPECT_FALSE(a.result.history.empty()) << variant;
    } else {
      EXPECT_GT(a.min_iterations, 0) << variant;  // the loop sweeps before it checks
    }
    EXPECT_GT(a.result.true_residual, 0.0) << variant;
  }
}

TEST(AsyncJacobiSkew, NoHangWithASlowRankOrALateStart) {
  // 50 short solves under each kind of skew; ctest's timeout bounds them all.
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int repeat = 0; repeat < 50; ++repeat) {
    SolveSetup s;
    s.global = Int3{8, 7, 6};
    s.variant = repeat % 2 == 0 ? "async" : "racy";
    s.allreduce = repeat % 4 < 2 ? "tree" : "impi";
    s.base.tol = 1e-3;
    s.base.check_every = 2;
    s.max_in_flight = 1 + repeat % 3;
    s.progress_planes = repeat % 3 == 0 ? 2 : 0;
    s.transport = repeat % 5 < 2 ? AS_TRANSPORT_RMA : AS_TRANSPORT_MPI;
    if (repeat % 2 == 0) {
      s.faults.slow_rank = size - 1;
      s.faults.slow_factor = 5.0;
    } else {
      s.late_start_s = 0.002;
    }
    const Outcome a = run(s);
    ASSERT_TRUE(a.result.converged) << "repeat " << repeat;
    ASSERT_LT(a.result.true_residual, 10 * s.base.tol) << "repeat " << repeat;
  }
}

TEST(AsyncJacobiSkew, StragglerIteratesLessThanTheOthers) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  SolveSetup s;
  s.variant = "async";
  s.base.tol = 1e-5;
  s.base.check_every = 5;
  s.faults.slow_rank = 0;
  s.faults.slow_factor = 20.0;
  const Outcome a = run(s);
  EXPECT_TRUE(a.result.converged);
  if (is_root()) {
    EXPECT_GT(a.result.injected_s, 0.0);
  } else {
    EXPECT_EQ(a.result.injected_s, 0.0);
  }
  // Ranks do not iterate in lockstep: with a 20x straggler the counts differ.
  EXPECT_LT(a.min_iterations, a.max_iterations);
}

namespace {

// Jacobi's sweep on the 7-point stencil whose fused residual lies in this
// rank's sweeps (first, last] by a factor lie_sq (on the square of the
// norm): below 1 the stale dip of an estimate summed from parts of
// different ages, above 1 parts of different ages that all lie high, made
// deterministic. The iterates are Jacobi's.
struct Lie {
  long first = 0;
  long last = 0;
  double lie_sq = 1.0;
};

class LyingSweep final : public solvers::detail::StationarySweep {
 public:
  LyingSweep(solvers::detail::StationarySweep& a, std::vector<Lie> lies)
      : a_(a), lies_(std::move(lies)) {}
  comm::HaloExchange& sweep_halo() override { return a_.sweep_halo(); }
  int sweep_pieces(int t) const override { return a_.sweep_pieces(t); }
  int halo_free_pieces(int t) const override { return a_.halo_free_pieces(t); }
  double sweep(const grid::Field* b, const grid::Field& u, grid::Field& u_new, int piece, int t,
               bool residual) override {
    if (piece == 0) ++sweeps_;
    double r2 = a_.sweep(b, u, u_new, piece, t, residual);
    for (const Lie& lie : lies_)
      if (sweeps_ > lie.first && sweeps_ <= lie.last) r2 *= lie.lie_sq;
    return r2;
  }
  double residual_norm(const grid::Field* b, grid::Field& u,
                       collectives::Allreduce& reduction) override {
    return a_.residual_norm(b, u, reduction);
  }
  double sweep_bytes() const override { return a_.sweep_bytes(); }
  void keep_halo(const grid::Field& u, grid::Field& u_new) const override {
    a_.keep_halo(u, u_new);
  }
  std::unique_ptr<comm::AsyncHalo> make_async_halo(grid::Field& u, grid::Field& u_new,
                                                   const comm::ChannelSettings& settings) override {
    return a_.make_async_halo(u, u_new, settings);
  }
  bool bounds_residual() const override { return false; }  // the lies bound nothing

 private:
  solvers::detail::StationarySweep& a_;
  const std::vector<Lie> lies_;
  long sweeps_ = 0;
};

/// Asynchronous Jacobi on the plume (30^3, over `comm`) whose fused
/// residual lies as `lies` say, to `tol`, with the stagnation rule's span
/// `span`; checks that nothing is left in flight.
solvers::SolveResult solve_lying(const par::Comm& comm, const std::vector<Lie>& lies, double tol,
                                 long span = solvers::stagnation_iterations) {
  grid::DecompositionSpec spec;
  spec.global = {30, 30, 30};
  grid::Decomposition d = grid::Decomposition::create(comm, spec);
  const auto problem = grid::make_problem("plume", {});
  grid::Field u(d.local(), 1);
  grid::apply_initial_guess(*problem, u);
  grid::apply_boundary(*problem, d, u);
  auto halo = comm::make_halo_exchange("waitall", d, u, comm::Neighbourhood::faces);
  auto sum = collectives::make_allreduce("mpi", d.comm());
  auto convergence = collectives::make_convergence_allreduce(
      "tree", d.comm(), solvers::async_convergence_values, AS_TRANSPORT_MPI);
  const ops::StencilOperator seven_point;
  solvers::detail::StencilLinearOperator jacobi(seven_point, d, u, *halo);
  LyingSweep lying(jacobi, lies);
  solvers::AsyncJacobiOptions options;
  options.base.tol = tol;
  options.base.check_every = 10;
  options.base.max_iters = 200000;
  options.base.stagnation_span = span;
  const double b_norm = solvers::rhs_norm(*problem, d, u, *sum);
  solvers::SolveResult r = solvers::detail::run_stationary_async(
      lying, u, nullptr, b_norm, *sum, *convergence, options, [&](long n) {
        return solvers::jacobi_sync(*problem, d, u, *halo, *sum,
                                    solvers::detail::sync_tail_options(options.base, n));
      });
  EXPECT_FALSE(convergence->active());
  EXPECT_EQ(convergence->outstanding_requests(), 0);
  convergence->free();
  halo.reset();
  sum.reset();
  d.free();
  return r;
}

/// The same on the whole world, lying low by lie_sq in sweeps (first, last].
solvers::SolveResult solve_with_dip(long first, long last, double lie_sq, double tol) {
  return solve_lying(par::Comm::view(MPI_COMM_WORLD), {{first, last, lie_sq}}, tol);
}

}  // namespace

TEST(AsyncJacobiStagnation, AnEstimateFarAboveADeepDipStartsANewWindow) {
  // Every part lies 1e5 times low for sweeps 50 to 200: a window starts at
  // the dip, and the honest estimate after it lies more than
  // stale_rise_factor times above, which starts a new window (on more ranks
  // the dips may not overlap in time and the estimate dips less). Every
  // rank sweeps on to convergence, never judged standing still at the dip.
  const double tol = 1e-10;
  const solvers::SolveResult r = solve_with_dip(50, 200, 1e-10, tol);
  EXPECT_TRUE(r.converged) << solvers::stop_reason_name(r.reason) << ": " << r.detail;
  EXPECT_LT(r.true_residual, tol);
}

TEST(AsyncJacobiStagnation, AVerdictOnAStaleDipIsRefutedAndTheIterationGoesOn) {
  // Every part lies 70 times low for sweeps 50 to 200: a window starts at
  // the dip, and the rank then sweeps the span (200 sweeps, which on 30^3
  // points reduce the residual about 3-fold) without the honest estimate
  // falling below the dip: a stagnation verdict. The dip is deep enough that
  // the true residual of the quiescent iterate lies more than
  // stale_verdict_factor times above it, and shallow enough that the honest
  // estimate stays under stale_rise_factor times it (which would start a new
  // window instead), so the verdict is refuted and the asynchronous
  // iteration resumes, to convergence. Each rank solves alone
  // (MPI_COMM_SELF): over several ranks the ranks' dips need not overlap in
  // time, and a partial dip of depth between the span's reduction and
  // stale_verdict_factor times it makes a verdict the true residual cannot
  // refute (docs/jacobi.md). The refuted stop's resumption over several
  // ranks is AsyncJacobiStale's.
  const double tol = 1e-10;
  const double low = 1.0 / 70.0;
  const solvers::SolveResult r =
      solve_lying(par::Comm::view(MPI_COMM_SELF), {{50, 200, low * low}}, tol, 200);
  EXPECT_GE(r.unconfirmed_stops, 1) << solvers::stop_reason_name(r.reason) << ": " << r.detail;
  EXPECT_TRUE(r.converged) << solvers::stop_reason_name(r.reason) << ": " << r.detail;
  EXPECT_LT(r.true_residual, tol);
}

TEST(AsyncJacobiStagnation, AShallowDipUnderAnInflatedEstimateIsNoStandstill) {
  // OpenMP's threads under a load of 7 stopped as "stagnation": a window
  // started at a dip, the estimate then rose 300-fold (stale parts, all
  // high), and the iterate's true residual at the verdict lay under
  // stale_verdict_factor times the dip, so nothing refuted it. Here every
  // part lies 5 times low for sweeps 50 to 200 and 300 times high for
  // sweeps 200 to 260, with a span of 200 sweeps (a 3-fold reduction): the
  // rise starts a new window, and the iteration converges. Each rank solves
  // alone, so that the lies overlap in time.
  const double tol = 1e-10;
  const solvers::SolveResult r = solve_lying(par::Comm::view(MPI_COMM_SELF),
                                             {{50, 200, 1.0 / 25.0}, {200, 260, 9e4}}, tol, 200);
  EXPECT_TRUE(r.converged) << solvers::stop_reason_name(r.reason) << ": " << r.detail;
  EXPECT_EQ(r.unconfirmed_stops, 0) << r.detail;
  EXPECT_LT(r.true_residual, tol);
}

TEST(AsyncJacobiStale, AStopOnAnEstimateTheTrueResidualRefutesResumesTheIteration) {
  // Every part lies 1e-10 low on the norm for sweeps 40 to 60: the estimate
  // falls below --tol 1e-8 while the iterate's residual is far above it (a
  // rank that converged against a descheduled neighbour's old halo). The
  // true residual refutes the stop and the asynchronous iteration goes on
  // from the quiescent iterate, to convergence. It used to end in the
  // synchronous confirmation: 1000 Jacobi iterations, which reduce this
  // residual about 500-fold, "unconfirmed".
  const double tol = 1e-8;
  const solvers::SolveResult r = solve_with_dip(40, 60, 1e-20, tol);
  // On one rank the dip is the estimate; on more, the ranks' dips may not
  // overlap in time, and the solve then converges without a refuted stop.
  if (par::Comm::view(MPI_COMM_WORLD).size() == 1) {
    EXPECT_GE(r.unconfirmed_stops, 1) << solvers::stop_reason_name(r.reason) << ": " << r.detail;
  }
  EXPECT_TRUE(r.converged) << solvers::stop_reason_name(r.reason) << ": " << r.detail;
  EXPECT_EQ(r.reason, solvers::StopReason::tolerance) << r.detail;
  EXPECT_EQ(r.final_sync_iterations, 0) << "the stop was confirmed synchronously: " << r.detail;
  EXPECT_LT(r.true_residual, tol);
}
