// The shared-memory allreduce (`shm`, `twolevel:shm+ALG`) under stress. The
// sanitizers cannot see memory other processes write, so these tests stand in
// for them (the ordering argument is in src/collectives/shm_slots.hpp):
//   - 10^5 operations back to back with 1, 2, 3 and 4 of them in flight on as
//     many objects, every result checked: integer elements exactly, fractional
//     ones bit for bit against a serial replay of the documented order
//     (v_0 + v_1 + ... + v_{P-1}, left to right), which makes them
//     bit-identical across ranks too;
//   - a straggler (one rank busy-waiting and sleeping at random points of
//     the cycle while the others run ahead as far as the protocol lets them)
//     never makes a rank read a stale or torn value: every operation carries
//     values unique to it, so a stale slot gives a wrong sum, and a torn read
//     is caught by the slots' own check (std::logic_error);
//   - the two-level variant with nodes made of colours (so that its leaders'
//     level runs on one machine), under the same checks;
//   - `shm` where the ranks are split into nodes is bad input on every rank.
// Correctness never depends on timing: the delays change only who waits.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../support/world.hpp"
#include "algorithms.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/simulation.hpp"

using namespace asyncsolve;
using collectives::NonblockingAllreduce;
using collectives::ReduceOp;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

/// Rank r's element j of operation `op`: even j an integer (exact in any
/// order), odd j a fraction whose sum depends on the order of additions.
/// Both change with every operation, so a value left from an earlier one
/// shows. Not inlined: the replay below must add the rounded values, as the
/// reduction does, not let the compiler fuse a product of this function into
/// its additions (-ffp-contract).
[[gnu::noinline]] double contribution(int rank, std::uint64_t op, std::size_t j) {
  const auto k = static_cast<double>(op % 100003);
  const auto jj = static_cast<double>(j);
  if (j % 2 == 0) return (rank + 1) * 1000.0 + k * (jj + 1.0) - 7.0 * rank * jj;
  return 1.0 / (rank + 3.0 + jj) + 1e-6 * k * (rank + 1);
}

/// The documented order, replayed serially: ((v_0 + v_1) + v_2) + ...
double expected_sum(int ranks, std::uint64_t op, std::size_t j) {
  double s = contribution(0, op, j);
  for (int r = 1; r < ranks; ++r) s += contribution(r, op, j);
  return s;
}

/// The number of elements of `result` (operation `op`) that differ, in bits,
/// from the replay.
int wrong_elements(const std::vector<double>& result, int ranks, std::uint64_t op) {
  int wrong = 0;
  for (std::size_t j = 0; j < result.size(); ++j) {
    const double e = expected_sum(ranks, op, j);
    if (std::memcmp(&result[j], &e, sizeof(double)) != 0) ++wrong;
  }
  return wrong;
}

/// True on every rank iff `h` is the same on every rank.
bool same_on_every_rank(std::uint64_t h) {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/// Mixes the bits of `result` into `h` (FNV-1a over the bytes).
std::uint64_t mix(std::uint64_t h, const std::vector<double>& result) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(result.data());
  for (std::size_t i = 0; i < result.size() * sizeof(double); ++i) {
    h ^= bytes[i];
    h *= 1099511628211ULL;
  }
  return h;
}

