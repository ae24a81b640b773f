// The OpenSHMEM transport of asynchronous channels (paper 000 §3.2: the
// SHMEM sync / async / racy scheme with the put–fence–put handshake).
//
// Collectivity. shmem_malloc is collective over ALL PEs and must be given the
// same size everywhere, so, as for the rma transport, as_channels_create is
// collective: every PE calls it once with all its shmem channels on `comm`
// (a PE with none passes one placeholder whose peer is MPI_PROC_NULL). comm
// must span the whole SHMEM world with rank == PE number (MPI_COMM_WORLD
// under oshrun/mpiexec, or a duplicate of it); otherwise AS_ERR_ARG on every
// rank. Peers' PE numbers are then their ranks. If OpenSHMEM was not started
// (par::Shmem) or is not in the build, AS_ERR_UNSUPPORTED.
//
// Creation, in order: (1) MPI_Allreduce of the local argument checks;
// (2) a point-to-point handshake per channel on tag 2*tag+1 of comm: message
// size, depth, mode and the byte offset of this end's area in the symmetric
// block; (3) MPI_Allreduce of the handshake results; (4) MPI_Allreduce(MAX)
// of the block size, shmem_malloc of that size on every PE, local
// initialisation, shmem_barrier_all (which completes local stores before any
// PE touches a peer's block).
//
// Layout: per channel, at an 8-byte aligned byte offset of the block,
//   +0  arrival  long  number of messages the peer has sent into this area
//   +8  ack      long  number of this end's messages the peer has taken
//   +16 closing  long  the peer's final number of sent messages, -1 until it closes
//   +32 data     async: max_in_flight slots of message_size bytes rounded up
//                to 8; racy: one slot
// The counters are written only by the peer, with shmem_long_atomic_set, and
// read by the owner with shmem_long_atomic_fetch on its own PE: atomic with
// respect to each other.
//
// Sending message k (0-based): wait until k - ack < max_in_flight; async:
// shmem_putmem into slot k % max_in_flight, shmem_fence, then
// shmem_long_atomic_set(arrival, k+1) — the put–fence–put idiom of paper 000
// §3.2.1: the fence orders the data before the flag at the target, so a
// receiver that sees arrival == k+1 finds message k whole in its slot. The
// sender reuses a slot only once it is acknowledged, so a slot is never read
// while a put into it is in progress. Racy: shmem_putmem into the one slot,
// fence, arrival flag; as in the paper, 8-byte element atomicity then relies
// on the implementation delivering aligned 8-byte words whole (OSHMEM over
// UCX does: shared-memory copies and RDMA writes of aligned words do not
// tear); the receiver copies the slot into recvbuf with relaxed atomic
// 8-byte loads and stores, so no access in this program is a data race in
// the C++ sense. shmem_putmem returns with the send buffer reusable.
//
// Receiving and closing are as in the rma transport (channel_rma.cpp):
// async recv() copies the newest complete slot, counts older ones as
// discarded and writes ack; racy copies whenever arrival moved. Closing: each
// end writes its final sent count into the peer's closing field, then takes
// and drops what arrives until it has taken that many and all of its own
// messages are acknowledged. The last channel of the block to finish
// destroying calls shmem_quiet, shmem_barrier_all and shmem_free (collective
// over all PEs: every PE destroys its create calls in the same order).
//
// Progress: OSHMEM over UCX moves remote atomics and puts through its
// progress engine, which runs inside SHMEM and MPI calls. Every eighth flag
// read that finds the flag where it was therefore also calls MPI_Iprobe on a
// private duplicate of comm on which no message is ever sent, as the rma
// transport does: a PE spinning on can_send() keeps the engine turning so
// its peer's acknowledgement lands.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "asyncsolve/par/shmem.hpp"
#include "channel_impl.hpp"
#include "counted_protocol.hpp"

#ifdef ASYNCSOLVE_HAVE_SHMEM
#include <shmem.h>
#endif

namespace asyncsolve::channel::detail {

#ifndef ASYNCSOLVE_HAVE_SHMEM

std::vector<std::unique_ptr<ChannelImpl>> create_shmem_channels(std::span<const as_channel_config>,
                                                                int) {
  throw ChannelFailure(AS_ERR_UNSUPPORTED, "this build has no OpenSHMEM");
}

#else

namespace {

static_assert(sizeof(long) == 8, "the flags are 8-byte longs");

/// The symmetric block shared by the channels of one create call on this PE.
struct ShmemBlock {
  /// Racy channels land in one slot, written with plain puts (paper 000's
  /// scheme: aligned 8-byte words arrive whole).
  static constexpr bool racy_in_one_slot = true;

