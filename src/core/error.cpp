#include "asyncsolve/core/error.hpp"

namespace asyncsolve::core {

const char* describe(ExitCode code) noexcept {
  switch (code) {
    case ExitCode::success:
      return "success";
    case ExitCode::bad_input:
      return "bad input";
    case ExitCode::not_converged:
      return "did not converge";
    case ExitCode::runtime_failure:
      return "runtime failure";
  }
  return "unknown";
}

}  // namespace asyncsolve::core
