#pragma once
/// Non-blocking sums that asynchronous solvers use to detect convergence
/// without global synchronisation: started, progressed by test(), completed
/// without blocking the caller.
///
/// The algorithms (sum, min or max of vectors of doubles):
///
/// - `mpi`: blocking MPI_Allreduce inside start(); test() succeeds at once.
///   Nothing overlaps: the baseline the overlapped solvers are measured against.
/// - `impi`: MPI_Iallreduce on a duplicate of the caller's communicator;
///   test() is MPI_Test. (In Open MPI this is LibNBC's schedule engine.)
/// - `tree`: the asynchronous binary-tree reduction of paper 000 §3.1.2 over
///   point-to-point messages. Ranks form a binary tree: the parent of rank r
///   is (r-1)/2, its children are 2r+1 and 2r+2 (where they exist).
/// - `rd`, `knomial:K`, `twolevel:ALG`: schedules run by asyncsolve's own
///   engine (schedule.hpp): recursive doubling, k-nomial reduce + broadcast,
///   and a node-aware two-level scheme; see docs/design.md ("Collectives").
/// - `shm`: no messages at all: every rank of one node deposits its values
///   and a sequence number in an MPI-3 shared-memory window, and whoever
///   waits reads the others' deposits and folds them in rank order. Needs no
///   progress engine: a rank that computes after start() delays only those
///   waiting for its deposit. Only where all ranks share memory (one node);
///   refused in the simulation build.
/// - `twolevel:shm+ALG`: `shm` within each node, ALG (rd, knomial:K, mpi,
///   impi) among the node leaders; on one node, `shm` itself.
///
/// Every algorithm gives bit-identical results on all ranks.
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

#include "asyncsolve/collectives/allreduce.hpp"
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
  /// Algorithm name as given to make_nonblocking_allreduce ("tree", "rd",
  /// "knomial:3", ...).
  virtual std::string_view name() const = 0;
  /// Number of doubles every reduction carries (fixed at construction).
  virtual std::size_t size() const = 0;
  /// The element-wise operation (fixed at construction; sum unless the
  /// implementation says otherwise).
  virtual ReduceOp op() const { return ReduceOp::sum; }
  /// Starts the element-wise op() reduction of `values` (size() doubles,
  /// copied) over all ranks.
  /// Requires !active() (throws std::logic_error otherwise, or if the span has
  /// the wrong size). Collective in the MPI sense: every rank must start the
  /// same sequence of reductions (the k-th start on every rank belongs to the
  /// k-th reduction), but ranks may start at different times.
  virtual void start(std::span<const double> values) = 0;
  /// Local: progresses the active reduction. Returns true exactly once per
  /// reduction, when the element-wise result is known on this rank and every
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

/// The plain names accepted by make_nonblocking_allreduce: {"tree", "impi",
/// "mpi", "rd", "shm"}. Parametrised names (`knomial:K`, `twolevel:ALG`,
/// `twolevel:shm+ALG`) are accepted too; check_allreduce_name validates any
/// name.
std::vector<std::string> nonblocking_allreduce_names();

/// Local: throws core::InputError, with the one-line message of
/// parse_allreduce (allreduce.hpp), unless `name` is a plain name,
/// `knomial:K` with K a decimal integer >= 2 (a K above the rank count acts
/// as the rank count: one flat level), `twolevel:ALG` or `twolevel:shm+ALG`.
void check_allreduce_name(std::string_view name);

/// Collective over `comm`: builds the named algorithm for reductions (`op`)
/// of `size` doubles on a duplicate of `comm` (owned by the result; `comm`
/// need not outlive it). Schedule-based algorithms build their schedule here,
/// once: the object is the cache (per communicator, size, op and algorithm).
/// Throws core::InputError for a bad name (check_allreduce_name), before any
/// communication, and, on every rank, for `shm` where the ranks do not all
/// share memory (a multi-node job) or in the simulation build; par::MpiError
/// (MPI's error string) if a shared window cannot be allocated. Debug builds
/// also check, collectively, that every rank
/// passed the same size and op, and throw std::logic_error on every rank if
/// not (release builds skip the check: mismatched sizes are then undefined).
std::unique_ptr<NonblockingAllreduce> make_nonblocking_allreduce(std::string_view name,
                                                                 const par::Comm& comm,
                                                                 std::size_t size,
                                                                 ReduceOp op = ReduceOp::sum);
/// The same for a parsed algorithm (parse_allreduce).
std::unique_ptr<NonblockingAllreduce> make_nonblocking_allreduce(
    const AllreduceAlgorithm& algorithm, const par::Comm& comm, std::size_t size,
    ReduceOp op = ReduceOp::sum);

/// Collective over `comm`: `twolevel:<leader_algorithm>` with explicit nodes:
/// ranks passing the same `node_color` (>= 0) form a node; a negative colour
/// on every rank groups them by shared memory (MPI_COMM_TYPE_SHARED), which is
/// what make_nonblocking_allreduce("twolevel:ALG", ...) does. Lets tests and
/// users exercise the leader level on one machine. `leader_algorithm` may be
/// `shm+ALG` (the node level over shared memory; each colour's ranks must then
/// share memory). Throws core::InputError for a leader algorithm other than
/// rd, knomial:K, mpi or impi.
std::unique_ptr<NonblockingAllreduce> make_two_level_allreduce(const par::Comm& comm,
                                                               std::size_t size,
                                                               std::string_view leader_algorithm,
                                                               ReduceOp op, int node_color);

}  // namespace asyncsolve::collectives
