#include "asyncsolve/par/request.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::par {

Request::Request(Request&& other) noexcept
    : request_(std::exchange(other.request_, MPI_REQUEST_NULL)) {}

Request& Request::operator=(Request&& other) noexcept {
  assert(!is_active() && "overwriting an active MPI request");
  request_ = std::exchange(other.request_, MPI_REQUEST_NULL);
  return *this;
}

Request::~Request() { assert(!is_active() && "destroying an active MPI request"); }

MPI_Request* Request::slot() {
  assert(!is_active() && "reusing an active MPI request");
  return &request_;
}

void Request::wait() { check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait"); }

bool Request::test() {
  int done = 0;
  check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

RequestSet::~RequestSet() {
  assert(active() == 0 && "destroying a RequestSet with active requests");
}

MPI_Request* RequestSet::add() {
  requests_.push_back(MPI_REQUEST_NULL);
  return &requests_.back();
}

std::size_t RequestSet::active() const noexcept {
  return static_cast<std::size_t>(std::count_if(
      requests_.begin(), requests_.end(), [](MPI_Request r) { return r != MPI_REQUEST_NULL; }));
}

void RequestSet::wait_all() {
  check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
  requests_.clear();
}

bool RequestSet::test_all() {
  int done = 0;
  check_mpi(
      MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE),
      "MPI_Testall");
  if (done != 0) requests_.clear();
  return done != 0;
}

}  // namespace asyncsolve::par
