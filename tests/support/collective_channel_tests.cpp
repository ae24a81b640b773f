// Channel semantics shared by the collectively created transports (rma and
// shmem), between pairs of ranks (0-1, 2-3, ...) and around a ring. Creation
// and destruction are collective over the communicator: a rank without a
// partner (odd counts) takes part with a placeholder channel (peer
// MPI_PROC_NULL). Compiled into one test program per transport, which defines
// kTransportUnderTest.
#include "collective_channel_tests.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "asyncsolve/channel.hpp"
#include "world.hpp"

using asyncsolve::Channel;

namespace {

struct Pair {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
  int peer = -1;  // -1: no partner
  bool sender = false;
};

Pair make_pair() {
  Pair p;
  MPI_Comm_dup(MPI_COMM_WORLD, &p.comm);
  MPI_Comm_rank(p.comm, &p.rank);
  MPI_Comm_size(p.comm, &p.size);
  const int partner = p.rank ^ 1;
  p.peer = partner < p.size ? partner : -1;
  p.sender = p.rank % 2 == 0;
  return p;
}

/// The config of this rank's channel to its partner, or a placeholder
/// (peer MPI_PROC_NULL) for a rank without one.
as_channel_config config(const Pair& p, std::vector<double>& out, std::vector<double>& in,
                         int depth, int mode, int tag = 0) {
  as_channel_config c;
  as_channel_config_init(&c);
  c.transport = kTransportUnderTest;
  c.comm = p.comm;
  c.peer = p.peer >= 0 ? p.peer : MPI_PROC_NULL;
  c.tag = tag;
  c.message_size = out.size() * sizeof(double);
  c.sendbuf = out.data();
  c.recvbuf = in.data();
  c.max_in_flight = depth;
  c.mode = mode;
  return c;
}

}  // namespace

as_channel_config placeholder(MPI_Comm comm) {
  as_channel_config c;
  as_channel_config_init(&c);
  c.transport = kTransportUnderTest;
  c.comm = comm;
  c.peer = MPI_PROC_NULL;
  return c;
}

/// After a barrier, no message may be waiting on `comm` for this rank.
void expect_no_stray_message(MPI_Comm comm) {
  MPI_Barrier(comm);
  int flag = 1;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
  EXPECT_EQ(flag, 0);
}

