// A data race planted on purpose, for the ThreadSanitizer build of the
// OpenMP solvers (make test-tsan-omp): two OpenMP threads write one shared
// double without synchronisation. The target passes only if ThreadSanitizer
// reports it, which shows that the clean run of the OpenMP Jacobi tests
// means something. Not built into any test that expects success.
#include <omp.h>

#include <cstdio>

namespace {

/// The racy kernel: every thread adds to `*shared` with plain loads and stores.
__attribute__((noinline)) void unsynchronised_add(double* shared, int times) {
  for (int i = 0; i < times; ++i) *shared += 1.0;
}

}  // namespace

int main() {
  double shared = 0.0;
  int team = 0;
#pragma omp parallel num_threads(2) shared(shared, team)
  {
    unsynchronised_add(&shared, 100000);
#pragma omp master
    team = omp_get_num_threads();
  }
  std::printf("planted race: %d threads, sum %.0f\n", team, shared);
  return team == 2 ? 0 : 1;
}
