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
// (2) a point-to-point handshake per channel on tag 2*tag+1 of comm: message
// size, depth, mode and the byte offset of this end's landing area in its
// window; (3) MPI_Allreduce of the handshake results (a mismatch fails the
// call on every rank; no window is allocated); (4) MPI_Win_allocate,
// MPI_Win_lock_all(MPI_MODE_NOCHECK), local initialisation, MPI_Win_sync,
// MPI_Barrier: no rank touches a peer's window before the peer initialised it.
//
// Window layout: per channel, at an 8-byte aligned byte offset (disp_unit 1),
//   +0  arrival  int64  number of messages the peer has sent into this area
//   +8  ack      int64  number of this end's messages the peer has taken
//   +16 closing  int64  the peer's final number of sent messages, -1 until it closes
//   +32 data     async: max_in_flight slots of message_size bytes rounded up to 8;
//                racy: one slot
// The three counters are the arrival and acknowledgement flags of paper 000
// §3.2 in monotonic form. They are written only by the peer, with
// MPI_Accumulate(MPI_REPLACE) followed by MPI_Win_flush, and read by the
// owner with MPI_Fetch_and_op(MPI_NO_OP) on itself followed by MPI_Win_flush:
// accumulate operations on the same location and datatype are atomic with
// respect to each other, so the flags never race (unified or separate model).
//
// Sending message k (0-based): wait until k - ack < max_in_flight (flow
// control; ack counts messages the receiver has taken, delivered or
// discarded), write the data (async: MPI_Put into slot k % max_in_flight;
// racy: MPI_Accumulate(MPI_REPLACE) of 8-byte MPI_UINT64_T elements into the
// one slot, so concurrent updates never tear an element), MPI_Win_flush (the
// data is complete at the target), then set the peer's arrival to k+1 and
// flush. The sendbuf may be reused on return.
//
// Receiving, async: arrival A > taken means messages taken..A-1 are complete
// in their slots (each was flushed before its flag). recv() calls
// MPI_Win_sync (the private copy sees the completed puts), copies slot
// (A-1) % max_in_flight — the newest — into recvbuf, counts the older ones as
// discarded, sets taken = A and writes ack = A into the sender's window. The
// sender reuses a slot only after it is acknowledged, so a slot is never
// read while a put into it may be in progress.
//
// Receiving, racy: on any call, if arrival moved, the slot is read with one
// MPI_Get_accumulate(MPI_NO_OP) of MPI_UINT64_T elements on itself (atomic per
// element against the peer's accumulates) into a private buffer, copied into
// recvbuf with relaxed 8-byte atomic stores, and acknowledged.
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
// operation on oneself need not run the progress engine. So every flag read
// also calls MPI_Iprobe on a private duplicate of comm, on which no message
// is ever sent: without it, a sender spinning on can_send() under osc/ucx
// never saw the acknowledgement its receiver had put.
//
// Threads: the channels of one create call share a window; calling them from
// different threads at once needs MPI_THREAD_MULTIPLE.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "channel_impl.hpp"

namespace asyncsolve::comm::detail {
namespace {


constexpr MPI_Aint kArrival = 0;
constexpr MPI_Aint kAck = 8;
constexpr MPI_Aint kClosing = 16;
constexpr MPI_Aint kData = 32;

MPI_Aint round8(std::size_t bytes) { return static_cast<MPI_Aint>((bytes + 7) / 8 * 8); }

/// The window shared by the channels of one create call on this rank.
struct RmaWindow {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  MPI_Win win = MPI_WIN_NULL;
  MPI_Comm quiet = MPI_COMM_NULL;  // a private duplicate of comm, never used for messages
  int members = 0;  // channels (placeholders included) of the create call
  int open = 0;     // not yet finished destroying

  /// Reads an int64 flag of this rank's window atomically.
  long long read(MPI_Aint disp) const {
    std::int64_t ignored = 0;
    std::int64_t value = 0;
    check(MPI_Fetch_and_op(&ignored, &value, MPI_INT64_T, rank, disp, MPI_NO_OP, win),
          "MPI_Fetch_and_op");
    check(MPI_Win_flush(rank, win), "MPI_Win_flush");
    // Runs the progress engine, for components that move remote operations
    // only inside MPI calls at the target; nothing is ever sent on `quiet`.
    int flag = 0;
    check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet, &flag, MPI_STATUS_IGNORE), "MPI_Iprobe");
    return static_cast<long long>(value);
  }

