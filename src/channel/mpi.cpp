// The MPI two-sided transport of asynchronous channels (paper 000 §3.1).
//
// Sending: R slots, each a private copy of the message and an MPI_Issend
// request (synchronous mode, as in the paper: a send completes when the
// receiving end has matched it, which is the channel's acknowledgement). A
// send takes a free slot; can_send() is true while a slot is free.
//
// Receiving, async mode: R landing buffers, each with a posted MPI_Irecv.
// MPI matches messages from one sender on one tag in the order the receives
// were posted, so the buffers complete in posting order; recv() takes every
// completed buffer from the oldest on, copies the newest into the user's
// buffer, and reposts them all. A landing buffer is never read while its
// receive is pending, and no two active receives share a buffer.
//
// Receiving, racy mode: the paper let all in-flight messages land in the one
// buffer the application reads, which MPI forbids (two active receives into
// one buffer; reading a buffer whose receive is pending). The legal
// equivalent used here: one landing buffer with one posted receive; whenever
// the channel is progressed (any call on it) each completed message is copied
// into the user's buffer element by element with relaxed 8-byte atomic
// stores, and the receive is reposted. The application thus sees the newest
// data as soon as the channel is progressed, with 8-byte atomicity, and pays
// for one landing buffer, not R.
//
// Closing (both ends, any order, any skew): each end sends the peer, on the
// control tag, the number of data messages it sent, and keeps completing its
// own sends and receiving (and dropping) data until it has received exactly
// that many from the peer and all its own sends have completed. Every send is
// then matched, so the receives still posted can only be idle: they are
// cancelled (Open MPI cancels receives; it cannot cancel sends, which is why
// sends are completed, never cancelled). Finally each end tells the other it
// has cancelled them, and waits for the same word: when destroy returns,
// neither end has anything posted on the channel's tags, so the application
// may reuse them at once. Nothing is left outstanding.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "channel_impl.hpp"

namespace asyncsolve::channel::detail {
namespace {

/// The first word of a handshake that refuses the channel (a size is never
/// negative); the second is the status its end failed with.
constexpr long long refused_create = -1;

/// The tag of a channel's handshake and closing messages (its data go on 2 tag).
constexpr int control_tag_of(int tag) noexcept { return 2 * tag + 1; }

class MpiChannel final : public ChannelImpl {
 public:
  explicit MpiChannel(const as_channel_config& c)
      : comm_(c.comm),
        peer_(c.peer),
        data_tag_(2 * c.tag),
        control_tag_(control_tag_of(c.tag)),
        size_(c.message_size),
        depth_(c.max_in_flight),
        racy_(c.mode == AS_MODE_RACY),
        sendbuf_(c.sendbuf),
        recvbuf_(c.recvbuf),
        send_slots_(static_cast<std::size_t>(depth_), std::vector<unsigned char>(size_)),
        send_requests_(static_cast<std::size_t>(depth_), MPI_REQUEST_NULL),
        landing_(static_cast<std::size_t>(racy_ ? 1 : depth_), std::vector<unsigned char>(size_)),
        recv_requests_(landing_.size(), MPI_REQUEST_NULL) {}

  ~MpiChannel() override {
    // The C API destroys channels through the closing protocol, after which
    // no request is active. A channel dropped on an error path cancels its
    // idle receives; sends cannot be cancelled in Open MPI 4.1, so such a
    // process should abort rather than continue communicating.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) return;
    for (MPI_Request& r : recv_requests_) {
      if (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      }
    }
  }

  void start_create() override {
    mine_[0] = static_cast<long long>(size_);
    mine_[1] = depth_;
    mine_[2] = racy_ ? 1 : 0;
    check(MPI_Irecv(theirs_, 3, MPI_LONG_LONG, peer_, control_tag_, comm_, &control_[0]),
          "MPI_Irecv");
    check(MPI_Isend(mine_, 3, MPI_LONG_LONG, peer_, control_tag_, comm_, &control_[1]),
          "MPI_Isend");
  }

