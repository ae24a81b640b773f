// A build without hypre: --pc boomeramg is bad input.
#include "asyncsolve/core/error.hpp"
#include "precond_impl.hpp"

namespace asyncsolve::precond {

bool boomeramg_available() { return false; }

namespace detail {

std::unique_ptr<Preconditioner> make_boomeramg(const PcSettings&, PcOperator&) {
  throw core::InputError(
      "--pc boomeramg: this build has no hypre (configure with libhypre-dev installed, "
      "ASYNCSOLVE_HYPRE=ON), expected --pc jacobi or chebyshev");
}

}  // namespace detail
}  // namespace asyncsolve::precond
