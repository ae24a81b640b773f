#pragma once
// MPI_COMM_WORLD's rank and size, the factor on time limits, and a bounded
// wait, for the MPI tests.
#include <mpi.h>

#include <chrono>
#include <cstdlib>

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// The factor on a test's own time limits (a wait for something that must
/// happen, which only catches a hang): ctest's ASYNCSOLVE_TEST_TIMEOUT_FACTOR,
/// the one on its timeouts (4 with MPICH, whose ranks poll without yielding
/// on crowded cores), at least 1; the same on every rank.
inline double test_time_factor() {
  const char* text = std::getenv("ASYNCSOLVE_TEST_TIMEOUT_FACTOR");
  if (text == nullptr) return 1.0;
  char* end = nullptr;
  const double factor = std::strtod(text, &end);
  return end != text && factor > 1.0 ? factor : 1.0;
}

/// Loops `body` until it returns true or `seconds` (times test_time_factor)
/// pass; true if it did.
template <class Body>
bool spin_until(Body&& body, double seconds = 30.0) {
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::duration<double>(seconds * test_time_factor());
  while (std::chrono::steady_clock::now() < end) {
    if (body()) return true;
  }
  return false;
}
