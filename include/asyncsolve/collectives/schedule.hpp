#pragma once
/// A schedule engine for non-blocking collectives (paper 001 §2, LibNBC):
/// a collective operation, as seen by one rank, is a list of rounds; each
/// round is a contiguous run of actions (sends, receives, local reductions
/// and copies) on a buffer the schedule owns. Starting posts the sends and
/// receives of round 0; test() checks them and, once every request of the
/// round has completed, runs the round's local operations and posts the next
/// round. Progress happens only inside start(), test() and wait(): no threads.
///
/// Building a schedule:
///
/// ```cpp
/// collectives::Schedule s(2 * n);        // a buffer of 2n doubles
/// s.add_send(0, n, right);               // round 0: send [0, n) to `right`,
/// s.add_recv(n, n, left);                //          receive [n, 2n) from `left`,
/// s.add_reduce(0, n, 0, n, ReduceOp::sum);  // then [0, n) = [0, n) + [n, 2n)
/// s.end_round();
/// collectives::ScheduleExecutor run(std::move(s), comm, /*input*/ 0, /*result*/ 0, n);
/// run.start(values);  ...  while (!run.test()) compute();  read run.result();
/// ```
///
/// Every rank builds its own schedule; the schedules of one operation must
/// match: the k-th send from rank a to rank b (counted over all rounds, in
/// schedule order) pairs with the k-th receive from a that b's schedule
/// posts, with the same count. All messages of an executor carry one fixed
/// tag, and messages between one pair on one communicator and tag do not
/// overtake each other, so this pairing is what MPI matching gives, across
/// rounds and across consecutive operations. (A tag per round would not do:
/// the same message sits in different rounds on sender and receiver, e.g. the
/// non-power-of-two fix-up of recursive doubling.) Rounds of one operation
/// never overlap on a rank, so no buffer of a pending request is touched by a
/// local operation.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::collectives {

/// One step of a schedule. Offsets and counts are in doubles of the
/// schedule's buffer.
struct ScheduleAction {
  enum class Kind : std::uint8_t {
    send,    ///< MPI_Isend of buffer[a, a+count) to `peer`
    recv,    ///< MPI_Irecv into buffer[dst, dst+count) from `peer`
    reduce,  ///< buffer[dst+i] = buffer[a+i] op buffer[b+i], after the round's requests
    copy,    ///< buffer[dst+i] = buffer[a+i], after the round's requests
  };
  Kind kind = Kind::send;
  ReduceOp op = ReduceOp::sum;
  std::size_t a = 0;    ///< send: source; reduce: left operand; copy: source
  std::size_t b = 0;    ///< reduce: right operand
  std::size_t dst = 0;  ///< recv, reduce, copy: destination
  std::size_t count = 0;
  int peer = MPI_PROC_NULL;  ///< send, recv: rank in the executor's communicator

  bool is_communication() const noexcept { return kind == Kind::send || kind == Kind::recv; }
};

/// A per-rank schedule: the actions of all rounds laid out contiguously
/// (Fig. 1 of paper 001 with an index of round starts instead of `end`
/// markers), and the size of the buffer they work on. Built once; reusable
/// for any number of operations. Local; no communication.
class Schedule {
 public:
  /// An empty schedule over a buffer of `buffer_size` doubles.
  explicit Schedule(std::size_t buffer_size) : buffer_size_(buffer_size) {}

  /// Round being built: posts an MPI_Isend of buffer[offset, offset+count).
  void add_send(std::size_t offset, std::size_t count, int peer);
  /// Round being built: posts an MPI_Irecv into buffer[offset, offset+count).
  void add_recv(std::size_t offset, std::size_t count, int peer);
  /// Round being built, once its requests completed: buffer[dst+i] =
  /// buffer[a+i] op buffer[b+i] for i < count (a is the left operand:
  /// min/max keep a on ties, so the order matters for signed zeros).
  void add_reduce(std::size_t a, std::size_t b, std::size_t dst, std::size_t count, ReduceOp op);
  /// Round being built, once its requests completed: buffer[dst, dst+count)
  /// = buffer[src, src+count).
  void add_copy(std::size_t src, std::size_t dst, std::size_t count);
  /// Closes the round being built (a no-op if it has no action).
  void end_round();