TEST(CollectiveChannel, RejectsBadArgumentsOnEveryRank) {
  Pair p = make_pair();
  std::vector<double> out(4), in(4);
  as_channel* ch = nullptr;
  // Checks that fail on every rank: each rank gets the error, none hangs.
  as_channel_config c = config(p, out, in, 2, AS_MODE_ASYNC);
  c.peer = p.rank;  // not the caller
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  c = placeholder(p.comm);
  c.peer = p.size;  // out of range
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  c = config(p, out, in, 1, AS_MODE_RACY);
  c.peer = p.peer >= 0 ? p.peer : p.rank;
  c.message_size = 12;  // racy needs whole 8-byte elements
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  // A check that fails on one rank only fails the call on every rank.
  c = config(p, out, in, 1, AS_MODE_ASYNC);
  if (p.rank == 0) {
    c.peer = 0;
    c.max_in_flight = 0;
  }
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  // Two channels with the same peer and tag in one call.
  if (p.size > 1) {
    as_channel_config twice[2] = {config(p, out, in, 1, AS_MODE_ASYNC),
                                  config(p, out, in, 1, AS_MODE_ASYNC)};
    for (auto& t : twice) t.peer = (p.rank + 1) % p.size;
    as_channel* two[2] = {nullptr, nullptr};
    EXPECT_EQ(as_channels_create(2, two, twice), AS_ERR_ARG);
    EXPECT_EQ(two[0], nullptr);
  }
  // Local errors (no common communicator): returned at once, no collective.
  as_channel_config mixed[2] = {placeholder(p.comm), placeholder(p.comm)};
  mixed[1].transport = AS_TRANSPORT_MPI;
  as_channel* two[2] = {nullptr, nullptr};
  EXPECT_EQ(as_channels_create(2, two, mixed), AS_ERR_ARG);
  mixed[1] = placeholder(MPI_COMM_WORLD);
  EXPECT_EQ(as_channels_create(2, two, mixed), AS_ERR_ARG);
  c = placeholder(MPI_COMM_NULL);
  EXPECT_EQ(as_channel_create(&ch, &c), AS_ERR_ARG);
  EXPECT_EQ(ch, nullptr);
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

TEST(CollectiveChannel, DestroysOnlyWholeWindows) {
  Pair p = make_pair();
  std::vector<double> out(4, 1.0), in(4, 0.0);
  as_channel_config cs[2] = {config(p, out, in, 1, AS_MODE_ASYNC, 0),
                             config(p, out, in, 1, AS_MODE_ASYNC, 1)};
  as_channel* chs[2] = {nullptr, nullptr};
  ASSERT_EQ(as_channels_create(2, chs, cs), AS_SUCCESS);
  ASSERT_NE(chs[0], nullptr);
  ASSERT_NE(chs[1], nullptr);
  // Part of a window, or one channel twice: refused, nothing happens.
  EXPECT_EQ(as_channel_destroy(&chs[0]), AS_ERR_STATE);
  EXPECT_NE(chs[0], nullptr);
  as_channel* dup[2] = {chs[0], chs[0]};
  EXPECT_EQ(as_channels_destroy(2, dup), AS_ERR_STATE);
  // Still usable, then destroyed together.
  int flag = 0;
  EXPECT_EQ(as_channel_can_send(chs[1], &flag), AS_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(as_channel_send(chs[1]), AS_SUCCESS);
  EXPECT_EQ(as_channels_destroy(2, chs), AS_SUCCESS);
  EXPECT_EQ(chs[0], nullptr);
  EXPECT_EQ(chs[1], nullptr);
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

TEST(CollectiveChannel, MismatchedEndsFailOnBothSides) {
  Pair p = make_pair();
  std::vector<double> out(4), in(4);
  as_channel* ch = nullptr;
  as_channel_config c = config(p, out, in, p.sender ? 2 : 3, AS_MODE_ASYNC);
  // The ends see the mismatch; every other rank fails too (collective call).
  // Alone, a rank has only its placeholder, which cannot mismatch.
  EXPECT_EQ(as_channel_create(&ch, &c), p.size > 1 ? AS_ERR_MISMATCH : AS_SUCCESS);
  EXPECT_EQ(ch == nullptr, p.size > 1);
  if (ch != nullptr) {
    EXPECT_EQ(as_channel_destroy(&ch), AS_SUCCESS);
  }
  c = config(p, out, in, 2, p.sender ? AS_MODE_ASYNC : AS_MODE_RACY);
  if (p.size == 1) c.mode = AS_MODE_RACY;
  EXPECT_EQ(as_channel_create(&ch, &c), p.size > 1 ? AS_ERR_MISMATCH : AS_SUCCESS);
  if (ch != nullptr) {
    EXPECT_EQ(as_channel_destroy(&ch), AS_SUCCESS);
  }
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

TEST(CollectiveChannel, AnEndWithoutItsPeersEndFailsOnBothSides) {
  Pair p = make_pair();
  std::vector<double> out(4), in(4);
  as_channel* ch = nullptr;
  // The receiver passes a placeholder where the sender lists a channel to it:
  // the sender's handshake would have no partner.
  as_channel_config c = config(p, out, in, 2, AS_MODE_ASYNC);
  if (!p.sender) c = placeholder(p.comm);
  const bool paired = p.size > 1;
  EXPECT_EQ(as_channel_create(&ch, &c), paired ? AS_ERR_MISMATCH : AS_SUCCESS);
  if (ch != nullptr) {
    EXPECT_EQ(as_channel_destroy(&ch), AS_SUCCESS);
  }
  // Both ends list a channel, with different tags.
  c = config(p, out, in, 2, AS_MODE_ASYNC, p.sender ? 3 : 4);
  EXPECT_EQ(as_channel_create(&ch, &c), paired ? AS_ERR_MISMATCH : AS_SUCCESS);
  EXPECT_EQ(ch == nullptr, paired);
  if (ch != nullptr) {
    EXPECT_EQ(as_channel_destroy(&ch), AS_SUCCESS);
  }
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

class CollectiveChannelModes : public ::testing::TestWithParam<int> {};

TEST_P(CollectiveChannelModes, FlowControlStopsAtMaxInFlight) {
  const int mode = GetParam();
  Pair p = make_pair();
  constexpr int depth = 4;
  std::vector<double> out(16, 1.0), in(16, 0.0);
  Channel ch(config(p, out, in, depth, mode));
  if (p.peer >= 0) {
    int sent = 0;
    if (p.sender) {
      // The receiver does not call the channel until told: a message is
      // acknowledged only when taken, so exactly `depth` go out.
      const bool full = spin_until([&] {
        if (!ch.can_send()) return true;
        ch.send();
        ++sent;
        return false;
      });
      EXPECT_TRUE(full);
      EXPECT_EQ(sent, depth);
      EXPECT_EQ(ch.in_flight(), depth);
      EXPECT_FALSE(ch.can_send());
      MPI_Send(&sent, 1, MPI_INT, p.peer, 1000, p.comm);
      // Taking frees the channel again.
      EXPECT_TRUE(spin_until([&] { return ch.can_send(); }));
      EXPECT_EQ(ch.in_flight(), 0);
    } else {
      MPI_Recv(&sent, 1, MPI_INT, p.peer, 1000, p.comm, MPI_STATUS_IGNORE);
      EXPECT_TRUE(ch.can_recv());
      EXPECT_EQ(ch.recv(), sent);
      EXPECT_EQ(ch.stats().arrived, sent);
      EXPECT_EQ(ch.recv(), 0);
      if (mode == AS_MODE_ASYNC) {
        EXPECT_FALSE(ch.can_recv());
        EXPECT_EQ(ch.stats().delivered, 1);
        EXPECT_EQ(ch.stats().discarded, depth - 1);
      }
      for (const double v : in) EXPECT_EQ(v, 1.0);
    }
  } else {
    EXPECT_TRUE(ch.can_send());
    ch.send();  // a placeholder sends nowhere
    EXPECT_EQ(ch.recv(), 0);
    EXPECT_EQ(ch.in_flight(), 0);
  }
  ch.destroy();
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

TEST_P(CollectiveChannelModes, ReceiverSeesWholeNewestMessages) {
  const int mode = GetParam();
  Pair p = make_pair();
  constexpr int messages = 300;
  constexpr std::size_t length = 2000;
  std::vector<double> out(length, 0.0), in(length, 0.0);
  Channel ch(config(p, out, in, 8, mode));
  if (p.peer >= 0 && p.sender) {
    for (int stamp = 1; stamp <= messages; ++stamp) {
      std::fill(out.begin(), out.end(), static_cast<double>(stamp));
      if (stamp % 2 == 0) {
        ch.send();  // blocks while full
      } else {
        EXPECT_TRUE(spin_until([&] { return ch.can_send(); }));
        ch.send();
      }
    }
    EXPECT_EQ(ch.stats().sent, messages);
  } else if (p.peer >= 0) {
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
          EXPECT_TRUE(std::all_of(in.begin(), in.end(), [&](double v) { return v == stamp; }));
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
      // Racy: the data of the last message may land (element-wise) before
      // its arrival flag is seen; wait for both.
      return last == messages && ch.stats().arrived == messages;
    }));
    const as_channel_stats s = ch.stats();
    EXPECT_EQ(s.arrived, messages);
    EXPECT_GT(batches, 0);
    EXPECT_EQ(s.delivered + s.discarded, s.arrived);
    for (const double v : in) EXPECT_EQ(v, messages);
  }
  ch.destroy();
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

TEST_P(CollectiveChannelModes, DestroyUnderSkewLeavesNothingOutstanding) {
  const int mode = GetParam();
  Pair p = make_pair();
  for (int repeat = 0; repeat < 10; ++repeat) {
    std::vector<double> out(64, 1.0), in(64, 0.0);
    Channel ch(config(p, out, in, 5, mode, repeat));
    if (p.peer < 0) {
      ch.destroy();
      continue;
    }
    // Both ends send without reading, then one end closes at once while the
    // other keeps sending (and, as the closing end drains, gets through) and
    // closes late.
    const bool late = p.sender != (repeat % 2 == 0);
    for (int i = 0; i < 50; ++i) {
      if (ch.can_send()) ch.send();
    }
    if (late) {
      // Blocking sends: they complete only because the closing end keeps
      // taking messages until this end closes too.
      for (int i = 0; i < 20; ++i) ch.send();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const long long sent = ch.stats().sent;
    ch.destroy();
    EXPECT_FALSE(ch.is_open());
    long long peer_sent = 0;
    MPI_Sendrecv(&sent, 1, MPI_LONG_LONG, p.peer, 99, &peer_sent, 1, MPI_LONG_LONG, p.peer, 99,
                 p.comm, MPI_STATUS_IGNORE);
    EXPECT_GE(peer_sent, 5);
    if (late) {
      EXPECT_GE(sent, 25);
    }
  }
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

TEST_P(CollectiveChannelModes, TrySendAndWaitForNews) {
  const int mode = GetParam();
  Pair p = make_pair();
  constexpr int depth = 3;
  std::vector<double> out(8, 0.0), in(8, 0.0);
  int index = 0;
  EXPECT_EQ(as_channels_wait_any(0, nullptr, 0.0, &index), AS_SUCCESS);  // nothing to wait on
  EXPECT_EQ(index, -1);
  EXPECT_EQ(as_channels_wait_any(0, nullptr, -1.0, &index), AS_ERR_ARG);
  EXPECT_EQ(as_channels_wait_any(0, nullptr, 0.0, nullptr), AS_ERR_ARG);
  std::vector<as_channel_config> configs{config(p, out, in, depth, mode)};
  std::vector<Channel> chs = Channel::create_many(configs);
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
    EXPECT_EQ(Channel::wait_any(chs, 0.001), -1);  // a placeholder gets no news
    EXPECT_TRUE(chs[0].try_send());                // and sends nowhere
  }
  Channel::destroy_many(chs);
  expect_no_stray_message(p.comm);
  MPI_Comm_free(&p.comm);
}

INSTANTIATE_TEST_SUITE_P(Modes, CollectiveChannelModes,
                         ::testing::Values(AS_MODE_ASYNC, AS_MODE_RACY),
                         [](const auto& param_info) {
                           return std::string(param_info.param == AS_MODE_ASYNC ? "async" : "racy");
                         });

// Messages of 45 and 54 doubles, alternating along the ring, in lockstep as
// the synchronous halo exchange uses them: a rank's landing areas then hold
// an odd number of 8-byte words, so that (unpadded) windows laid end to end
// would start every other rank 8 bytes past a 16-byte boundary. MPICH 4.0
// put the data 8 bytes early there (a 2x2 halo over rma hung); every element
// of every message must arrive where it was sent.
TEST(CollectiveChannel, RingOfUnevenMessagesDeliversEveryElement) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size >= 2) {
    const int right = (rank + 1) % size;
    const int left = (rank + size - 1) % size;
    // Edge k joins ranks k and k+1 (mod size); its messages hold 45 or 54 doubles.
    auto edge_length = [](int k) { return std::size_t{k % 2 == 0 ? 45U : 54U}; };
    const std::size_t n_right = edge_length(rank);
    const std::size_t n_left = edge_length(left);
    std::vector<double> to_right(n_right), from_right(n_right), to_left(n_left), from_left(n_left);
    std::vector<as_channel_config> configs(2);
    for (auto& c : configs) {
      as_channel_config_init(&c);
      c.transport = kTransportUnderTest;
      c.comm = comm;
    }
    configs[0].peer = right;
    configs[0].message_size = n_right * sizeof(double);
    configs[0].sendbuf = to_right.data();
    configs[0].recvbuf = from_right.data();
    configs[1].peer = left;
    configs[1].message_size = n_left * sizeof(double);
    configs[1].sendbuf = to_left.data();
    configs[1].recvbuf = from_left.data();
    if (size == 2) {  // both edges join the same pair: tag 1 for edge 1
      configs[0].tag = rank == 0 ? 0 : 1;
      configs[1].tag = rank == 0 ? 1 : 0;
    }
    std::vector<Channel> channels = Channel::create_many(configs);
    auto stamp = [](int sender, int round, std::size_t j) {
      return static_cast<double>(sender * 100000 + round * 100) + static_cast<double>(j % 100);
    };
    bool arrived = true;
    for (int round = 0; round < 10 && arrived; ++round) {
      for (std::size_t j = 0; j < n_right; ++j) to_right[j] = stamp(rank, round, j);
      for (std::size_t j = 0; j < n_left; ++j) to_left[j] = stamp(rank, round, j);
      for (Channel& ch : channels) ch.send();  // waits until the previous one was taken
      bool got[2] = {false, false};
      arrived = spin_until([&] {
        for (int i = 0; i < 2; ++i)
          got[i] = got[i] || channels[static_cast<std::size_t>(i)].recv() > 0;
        return got[0] && got[1];
      });
      EXPECT_TRUE(arrived) << "round " << round;
      for (std::size_t j = 0; j < n_right && arrived; ++j)
        EXPECT_EQ(from_right[j], stamp(right, round, j)) << "round " << round << " element " << j;
      for (std::size_t j = 0; j < n_left && arrived; ++j)
        EXPECT_EQ(from_left[j], stamp(left, round, j)) << "round " << round << " element " << j;
    }
    Channel::destroy_many(channels);
  } else {
    Channel ch(placeholder(comm));
    ch.destroy();
  }
  expect_no_stray_message(comm);
  MPI_Comm_free(&comm);
}

TEST(CollectiveChannel, RingOfChannelsCreatedAndDestroyedTogether) {
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
    std::vector<as_channel_config> configs(2);
    for (auto& c : configs) {
      as_channel_config_init(&c);
      c.transport = kTransportUnderTest;
      c.comm = comm;
      c.message_size = 10 * sizeof(double);
      c.max_in_flight = 3;
    }
    configs[0].peer = right;
    configs[0].sendbuf = to_right.data();
    configs[0].recvbuf = from_right.data();
    configs[1].peer = left;
    configs[1].sendbuf = to_left.data();
    configs[1].recvbuf = from_left.data();
    // Every edge (r, r+1) uses tag 0, except that with 2 ranks both channels
    // join the same pair: there the second edge uses tag 1.
    if (size == 2) {
      configs[0].tag = rank == 0 ? 0 : 1;
      configs[1].tag = rank == 0 ? 1 : 0;
    }
    std::vector<Channel> channels = Channel::create_many(configs);
    for (int i = 0; i < 20; ++i) {
      for (double& v : to_right) v = rank * 1000 + i;
      for (double& v : to_left) v = rank * 1000 + i;
      for (Channel& ch : channels)
        if (ch.can_send()) ch.send();
      for (Channel& ch : channels) ch.recv();
      if (rank == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // skew
    }
    // The last message gets through once the channels have room.
    for (Channel& ch : channels) {
      EXPECT_TRUE(spin_until([&] {
        for (Channel& c : channels) c.recv();
        return ch.can_send();
      }));
      ch.send();
    }
    EXPECT_TRUE(spin_until([&] {
      for (Channel& ch : channels) ch.recv();
      return from_left[0] == left * 1000 + 19 && from_right[0] == right * 1000 + 19;
    }));
    Channel::destroy_many(channels);
    for (const Channel& ch : channels) EXPECT_FALSE(ch.is_open());
  } else {
    // Alone: the collective create and destroy with no channel at all.
    Channel ch(placeholder(comm));
    EXPECT_TRUE(ch.is_open());
    ch.destroy();
  }
  expect_no_stray_message(comm);
  MPI_Comm_free(&comm);
}
