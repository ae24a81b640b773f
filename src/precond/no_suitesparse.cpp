// Stand-in for cholmod.cpp and umfpack.cpp in a build without SuiteSparse
// (ASYNCSOLVE_SUITESPARSE off): make_local_solver refuses both before
// calling these.
#include <stdexcept>

#include "local_solver_impl.hpp"

namespace asyncsolve::precond {

bool suitesparse_available() { return false; }

namespace detail {

std::unique_ptr<LocalSolver> make_cholmod(const sparse::LocalCsr&) {
  throw std::logic_error("make_cholmod: this build has no SuiteSparse");
}

std::unique_ptr<LocalSolver> make_umfpack(const sparse::LocalCsr&) {
  throw std::logic_error("make_umfpack: this build has no SuiteSparse");
}

}  // namespace detail
}  // namespace asyncsolve::precond