  std::size_t buffer_size() const noexcept { return buffer_size_; }
  /// Number of closed rounds.
  std::size_t rounds() const noexcept { return round_begin_.size() - 1; }
  /// The actions of closed round `r`, contiguous.
  std::span<const ScheduleAction> round(std::size_t r) const;
  /// All actions, rounds one after another.
  std::span<const ScheduleAction> actions() const noexcept { return actions_; }
  /// Sends over all rounds (this rank's messages per operation).
  std::size_t sends() const noexcept;
  /// The largest number of sends and receives in one round.
  std::size_t max_requests_per_round() const noexcept;

 private:
  void add(const ScheduleAction& action);
  std::size_t buffer_size_;
  std::vector<ScheduleAction> actions_;
  std::vector<std::size_t> round_begin_{0};  // round r is [round_begin_[r], round_begin_[r+1])
  bool open_ = false;                        // actions added since the last end_round()
};

/// Runs a Schedule over a communicator: owns the schedule, its buffer and
/// the requests of the round in flight. Does not own or duplicate the
/// communicator (the objects built on it do), which must outlive the
/// executor's operations. One operation at a time; rounds never overlap.
///
/// Destroying the executor with rounds in flight is a bug (asserted in
/// debug builds); release builds cancel the pending receives and complete the
/// pending sends, which may block until the peers reach this round.
class ScheduleExecutor {
 public:
  /// `input` and `result` are buffer offsets of `count` doubles each: start()
  /// copies the caller's values to buffer[input, input+count); after
  /// completion result() is buffer[result, result+count).
  /// Every message carries tag `tag` (executors sharing a communicator use
  /// different tags).
  ScheduleExecutor(Schedule schedule, MPI_Comm comm, std::size_t input, std::size_t result,
                   std::size_t count, int tag = 0);
  ScheduleExecutor(const ScheduleExecutor&) = delete;
  ScheduleExecutor& operator=(const ScheduleExecutor&) = delete;
  ScheduleExecutor(ScheduleExecutor&&) noexcept;
  ScheduleExecutor& operator=(ScheduleExecutor&&) = delete;
  ~ScheduleExecutor();

  /// Local: copies `values` (count() doubles, or empty for no input) into the
  /// buffer and posts round 0 (and runs every round that completes at once,
  /// possibly all of them). Requires !active() (std::logic_error).
  void start(std::span<const double> values);
  /// Local: progresses the operation; true, once, when every round has
  /// completed (then !active()). Requires active() (std::logic_error).
  bool test();
  /// Blocks until every round has completed. Requires active().
  void wait();
  /// True between start() and the test()/wait() that reported completion.
  bool active() const noexcept { return active_; }
  /// Requests of the round in flight not yet completed; 0 when !active().
  int outstanding_requests() const noexcept;
  /// buffer[result, result+count): the operation's result once completed.
  std::span<const double> result() const noexcept;
  std::size_t count() const noexcept { return count_; }
  const Schedule& schedule() const noexcept { return schedule_; }

 private:
  void post_round();
  void run_local_ops();
  bool advance(bool blocking);
  Schedule schedule_;
  MPI_Comm comm_;
  std::size_t input_;
  std::size_t result_;
  std::size_t count_;
  int tag_;
  std::vector<double> buffer_;
  std::vector<MPI_Request> requests_;  // the round in flight; capacity fixed at construction
  std::size_t round_ = 0;
  bool running_ = false;  // rounds left to run
  bool active_ = false;   // started, completion not yet reported
};

}  // namespace asyncsolve::collectives