void busy_us(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

/// Delays injected into one rank's cycle; none on the others.
struct Straggler {
  int rank = -1;  ///< the slowed rank (-1: nobody)
  std::mt19937 random{12345};
  /// At a point of the cycle: on the slowed rank, now and then, spin for up
  /// to 200 us (holding its core) or sleep for up to 1 ms (giving it away).
  void maybe_delay() {
    if (world_rank() != rank) return;
    const unsigned draw = random() % 64;
    if (draw < 4) {
      busy_us(static_cast<int>(random() % 200));
    } else if (draw == 4) {
      std::this_thread::sleep_for(std::chrono::microseconds(random() % 1000));
    }
  }
};

/// `operations` operations back to back over `in_flight` objects (object
/// i % in_flight carries operation i), so that `in_flight` of them are
/// active at once on every rank; each is completed by wait() or by polling
/// test(). Every result is checked on every rank; returns the number of
/// wrong results and adds their bits into `hash`.
int run_in_flight(const std::string& name, int in_flight, std::uint64_t operations,
                  Straggler& straggler, std::uint64_t& hash, int node_color = -1) {
  const int ranks = world_size();
  std::vector<std::unique_ptr<NonblockingAllreduce>> objects;
  std::vector<std::vector<double>> values;
  std::vector<std::vector<double>> results;
  for (int o = 0; o < in_flight; ++o) {
    // Sizes 1, 8, 3, 17: one cache line with the word, and several.
    const std::size_t size = std::vector<std::size_t>{1, 8, 3, 17}[static_cast<std::size_t>(o)];
    objects.push_back(node_color < 0 ? collectives::make_nonblocking_allreduce(name, world(), size)
                                     : collectives::make_two_level_allreduce(
                                           world(), size, name, ReduceOp::sum, node_color));
    values.emplace_back(size);
    results.emplace_back(size);
  }
  int wrong = 0;
  std::uint64_t first_bad = 0;
  const auto complete = [&](std::uint64_t op) {
    const auto o = static_cast<std::size_t>(op % static_cast<std::uint64_t>(in_flight));
    straggler.maybe_delay();
    if (op % 3 == 0) {
      objects[o]->wait(results[o]);
    } else {
      while (!objects[o]->test(results[o])) std::this_thread::yield();
    }
    if (wrong_elements(results[o], ranks, op) != 0 && wrong++ == 0) first_bad = op;
    hash = mix(hash, results[o]);
  };
  for (std::uint64_t op = 0; op < operations; ++op) {
    const auto o = static_cast<std::size_t>(op % static_cast<std::uint64_t>(in_flight));
    if (op >= static_cast<std::uint64_t>(in_flight)) complete(op - in_flight);
    for (std::size_t j = 0; j < values[o].size(); ++j)
      values[o][j] = contribution(world_rank(), op, j);
    straggler.maybe_delay();
    objects[o]->start(values[o]);
  }
  const std::uint64_t tail =
      operations < static_cast<std::uint64_t>(in_flight) ? 0 : operations - in_flight;
  for (std::uint64_t op = tail; op < operations; ++op) complete(op);
  for (auto& object : objects) {
    EXPECT_FALSE(object->active());
    EXPECT_EQ(object->outstanding_requests(), 0);
    object->free();
  }
  EXPECT_EQ(wrong, 0) << name << ", " << in_flight << " in flight: first wrong result at operation "
                      << first_bad;
  return wrong;
}

bool simulated() { return par::is_simulated(); }

// 10^5 operations in all: 25,000 each with 1, 2, 3 and 4 in flight.
TEST(ShmAllreduce, HundredThousandOperationsOneToFourInFlight) {
  if (simulated()) GTEST_SKIP() << "no shared memory in the simulation build";
  Straggler nobody;
  std::uint64_t hash = 14695981039346656037ULL;
  for (int in_flight = 1; in_flight <= 4; ++in_flight)
    run_in_flight("shm", in_flight, 25000, nobody, hash);
  EXPECT_TRUE(same_on_every_rank(hash));
}

// The last rank is slowed at random points; the others run ahead as far as
// the protocol lets them (one operation past the straggler's).
TEST(ShmAllreduce, StragglerNeverCausesAStaleOrTornRead) {
  if (simulated()) GTEST_SKIP() << "no shared memory in the simulation build";
  Straggler straggler;
  straggler.rank = world_size() - 1;
  std::uint64_t hash = 14695981039346656037ULL;
  for (int in_flight = 1; in_flight <= 4; ++in_flight)
    run_in_flight("shm", in_flight, 3000, straggler, hash);
  EXPECT_TRUE(same_on_every_rank(hash));
}

// Two levels with nodes by colour: three ranks a node, or the even and odd
// ranks; the leaders reduce over each message-passing algorithm. The order is
// then the leaders' algorithm's, so the check is exactness on the integer
// elements and the same bits on every rank.
TEST(ShmAllreduce, TwoLevelByColourUnderAStraggler) {
  if (simulated()) GTEST_SKIP() << "no shared memory in the simulation build";
  const int rank = world_rank();
  const int ranks = world_size();
  Straggler straggler;
  straggler.rank = ranks - 1;
  for (const std::string leaders : {"shm+rd", "shm+knomial:2", "shm+impi", "shm+mpi"}) {
    for (const int colour : {rank / 3, rank % 2}) {
      auto a = collectives::make_two_level_allreduce(world(), 4, leaders, ReduceOp::sum, colour);
      auto b = collectives::make_two_level_allreduce(world(), 2, leaders, ReduceOp::max, colour);
      EXPECT_EQ(a->name(), "twolevel:" + leaders);
      std::vector<double> va(4), vb(2), ra(4), rb(2);
      std::uint64_t hash = 0;
      for (int op = 0; op < 400; ++op) {
        for (std::size_t j = 0; j < 4; ++j)
          va[j] = (rank + 1) * (op + 1.0) + static_cast<double>(j);
        vb = {static_cast<double>(rank * op % 17), -static_cast<double>(rank)};
        straggler.maybe_delay();
        a->start(va);
        b->start(vb);
        straggler.maybe_delay();
        // Both in flight; with an mpi leader level (blocking inside the call
        // that finds the node complete), in the same order on every rank.
        a->wait(ra);
        if (op % 2 == 0 || leaders.ends_with("+mpi")) {
          b->wait(rb);
        } else {
          while (!b->test(rb)) std::this_thread::yield();
        }
        double max0 = 0.0;
        for (int r = 0; r < ranks; ++r) max0 = std::max(max0, static_cast<double>(r * op % 17));
        for (std::size_t j = 0; j < 4; ++j)
          ASSERT_EQ(ra[j], ranks * (ranks + 1) / 2.0 * (op + 1.0) + ranks * static_cast<double>(j))
              << leaders << " op " << op;
        ASSERT_EQ(rb[0], max0) << leaders << " op " << op;
        ASSERT_EQ(rb[1], 0.0) << leaders << " op " << op;
        hash = mix(hash, ra);
      }
      EXPECT_TRUE(same_on_every_rank(hash));
      a->free();
      b->free();
    }
  }
}

// One node (every rank shares memory): twolevel:shm+ALG is `shm` itself, with
// its order, so the fractional sums replay bit for bit.
TEST(ShmAllreduce, TwoLevelOnOneNodeIsShm) {
  if (simulated()) GTEST_SKIP() << "no shared memory in the simulation build";
  Straggler nobody;
  std::uint64_t hash = 0;
  EXPECT_EQ(run_in_flight("twolevel:shm+rd", 2, 2000, nobody, hash), 0);
  EXPECT_TRUE(same_on_every_rank(hash));
}

// `shm` over ranks split into several nodes (colours stand in for nodes) is
// bad input, on every rank, before any window is allocated.
TEST(ShmAllreduce, ShmAcrossNodesIsBadInput) {
  if (simulated()) GTEST_SKIP() << "no shared memory in the simulation build";
  if (world_size() == 1) GTEST_SKIP() << "one rank is one node";
  const auto shm = collectives::parse_allreduce("shm");
  try {
    collectives::detail::make_shm_allreduce(shm, world(), 1, ReduceOp::sum, world_rank() % 2);
    ADD_FAILURE() << "accepted";
  } catch (const core::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--allreduce 'shm': the " + std::to_string(world_size()) +
                  " ranks run on 2 nodes that do not share memory, expected twolevel:shm+ALG "
                  "(ALG: rd, knomial:K, mpi, impi) or a message-passing algorithm");
  }
  // The same ranks as one node: accepted.
  auto one = collectives::detail::make_shm_allreduce(shm, world(), 1, ReduceOp::sum, 0);
  std::vector<double> r(1);
  one->start(std::vector<double>{1.0});
  one->wait(r);
  EXPECT_EQ(r[0], static_cast<double>(world_size()));
  one->free();
}

}  // namespace
