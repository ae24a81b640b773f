// Channels over MPI one-sided communication (the rma transport): the
// semantics tests of tests/support/collective_channel_tests.cpp, run on rma.
#include <mpi.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

#include "asyncsolve/channel.h"
#include "collective_channel_tests.hpp"

extern const int kTransportUnderTest = AS_TRANSPORT_RMA;

// Landing areas no rank can allocate: 1 GiB an end (2^25 slots of 32 bytes)
// under an address-space limit of 256 MiB above what each rank maps, which
// holds for malloc and for the shared-memory file a one-sided component maps
// alike. AS_ERR_NOMEM on every rank, the rank without a partner (odd counts)
// too. On a communicator with MPI's default handler the job was aborted inside
// MPI_Win_allocate (MPI_ERRORS_ARE_FATAL) instead.
TEST(RmaChannel, AWindowThatCannotBeAllocatedFailsEveryRank) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator aborts on an allocation it cannot make";
#endif
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size == 1) {
    MPI_Comm_free(&comm);
    GTEST_SKIP() << "needs a pair of ranks";
  }
  std::vector<double> out(4), in(4);
  as_channel_config c;
  as_channel_config_init(&c);
  c.transport = AS_TRANSPORT_RMA;
  c.comm = comm;
  c.peer = (rank ^ 1) < size ? rank ^ 1 : MPI_PROC_NULL;
  if (c.peer != MPI_PROC_NULL) {
    c.message_size = out.size() * sizeof(double);
    c.sendbuf = out.data();
    c.recvbuf = in.data();
    c.max_in_flight = 1 << 25;
  }
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  unsigned long long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  ASSERT_GT(pages, 0U);
  rlimit tight = old;
  tight.rlim_cur = pages * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE)) + (256ULL << 20);
  if (old.rlim_cur != RLIM_INFINITY) tight.rlim_cur = std::min(tight.rlim_cur, old.rlim_cur);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  as_channel* ch = nullptr;
  const int status = as_channel_create(&ch, &c);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &old), 0);
  EXPECT_EQ(status, AS_ERR_NOMEM);
  EXPECT_EQ(ch, nullptr);
  // The communicator still works: the next create succeeds.
  if (c.peer != MPI_PROC_NULL) c.max_in_flight = 2;
  ASSERT_EQ(as_channel_create(&ch, &c), AS_SUCCESS);
  EXPECT_EQ(as_channel_destroy(&ch), AS_SUCCESS);
  MPI_Comm_free(&comm);
}
