// Asynchronous Jacobi with a stopped process: one rank sleeps 2 s after 250
// of its sweeps. The others wait for news (idle waits are recorded) instead
// of running up their iteration counts on stale halos, and the solve
// converges once the sleeper resumes: on the structured grid, and on the
// same problem assembled as a CSR matrix (whose idle bound comes from the
// norms of the rank's blocks).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/channel_tree.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/solvers/assemble.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"
#include "asyncsolve/solvers/jacobi_csr.hpp"

using namespace asyncsolve;

namespace {

struct Outcome {
  solvers::SolveResult result;
  long max_iterations_awake = 0;  // over the ranks that did not sleep
  long idle_waits_awake = 0;      // the fewest idle waits of a face neighbour of the sleeper
  double idle_s_awake = 0;        // the least idle time of a face neighbour of the sleeper
  bool slept = false;             // the sleeper reached its 250th sweep and slept
};

Outcome solve_with_a_sleeper(bool racy, int transport, double pause_s, bool csr, bool idle) {
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  grid::DecompositionSpec spec;
  spec.global = grid::Int3{16, 15, 14};
  grid::Decomposition d = grid::Decomposition::create(world, spec);
  const auto problem = grid::make_problem("plume", {});
  grid::Field u(d.local(), 1);
  grid::apply_initial_guess(*problem, u);
  grid::apply_boundary(*problem, d, u);
  auto halo = comm::make_halo_exchange("waitall", d, u, comm::Neighbourhood::faces);
  auto sum = collectives::make_allreduce("mpi", d.comm());
  auto convergence = collectives::make_convergence_allreduce(
      "tree", d.comm(), solvers::async_convergence_values, transport);
  const int sleeper = d.comm().size() - 1;
  par::FaultOptions faults_options;
  faults_options.pause_rank = sleeper;
  faults_options.pause_s = pause_s;
  // Late enough that the others are near their own blocks' convergence
  // (a solve takes 400-1000 sweeps) and, even on a loaded machine where
  // every MPI call can cost a time slice, idle while the sleeper sleeps.
  faults_options.pause_after = 250;
  par::FaultInjector faults(faults_options, d.rank());
  solvers::AsyncJacobiOptions options;
  options.base.tol = 1e-5;
  options.base.check_every = 1;
  options.base.faults = &faults;
  options.racy = racy;
  options.transport = transport;
  options.max_in_flight = 8;
  options.idle = idle;
  Outcome out;
  bool next_to_sleeper = false;  // its halos from the sleeper go stale during the sleep
  if (csr) {
    solvers::AssembledSystem a = solvers::assemble(*problem, d, 0.0);
    solvers::CsrSystem system = solvers::make_csr_system(a.matrix, a.b, a.x0);
    auto sparse_halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, a.matrix);
    out.result = solvers::jacobi_async(system, a.matrix, *sparse_halo, *sum, *convergence, options);
    sparse_halo->close();
    for (const int r : a.matrix.plan().neighbours()) next_to_sleeper |= r == sleeper;
    a.matrix.free();
  } else {
    out.result = solvers::jacobi_async(*problem, d, u, *halo, *sum, *convergence, options);
    for (const grid::Face f : grid::all_faces) next_to_sleeper |= d.neighbour(f) == sleeper;
  }
  convergence->free();
  const bool awake = d.rank() != sleeper;
  {
    const auto& ph = out.result.phases;
    std::printf(
        "rank %d%s: %ld sweeps, %ld idle waits; s: recv %.3f sweep %.3f send %.3f "
        "reduce %.3f idle %.3f\n",
        d.rank(), awake ? "" : " (slept)", out.result.iterations, out.result.idle_waits,
        ph.seconds(solvers::async_recv_phase), ph.seconds(solvers::async_sweep_phase),
        ph.seconds(solvers::async_send_phase), ph.seconds(solvers::async_reduce_phase),
        ph.seconds(solvers::async_idle_phase));
  }
  long most = awake ? out.result.iterations : 0;
  long fewest_waits = next_to_sleeper ? out.result.idle_waits : 1L << 40;
  double least_idle =
      next_to_sleeper ? out.result.phases.seconds(solvers::async_idle_phase) : 1e300;
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_LONG, MPI_MAX, d.comm().get());
  MPI_Allreduce(MPI_IN_PLACE, &fewest_waits, 1, MPI_LONG, MPI_MIN, d.comm().get());
  MPI_Allreduce(MPI_IN_PLACE, &least_idle, 1, MPI_DOUBLE, MPI_MIN, d.comm().get());
  out.max_iterations_awake = most;
  out.idle_waits_awake = fewest_waits;
  out.idle_s_awake = least_idle;
  // The sleeper sleeps after its own 250th sweep. Descheduled while the
  // others converged their blocks, it can meet the tolerance in fewer
  // (about 170 against converged halos), and then never sleeps.
  int slept = d.rank() == sleeper && out.result.injected_s >= pause_s ? 1 : 0;
  if (d.rank() == sleeper) {
    EXPECT_TRUE(slept != 0 || out.result.iterations < faults_options.pause_after)
        << out.result.iterations << " sweeps, " << out.result.injected_s << " s injected";
  }
  MPI_Allreduce(MPI_IN_PLACE, &slept, 1, MPI_INT, MPI_MAX, d.comm().get());
  out.slept = slept != 0;
  halo.reset();
  sum.reset();
  d.free();
  return out;
}

}  // namespace

