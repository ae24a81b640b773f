#pragma once
// Internal: the channel protocol shared by the one-sided transports (rma and
// shmem). Each end owns a landing area in a store that the peer writes
// remotely: three counts (arrival, acknowledgement, closing), then R message
// slots (async) or one (racy). Counts only grow; the peer sets them with an
// atomic write, the owner reads them atomically. Sending message k waits
// until k - acknowledged < R, writes the data (complete at the peer before
// what follows), then sets the arrival count to k + 1. A message is
// acknowledged when the receiver has taken it (delivered or discarded),
// freeing its slot. Closing: each end writes its final sent count into the
// peer's closing count, then takes (and drops) everything until it has taken
// that many and all its own messages are acknowledged; the last channel of a
// store releases it (collectively).
//
// Racy mode lands in one slot when the Store's racy_in_one_slot is true (its
// racy put writes 8-byte elements whole while the owner may read them);
// otherwise in R slots used as async uses them (a slot is rewritten only once
// taken, so a plain put never meets a read), the newest copied into recvbuf
// element by element.
//
// A Store provides: static constexpr bool racy_in_one_slot; int members, open;
// long long read(MPI_Aint) const (atomic
// read of an own count); void turn_progress() const (runs the transport's
// progress engine: called when a count read has not moved); void write(int peer,
// MPI_Aint, long long) const (atomic remote count write, complete at the
// peer); void put(int peer, MPI_Aint, const void*, std::size_t bytes, bool
// racy) const (data, complete or ordered before later writes; racy: 8-byte
// element-wise); unsigned char* local(MPI_Aint) const; void sync_local()
// const (before reading own slots); void fetch_racy(MPI_Aint, std::uint64_t*,
// std::size_t words) const (element-atomic read of an own slot); void
// release() (collective).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "channel_impl.hpp"

namespace asyncsolve::channel::detail {

constexpr MPI_Aint kArrival = 0;
constexpr MPI_Aint kAck = 8;
constexpr MPI_Aint kClosing = 16;
constexpr MPI_Aint kData = 32;

/// `bytes` rounded up to whole 8-byte words.
inline MPI_Aint round8(std::size_t bytes) { return static_cast<MPI_Aint>((bytes + 7) / 8 * 8); }

/// One end of a channel over a one-sided Store.
template <class Store>
class CountedChannel final : public ChannelImpl {
 public:
  CountedChannel(const as_channel_config& c, std::shared_ptr<Store> store, MPI_Comm comm,
                 MPI_Aint offset)
      : w_(std::move(store)),
        comm_(comm),
        peer_(c.peer),
        control_tag_(2 * c.tag + 1),
        size_(c.message_size),
        depth_(c.max_in_flight),
        racy_(c.mode == AS_MODE_RACY),
        one_slot_(racy_ && Store::racy_in_one_slot),
        sendbuf_(c.sendbuf),
        recvbuf_(c.recvbuf),
        my_offset_(offset) {
    if (racy_ && !null()) staging_.resize(size_ / 8);
  }

  /// Bytes of window this end needs (0 for a placeholder).
  static MPI_Aint footprint(const as_channel_config& c) {
    if (c.peer == MPI_PROC_NULL) return 0;
    const bool one_slot = c.mode == AS_MODE_RACY && Store::racy_in_one_slot;
    return kData + round8(c.message_size) * (one_slot ? 1 : c.max_in_flight);
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
    peer_offset_ = static_cast<MPI_Aint>(theirs_[3]);
  }

  /// Called once the store exists and is initialised on every rank.
  void open() { w_->open = w_->members; }

  // The acknowledgement count is read only when the slots look full: a flag
  // read is an MPI (or SHMEM) call, and under load every call that finds
  // nothing to progress can give the core away (mpi_yield_when_idle).
  bool can_send() override {
    if (null()) return true;
    if (sent_ - acked_ >= depth_) refresh_acks();
    return sent_ - acked_ < depth_;
  }

  bool try_send() override {
    if (null()) {
      ++stats_.sent;
      return true;
    }
    if (sent_ - acked_ >= depth_) refresh_acks();
    if (sent_ - acked_ >= depth_) return false;
    put_message();
    return true;
  }

