// Semantics of asynchronous channels over MPI, between pairs of ranks (0-1,
// 2-3, ...) and around a ring. A rank without a partner (odd counts) checks
// only what needs no peer.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <thread>
#include <vector>

#include "../support/world.hpp"
#include "asyncsolve/channel.hpp"

using asyncsolve::Channel;

namespace {

struct Pair {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int peer = -1;  // -1: no partner
  bool sender = false;
};

Pair make_pair() {
  Pair p;
  MPI_Comm_dup(MPI_COMM_WORLD, &p.comm);
  int size = 0;
  MPI_Comm_rank(p.comm, &p.rank);
  MPI_Comm_size(p.comm, &size);
  const int partner = p.rank ^ 1;
  p.peer = partner < size ? partner : -1;
  p.sender = p.rank % 2 == 0;
  return p;
}

as_channel_config config(const Pair& p, std::vector<double>& out, std::vector<double>& in,
                         int depth, int mode, int tag = 0) {
  as_channel_config c;
  as_channel_config_init(&c);
  c.comm = p.comm;
  c.peer = p.peer;
  c.tag = tag;
  c.message_size = out.size() * sizeof(double);
  c.sendbuf = out.data();
  c.recvbuf = in.data();
  c.max_in_flight = depth;
  c.mode = mode;
  return c;
}

/// After a barrier, no message may be waiting on `comm` for this rank.
void expect_no_stray_message(MPI_Comm comm) {
  MPI_Barrier(comm);
  int flag = 1;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
  EXPECT_EQ(flag, 0);
}

}  // namespace

TEST(Channel, RejectsBadArguments) {
  Pair p = make_pair();
  std::vector<double> out(4), in(4);
  as_channel* ch = nullptr;
  as_channel_config c = config(p, out, in, 2, AS_MODE_ASYNC);
  c.peer = p.rank;  // not the caller
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  c = config(p, out, in, 0, AS_MODE_ASYNC);
  c.peer = 0;
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);  // depth 0
  c = config(p, out, in, 1, 7);
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  c = config(p, out, in, 1, AS_MODE_ASYNC);
  c.message_size = 0;
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  c = config(p, out, in, 1, AS_MODE_RACY);
  c.message_size = 12;  // racy needs whole 8-byte elements
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  c = config(p, out, in, 1, AS_MODE_ASYNC);
  c.tag = -1;
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  c = config(p, out, in, 1, AS_MODE_ASYNC);
  c.transport = AS_TRANSPORT_SHMEM;
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_UNSUPPORTED);
  EXPECT_EQ(ch, nullptr);
  EXPECT_EQ(as_channel_send(nullptr), AS_ERR_ARG);
  EXPECT_STRNE(as_strerror(AS_ERR_MISMATCH), as_strerror(AS_ERR_ARG));
  MPI_Comm_free(&p.comm);
}

TEST(Channel, MismatchedEndsFailOnBothSides) {
  Pair p = make_pair();
  if (p.peer >= 0) {
    std::vector<double> out(4), in(4);
    as_channel* ch = nullptr;
    as_channel_config c = config(p, out, in, p.sender ? 2 : 3, AS_MODE_ASYNC);
    EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_MISMATCH);
    EXPECT_EQ(ch, nullptr);
  }
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

