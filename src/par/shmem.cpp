#include "asyncsolve/par/shmem.hpp"

#include <stdexcept>

#ifdef ASYNCSOLVE_HAVE_SHMEM
#include <shmem.h>
#endif

namespace asyncsolve::par {
namespace {
bool g_initialized = false;
}  // namespace

bool shmem_available() noexcept {
#ifdef ASYNCSOLVE_HAVE_SHMEM
  return true;
#else
  return false;
#endif
}

bool shmem_initialized() noexcept { return g_initialized; }

Shmem::Shmem() {
#ifdef ASYNCSOLVE_HAVE_SHMEM
  if (g_initialized) throw std::logic_error("OpenSHMEM is already initialised");
  shmem_init();
  g_initialized = true;
#else
  throw std::runtime_error("this build of asyncsolve has no OpenSHMEM");
#endif
}

Shmem::~Shmem() {
  try {
    finalize();
  } catch (...) {
  }
}

void Shmem::finalize() {
  if (finalized_) return;
  finalized_ = true;
#ifdef ASYNCSOLVE_HAVE_SHMEM
  g_initialized = false;
  shmem_finalize();
#endif
}

int Shmem::my_pe() const noexcept {
#ifdef ASYNCSOLVE_HAVE_SHMEM
  return shmem_my_pe();
#else
  return 0;
#endif
}

int Shmem::n_pes() const noexcept {
#ifdef ASYNCSOLVE_HAVE_SHMEM
  return shmem_n_pes();
#else
  return 1;
#endif
}

}  // namespace asyncsolve::par
