#include "asyncsolve/par/check.hpp"

#include <mpi.h>

#include <string>

static_assert(MPI_SUCCESS == 0, "check_mpi assumes MPI_SUCCESS == 0");

namespace asyncsolve::par {
namespace {

std::string describe(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return std::string(call) + " failed";
  return std::string(call) + ": " + std::string(text, static_cast<std::size_t>(length));
}

}  // namespace

MpiError::MpiError(const char* call, int code)
    : std::runtime_error(describe(call, code)), code_(code) {}

}  // namespace asyncsolve::par