  /// Sets an int64 flag in `target`'s window atomically and completes it there.
  void write(int target, MPI_Aint disp, long long v) const {
    const std::int64_t value = v;
    check(MPI_Accumulate(&value, 1, MPI_INT64_T, target, disp, 1, MPI_INT64_T, MPI_REPLACE, win),
          "MPI_Accumulate");
    check(MPI_Win_flush(target, win), "MPI_Win_flush");
  }
};


class RmaChannel final : public ChannelImpl {
 public:
  RmaChannel(const as_channel_config& c, std::shared_ptr<RmaWindow> window, MPI_Aint offset)
      : w_(std::move(window)),
        peer_(c.peer),
        control_tag_(2 * c.tag + 1),
        size_(c.message_size),
        depth_(c.max_in_flight),
        racy_(c.mode == AS_MODE_RACY),
        sendbuf_(c.sendbuf),
        recvbuf_(c.recvbuf),
        my_offset_(offset) {
    if (racy_ && !null()) staging_.resize(size_ / 8);
  }

  /// Bytes of window this end needs (0 for a placeholder).
  static MPI_Aint footprint(const as_channel_config& c) {
    if (c.peer == MPI_PROC_NULL) return 0;
    return kData + round8(c.message_size) * (c.mode == AS_MODE_RACY ? 1 : c.max_in_flight);
  }

  bool null() const { return peer_ == MPI_PROC_NULL; }

  void start_create() override {
    if (null()) return;
    mine_[0] = static_cast<long long>(size_);
    mine_[1] = depth_;
    mine_[2] = racy_ ? 1 : 0;
    mine_[3] = static_cast<long long>(my_offset_);
    check(MPI_Irecv(theirs_, 4, MPI_LONG_LONG, peer_, control_tag_, w_->comm, &control_[0]),
          "MPI_Irecv");
    check(MPI_Isend(mine_, 4, MPI_LONG_LONG, peer_, control_tag_, w_->comm, &control_[1]),
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
    peer_offset_ = static_cast<MPI_Aint>(theirs_[3]);
  }

  /// Called once the window exists and is initialised on every rank.
  void open() { w_->open = w_->members; }

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
    const int n = static_cast<int>(size_);
    if (racy_) {
      check(MPI_Accumulate(sendbuf_, n / 8, MPI_UINT64_T, peer_, peer_offset_ + kData, n / 8,
                           MPI_UINT64_T, MPI_REPLACE, w_->win),
            "MPI_Accumulate");
    } else {
      const MPI_Aint slot = static_cast<MPI_Aint>(sent_ % depth_);
      check(MPI_Put(sendbuf_, n, MPI_BYTE, peer_, peer_offset_ + kData + slot * round8(size_), n,
                    MPI_BYTE, w_->win),
            "MPI_Put");
    }
    check(MPI_Win_flush(peer_, w_->win), "MPI_Win_flush");
    ++sent_;
    ++stats_.sent;
    w_->write(peer_, peer_offset_ + kArrival, sent_);
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
    check(MPI_Win_sync(w_->win), "MPI_Win_sync");
    const MPI_Aint slot = static_cast<MPI_Aint>((arrived_ - 1) % depth_);
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
    w_->write(peer_, peer_offset_ + kClosing, sent_);
  }

  bool test_destroy() override {
    if (null()) return true;
    refresh_acks();
    refresh_arrivals();
    if (arrived_ > taken_) {  // drop what arrived, freeing the peer's slots
      stats_.discarded += arrived_ - taken_;
      take(arrived_);
    }
    if (peer_total_ < 0) peer_total_ = w_->read(my_offset_ + kClosing);
    return peer_total_ >= 0 && taken_ == peer_total_ && acked_ == sent_;
  }

  void finish_destroy() override {
    // The last channel of the window to close releases it: every channel on
    // every rank has completed its closing protocol or will before entering
    // MPI_Win_free, which is collective over comm.
    if (--w_->open > 0) return;
    check(MPI_Win_unlock_all(w_->win), "MPI_Win_unlock_all");
    check(MPI_Win_free(&w_->win), "MPI_Win_free");
    check(MPI_Comm_free(&w_->quiet), "MPI_Comm_free");
  }

  as_channel_stats stats() const override { return stats_; }
  int in_flight() const override { return static_cast<int>(sent_ - acked_); }
  const void* window_group() const override { return w_.get(); }
  int window_group_size() const override { return w_->members; }

 private:
  unsigned char* slot_address(MPI_Aint slot) const {
    void* base = nullptr;
    int flag = 0;
    MPI_Win_get_attr(w_->win, MPI_WIN_BASE, &base, &flag);
    return static_cast<unsigned char*>(base) + my_offset_ + kData + slot * round8(size_);
  }

  void refresh_acks() { acked_ = w_->read(my_offset_ + kAck); }

