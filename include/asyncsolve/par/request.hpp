#pragma once
/// Non-blocking request handles that cannot be lost or silently dropped.
#include <mpi.h>

#include <cstddef>
#include <vector>

namespace asyncsolve::par {

/// One non-blocking operation. Move-only; destroying an active request is a
/// bug (asserted in debug builds): complete it with wait() or test() first.
class Request {
 public:
  Request() = default;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  Request(Request&& other) noexcept;
  Request& operator=(Request&& other) noexcept;
  ~Request();

  /// Slot for an MPI_I* call to fill. The request must be inactive.
  MPI_Request* slot();
  bool is_active() const noexcept { return request_ != MPI_REQUEST_NULL; }
  /// Blocks until the operation completes.
  void wait();
  /// True once the operation has completed (then the request is inactive).
  bool test();

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};

/// A set of operations completed together (MPI_Waitall). The set keeps its
/// capacity between uses; destroying it with active requests is a bug.
class RequestSet {
 public:
  RequestSet() = default;
  explicit RequestSet(std::size_t capacity) { requests_.reserve(capacity); }
  RequestSet(const RequestSet&) = delete;
  RequestSet& operator=(const RequestSet&) = delete;
  RequestSet(RequestSet&&) noexcept = default;
  RequestSet& operator=(RequestSet&&) noexcept = default;
  ~RequestSet();

  /// A new slot for an MPI_I* call to fill.
  MPI_Request* add();
  /// Number of requests not yet completed.
  std::size_t active() const noexcept;
  /// Completes every request (MPI_Waitall) and empties the set.
  void wait_all();
  /// True, and the set emptied, if every request has completed (MPI_Testall).
  bool test_all();

 private:
  std::vector<MPI_Request> requests_;
};

}  // namespace asyncsolve::par