  void send() override {
    if (null()) {
      ++stats_.sent;
      return;
    }
    progress();
    if (sent_ - acked_ >= depth_) refresh_acks();
    if (sent_ - acked_ >= depth_) {
      ++stats_.blocked_sends;
      while (sent_ - acked_ >= depth_) {
        progress();  // racy: keep taking the peer's messages meanwhile
        refresh_acks();
      }
    }
    put_message();
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
    w_->sync_local();
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

  bool poll_news() override {
    if (null()) return false;
    // A flag read (which also turns the progress engine); a racy arrival is
    // copied into recvbuf at once, as progress() does.
    progress();
    return racy_ ? since_last_recv_ > 0 : arrived_ > taken_;
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
    if (peer_total_ < 0) {
      peer_total_ = w_->read(my_offset_ + kClosing);
      if (peer_total_ < 0) stalled_read();
    }
    return peer_total_ >= 0 && taken_ == peer_total_ && acked_ == sent_;
  }

  void finish_destroy() override {
    // The last channel of the store to close releases it: every channel on
    // every rank has completed its closing protocol or will before entering
    // the release, which is collective over comm.
    if (--w_->open > 0) return;
    w_->release();
  }

  as_channel_stats stats() const override { return stats_; }
  int in_flight() const override { return static_cast<int>(sent_ - acked_); }
  const void* window_group() const override { return w_.get(); }
  int window_group_size() const override { return w_->members; }

 private:
  /// Message sent_ into its slot at the peer, then its arrival flag (a slot must be free).
  void put_message() {
    // The data, complete at the peer before its arrival flag (flush or fence).
    const MPI_Aint slot = one_slot_ ? 0 : static_cast<MPI_Aint>(sent_ % depth_);
    w_->put(peer_, peer_offset_ + kData + slot * round8(size_), sendbuf_, size_, one_slot_);
    ++sent_;
    ++stats_.sent;
    w_->write(peer_, peer_offset_ + kArrival, sent_);
  }

  unsigned char* slot_address(MPI_Aint slot) const {
    return w_->local(my_offset_ + kData + slot * round8(size_));
  }

  // A flag that has not moved since the last read may be waiting for the
  // transport's progress engine (remote operations may move only inside it):
  // every stalled_reads_per_turn-th such read turns it. Not every one: with
  // mpi_yield_when_idle each MPI call that progresses nothing gives the core
  // away, which on a loaded machine costs a time slice, and a rank that
  // reads an unchanged arrival count once per iteration would pay it every
  // iteration. A caller that spins on a flag still turns the engine within
  // a few reads.
  static constexpr int stalled_reads_per_turn = 8;

  void stalled_read() {
    if (++stalled_reads_ % stalled_reads_per_turn == 0) w_->turn_progress();
  }

  void refresh_acks() {
    const long long v = w_->read(my_offset_ + kAck);
    if (v == acked_) stalled_read();
    acked_ = v;
  }

  void refresh_arrivals() {
    const long long v = w_->read(my_offset_ + kArrival);
    if (v == arrived_) stalled_read();
    arrived_ = v;
    stats_.arrived = arrived_;
  }

  /// Marks messages up to `count` taken and acknowledges them to the sender.
  void take(long long count) {
    taken_ = count;
    w_->write(peer_, peer_offset_ + kAck, taken_);
  }

  /// Racy: if messages arrived, copies the landing slot (one slot: read
  /// element-atomically; R slots: the newest, whole, as async takes it) into
  /// recvbuf element-atomically and acknowledges them.
  void land_racy() {
    refresh_arrivals();
    if (arrived_ == taken_) return;
    if (one_slot_) {
      w_->fetch_racy(my_offset_ + kData, staging_.data(), size_ / 8);
    } else {
      w_->sync_local();
      const MPI_Aint slot = static_cast<MPI_Aint>((arrived_ - 1) % depth_);
      std::memcpy(staging_.data(), slot_address(slot), size_);
    }
    atomic_copy(recvbuf_, staging_.data(), size_);
    stats_.delivered += arrived_ - taken_;
    since_last_recv_ += arrived_ - taken_;
    take(arrived_);
  }

  std::shared_ptr<Store> w_;
  MPI_Comm comm_;
  int peer_;
  int control_tag_;
  std::size_t size_;
  int depth_;
  bool racy_;
  bool one_slot_;  // racy in one landing slot written element-atomically (else R slots)
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
  long long stalled_reads_ = 0;  // flag reads that found the flag where it was

  MPI_Request control_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  long long mine_[4] = {};
  long long theirs_[4] = {};
  as_channel_stats stats_{};
};

/// Combines a local status with every other rank's: the first nonzero of
/// (local, the largest code of any rank). Collective over comm.
inline int agree(MPI_Comm comm, int local) {
  int global = 0;
  check(MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  return local != AS_SUCCESS ? local : global;
}

/// Whether every channel of this rank's part of a collective create has its
/// other end in the peer's part, with the same tag: each rank tells every
/// other how many channels it lists to it, and the sum and the sum of
/// squares of their tags (MPI_Alltoall); what a rank lists to p must equal
/// what p lists to it. Without this, an end whose peer lists no channel back
/// (a placeholder, or a channel to a third rank) would wait for ever in the
/// handshake. AS_ERR_MISMATCH on this rank if not. Collective over comm.
inline int check_channel_graph(std::span<const as_channel_config> configs, MPI_Comm comm) {
  int size = 0;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  constexpr int kFields = 3;  // channels, sum of tags, sum of squared tags
  std::vector<std::int64_t> listed(static_cast<std::size_t>(size) * kFields, 0);
  for (const as_channel_config& c : configs) {
    if (c.peer == MPI_PROC_NULL) continue;
    std::int64_t* to_peer = &listed[static_cast<std::size_t>(c.peer) * kFields];
    to_peer[0] += 1;
    to_peer[1] += c.tag;
    to_peer[2] += static_cast<std::int64_t>(c.tag) * c.tag;
  }
  std::vector<std::int64_t> listed_back(listed.size(), 0);
  check(MPI_Alltoall(listed.data(), kFields, MPI_INT64_T, listed_back.data(), kFields, MPI_INT64_T,
                     comm),
        "MPI_Alltoall");
  return listed == listed_back ? AS_SUCCESS : AS_ERR_MISMATCH;
}

/// The first steps of a collective create over `store`, common to the
/// one-sided transports: every rank's arguments agreed, the channels made
/// with consecutive areas (their total size in `bytes`), and every handshake
/// completed (even after an error, so nothing is left posted) and agreed.
/// Throws ChannelFailure, on every rank alike, if any rank failed.
template <class Store>
std::vector<std::unique_ptr<CountedChannel<Store>>> make_and_handshake(
    std::span<const as_channel_config> configs, int local_status,
    const std::shared_ptr<Store>& store, MPI_Comm comm, MPI_Aint& bytes) {
  if (const int s = agree(comm, local_status); s != AS_SUCCESS) {
    throw ChannelFailure(s, "channel creation: invalid arguments on some rank");
  }
  if (const int s = agree(comm, check_channel_graph(configs, comm)); s != AS_SUCCESS) {
    throw ChannelFailure(s, "channel creation: a channel's other end is missing on its peer");
  }
  store->members = static_cast<int>(configs.size());
  std::vector<std::unique_ptr<CountedChannel<Store>>> made;
  made.reserve(configs.size());
  bytes = 0;
  for (const as_channel_config& c : configs) {
    made.push_back(std::make_unique<CountedChannel<Store>>(c, store, comm, bytes));
    bytes += CountedChannel<Store>::footprint(c);
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
    throw ChannelFailure(s, "channel creation failed on some rank");
  }
  return made;
}

/// Initialises this rank's freshly allocated areas at `base` (`bytes` long):
/// zero counts, and closing = -1 ("not closed yet") for every real channel.
template <class Store>
void initialise_areas(std::span<const as_channel_config> configs, unsigned char* base,
                      std::size_t bytes) {
  if (bytes > 0) std::memset(base, 0, bytes);
  MPI_Aint offset = 0;
  for (const as_channel_config& c : configs) {
    if (c.peer != MPI_PROC_NULL) {
      const std::int64_t closing = -1;
      std::memcpy(base + offset + kClosing, &closing, sizeof closing);
    }
    offset += CountedChannel<Store>::footprint(c);
  }
}

/// The last step, once every rank's store is initialised: opens the store
/// and hands the channels over.
template <class Store>
std::vector<std::unique_ptr<ChannelImpl>> open_channels(
    std::vector<std::unique_ptr<CountedChannel<Store>>> made) {
  made.front()->open();
  std::vector<std::unique_ptr<ChannelImpl>> out;
  out.reserve(made.size());
  for (auto& ch : made) out.push_back(std::move(ch));
  return out;
}

}  // namespace asyncsolve::channel::detail
