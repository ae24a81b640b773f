// The reserved communication thread: it runs, calls what is registered with
// it, stops cleanly; Krylov solves with it compute the same iterates.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

#include "../support/world.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/par/progress.hpp"
#include "asyncsolve/solvers/krylov.hpp"

using namespace asyncsolve;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

TEST(ProgressThread, CallsRegisteredFunctionsUntilRemoved) {
  par::ProgressThread progress(world(), std::chrono::microseconds{10});
  int calls = 0;  // guarded by progress.mutex()
  const int id = progress.add([&] { ++calls; });
  for (;;) {
    {
      const std::lock_guard lock(progress.mutex());
      if (calls >= 5) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  progress.remove(id);
  int after = 0;
  {
    const std::lock_guard lock(progress.mutex());
    after = calls;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    const std::lock_guard lock(progress.mutex());
    EXPECT_EQ(calls, after) << "called after remove()";
  }
  EXPECT_GT(progress.passes(), 0);
  progress.stop();
  progress.stop();  // idempotent
}

// A node is oversubscribed when its ranks times their threads outnumber its
// cores; the same answer on every rank of a node.
TEST(NodeOversubscribed, ComparesTheNodesRanksAndThreadsWithItsCores) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_ranks = 0;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  const auto cores = static_cast<int>(std::thread::hardware_concurrency());
  ASSERT_GT(cores, 0);
  EXPECT_EQ(world().node_oversubscribed(), node_ranks > cores);
  EXPECT_TRUE(world().node_oversubscribed(cores + 1));
  // Every core taken, none twice: not oversubscribed.
  if (node_ranks <= cores) {
    EXPECT_FALSE(world().node_oversubscribed(cores / node_ranks));
  }
}

// The thread completes a reduction the owner never tests: after start(), the
// owner only sleeps; once every rank has started, the thread finishes it.
TEST(ProgressThread, CompletesAReductionWhileTheOwnerSleeps) {
  for (const std::string name : {"impi", "tree"}) {
    par::ProgressThread progress(world(), std::chrono::microseconds{0});
    auto reduction = collectives::make_nonblocking_allreduce(name, world(), 1);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double result = 0.0;
    bool done = false;  // guarded by progress.mutex()
    const int id = progress.add([&] {
      if (reduction->active() && reduction->test({&result, 1})) done = true;
    });
    {
      const std::lock_guard lock(progress.mutex());
      const double mine = rank + 1.0;
      reduction->start({&mine, 1});
    }
    const double waits = 20000 * test_time_factor();  // of 500 us: 10 s (times the factor)
    for (int waited = 0; waited < waits; ++waited) {
      {
        const std::lock_guard lock(progress.mutex());
        if (done) break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    progress.remove(id);
    {
      const std::lock_guard lock(progress.mutex());
      ASSERT_TRUE(done) << name << ": the thread did not complete the reduction";
    }
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT_EQ(result, size * (size + 1) / 2.0) << name;
    progress.stop();
    reduction->free();
  }
}

TEST(ProgressThread, KrylovSolvesTheSameWithAThread) {
  grid::DecompositionSpec spec;
  spec.global = grid::Int3{14, 13, 12};
  const auto problem = grid::make_problem("plume", {});
  for (const std::string allreduce : {"impi", "tree", "mpi"}) {
    double residual[2] = {0, 0};
    long iterations[2] = {0, 0};
    for (int with_thread = 0; with_thread < 2; ++with_thread) {
      grid::Decomposition d = grid::Decomposition::create(world(), spec);
      solvers::KrylovSystem system = solvers::make_krylov_system(*problem, d, 0.0);
      auto halo = comm::make_halo_exchange("ialltoallv", d, system.x, comm::Neighbourhood::faces);
      solvers::KrylovOptions o;
      o.method = solvers::KrylovMethod::pcg_overlap;
      o.tol = 1e-8;
      o.allreduce = collectives::parse_allreduce(allreduce);
      std::optional<par::ProgressThread> progress;
      if (with_thread == 1) {
        progress.emplace(d.comm(), std::chrono::microseconds{0});
        o.progress = &*progress;
      }
      const solvers::SolveResult r = solvers::krylov_solve(system, d, *halo, o);
      EXPECT_TRUE(r.converged) << allreduce;
      residual[with_thread] = r.residual_estimate;
      iterations[with_thread] = r.iterations;
      if (progress) progress->stop();
      halo->close();
      d.free();
    }
    EXPECT_EQ(iterations[1], iterations[0]) << allreduce;
    EXPECT_EQ(residual[1], residual[0]) << allreduce;
  }
}

}  // namespace
