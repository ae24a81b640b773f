#pragma once
/// Non-blocking barriers: started, progressed by test(), completed by wait().
///
/// `dissemination:N` (N >= 1; `dissemination` is N = 1) is paper 001 §2.2's
/// n-way dissemination barrier on the schedule engine: ceil(log_{N+1} P)
/// rounds; in round r rank p sends an empty message to (p + i(N+1)^r) mod P
/// and receives one from (p - i(N+1)^r) mod P for i = 1..N (peers whose
/// distance i(N+1)^r reaches P are left out: they would only repeat ranks
/// already covered). No rank's barrier completes before every rank has
/// started it.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::collectives {

/// A barrier that can be overlapped with computation. Owns a duplicate of
/// the communicator it was built on and its schedule (built once, reused by
/// every start()). Progress happens only inside start(), test() and wait().
/// Call free() (collective) with no barrier active before MPI_Finalize;
/// destroying an active barrier is a bug (asserted in debug builds).
class NonblockingBarrier {
 public:
  virtual ~NonblockingBarrier() = default;
  /// Algorithm name, e.g. "dissemination:2".
  virtual std::string_view name() const = 0;
  /// Local: enters the barrier. Requires !active() (std::logic_error).
  virtual void start() = 0;
  /// Local: progresses; true exactly once per barrier, when every rank has
  /// entered it and this rank's messages have completed. Requires active().
  virtual bool test() = 0;
  /// Blocks until the barrier completes. Requires active().
  virtual void wait() = 0;
  /// True between start() and the test()/wait() that completed it.
  virtual bool active() const = 0;
  /// MPI requests outstanding on this rank; 0 whenever !active().
  virtual int outstanding_requests() const = 0;
  /// The owned duplicate the barrier's messages travel on; null after free().
  virtual const par::Comm& comm() const = 0;
  /// Collective: frees the duplicate. Requires !active() (std::logic_error).
  virtual void free() = 0;
};

/// Names accepted by make_nonblocking_barrier: "dissemination" and
/// "dissemination:N" with N a decimal integer >= 1.
std::vector<std::string> nonblocking_barrier_names();

/// Collective over `comm`: builds the named barrier on a duplicate of `comm`.
/// Throws core::InputError for a bad name, before any communication.
std::unique_ptr<NonblockingBarrier> make_nonblocking_barrier(std::string_view name,
                                                             const par::Comm& comm);

}  // namespace asyncsolve::collectives
