// The MPI-3 one-sided transport of asynchronous channels (paper 000 §3.2:
// the SHMEM put / flag scheme, expressed with MPI RMA, passive target).
//
// Collectivity. MPI_Win_allocate is collective over a communicator, so the
// channels cannot each get a window pairwise without an ordering between
// pairs. Instead, for this transport as_channels_create is collective over
// `comm`: every rank of comm calls it (each with its own list of rma
// channels; a rank with none passes one placeholder config whose peer is
// MPI_PROC_NULL) and the call allocates ONE window over comm holding this
// rank's landing areas for all the channels of the call. as_channels_destroy
// is collective likewise: each rank passes exactly the channels (placeholders
// included) of one create call; it completes every channel's closing
// protocol, then MPI_Win_unlock_all and MPI_Win_free. Several create calls on
// one comm give several windows; destroy them in the same order on all ranks.
//
// Creation, in order: (1) MPI_Allreduce of the local argument checks, so a
// bad argument on one rank fails the call on every rank instead of hanging;
// (1b) MPI_Alltoall of how many channels (and which tags) each rank lists
// to each other: an end whose peer lists none back fails the call on every
// rank (AS_ERR_MISMATCH) instead of waiting for ever in (2); (2) a
// point-to-point handshake per channel on tag 2*tag+1 of comm: message size,
// depth, mode and the byte offset of this end's landing area in its window;
// (3) MPI_Allreduce of the handshake results (a mismatch fails the call on
// every rank; no window is allocated); (4) MPI_Win_allocate over a private
// duplicate of comm whose errors return, with a reduction of whether each
// rank could reserve its node's windows before it and of whether each got it
// after it (AS_ERR_NOMEM on every rank; where a rank stays inside the call
// the others end the job, agree_on_window), MPI_Win_lock_all(MPI_MODE_NOCHECK), local
// initialisation, MPI_Win_sync, MPI_Barrier: no rank touches a peer's window
// before the peer initialised it.
//
// Window layout: per channel, at an 8-byte aligned byte offset (disp_unit 1),
//   +0  arrival  int64  number of messages the peer has sent into this area
//   +8  ack      int64  number of this end's messages the peer has taken
//   +16 closing  int64  the peer's final number of sent messages, -1 until it closes
//   +32 data     async: max_in_flight slots of message_size bytes rounded up to 8;
//                racy: one slot
// The three counters are the arrival and acknowledgement flags of paper 000
// §3.2 in monotonic form. They are written only by the peer, with
// MPI_Fetch_and_op(MPI_REPLACE) followed by MPI_Win_flush, and read by the
// owner with MPI_Fetch_and_op(MPI_NO_OP) on itself followed by MPI_Win_flush:
// accumulate operations (MPI_Fetch_and_op is one) on the same location and
// datatype are atomic with respect to each other, so the flags never race
// (unified or separate model). (MPI_Accumulate would be as legal; osc/ucx
// emulates it under a lock, which costs progress-engine turns.)
//
// Sending message k (0-based): wait until k - ack < max_in_flight (flow
// control; ack counts messages the receiver has taken, delivered or
// discarded), write the data (MPI_Put into slot k % max_in_flight, async and
// racy alike), MPI_Win_flush (the data is complete at the target), then set
// the peer's arrival to k+1 and flush. The sendbuf may be reused on return.
//
// Receiving, async: arrival A > taken means messages taken..A-1 are complete
// in their slots (each was flushed before its flag). recv() calls
// MPI_Win_sync (the private copy sees the completed puts), copies slot
// (A-1) % max_in_flight — the newest — into recvbuf, counts the older ones as
// discarded, sets taken = A and writes ack = A into the sender's window. The
// sender reuses a slot only after it is acknowledged, so a slot is never
// read while a put into it may be in progress.
//
// Receiving, racy: on any call that progresses the channel, if arrival
// moved, the newest slot is copied as async copies it (after MPI_Win_sync;
// the sender reuses a slot only once it is acknowledged, so no put is in
// progress into it) into a private buffer, then into recvbuf with relaxed
// 8-byte atomic stores, and every arrived message is acknowledged. (Until
// issue 13 racy used one slot written with MPI_Accumulate(MPI_REPLACE) of
// 8-byte elements and read with MPI_Get_accumulate(MPI_NO_OP): legal, but
// osc/ucx emulates both under a lock at the target, and each spin of that
// lock is a turn of the progress engine, which with mpi_yield_when_idle gives
// the core away: on a loaded machine a racy solve took 20 to 60 s. Racy now
// needs R slots of window, as async does.)
//
// Closing: each end writes its final sent count into the peer's closing
// field, then keeps taking (and dropping) arriving messages and acknowledging
// them until it has taken exactly that many and all of its own messages were
// acknowledged. Every put was flushed when issued, so once all channels of
// the window are closed MPI_Win_unlock_all and MPI_Win_free leave nothing
// outstanding, and no point-to-point message is left (the handshake messages
// are all received).
//
// Progress: with Open MPI's osc/sm and osc/rdma the target takes no part in
// passive-target operations; osc/ucx (and any component emulating RMA in
// software) moves them only inside MPI calls at the target, and an
// operation on oneself need not run the progress engine. So every eighth
// flag read that finds the flag where it was also calls MPI_Iprobe on a
// private duplicate of comm, on which no message is ever sent: without it, a
// sender spinning on can_send() under osc/ucx never saw the acknowledgement
// its receiver had put. (Not on every read: with mpi_yield_when_idle every
// MPI call that progresses nothing gives the core away, which under load
// costs a time slice per call, and a rank reads an unchanged arrival count
// in every iteration its neighbour sent nothing. Acknowledgements are
// likewise read only when the slots look full.)
//
// Threads: the channels of one create call share a window; calling them from
// different threads at once needs MPI_THREAD_MULTIPLE.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "asyncsolve/par/memory.hpp"
#include "asyncsolve/par/window.hpp"
#include "channel_impl.hpp"
#include "counted_protocol.hpp"