  unsigned char* base = nullptr;  // symmetric: the same address names every PE's block
  int pe = 0;
  MPI_Comm quiet = MPI_COMM_NULL;  // a private duplicate of comm, never used for messages
  int members = 0;
  int open = 0;

  long* flag(MPI_Aint offset) const { return reinterpret_cast<long*>(base + offset); }

  /// Reads a flag of this PE's block atomically.
  long long read(MPI_Aint offset) const {
    const long v = shmem_long_atomic_fetch(flag(offset), pe);
    std::atomic_thread_fence(std::memory_order_acquire);
    return v;
  }

  /// Turns the progress engine (OSHMEM over UCX shares MPI's); nothing is
  /// ever sent on `quiet`.
  void turn_progress() const {
    int probe = 0;
    check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet, &probe, MPI_STATUS_IGNORE), "MPI_Iprobe");
  }

  /// Sets a flag in `target`'s block atomically.
  void write(int target, MPI_Aint offset, long long v) const {
    std::atomic_thread_fence(std::memory_order_release);
    shmem_long_atomic_set(flag(offset), static_cast<long>(v), target);
  }

  /// Puts message data into `target`'s block, ordered before later puts to
  /// it (the put-fence-flag idiom of paper 000 §3.2.1). Racy: plain puts, as
  /// the paper's; element atomicity relies on aligned 8-byte words arriving
  /// whole.
  void put(int target, MPI_Aint offset, const void* src, std::size_t bytes, bool /*racy*/) const {
    shmem_putmem(base + offset, src, bytes, target);
    shmem_fence();
  }

  unsigned char* local(MPI_Aint offset) const { return base + offset; }
  void sync_local() const { std::atomic_thread_fence(std::memory_order_acquire); }

  /// Reads `words` 8-byte words of this PE's block with relaxed atomic loads.
  void fetch_racy(MPI_Aint offset, std::uint64_t* out, std::size_t words) const {
    auto* in = reinterpret_cast<std::uint64_t*>(base + offset);
    for (std::size_t i = 0; i < words; ++i) {
      out[i] = std::atomic_ref<std::uint64_t>(in[i]).load(std::memory_order_relaxed);
    }
  }

  /// Collective over all PEs: frees the symmetric block.
  void release() {
    shmem_quiet();
    shmem_barrier_all();
    shmem_free(base);
    base = nullptr;
    check(MPI_Comm_free(&quiet), "MPI_Comm_free");
  }
};

}  // namespace

std::vector<std::unique_ptr<ChannelImpl>> create_shmem_channels(
    std::span<const as_channel_config> configs, int local_status) {
  const MPI_Comm comm = configs.front().comm;
  int rank = 0;
  int size = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  // Peers are named by rank and reached by PE number: they must coincide.
  if (local_status == AS_SUCCESS && (size != shmem_n_pes() || rank != shmem_my_pe())) {
    local_status = AS_ERR_ARG;
  }
  auto block = std::make_shared<ShmemBlock>();
  block->pe = rank;
  MPI_Aint bytes = 0;
  auto made = make_and_handshake(configs, local_status, block, comm, bytes);

  // shmem_malloc needs the same size on every PE.
  auto local_bytes = static_cast<unsigned long long>(bytes);
  unsigned long long max_bytes = 0;
  check(MPI_Allreduce(&local_bytes, &max_bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm),
        "MPI_Allreduce");
  max_bytes = std::max<unsigned long long>(max_bytes, 8);
  void* base = shmem_malloc(static_cast<std::size_t>(max_bytes));
  int failed = base == nullptr ? 1 : 0;
  check(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (failed != 0) {
    shmem_free(base);  // collective; a null pointer is allowed
    throw ChannelFailure(AS_ERR_NOMEM, "shmem_malloc failed on some PE");
  }
  block->base = static_cast<unsigned char*>(base);
  check(MPI_Comm_dup(comm, &block->quiet), "MPI_Comm_dup");
  initialise_areas<ShmemBlock>(configs, block->base, static_cast<std::size_t>(max_bytes));
  // Local stores complete, and no PE touches a peer's block before.
  shmem_barrier_all();
  return open_channels(std::move(made));
}

#endif  // ASYNCSOLVE_HAVE_SHMEM

}  // namespace asyncsolve::channel::detail
