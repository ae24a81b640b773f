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
// progress engine, which runs inside SHMEM and MPI calls. Every flag read
// therefore also calls MPI_Iprobe on a private duplicate of comm on which no
// message is ever sent, as the rma transport does: a PE spinning on
// can_send() keeps the engine turning so its peer's acknowledgement lands.
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

#ifdef ASYNCSOLVE_HAVE_SHMEM
#include <shmem.h>
#endif

namespace asyncsolve::comm::detail {

#ifndef ASYNCSOLVE_HAVE_SHMEM

std::vector<std::unique_ptr<ChannelImpl>> create_shmem_channels(
    std::span<const as_channel_config>, int) {
  throw ChannelFailure(AS_ERR_UNSUPPORTED, "this build has no OpenSHMEM");
}

#else

namespace {

static_assert(sizeof(long) == 8, "the flags are 8-byte longs");


constexpr std::size_t kArrival = 0;
constexpr std::size_t kAck = 8;
constexpr std::size_t kClosing = 16;
constexpr std::size_t kData = 32;

std::size_t round8(std::size_t bytes) { return (bytes + 7) / 8 * 8; }

/// The symmetric block shared by the channels of one create call on this PE.
struct ShmemBlock {
  unsigned char* base = nullptr;  // symmetric: the same address names every PE's block
  int pe = 0;
  MPI_Comm quiet = MPI_COMM_NULL;  // a private duplicate of comm, never used for messages
  int members = 0;
  int open = 0;

  long* flag(std::size_t offset) const { return reinterpret_cast<long*>(base + offset); }

  /// Reads a flag of this PE's block atomically, and turns the progress engine.
  long long read(std::size_t offset) const {
    int probe = 0;
    check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet, &probe, MPI_STATUS_IGNORE), "MPI_Iprobe");
    const long v = shmem_long_atomic_fetch(flag(offset), pe);
    std::atomic_thread_fence(std::memory_order_acquire);
    return v;
  }

  /// Sets a flag in `target`'s block atomically.
  void write(int target, std::size_t offset, long long v) const {
    std::atomic_thread_fence(std::memory_order_release);
    shmem_long_atomic_set(flag(offset), static_cast<long>(v), target);
  }
};


class ShmemChannel final : public ChannelImpl {
 public:
  ShmemChannel(const as_channel_config& c, std::shared_ptr<ShmemBlock> block, MPI_Comm comm,
               std::size_t offset)
      : b_(std::move(block)),
        comm_(comm),
        peer_(c.peer),
        control_tag_(2 * c.tag + 1),
        size_(c.message_size),
        depth_(c.max_in_flight),
        racy_(c.mode == AS_MODE_RACY),
        sendbuf_(c.sendbuf),
        recvbuf_(c.recvbuf),
        my_offset_(offset) {}

  static std::size_t footprint(const as_channel_config& c) {
    if (c.peer == MPI_PROC_NULL) return 0;
    return kData + round8(c.message_size) *
                       static_cast<std::size_t>(c.mode == AS_MODE_RACY ? 1 : c.max_in_flight);
  }

  bool null() const { return peer_ == MPI_PROC_NULL; }

  void start_create() override {
    if (null()) return;
    mine_[0] = static_cast<long long>(size_);
    mine_[1] = depth_;
    mine_[2] = racy_ ? 1 : 0;
    mine_[3] = static_cast<long long>(my_offset_);
    check(MPI_Irecv(theirs_, 4, MPI_LONG_LONG, peer_, control_tag_, comm_, &control_[0]),
          "MPI_Irecv");
    check(MPI_Isend(mine_, 4, MPI_LONG_LONG, peer_, control_tag_, comm_, &control_[1]),
          "MPI_Isend");
  }

  void finish_create() override {
    if (null()) return;
    MPI_Status statuses[2];
    check(MPI_Waitall(2, control_, statuses), "MPI_Waitall");
    int count = 0;
    MPI_Get_count(&statuses[0], MPI_LONG_LONG, &count);
    if (count != 4 || !std::equal(mine_, mine_ + 3, theirs_)) {
      throw ChannelFailure(AS_ERR_MISMATCH,
                           "the two ends of the channel differ in message size, depth, mode or "
                           "transport");
    }
    peer_offset_ = static_cast<std::size_t>(theirs_[3]);
  }

  void open() { b_->open = b_->members; }

  bool can_send() override {
    if (null()) return true;
    progress();
    refresh_acks();
    return sent_ - acked_ < depth_;
  }

  void send() override {
    if (null()) {
      ++stats_.sent;
      return;
    }
    progress();
    refresh_acks();
    if (sent_ - acked_ >= depth_) {
      ++stats_.blocked_sends;
      while (sent_ - acked_ >= depth_) {
        progress();  // racy: keep taking the peer's messages meanwhile
        refresh_acks();
      }
    }
    const std::size_t slot = racy_ ? 0 : static_cast<std::size_t>(sent_ % depth_);
    shmem_putmem(b_->base + peer_offset_ + kData + slot * round8(size_), sendbuf_, size_, peer_);
    shmem_fence();  // the data before the flag, at the peer
    ++sent_;
    ++stats_.sent;
    b_->write(peer_, peer_offset_ + kArrival, sent_);
  }

  bool can_recv() override {
    if (null()) return racy_;
    if (racy_) {
      land_racy();
      return true;
    }
    refresh_arrivals();
    return arrived_ > taken_;
  }