  void finish_create() override {
    check(MPI_Waitall(2, control_, MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (theirs_[0] == refused_create) {
      const bool known = theirs_[1] > AS_SUCCESS && theirs_[1] <= AS_ERR_UNSUPPORTED;
      throw ChannelFailure(known ? static_cast<int>(theirs_[1]) : AS_ERR_TRANSPORT,
                           "the other end could not make its end of the channel");
    }
    if (!std::equal(mine_, mine_ + 3, theirs_)) {
      throw ChannelFailure(AS_ERR_MISMATCH,
                           "the two ends of the channel differ in message size, depth or mode");
    }
    for (std::size_t i = 0; i < landing_.size(); ++i) post_receive(i);
  }

  bool can_send() override {
    progress_sends();
    return in_flight_ < depth_;
  }

  bool try_send() override {
    // Sends are tested only when the slots are all taken: every MPI call
    // that progresses nothing can give the core away (mpi_yield_when_idle),
    // which on a loaded machine costs a time slice.
    if (in_flight_ == depth_) progress_sends();
    if (in_flight_ == depth_) return false;
    post_send();
    return true;
  }

  void send() override {
    progress_sends();
    if (in_flight_ == depth_) {
      // Full: wait for the oldest send (they are acknowledged in order).
      ++stats_.blocked_sends;
      check(MPI_Wait(&send_requests_[oldest_send()], MPI_STATUS_IGNORE), "MPI_Wait");
      --in_flight_;
    }
    post_send();
    progress_receives();
  }

  bool can_recv() override {
    if (racy_) {
      progress_receives();
      return true;
    }
    progress_receives();
    return completed_ > 0;
  }

  int recv() override {
    ++stats_.recv_calls;
    progress_receives();
    if (racy_) {
      const int n = static_cast<int>(since_last_recv_);
      since_last_recv_ = 0;
      return n;
    }
    if (completed_ == 0) return 0;
    // The completed buffers are the `completed_` oldest posted ones; the last
    // of them holds the newest message.
    const std::size_t n = landing_.size();
    const std::size_t newest = (next_recv_ + completed_ - 1) % n;
    std::memcpy(recvbuf_, landing_[newest].data(), size_);
    ++stats_.delivered;
    stats_.discarded += static_cast<long long>(completed_) - 1;
    const int batch = static_cast<int>(completed_);
    for (std::size_t k = 0; k < completed_; ++k) post_receive((next_recv_ + k) % n);
    next_recv_ = (next_recv_ + completed_) % n;
    completed_ = 0;
    return batch;
  }

  void progress() override {
    progress_sends();
    progress_receives();
  }

  bool poll_news() override {
    // MPI matches in posting order: testing the oldest pending receive (what
    // progress_receives does) is MPI_Testany over this channel's receives.
    progress();
    return racy_ ? since_last_recv_ > 0 : completed_ > 0;
  }

  void start_destroy() override {
    sent_total_ = stats_.sent;
    check(MPI_Irecv(&peer_total_, 1, MPI_LONG_LONG, peer_, control_tag_, comm_, &control_[0]),
          "MPI_Irecv");
    check(MPI_Isend(&sent_total_, 1, MPI_LONG_LONG, peer_, control_tag_, comm_, &control_[1]),
          "MPI_Isend");
  }

  bool test_destroy() override {
    progress_sends();
    drain_receives();
    int control_done = 0;
    check(MPI_Testall(2, control_, &control_done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (control_done != 0) control_finished_ = true;
    return control_finished_ && in_flight_ == 0 && stats_.arrived == peer_total_;
  }

  void announce_closed() override {
    // Every message the peer sent has arrived; the posted receives are idle.
    for (MPI_Request& r : recv_requests_) {
      if (r == MPI_REQUEST_NULL) continue;
      check(MPI_Cancel(&r), "MPI_Cancel");
      MPI_Status status;
      check(MPI_Wait(&r, &status), "MPI_Wait");
      int cancelled = 0;
      MPI_Test_cancelled(&status, &cancelled);
      if (cancelled == 0) {
        throw ChannelFailure(AS_ERR_TRANSPORT, "a message arrived after the channel was closed");
      }
    }
    check(MPI_Irecv(&peer_closed_, 1, MPI_INT, peer_, control_tag_, comm_, &control_[0]),
          "MPI_Irecv");
    check(MPI_Isend(&closed_, 1, MPI_INT, peer_, control_tag_, comm_, &control_[1]), "MPI_Isend");
  }

  void wait_closed() override {
    // The peer has cancelled its receives too: a message the application
    // sends on these tags after destroy returns cannot be swallowed.
    check(MPI_Waitall(2, control_, MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

  void finish_destroy() override {}

  as_channel_stats stats() const override { return stats_; }
  int in_flight() const override { return in_flight_; }

 private:
  void post_receive(std::size_t i) {
    check(MPI_Irecv(landing_[i].data(), static_cast<int>(size_), MPI_BYTE, peer_, data_tag_, comm_,
                    &recv_requests_[i]),
          "MPI_Irecv");
  }

  /// Copies sendbuf into the next slot and starts its synchronous send
  /// (a slot must be free).
  void post_send() {
    const std::size_t slot = next_send_;
    next_send_ = (next_send_ + 1) % send_slots_.size();
    std::memcpy(send_slots_[slot].data(), sendbuf_, size_);
    check(MPI_Issend(send_slots_[slot].data(), static_cast<int>(size_), MPI_BYTE, peer_, data_tag_,
                     comm_, &send_requests_[slot]),
          "MPI_Issend");
    ++in_flight_;
    ++stats_.sent;
  }

  std::size_t oldest_send() const {
    return (next_send_ + send_slots_.size() - static_cast<std::size_t>(in_flight_)) %
           send_slots_.size();
  }

  /// Completes acknowledged sends, oldest first (they complete in order).
  void progress_sends() {
    while (in_flight_ > 0) {
      int done = 0;
      check(MPI_Test(&send_requests_[oldest_send()], &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done == 0) return;
      --in_flight_;
    }
  }

  /// Notes receives that completed, oldest first. Async: they wait for
  /// recv(). Racy: each is copied into the user's buffer and reposted.
  void progress_receives() {
    const std::size_t n = landing_.size();
    if (racy_) {
      for (;;) {
        int done = 0;
        check(MPI_Test(&recv_requests_[0], &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (done == 0) return;
        ++stats_.arrived;
        ++since_last_recv_;
        atomic_copy(recvbuf_, landing_[0].data(), size_);
        ++stats_.delivered;
        post_receive(0);
      }
    }
    while (completed_ < n) {
      int done = 0;
      check(MPI_Test(&recv_requests_[(next_recv_ + completed_) % n], &done, MPI_STATUS_IGNORE),
            "MPI_Test");
      if (done == 0) return;
      ++completed_;
      ++stats_.arrived;
    }
  }

  /// While closing: take every arrived message, drop it, repost.
  void drain_receives() {
    if (racy_) {
      progress_receives();
      return;
    }
    progress_receives();
    const std::size_t n = landing_.size();
    stats_.discarded += static_cast<long long>(completed_);
    for (std::size_t k = 0; k < completed_; ++k) post_receive((next_recv_ + k) % n);
    next_recv_ = (next_recv_ + completed_) % n;
    completed_ = 0;
  }

  MPI_Comm comm_;
  int peer_;
  int data_tag_;
  int control_tag_;
  std::size_t size_;
  int depth_;
  bool racy_;
  void* sendbuf_;
  void* recvbuf_;

  std::vector<std::vector<unsigned char>> send_slots_;
  std::vector<MPI_Request> send_requests_;
  std::size_t next_send_ = 0;
  int in_flight_ = 0;

  std::vector<std::vector<unsigned char>> landing_;
  std::vector<MPI_Request> recv_requests_;
  std::size_t next_recv_ = 0;      // oldest posted receive (async)
  std::size_t completed_ = 0;      // completed receives from next_recv_ on, not yet taken (async)
  long long since_last_recv_ = 0;  // racy: arrivals since the last recv()

  MPI_Request control_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  long long mine_[3] = {};
  long long theirs_[3] = {};
  long long sent_total_ = 0;
  long long peer_total_ = -1;
  bool control_finished_ = false;
  int closed_ = 1;
  int peer_closed_ = 0;
  as_channel_stats stats_{};
};

}  // namespace

std::unique_ptr<ChannelImpl> make_mpi_channel(const as_channel_config& config) {
  return std::make_unique<MpiChannel>(config);
}

void refuse_mpi_create(const as_channel_config& config, int status) {
  const long long mine[3] = {refused_create, status, 0};
  long long theirs[3] = {};
  const int control_tag = control_tag_of(config.tag);
  check(MPI_Sendrecv(mine, 3, MPI_LONG_LONG, config.peer, control_tag, theirs, 3, MPI_LONG_LONG,
                     config.peer, control_tag, config.comm, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}

}  // namespace asyncsolve::channel::detail