  void refresh_arrivals() {
    arrived_ = w_->read(my_offset_ + kArrival);
    stats_.arrived = arrived_;
  }

  /// Marks messages up to `count` taken and acknowledges them to the sender.
  void take(long long count) {
    taken_ = count;
    w_->write(peer_, peer_offset_ + kAck, taken_);
  }

  /// Racy: if messages arrived, copies the landing slot element-atomically
  /// into recvbuf and acknowledges them.
  void land_racy() {
    refresh_arrivals();
    if (arrived_ == taken_) return;
    const int n = static_cast<int>(size_ / 8);
    std::uint64_t ignored = 0;
    check(MPI_Get_accumulate(&ignored, 0, MPI_UINT64_T, staging_.data(), n, MPI_UINT64_T, w_->rank,
                             my_offset_ + kData, n, MPI_UINT64_T, MPI_NO_OP, w_->win),
          "MPI_Get_accumulate");
    check(MPI_Win_flush(w_->rank, w_->win), "MPI_Win_flush");
    atomic_copy(recvbuf_, staging_.data(), size_);
    stats_.delivered += arrived_ - taken_;
    since_last_recv_ += arrived_ - taken_;
    take(arrived_);
  }

  std::shared_ptr<RmaWindow> w_;
  int peer_;
  int control_tag_;
  std::size_t size_;
  int depth_;
  bool racy_;
  void* sendbuf_;
  void* recvbuf_;
  MPI_Aint my_offset_;
  MPI_Aint peer_offset_ = 0;
  std::vector<std::uint64_t> staging_;

  long long sent_ = 0;     // messages sent
  long long acked_ = 0;    // of them, taken by the peer (last read)
  long long arrived_ = 0;  // messages the peer sent here (last read)
  long long taken_ = 0;    // of them, delivered or discarded
  long long peer_total_ = -1;
  long long since_last_recv_ = 0;

  MPI_Request control_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  long long mine_[4] = {};
  long long theirs_[4] = {};
  as_channel_stats stats_{};
};

/// Combines a local status with every other rank's: the first nonzero of
/// (local, the largest code of any rank).
int agree(MPI_Comm comm, int local) {
  int global = 0;
  check(MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  return local != AS_SUCCESS ? local : global;
}

}  // namespace

std::vector<std::unique_ptr<ChannelImpl>> create_rma_channels(
    std::span<const as_channel_config> configs, int local_status) {
  const MPI_Comm comm = configs.front().comm;
  if (const int s = agree(comm, local_status); s != AS_SUCCESS) {
    throw ChannelFailure(s, "rma channel creation: invalid arguments on some rank");
  }
  auto window = std::make_shared<RmaWindow>();
  window->comm = comm;
  window->members = static_cast<int>(configs.size());
  check(MPI_Comm_rank(comm, &window->rank), "MPI_Comm_rank");

  std::vector<std::unique_ptr<RmaChannel>> made;
  made.reserve(configs.size());
  MPI_Aint bytes = 0;
  for (const as_channel_config& c : configs) {
    made.push_back(std::make_unique<RmaChannel>(c, window, bytes));
    bytes += RmaChannel::footprint(c);
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
  // Complete every handshake, even after an error, so nothing is left posted.
  for (auto& ch : made) note([&] { ch->finish_create(); });
  if (const int s = agree(comm, status); s != AS_SUCCESS) {
    throw ChannelFailure(s, "rma channel creation failed on some rank");
  }

  check(MPI_Comm_dup(comm, &window->quiet), "MPI_Comm_dup");
  void* base = nullptr;
  check(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &base, &window->win), "MPI_Win_allocate");
  check(MPI_Win_lock_all(MPI_MODE_NOCHECK, window->win), "MPI_Win_lock_all");
  if (bytes > 0) std::memset(base, 0, static_cast<std::size_t>(bytes));
  MPI_Aint offset = 0;
  for (const as_channel_config& c : configs) {
    if (c.peer != MPI_PROC_NULL) {
      const std::int64_t closing = -1;
      std::memcpy(static_cast<unsigned char*>(base) + offset + kClosing, &closing, sizeof closing);
    }
    offset += RmaChannel::footprint(c);
  }
  // Local stores reach the public copy, and no peer accesses it before.
  check(MPI_Win_sync(window->win), "MPI_Win_sync");
  check(MPI_Barrier(comm), "MPI_Barrier");
  made.front()->open();

  std::vector<std::unique_ptr<ChannelImpl>> out;
  out.reserve(made.size());
  for (auto& ch : made) out.push_back(std::move(ch));
  return out;
}

}  // namespace asyncsolve::comm::detail