  int recv() override {
    ++stats_.recv_calls;
    if (null()) return 0;
    if (racy_) {
      land_racy();
      const int n = static_cast<int>(since_last_recv_);
      since_last_recv_ = 0;
      return n;
    }
    refresh_arrivals();
    if (arrived_ == taken_) return 0;
    const std::size_t slot = static_cast<std::size_t>((arrived_ - 1) % depth_);
    std::memcpy(recvbuf_, slot_address(slot), size_);
    const long long batch = arrived_ - taken_;
    ++stats_.delivered;
    stats_.discarded += batch - 1;
    take(arrived_);
    return static_cast<int>(batch);
  }

  void progress() override {
    if (null()) return;
    if (racy_) {
      land_racy();
    } else {
      refresh_arrivals();
    }
  }

  void start_destroy() override {
    if (null()) return;
    b_->write(peer_, peer_offset_ + kClosing, sent_);
  }

  bool test_destroy() override {
    if (null()) return true;
    refresh_acks();
    refresh_arrivals();
    if (arrived_ > taken_) {
      stats_.discarded += arrived_ - taken_;
      take(arrived_);
    }
    if (peer_total_ < 0) peer_total_ = b_->read(my_offset_ + kClosing);
    return peer_total_ >= 0 && taken_ == peer_total_ && acked_ == sent_;
  }

  void finish_destroy() override {
    if (--b_->open > 0) return;
    shmem_quiet();
    shmem_barrier_all();
    shmem_free(b_->base);
    b_->base = nullptr;
    check(MPI_Comm_free(&b_->quiet), "MPI_Comm_free");
  }

  as_channel_stats stats() const override { return stats_; }
  int in_flight() const override { return static_cast<int>(sent_ - acked_); }
  const void* window_group() const override { return b_.get(); }
  int window_group_size() const override { return b_->members; }

 private:
  unsigned char* slot_address(std::size_t slot) const {
    return b_->base + my_offset_ + kData + slot * round8(size_);
  }

  void refresh_acks() { acked_ = b_->read(my_offset_ + kAck); }

  void refresh_arrivals() {
    arrived_ = b_->read(my_offset_ + kArrival);
    stats_.arrived = arrived_;
  }

  void take(long long count) {
    taken_ = count;
    b_->write(peer_, peer_offset_ + kAck, taken_);
  }

  void land_racy() {
    refresh_arrivals();
    if (arrived_ == taken_) return;
    atomic_copy(recvbuf_, slot_address(0), size_);
    stats_.delivered += arrived_ - taken_;
    since_last_recv_ += arrived_ - taken_;
    take(arrived_);
  }

  std::shared_ptr<ShmemBlock> b_;
  MPI_Comm comm_;
  int peer_;
  int control_tag_;
  std::size_t size_;
  int depth_;
  bool racy_;
  void* sendbuf_;
  void* recvbuf_;
  std::size_t my_offset_;
  std::size_t peer_offset_ = 0;

  long long sent_ = 0;
  long long acked_ = 0;
  long long arrived_ = 0;
  long long taken_ = 0;
  long long peer_total_ = -1;
  long long since_last_recv_ = 0;

  MPI_Request control_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  long long mine_[4] = {};
  long long theirs_[4] = {};
  as_channel_stats stats_{};
};

int agree(MPI_Comm comm, int local) {
  int global = 0;
  check(MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  return local != AS_SUCCESS ? local : global;
}

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
  if (const int s = agree(comm, local_status); s != AS_SUCCESS) {
    throw ChannelFailure(s, "shmem channel creation: invalid arguments on some rank");
  }
  auto block = std::make_shared<ShmemBlock>();
  block->pe = rank;
  block->members = static_cast<int>(configs.size());

  std::vector<std::unique_ptr<ShmemChannel>> made;
  made.reserve(configs.size());
  std::size_t bytes = 0;
  for (const as_channel_config& c : configs) {
    made.push_back(std::make_unique<ShmemChannel>(c, block, comm, bytes));
    bytes += ShmemChannel::footprint(c);
  }
  int status = AS_SUCCESS;
  auto note = [&](auto&& step) {
    try {
      step();
    } catch (const ChannelFailure& e) {
      if (status == AS_SUCCESS) status = e.status();
    }
  };
  for (auto& ch : made) note([&] { ch->start_create(); });
  for (auto& ch : made) note([&] { ch->finish_create(); });
  if (const int s = agree(comm, status); s != AS_SUCCESS) {
    throw ChannelFailure(s, "shmem channel creation failed on some rank");
  }

  // shmem_malloc needs the same size on every PE.
  unsigned long long local_bytes = bytes;
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
  std::memset(base, 0, static_cast<std::size_t>(max_bytes));
  std::size_t offset = 0;
  for (const as_channel_config& c : configs) {
    if (c.peer != MPI_PROC_NULL) *block->flag(offset + kClosing) = -1;
    offset += ShmemChannel::footprint(c);
  }
  // Local stores complete, and no PE touches a peer's block before.
  shmem_barrier_all();
  made.front()->open();

  std::vector<std::unique_ptr<ChannelImpl>> out;
  out.reserve(made.size());
  for (auto& ch : made) out.push_back(std::move(ch));
  return out;
}

#endif  // ASYNCSOLVE_HAVE_SHMEM

}  // namespace asyncsolve::comm::detail
