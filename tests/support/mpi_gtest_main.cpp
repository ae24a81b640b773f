// GoogleTest main for tests that run under mpiexec (and for unit tests, as a
// singleton). Rank 0 prints the usual report; other ranks print only their
// failures, prefixed with their rank. The exit code is non-zero on every rank
// if any rank failed. Compiled with ASYNCSOLVE_TEST_SHMEM it also starts
// OpenSHMEM after MPI (par::Shmem), for tests under oshrun; shmem_finalize
// then finalizes MPI too, and Environment::finalize() skips MPI_Finalize.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "asyncsolve/par/environment.hpp"
#ifdef ASYNCSOLVE_TEST_SHMEM
#include "asyncsolve/par/shmem.hpp"
#endif

namespace {

class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

/// A program that calls the channel API on ranks that share cores, as
/// these tests do under ctest -j: it follows docs/channels.md's advice and
/// takes the one-sided component `asyncsolve solve --transport rma` takes
/// (src/app/main.cpp), not Open MPI 4.1's osc/rdma, whose flags all but
/// stop moving on a crowded node. An OMPI_MCA_osc of the environment wins
/// (the shmem tests set ucx). Before MPI_Init, which reads it.
void prefer_osc_without_rdma() {
#ifdef OPEN_MPI
  if (std::getenv("OMPI_MCA_osc") == nullptr) setenv("OMPI_MCA_osc", "^rdma", 0);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  prefer_osc_without_rdma();
  // Tests of progress threads are built with ASYNCSOLVE_TEST_THREAD_MULTIPLE.
#ifdef ASYNCSOLVE_TEST_THREAD_MULTIPLE
  asyncsolve::par::Environment env(argc, argv, asyncsolve::par::ThreadLevel::multiple);
#elif defined(ASYNCSOLVE_TEST_THREAD_FUNNELED)
  // OpenMP tests: threads that never call MPI.
  asyncsolve::par::Environment env(argc, argv, asyncsolve::par::ThreadLevel::funneled);
#else
  asyncsolve::par::Environment env(argc, argv, asyncsolve::par::ThreadLevel::single);
#endif
#ifdef ASYNCSOLVE_TEST_SHMEM
  asyncsolve::par::Shmem shmem;
#endif
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#ifdef ASYNCSOLVE_TEST_SHMEM
  shmem.finalize();
#endif
  env.finalize();
  return failed;
}
