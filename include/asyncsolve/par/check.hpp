#pragma once
/// Turning MPI error codes into exceptions.
#include <stdexcept>
#include <string>

namespace asyncsolve::par {

/// An MPI call returned an error. Carries the call's name and the library's
/// own description (MPI_Error_string).
class MpiError : public std::runtime_error {
 public:
  MpiError(const char* call, int code);
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// Throws MpiError if `rc` is not MPI_SUCCESS. `call` names the MPI function.
/// Communicators created by asyncsolve use MPI_ERRORS_RETURN, so errors reach
/// this check instead of aborting inside the library.
inline void check_mpi(int rc, const char* call) {
  if (rc != 0 /* MPI_SUCCESS */) throw MpiError(call, rc);
}

}  // namespace asyncsolve::par
