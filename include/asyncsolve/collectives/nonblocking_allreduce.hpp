#pragma once
/// Non-blocking sums that asynchronous solvers use to detect convergence
/// without global synchronisation: started, progressed by test(), completed
/// without blocking the caller.
///
/// Three algorithms:
///
/// - `mpi`: blocking MPI_Allreduce inside start(); test() succeeds at once.
///   Nothing overlaps: the baseline the overlapped solvers are measured against.
/// - `impi`: MPI_Iallreduce(MPI_SUM) on a duplicate of the caller's
///   communicator; test() is MPI_Test.
/// - `tree`: the asynchronous binary-tree reduction of paper 000 §3.1.2 over
///   point-to-point messages. Ranks form a binary tree: the parent of rank r
///   is (r-1)/2, its children are 2r+1 and 2r+2 (where they exist).
///
/// The tree protocol, per round, on rank r:
///
/// 1. start(): copies the caller's values, posts MPI_Irecv for each child's
///    partial sum (tag "up") and, unless r is the root, for the total from the
///    parent (tag "down").
/// 2. test(), once both children's partials are in: partial = own + partial of
///    child 2r+1 + partial of child 2r+2, added in that fixed order. A non-root
///    rank MPI_Isends the partial to its parent; the root's partial is the
///    total.
/// 3. test(), once the total is known (root: step 2; others: the parent's
///    message arrived): MPI_Isend of the total to each child. Every rank's
///    result is the root's total, forwarded unchanged, so the results are
///    bit-identical on all ranks.
/// 4. test() returns true only when every request of the round has completed:
///    both receives and all of this rank's sends. A completed round therefore
///    leaves no outstanding request on the rank, and when every rank has
///    completed the last round there is nothing in flight anywhere.
///
/// Why step 4 cannot hang: a down-send goes to a child that posted its
/// receive before it sent its own partial up, i.e. before the total could
/// exist, so it is matched at once and completes as the child, still waiting
/// for the total, progresses. The up-send of round n is matched by the
/// parent's round-n receive, which the parent posted when it started round n;
/// the parent must receive it before the total, and hence this rank's result,
/// can exist. A child may send its round n+1 partial before the parent has
/// started round n+1: MPI queues it, and since messages between a pair on one
/// communicator and tag do not overtake each other, it matches the parent's
/// round n+1 receive. Rounds never overlap on a rank (start() requires the
/// previous round to be complete), so the buffers of a round are never
/// touched while a request on them is pending.
///
/// Progress is made only inside start(), test() and wait(): a rank that stops
/// calling test() holds up its subtree (paper 000 reports ~50 iterations per
/// round on 32,768 cores).
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::collectives {

/// A reduction that is started, progressed by test(), and completed without
/// blocking the caller. Owns a duplicate of the communicator it was built on
/// (so its messages never mix with the caller's) and the buffers of the
/// active round; the caller's spans are copied in start() and written in
/// test()/wait(), never kept.
///
/// Lifetime: call free() (collective) with no reduction active before
/// MPI_Finalize. The destructor is not collective and never calls MPI after
/// MPI_Finalize; destroying an active reduction is a bug (asserted in debug
/// builds; release builds still leave no request behind: the tree cancels its
/// receives and waits for its sends, impi waits for its collective, so this
/// may block until the other ranks reach the same round).
class NonblockingAllreduce {
 public:
  virtual ~NonblockingAllreduce() = default;
  /// Algorithm name as given to make_nonblocking_allreduce: "tree", "impi" or "mpi".
  virtual std::string_view name() const = 0;
  /// Number of doubles every reduction carries (fixed at construction).
  virtual std::size_t size() const = 0;
  /// Starts a sum of `values` (size() doubles, copied) over all ranks.
  /// Requires !active() (throws std::logic_error otherwise, or if the span has
  /// the wrong size). Collective in the MPI sense: every rank must start the
  /// same sequence of reductions (the k-th start on every rank belongs to the
  /// k-th reduction), but ranks may start at different times.
  virtual void start(std::span<const double> values) = 0;
  /// Local: progresses the active reduction. Returns true exactly once per
  /// reduction, when the element-wise sum is known on this rank and every
  /// request of the round has completed; then writes the sum to `result`
  /// (size() doubles) and the reduction is no longer active. Returns false
  /// otherwise, `result` untouched. Requires active().
  virtual bool test(std::span<double> result) = 0;
  /// Blocks until the active reduction completes and writes its sum to
  /// `result` (size() doubles). Requires active().
  virtual void wait(std::span<double> result) = 0;
  /// True between start() and the test()/wait() that completed the round.
  virtual bool active() const = 0;
  /// Rounds completed so far on this rank.
  virtual long completed() const = 0;
  /// MPI requests this rank has outstanding for the active round; 0 whenever
  /// !active() (teardown checks this).
  virtual int outstanding_requests() const = 0;
  /// The duplicated communicator the reduction's messages travel on, owned by
  /// this object (for diagnostics, e.g. probing for stray messages). Null
  /// after free().
  virtual const par::Comm& comm() const = 0;
  /// Collective: frees the duplicated communicator. Requires !active() on
  /// every rank (throws std::logic_error otherwise). Afterwards only the
  /// destructor may be called.
  virtual void free() = 0;
};

/// Names accepted by make_nonblocking_allreduce: {"tree", "impi", "mpi"}.
std::vector<std::string> nonblocking_allreduce_names();

/// Collective over `comm`: builds the named algorithm for reductions of
/// `size` doubles on a duplicate of `comm` (owned by the result; `comm` need
/// not outlive it). Throws core::InputError for an unknown name, before any
/// communication.
std::unique_ptr<NonblockingAllreduce> make_nonblocking_allreduce(std::string_view name,
                                                                 const par::Comm& comm,
                                                                 std::size_t size);

}  // namespace asyncsolve::collectives
