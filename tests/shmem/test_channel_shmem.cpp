// Semantics of asynchronous channels over OpenSHMEM (the shmem transport),
// between pairs of PEs (0-1, 2-3, ...) and around a ring, and Jacobi
// (synchronous, asynchronous, racy) over it. Runs under oshrun. Creation and
// destruction are collective over all PEs: a PE without a partner (odd
// counts) takes part with a placeholder channel (peer MPI_PROC_NULL).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>
#include <tuple>
#include <vector>

#include "../support/collective_channel_tests.hpp"
#include "asyncsolve/channel.hpp"
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/channel_tree.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/grid/gather.hpp"
#include "asyncsolve/par/fault_injection.hpp"
#include "asyncsolve/par/shmem.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/jacobi_async.hpp"

extern const int kTransportUnderTest = AS_TRANSPORT_SHMEM;

TEST(ChannelShmem, IsStarted) { EXPECT_TRUE(asyncsolve::par::shmem_initialized()); }

TEST(ChannelShmem, RejectsACommThatIsNotTheShmemWorld) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<double> out(4), in(4);
  as_channel* ch = nullptr;
  // Ranks reversed: rank != PE on every PE but the middle one; every PE fails.
  MPI_Comm reversed = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  as_channel_config c = placeholder(reversed);
  EXPECT_EQ(as_channel_create(&ch, &c), size > 1 ? AS_ERR_ARG : AS_SUCCESS);
  if (ch != nullptr) {
    EXPECT_EQ(as_channel_destroy(&ch), AS_SUCCESS);
  }
  MPI_Comm_free(&reversed);
  if (size > 1) {
    // Halves: smaller than the world.
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    c = placeholder(half);
    EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
    EXPECT_EQ(ch, nullptr);
    MPI_Comm_free(&half);
  }
  expect_no_stray_message(MPI_COMM_WORLD);
}

// ---- Jacobi over shmem

namespace {

using namespace asyncsolve;
using grid::Int3;

struct Outcome {
  solvers::SolveResult result;
  std::vector<double> u;  // gathered on rank 0
};

/// variant: "sync" (waitall halo, or channel halo over `transport` if >= 0),
/// "async" or "racy" (channels over `transport`).
/// Optional skew and problem for run_jacobi.
struct Extra {
  std::string problem = "plume";
  Int3 global{12, 11, 10};
  double tol = 1e-4;
  par::FaultOptions faults{};
  double late_start_s = 0;  // rank 1 (if any) enters late
};

Outcome run_jacobi(const std::string& variant, int transport, int check_every,
                   const Extra& extra = {}) {
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  grid::DecompositionSpec spec;
  spec.global = extra.global;
  grid::Decomposition d = grid::Decomposition::create(world, spec);
  const auto problem = grid::make_problem(extra.problem, {});
  par::FaultInjector faults(extra.faults, d.rank());
  if (extra.late_start_s > 0 && d.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::duration<double>(extra.late_start_s));
  }
  grid::Field u(d.local(), 1);
  grid::apply_initial_guess(*problem, u);
  grid::apply_boundary(*problem, d, u);
  auto halo = variant == "sync" && transport >= 0
                  ? comm::make_channel_halo_exchange(d, u, transport)
                  : comm::make_halo_exchange("waitall", d, u, comm::Neighbourhood::faces);
  auto sum = collectives::make_allreduce("mpi", d.comm());
  solvers::JacobiOptions base;
  base.tol = extra.tol;
  base.check_every = check_every;
  if (faults.is_active()) base.faults = &faults;
  Outcome out;
  if (variant == "sync") {
    out.result = solvers::jacobi_sync(*problem, d, u, *halo, *sum, base);
  } else {
    // The tree over the same transport as the halos (channels over shmem).
    auto convergence =
        collectives::make_convergence_allreduce("tree", d.comm(), solvers::async_convergence_values,
                                                transport >= 0 ? transport : AS_TRANSPORT_MPI);
    solvers::AsyncJacobiOptions options;
    options.base = base;
    options.racy = variant == "racy";
    options.max_in_flight = 4;
    options.transport = transport;
    out.result = solvers::jacobi_async(*problem, d, u, *halo, *sum, *convergence, options);
    EXPECT_FALSE(convergence->active());
    EXPECT_EQ(convergence->outstanding_requests(), 0);
    convergence->free();
  }
  out.u = grid::gather_to_root(d, u);
  MPI_Barrier(d.comm().get());
  int stray = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, d.comm().get(), &stray, MPI_STATUS_IGNORE);
  EXPECT_EQ(stray, 0);
  halo->close();
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

}  // namespace

class JacobiShmem : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
};  // variant, problem

TEST_P(JacobiShmem, ConvergesNearTheSynchronousSolution) {
  const auto& [variant, problem] = GetParam();
  Extra extra;
  extra.problem = problem;
  const Outcome a = run_jacobi(variant, AS_TRANSPORT_SHMEM, 5, extra);
  const Outcome ref = run_jacobi("sync", -1, 1, extra);
  EXPECT_TRUE(a.result.converged);
  EXPECT_EQ(a.result.reason, solvers::StopReason::tolerance);
  EXPECT_LT(a.result.residual_estimate, 1e-4);
  EXPECT_LT(a.result.true_residual, 1e-3);
  EXPECT_GT(a.result.true_residual, 0.0);
  if (is_root()) {
    ASSERT_EQ(a.u.size(), ref.u.size());
    double diff = 0;
    for (std::size_t i = 0; i < a.u.size(); ++i) diff = std::max(diff, std::abs(a.u[i] - ref.u[i]));
    EXPECT_LT(diff, 1e-3) << variant;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, JacobiShmem,
                         ::testing::Combine(::testing::Values("async", "racy"),
                                            ::testing::Values("plume", "ones")),
                         [](const auto& param_info) {
                           return std::get<0>(param_info.param) + "_" +
                                  std::get<1>(param_info.param);
                         });

TEST(JacobiShmemSkew, NoHangWithASlowRankOrALateStart) {
  // 50 short solves over shmem under a 5x straggler or a late start; ctest's
  // timeout bounds them all.
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int repeat = 0; repeat < 50; ++repeat) {
    Extra extra;
    extra.global = Int3{8, 7, 6};
    extra.tol = 1e-3;
    if (repeat % 2 == 0) {
      extra.faults.slow_rank = size - 1;
      extra.faults.slow_factor = 5.0;
    } else {
      extra.late_start_s = 0.002;
    }
    const Outcome a = run_jacobi(repeat % 4 < 2 ? "async" : "racy", AS_TRANSPORT_SHMEM, 2, extra);
    ASSERT_TRUE(a.result.converged) << "repeat " << repeat;
    ASSERT_LT(a.result.true_residual, 10 * extra.tol) << "repeat " << repeat;
  }
}

TEST(JacobiShmemSync, HaloOverShmemChannelsGivesTheSameIterates) {
  const Outcome waitall = run_jacobi("sync", -1, 10);
  const Outcome channels = run_jacobi("sync", AS_TRANSPORT_SHMEM, 10);
  EXPECT_TRUE(channels.result.converged);
  EXPECT_EQ(channels.result.iterations, waitall.result.iterations);
  if (is_root()) {
    EXPECT_EQ(channels.u, waitall.u);
  }
}