TEST(AsyncJacobiIdle, TheOthersWaitWhileOneRankSleeps) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) GTEST_SKIP() << "needs a rank to sleep and one to wait";
  struct Case {
    bool racy;
    int transport;
    const char* what;
    bool csr;
    bool idle;
  };
  // (Not over rma: there the ranks next to the sleeper do not reach an idle
  // wait. Their flag writes into its window, MPI_Fetch_and_op, which osc/ucx
  // emulates with active messages on one node, complete only when the
  // sleeper turns its progress engine, so they wait inside the channel's
  // send instead, which with mpi_yield_when_idle on a loaded machine also
  // makes that case take a minute.)
  // A CSR rank without a residual bound to idle on sweeps stale ghosts for
  // the whole sleep and makes no idle wait (checked: the CSR case fails so).
  // With --idle off a rank still waits once its block stalls (its residual
  // no longer falls and no news came), a sweep per 100 us at most; without
  // that rule the last case made no wait either. Only on 2 ranks: with more,
  // the awake ranks keep sending each other changes at the rounding level,
  // which are news (only --idle on weighs them), and sweep on.
  std::vector<Case> cases = {Case{false, AS_TRANSPORT_MPI, "async over mpi", false, true},
                             Case{true, AS_TRANSPORT_MPI, "racy over mpi", false, true},
                             Case{false, AS_TRANSPORT_MPI, "async over mpi, CSR", true, true}};
  if (size == 2)
    cases.push_back(Case{false, AS_TRANSPORT_MPI, "async over mpi, CSR, idle off", true, false});
  for (const Case c : cases) {
    const bool racy = c.racy;
    const int transport = c.transport;
    const std::string what = c.what;
    const Outcome o = solve_with_a_sleeper(racy, transport, 2.0, c.csr, c.idle);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      std::printf(
          "%s: awake ranks: at most %ld sweeps, its neighbours at least %ld idle waits, %.2f s "
          "idle\n",
          what.c_str(), o.max_iterations_awake, o.idle_waits_awake, o.idle_s_awake);
    }
    EXPECT_TRUE(o.result.converged) << what << ": " << solvers::stop_reason_name(o.result.reason);
    EXPECT_EQ(o.result.reason, solvers::StopReason::tolerance) << what;
    EXPECT_LT(o.result.true_residual, 10 * 1e-5) << what;
    // Every face neighbour of the sleeper (its halos from the sleeper stale)
    // waited for news at least once during the solve. (Ranks further away
    // keep getting news from their own neighbours; on a loaded machine they
    // may not converge their blocks within the sleep.)
    if (o.slept) {
      EXPECT_GE(o.idle_waits_awake, 1) << what;
      EXPECT_GT(o.idle_s_awake, 0.0) << what;
    } else if (rank == 0) {
      std::printf("%s: the sleeper converged before its sweep 250 and never slept\n", what.c_str());
    }
    // Sweeping stale halos for 2 s would take a rank of this grid far past
    // 10^5 sweeps (the default max_iters); waiting, a few hundred to a few
    // thousand sweeps converge it against the halos it has (idle off: a
    // stalled sweep per 100 us at most, 20000 in the 2 s).
    EXPECT_LT(o.max_iterations_awake, c.idle ? 20000 : 40000) << what;
  }
}