namespace asyncsolve::channel::detail {
namespace {

/// The window shared by the channels of one create call on this rank.
struct RmaWindow {
  /// Racy channels use R slots like async ones: element-atomic writes into
  /// one slot would need MPI_Accumulate and MPI_Get_accumulate (the standard
  /// leaves a put concurrent with a read undefined), which osc/ucx emulates
  /// under a lock at the target, turning the progress engine on every spin.
  static constexpr bool racy_in_one_slot = false;

  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  MPI_Win win = MPI_WIN_NULL;
  MPI_Comm quiet = MPI_COMM_NULL;  // a duplicate of comm: the window's; no message on it
  int members = 0;                 // channels (placeholders included) of the create call
  int open = 0;                    // not yet finished destroying

  /// Reads an int64 flag of this rank's window atomically.
  long long read(MPI_Aint disp) const {
    std::int64_t ignored = 0;
    std::int64_t value = 0;
    check(MPI_Fetch_and_op(&ignored, &value, MPI_INT64_T, rank, disp, MPI_NO_OP, win),
          "MPI_Fetch_and_op");
    check(MPI_Win_flush(rank, win), "MPI_Win_flush");
    return static_cast<long long>(value);
  }

  /// Runs the progress engine, for components that move remote operations
  /// only inside MPI calls at the target; nothing is ever sent on `quiet`.
  void turn_progress() const {
    int flag = 0;
    check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet, &flag, MPI_STATUS_IGNORE), "MPI_Iprobe");
  }

  /// Sets an int64 flag in `target`'s window atomically and completes it
  /// there. MPI_Fetch_and_op(MPI_REPLACE) rather than MPI_Accumulate: both
  /// are atomic with the owner's MPI_Fetch_and_op reads, but Open MPI's
  /// osc/ucx makes the first one network atomic (a swap) and emulates the
  /// second under a lock at the target, spinning in the progress engine,
  /// which with mpi_yield_when_idle gives the core away at every turn.
  void write(int target, MPI_Aint disp, long long v) const {
    const std::int64_t value = v;
    std::int64_t previous = 0;
    check(MPI_Fetch_and_op(&value, &previous, MPI_INT64_T, target, disp, MPI_REPLACE, win),
          "MPI_Fetch_and_op");
    check(MPI_Win_flush(target, win), "MPI_Win_flush");
  }

  /// Writes message data into `target`'s window and completes it there
  /// (racy: MPI_Accumulate with MPI_REPLACE, element-wise atomic).
  void put(int target, MPI_Aint disp, const void* src, std::size_t bytes, bool racy) const {
    const int n = static_cast<int>(bytes);
    if (racy) {
      check(MPI_Accumulate(src, n / 8, MPI_UINT64_T, target, disp, n / 8, MPI_UINT64_T, MPI_REPLACE,
                           win),
            "MPI_Accumulate");
    } else {
      check(MPI_Put(src, n, MPI_BYTE, target, disp, n, MPI_BYTE, win), "MPI_Put");
    }
    check(MPI_Win_flush(target, win), "MPI_Win_flush");
  }

  unsigned char* local(MPI_Aint disp) const {
    void* base = nullptr;
    int flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    return static_cast<unsigned char*>(base) + disp;
  }

  /// Makes remote updates of this rank's window visible to local loads.
  void sync_local() const { check(MPI_Win_sync(win), "MPI_Win_sync"); }

  /// Reads `words` 8-byte words of this rank's window, each atomically.
  void fetch_racy(MPI_Aint disp, std::uint64_t* out, std::size_t words) const {
    const int n = static_cast<int>(words);
    std::uint64_t ignored = 0;
    check(MPI_Get_accumulate(&ignored, 0, MPI_UINT64_T, out, n, MPI_UINT64_T, rank, disp, n,
                             MPI_UINT64_T, MPI_NO_OP, win),
          "MPI_Get_accumulate");
    check(MPI_Win_flush(rank, win), "MPI_Win_flush");
  }

