// The tree reduction over channels (mpi and rma transports): correct sums,
// bit-identical on every rank, many skewed rounds, nothing left behind.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "asyncsolve/channel.h"
#include "asyncsolve/collectives/channel_tree.hpp"

using namespace asyncsolve;

class ChannelTree : public ::testing::TestWithParam<int> {};

TEST_P(ChannelTree, SumsMatchMpiAllreduceOverSkewedRounds) {
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  const int rank = world.rank();
  auto tree = collectives::make_channel_tree_allreduce(world, 3, GetParam());
  EXPECT_EQ(tree->name(), "tree");
  for (int round = 0; round < 100; ++round) {
    const double mine[3] = {1.0 + rank, 0.1 * (rank + round), rank == 0 ? 1.0 : 0.0};
    double expected[3];
    MPI_Allreduce(mine, expected, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    // Skew: rank r starts r * 20 us late and tests only every r + 1 loops.
    std::this_thread::sleep_for(std::chrono::microseconds(20 * (rank % 4)));
    tree->start(mine);
    double result[3] = {0, 0, 0};
    for (long loop = 0;; ++loop) {
      if (loop % (rank % 3 + 1) == 0 && tree->test(result)) break;
    }
    EXPECT_FALSE(tree->active());
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(result[k], expected[k], 1e-12 * (1 + std::abs(expected[k])));
    // Bit-identical everywhere: min and max of the bit patterns agree.
    std::int64_t bits[3];
    std::memcpy(bits, result, sizeof bits);
    std::int64_t lo[3];
    std::int64_t hi[3];
    MPI_Allreduce(bits, lo, 3, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(bits, hi, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(lo[k], hi[k]);
  }
  EXPECT_EQ(tree->completed(), 100);
  const MPI_Comm own = tree->comm().get();
  MPI_Barrier(own);
  int stray = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, own, &stray, &status);
  EXPECT_EQ(stray, 0) << "from " << status.MPI_SOURCE << " tag " << status.MPI_TAG << " transport "
                      << GetParam();
  MPI_Barrier(own);  // nobody starts the closing protocol before everyone probed
  tree->free();
}

INSTANTIATE_TEST_SUITE_P(Transports, ChannelTree,
                         ::testing::Values(AS_TRANSPORT_MPI, AS_TRANSPORT_RMA),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return std::string(param_info.param == AS_TRANSPORT_RMA ? "rma" : "mpi");
                         });