// Two channels of one call to the same peer on the same tag are refused
// before any message (their messages would land in each other's buffers and
// the destroy wait for ever); with different tags they are two channels.
TEST(Channel, TwoChannelsOfOneCallMayNotShareAPeerAndTag) {
  Pair p = make_pair();
  if (p.peer >= 0) {
    std::vector<double> out_a(4), in_a(4), out_b(4), in_b(4);
    std::array<as_channel*, 2> ch{};
    std::array<as_channel_config, 2> c{config(p, out_a, in_a, 1, AS_MODE_ASYNC),
                                       config(p, out_b, in_b, 1, AS_MODE_ASYNC)};
    EXPECT_EQ(as_channels_create(2, ch.data(), c.data()), AS_ERR_ARG);
    EXPECT_EQ(ch[0], nullptr);
    EXPECT_EQ(ch[1], nullptr);
    c[1].tag = c[0].tag + 1;
    ASSERT_EQ(as_channels_create(2, ch.data(), c.data()), AS_SUCCESS);
    EXPECT_EQ(as_channels_destroy(2, ch.data()), AS_SUCCESS);
  }
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

// A channel given twice to as_channels_destroy is refused before anything is
// destroyed (it was destroyed twice: a use after free); a NULL entry too.
TEST(Channel, DestroyRefusesAChannelTwice) {
  Pair p = make_pair();
  if (p.peer >= 0) {
    std::vector<double> out(4), in(4);
    as_channel* ch = nullptr;
    as_channel_config c = config(p, out, in, 1, AS_MODE_ASYNC);
    ASSERT_EQ(as_channel_create(&ch, &c), AS_SUCCESS);
    std::array<as_channel*, 2> twice{ch, ch};
    EXPECT_EQ(as_channels_destroy(2, twice.data()), AS_ERR_STATE);
    std::array<as_channel*, 2> with_null{ch, nullptr};
    EXPECT_EQ(as_channels_destroy(2, with_null.data()), AS_ERR_STATE);
    EXPECT_EQ(as_channel_destroy(&ch), AS_SUCCESS);
    EXPECT_EQ(ch, nullptr);
  }
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

// One end cannot allocate its slots (2^31 - 1 of them, 48 GiB of vector
// headers, under an address-space limit of what it uses plus 256 MiB); the
// other can. Both fail with AS_ERR_NOMEM: the failing end still completes the
// handshake, with a refusal. (The other end used to wait in it for ever.)
TEST(Channel, OutOfMemoryAtOneEndFailsBothEnds) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator aborts on an allocation it cannot make";
#endif
  Pair p = make_pair();
  if (p.peer >= 0) {
    std::vector<double> out(4), in(4);
    as_channel* ch = nullptr;
    const int depth = p.sender ? 1 : std::numeric_limits<int>::max();
    as_channel_config c = config(p, out, in, depth, AS_MODE_ASYNC);
    rlimit old{};
    ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
    if (!p.sender) {
      std::ifstream statm("/proc/self/statm");
      unsigned long long pages = 0;
      statm >> pages;
      ASSERT_GT(pages, 0u);
      rlimit tight = old;
      tight.rlim_cur =
          pages * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE)) + (256ULL << 20);
      if (old.rlim_cur != RLIM_INFINITY) tight.rlim_cur = std::min(tight.rlim_cur, old.rlim_cur);
      ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
    }
    const int status = as_channel_create(&ch, &c);
    if (!p.sender) {
      ASSERT_EQ(setrlimit(RLIMIT_AS, &old), 0);
    }
    EXPECT_EQ(status, AS_ERR_NOMEM);
    EXPECT_EQ(ch, nullptr);
  }
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

class ChannelModes : public ::testing::TestWithParam<int> {};

TEST_P(ChannelModes, FlowControlStopsAtMaxInFlight) {
  const int mode = GetParam();
  Pair p = make_pair();
  if (p.peer >= 0) {
    constexpr int depth = 4;
    std::vector<double> out(16, 1.0), in(16, 0.0);
    Channel ch(config(p, out, in, depth, mode));
    int sent = 0;
    if (p.sender) {
      // The receiver does not call the channel until told: the sender can
      // send until `depth` messages are unacknowledged, never more.
      const bool full = spin_until([&] {
        if (!ch.can_send()) return true;
        ch.send();
        ++sent;
        return false;
      });
      EXPECT_TRUE(full);
      EXPECT_EQ(ch.in_flight(), depth);
      // Acknowledged ones were matched by the receiver's posted landing
      // buffers: R in async mode, 1 in racy mode.
      EXPECT_GE(sent, depth);
      EXPECT_LE(sent, depth + (mode == AS_MODE_ASYNC ? depth : 1));
    }
    // Tell the receiver how many to expect (on another tag of the same comm).
    if (p.sender) {
      MPI_Send(&sent, 1, MPI_INT, p.peer, 1000, p.comm);
    } else {
      MPI_Recv(&sent, 1, MPI_INT, p.peer, 1000, p.comm, MPI_STATUS_IGNORE);
    }
    if (!p.sender) {
      // Receiving frees the channel again.
      EXPECT_TRUE(spin_until([&] {
        ch.recv();
        return ch.stats().arrived == sent;
      }));
    } else {
      EXPECT_TRUE(spin_until([&] { return ch.can_send(); }));
    }
    ch.destroy();
    expect_no_stray_message(p.comm);
  } else {
    expect_no_stray_message(p.comm);
  }
  MPI_Comm_free(&p.comm);
}