  /// Collective over comm: closes and frees the window.
  void release() {
    check(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
    check(MPI_Win_free(&win), "MPI_Win_free");
    check(MPI_Comm_free(&quiet), "MPI_Comm_free");
  }
};

/// The bytes of the windows of all ranks on this rank's node, `mine` being
/// this rank's: a shared-memory one-sided component (Open MPI's osc/sm,
/// and osc/rdma's shared segment) maps the node's whole segment on every
/// rank there, so that is what each rank must be able to map. Collective.
double node_window_bytes(MPI_Comm comm, MPI_Aint mine) {
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  auto bytes = static_cast<double>(mine);
  const int reduced = MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_DOUBLE, MPI_SUM, node);
  check(MPI_Comm_free(&node), "MPI_Comm_free");
  check(reduced, "MPI_Allreduce");
  return bytes;
}

/// How long a rank whose MPI_Win_allocate failed, and one whose call
/// succeeded, wait for the others to agree before they end the job
/// (agree_on_window).
constexpr double failed_window_wait_s = 10.0;
constexpr double window_wait_s = 30.0;

/// Whether every rank of `quiet` got its window (`mine`: this rank did),
/// over a non-blocking reduction. With Open MPI's osc/sm a rank whose
/// mapping failed (out of memory or /dev/shm space, after the reservation
/// node_window_bytes sizes succeeded) can stay inside MPI_Win_allocate, in
/// the component's own barrier as it frees what it made, while the others
/// come back with their windows; or the others can stay inside, waiting for
/// it. Either way no agreement can reach a rank that is still inside, and
/// no call can free what it holds. So a rank that does not hear from every
/// other one in time (failed_window_wait_s after its own failure,
/// window_wait_s after its success) says so in one line and ends the job
/// (MPI_Abort, error code 4, the command's out-of-memory exit status)
/// instead of leaving every rank hanging. Where every rank failed, or all
/// got there, the reduction completes at once. Collective.
bool agree_on_window(MPI_Comm quiet, bool mine) {
  int all = mine ? 1 : 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, quiet, &request), "MPI_Iallreduce");
  const double limit = mine ? window_wait_s : failed_window_wait_s;
  const double start = MPI_Wtime();
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) return all != 0;
    if (MPI_Wtime() - start >= limit) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr,
               "asyncsolve: out of memory: rank %d %s its one-sided window, and another rank "
               "did not come back from MPI_Win_allocate within %.0f s (a rank whose mapping "
               "failed can stay inside it); ending the job (MPI_Abort, error code 4)\n",
               rank, mine ? "mapped" : "could not map", limit);
  std::fflush(stderr);
  MPI_Abort(quiet, 4);
  return false;
}

}  // namespace

std::vector<std::unique_ptr<ChannelImpl>> create_rma_channels(
    std::span<const as_channel_config> configs, int local_status) {
  const MPI_Comm comm = configs.front().comm;
  auto window = std::make_shared<RmaWindow>();
  window->comm = comm;
  check(MPI_Comm_rank(comm, &window->rank), "MPI_Comm_rank");
  MPI_Aint bytes = 0;
  auto made = make_and_handshake(configs, local_status, window, comm, bytes);

  check(MPI_Comm_dup(comm, &window->quiet), "MPI_Comm_dup");
  // The window is allocated over the duplicate, whose errors return: the
  // caller's comm (MPI_ERRORS_ARE_FATAL by default in C) would abort the job
  // where the call is to report AS_ERR_NOMEM; so do the window's own.
  check(MPI_Comm_set_errhandler(window->quiet, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  // The arguments are valid by construction, so a failure is the memory the
  // landing areas need (max_in_flight slots of each channel): AS_ERR_NOMEM,
  // on every rank. Each rank first tries to reserve its node's windows, and
  // the ranks agree: a one-sided component that fails on one rank only can leave the
  // others inside MPI_Win_allocate for ever (Open MPI's osc/sm waits in a
  // broadcast from the rank whose mapping failed).
  const auto agreed = [&](bool mine) {
    if (!agree_on_window(window->quiet, mine)) {
      check(MPI_Comm_free(&window->quiet), "MPI_Comm_free");
      throw ChannelFailure(AS_ERR_NOMEM, "MPI_Win_allocate");
    }
  };
  agreed(par::can_reserve(node_window_bytes(window->quiet, par::padded_window_bytes(bytes))));
  // A window that some ranks got and others did not cannot be freed
  // (MPI_Win_free is collective over all of them): MPI_Finalize frees it,
  // where the ranks that got it came back from MPI_Win_allocate at all
  // (agree_on_window).
  void* base = nullptr;
  agreed(MPI_Win_allocate(par::padded_window_bytes(bytes), 1, MPI_INFO_NULL, window->quiet, &base,
                          &window->win) == MPI_SUCCESS);
  check(MPI_Win_set_errhandler(window->win, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  check(MPI_Win_lock_all(MPI_MODE_NOCHECK, window->win), "MPI_Win_lock_all");
  initialise_areas<RmaWindow>(configs, static_cast<unsigned char*>(base),
                              static_cast<std::size_t>(bytes));
  // Local stores reach the public copy, and no peer accesses it before.
  check(MPI_Win_sync(window->win), "MPI_Win_sync");
  check(MPI_Barrier(comm), "MPI_Barrier");
  return open_channels(std::move(made));
}

}  // namespace asyncsolve::channel::detail