TEST_P(ChannelModes, ReceiverSeesWholeNewestMessages) {
  const int mode = GetParam();
  Pair p = make_pair();
  if (p.peer >= 0) {
    constexpr int messages = 300;
    constexpr std::size_t length = 2000;
    std::vector<double> out(length, 0.0), in(length, 0.0);
    Channel ch(config(p, out, in, 8, mode));
    if (p.sender) {
      for (int stamp = 1; stamp <= messages;) {
        if (ch.can_send()) {
          std::fill(out.begin(), out.end(), static_cast<double>(stamp));
          ch.send();
          ++stamp;
        }
      }
    } else {
      double last = 0;
      long batches = 0;
      EXPECT_TRUE(spin_until([&] {
        const int n = ch.recv();
        if (n > 0) ++batches;
        if (mode == AS_MODE_ASYNC) {
          if (n > 0) {
            // One whole message from one iteration of the sender, and newer
            // than any delivered before.
            const double stamp = in[0];
            for (const double v : in) EXPECT_EQ(v, stamp);
            EXPECT_GT(stamp, last);
            last = stamp;
          }
        } else {
          // Racy: every element is a value some message carried.
          for (std::size_t i = 0; i < length; i += 97) {
            const double v = std::atomic_ref<double>(in[i]).load(std::memory_order_relaxed);
            EXPECT_GE(v, 0.0);
            EXPECT_LE(v, messages);
            EXPECT_EQ(v, std::floor(v));
          }
          last = std::atomic_ref<double>(in[length - 1]).load(std::memory_order_relaxed);
        }
        return last == messages;
      }));
      EXPECT_EQ(ch.stats().arrived, messages);
      EXPECT_GT(batches, 0);
      if (mode == AS_MODE_ASYNC) {
        const as_channel_stats s = ch.stats();
        EXPECT_EQ(s.delivered + s.discarded, s.arrived);
      }
      for (const double v : in) EXPECT_EQ(v, messages);
    }
    ch.destroy();
    expect_no_stray_message(p.comm);
  } else {
    expect_no_stray_message(p.comm);
  }
  MPI_Comm_free(&p.comm);
}

TEST_P(ChannelModes, DestroyUnderSkewLeavesNothingOutstanding) {
  const int mode = GetParam();
  Pair p = make_pair();
  for (int repeat = 0; repeat < 10; ++repeat) {
    if (p.peer < 0) break;
    std::vector<double> out(64, 1.0), in(64, 0.0);
    Channel ch(config(p, out, in, 5, mode, repeat));
    // Both ends send without reading, then one end closes at once while the
    // other keeps sending for a while and closes late.
    const int extra = p.sender == (repeat % 2 == 0) ? 0 : 200;
    for (int i = 0; i < 50 + extra; ++i) {
      if (ch.can_send()) ch.send();
    }
    if (extra > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    long long sent = ch.stats().sent;
    ch.destroy();
    EXPECT_FALSE(ch.is_open());
    long long peer_sent = 0;
    // Right after destroy, the channel's own data tag (2 * tag) is free again
    // on both ends: no idle receive of the peer may swallow this message.
    MPI_Sendrecv(&sent, 1, MPI_LONG_LONG, p.peer, 2 * repeat, &peer_sent, 1, MPI_LONG_LONG, p.peer,
                 2 * repeat, p.comm, MPI_STATUS_IGNORE);
    EXPECT_GT(peer_sent, 0);
  }
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

TEST_P(ChannelModes, TrySendAndWaitForNews) {
  const int mode = GetParam();
  Pair p = make_pair();
  constexpr int depth = 3;
  std::vector<double> out(8, 0.0), in(8, 0.0);
  int index = 0;
  EXPECT_EQ(as_channels_wait_any(0, nullptr, 0.0, &index), AS_SUCCESS);  // nothing to wait on
  EXPECT_EQ(index, -1);
  EXPECT_EQ(as_channels_wait_any(0, nullptr, -1.0, &index), AS_ERR_ARG);
  EXPECT_EQ(as_channels_wait_any(0, nullptr, 0.0, nullptr), AS_ERR_ARG);
  std::vector<Channel> chs;
  if (p.peer >= 0) chs.emplace_back(config(p, out, in, depth, mode));
  if (p.peer >= 0) {
    if (p.sender) {
      // Nothing comes back to the sender: the wait ends at its timeout.
      EXPECT_EQ(Channel::wait_any(chs, 0.01), -1);
      // try_send fills the channel, then refuses without blocking: after
      // `depth` messages, or a few more where the receiver's posted landing
      // receives acknowledge some before it takes them (see FlowControl...).
      int sent = 0;
      for (;;) {
        std::fill(out.begin(), out.end(), sent + 1.0);
        if (!chs[0].try_send()) break;
        ++sent;
        ASSERT_LE(sent, 2 * depth + 1);
      }
      EXPECT_GE(sent, depth);
      EXPECT_EQ(chs[0].stats().sent, sent);
      EXPECT_EQ(chs[0].stats().blocked_sends, 0);
      MPI_Send(&sent, 1, MPI_INT, p.peer, 1000, p.comm);
    } else {
      int sent = 0;
      MPI_Recv(&sent, 1, MPI_INT, p.peer, 1000, p.comm, MPI_STATUS_IGNORE);
      // News: wait_any says which channel, and recv() takes it.
      long long taken = 0;
      EXPECT_TRUE(spin_until([&] {
        if (Channel::wait_any(chs, 0.5) != 0) return false;
        const int n = chs[0].recv();
        EXPECT_GE(n, 1);  // a wait that ended on news has something to take
        taken += n;
        return taken == sent;
      }));
      EXPECT_EQ(taken, sent);
      EXPECT_EQ(in.front(), static_cast<double>(sent));  // the newest message is whole
      EXPECT_EQ(in.back(), static_cast<double>(sent));
      // Everything was taken: no news (racy too, where can_recv() is always true).
      EXPECT_EQ(Channel::wait_any(chs, 0.0), -1);
    }
  } else {
    EXPECT_EQ(Channel::wait_any(chs, 0.001), -1);  // no channel: only waits
  }
  Channel::destroy_many(chs);
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

INSTANTIATE_TEST_SUITE_P(Modes, ChannelModes, ::testing::Values(AS_MODE_ASYNC, AS_MODE_RACY),
                         [](const auto& param_info) {
                           return std::string(param_info.param == AS_MODE_ASYNC ? "async" : "racy");
                         });

TEST(Channel, RingOfChannelsCreatedAndDestroyedTogether) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size >= 2) {
    const int right = (rank + 1) % size;
    const int left = (rank + size - 1) % size;
    std::vector<double> to_right(10, rank), to_left(10, rank), from_left(10, -1),
        from_right(10, -1);
    // Tag 0 travels rightwards, tag 1 leftwards: with 2 ranks left == right.
    std::vector<as_channel_config> configs(2);
    for (auto& c : configs) as_channel_config_init(&c);
    configs[0].comm = configs[1].comm = comm;
    configs[0].peer = right;
    configs[0].tag = rank % 2 == 0 ? 0 : 1;
    configs[0].sendbuf = to_right.data();
    configs[0].recvbuf = from_right.data();
    configs[1].peer = left;
    configs[1].tag = rank % 2 == 0 ? 1 : 0;
    configs[1].sendbuf = to_left.data();
    configs[1].recvbuf = from_left.data();
    if (size % 2 == 1) {  // odd ring: tags by edge, (r, r+1) uses tag r
      configs[0].tag = rank;
      configs[1].tag = left;
    }
    for (auto& c : configs) {
      c.message_size = 10 * sizeof(double);
      c.max_in_flight = 3;
    }
    std::vector<Channel> channels = Channel::create_many(configs);
    for (int i = 0; i < 20; ++i) {
      for (Channel& ch : channels)
        if (ch.can_send()) ch.send();
      if (rank == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // skew
    }
    EXPECT_TRUE(spin_until([&] {
      for (Channel& ch : channels) ch.recv();
      return from_left[0] == left && from_right[0] == right;
    }));
    Channel::destroy_many(channels);
    for (const Channel& ch : channels) EXPECT_FALSE(ch.is_open());
  }
  expect_no_stray_message(comm);
  MPI_Comm_free(&comm);
}
