// The schedule engine's collectives on P ranks, every allreduce algorithm
// through one set of tests: results equal MPI_Allreduce (sums exactly for
// integer-valued inputs and to rounding otherwise, min and max exactly) and
// are bit-identical on every rank, for 1 to 100000 doubles; the cached
// schedule survives repeated cycles; two reductions in flight interleave;
// skewed starts; nothing outstanding when inactive. The dissemination barrier
// holds every rank until a late one arrives. Bad names are bad input.
//
// The barrier test compares clock stamps of different ranks. That is only
// meaningful on one node, which is where CI runs the tests. It reads
// std::chrono::steady_clock (CLOCK_MONOTONIC on Linux: one clock for every
// process of the machine), not MPI_Wtime: besides MPI_WTIME_IS_GLOBAL being
// false, Open MPI 4.1's MPI_Wtime counts from each process's own MPI_Init,
// so two ranks' stamps differ by their start-up offset.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "../support/world.hpp"
#include "algorithms.hpp"
#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_barrier.hpp"
#include "asyncsolve/collectives/schedule.hpp"
#include "asyncsolve/core/error.hpp"

using namespace asyncsolve;
using collectives::NonblockingAllreduce;
using collectives::ReduceOp;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

/// Algorithms under test. "nodes3:ALG" and "nodes2:ALG" are twolevel:ALG
/// with nodes made of ranks {0,1,2}, {3,4,5}, ... or of the even and the odd
/// ranks, so that the leaders' level runs on one machine.
std::vector<std::string> algorithms() {
  return {"mpi",
          "impi",
          "tree",
          "rd",
          "knomial:2",
          "knomial:3",
          "knomial:4",
          "knomial:64",
          "twolevel:rd",
          "twolevel:knomial:3",
          "nodes3:rd",
          "nodes3:knomial:3",
          "nodes3:impi",
          "nodes2:rd",
          "nodes2:mpi",
          "shm",
          "twolevel:shm+rd",
          "twolevel:shm+knomial:3",
          "nodes3:shm+rd",
          "nodes3:shm+impi",
          "nodes2:shm+knomial:2",
          "nodes2:shm+mpi"};
}

std::unique_ptr<NonblockingAllreduce> make(const std::string& algorithm, std::size_t size,
                                           ReduceOp op = ReduceOp::sum) {
  const int rank = world_rank();
  if (algorithm.starts_with("nodes3:"))
    return collectives::make_two_level_allreduce(world(), size, algorithm.substr(7), op, rank / 3);
  if (algorithm.starts_with("nodes2:"))
    return collectives::make_two_level_allreduce(world(), size, algorithm.substr(7), op, rank % 2);
  return collectives::make_nonblocking_allreduce(algorithm, world(), size, op);
}

std::string test_name(const testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  std::replace(s.begin(), s.end(), ':', '_');
  std::replace(s.begin(), s.end(), '+', '_');
  return s;
}

MPI_Op mpi_op(ReduceOp op) {
  return op == ReduceOp::sum ? MPI_SUM : op == ReduceOp::min ? MPI_MIN : MPI_MAX;
}

const char* op_name(ReduceOp op) {
  return op == ReduceOp::sum ? "sum" : op == ReduceOp::min ? "min" : "max";
}

/// Integer-valued contributions in [-1000, 1000]: sums exact in any order.
/// Element 0 is a signed zero (+0 on even ranks, -0 on odd ones), whose
/// min/max depends on the order of the operands.
std::vector<double> integer_values(int rank, int salt, std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t j = 0; j < n; ++j)
    v[j] = static_cast<double>(
        static_cast<long>((rank * 7919 + static_cast<long>(j) * 31 + salt * 101) % 2001) - 1000);
  v[0] = rank % 2 == 0 ? 0.0 : -0.0;
  return v;
}

/// Contributions whose sum depends on the order of additions.
std::vector<double> fractional_values(int rank, int salt, std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t j = 0; j < n; ++j)
    v[j] = 1.0 / (rank + 3.0 + static_cast<double>(j % 977)) + 0.1 * salt -
           0.01 * static_cast<double>(j % 13);
  return v;
}

std::vector<double> reference(const std::vector<double>& values, ReduceOp op) {
  std::vector<double> out(values.size());
  MPI_Allreduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_DOUBLE, mpi_op(op),
                MPI_COMM_WORLD);
  return out;
}

/// True on every rank iff `values` has the same bit pattern on every rank.
bool bit_identical_across_ranks(const std::vector<double>& values) {
  std::vector<std::uint64_t> bits(values.size());
  std::memcpy(bits.data(), values.data(), values.size() * sizeof(double));
  std::vector<std::uint64_t> lo(bits.size()), hi(bits.size());
  const int n = static_cast<int>(bits.size());
  MPI_Allreduce(bits.data(), lo.data(), n, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(bits.data(), hi.data(), n, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/// Number of elements differing from `expected` beyond `rel` (relative to
/// the sum of magnitudes bound `scale`); 0 means exact when rel == 0.
std::size_t mismatches(const std::vector<double>& got, const std::vector<double>& expected,
                       double rel, double scale) {
  std::size_t bad = 0;
  for (std::size_t j = 0; j < got.size(); ++j)
    if (!(std::abs(got[j] - expected[j]) <= rel * scale)) ++bad;
  return bad;
}

void busy_work(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

void poll(NonblockingAllreduce& reduction, std::vector<double>& result) {
  while (!reduction.test(result)) std::this_thread::yield();
}

class ScheduleAllreduceTest : public testing::TestWithParam<std::string> {};

// Every size and op against MPI_Allreduce; odd cycles complete by polling
// test(), even ones by wait().
TEST_P(ScheduleAllreduceTest, EqualsMpiAllreduce) {
  const int rank = world_rank();
  const int ranks = world_size();
  for (const std::size_t n :
       {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{100000}}) {
    for (const ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max}) {
      auto reduction = make(GetParam(), n, op);
      EXPECT_EQ(reduction->size(), n);
      EXPECT_EQ(reduction->op(), op);
      std::vector<double> result(n);
      for (int input = 0; input < 2; ++input) {
        const std::vector<double> values =
            input == 0 ? integer_values(rank, 0, n) : fractional_values(rank, 0, n);
        const std::vector<double> expected = reference(values, op);
        reduction->start(values);
        EXPECT_TRUE(reduction->active());
        if (input == 0) {
          poll(*reduction, result);
        } else {
          reduction->wait(result);
        }
        EXPECT_FALSE(reduction->active());
        EXPECT_EQ(reduction->outstanding_requests(), 0);
        // Exact except fractional sums: a bound on the rounding of P terms
        // of magnitude below 1.2 in any order.
        const bool exact = input == 0 || op != ReduceOp::sum;
        const double rel = exact ? 0.0 : 4.0 * ranks * 2.3e-16;
        EXPECT_EQ(mismatches(result, expected, rel, 1.2 * ranks), 0U)
            << "n " << n << " " << op_name(op) << (input == 0 ? " integers" : " fractions");
        EXPECT_TRUE(bit_identical_across_ranks(result))
            << "n " << n << " " << op_name(op) << (input == 0 ? " integers" : " fractions");
      }
      EXPECT_EQ(reduction->completed(), 2);
      reduction->free();
      EXPECT_EQ(reduction->comm().get(), MPI_COMM_NULL);
    }
  }
}

// The schedule is built once; 30 cycles on the same object stay correct.
TEST_P(ScheduleAllreduceTest, RepeatedCyclesOnOneObject) {
  const int rank = world_rank();
  constexpr int cycles = 30;
  constexpr std::size_t n = 7;
  auto reduction = make(GetParam(), n, ReduceOp::sum);
  std::vector<double> result(n);
  for (int c = 0; c < cycles; ++c) {
    EXPECT_FALSE(reduction->active());
    EXPECT_EQ(reduction->outstanding_requests(), 0);
    const std::vector<double> values = integer_values(rank, c, n);
    reduction->start(values);
    if (c % 3 == 0) {
      reduction->wait(result);
    } else {
      poll(*reduction, result);
    }
    EXPECT_EQ(result, reference(values, ReduceOp::sum)) << "cycle " << c;
  }
  EXPECT_EQ(reduction->completed(), cycles);
  EXPECT_EQ(reduction->outstanding_requests(), 0);
  reduction->free();
}

// Two objects with reductions in flight at once, tested in alternation and
// completed in either order.
TEST_P(ScheduleAllreduceTest, TwoReductionsInterleaved) {
  const int rank = world_rank();
  auto a = make(GetParam(), 5, ReduceOp::sum);
  auto b = make(GetParam(), 3, ReduceOp::max);
  std::vector<double> ra(5), rb(3);
  for (int cycle = 0; cycle < 6; ++cycle) {
    const std::vector<double> va = integer_values(rank, cycle, 5);
    const std::vector<double> vb = integer_values(rank, cycle + 100, 3);
    const auto ea = reference(va, ReduceOp::sum);
    const auto eb = reference(vb, ReduceOp::max);
    a->start(va);
    b->start(vb);
    bool done_a = false;
    bool done_b = false;
    if (GetParam().ends_with(":mpi") || GetParam().ends_with("+mpi")) {
      // The leaders' MPI_Allreduce blocks inside whichever call finds the
      // node reduction complete: like any blocking collective, reductions of
      // this kind must complete in the same order on every rank.
      a->wait(ra);
      b->wait(rb);
      done_a = done_b = true;
    } else if (cycle % 2 == 0) {  // B first, by waiting; then poll A
      b->wait(rb);
      done_b = true;
    }
    while (!done_a || !done_b) {
      if (!done_a) done_a = a->test(ra);
      if (!done_b) done_b = b->test(rb);
    }
    EXPECT_EQ(ra, ea) << "cycle " << cycle;
    EXPECT_EQ(rb, eb) << "cycle " << cycle;
    EXPECT_EQ(a->outstanding_requests() + b->outstanding_requests(), 0);
  }
  a->free();
  b->free();
}

// Ranks start late by rank-dependent busy work; results unchanged.
TEST_P(ScheduleAllreduceTest, SkewedStarts) {
  const int rank = world_rank();
  auto reduction = make(GetParam(), 1000, ReduceOp::sum);
  std::vector<double> result(1000);
  for (int cycle = 0; cycle < 4; ++cycle) {
    const std::vector<double> values = integer_values(rank, cycle, 1000);
    const auto expected = reference(values, ReduceOp::sum);
    busy_work(((rank + cycle) % world_size()) * 2000);
    reduction->start(values);
    busy_work(((rank * 3 + cycle) % 5) * 500);
    poll(*reduction, result);
    EXPECT_EQ(result, expected) << "cycle " << cycle;
  }
  reduction->free();
}

// Debug builds compare the sizes at construction (collectively).
TEST_P(ScheduleAllreduceTest, MismatchedSizesAreDetectedInDebugBuilds) {
#ifdef NDEBUG
  GTEST_SKIP() << "the check is compiled only into debug builds";
#else
  if (world_size() == 1) GTEST_SKIP() << "one rank cannot disagree";
  const std::size_t n = world_rank() == 0 ? 2 : 3;
  EXPECT_THROW(make(GetParam(), n), std::logic_error);
  EXPECT_THROW(make(GetParam(), 3, world_rank() == 0 ? ReduceOp::min : ReduceOp::max),
               std::logic_error);
#endif
}

// The blocking interface accepts every name too (build, start, wait, free per call).
TEST_P(ScheduleAllreduceTest, BlockingAdapter) {
  if (GetParam().starts_with("nodes")) GTEST_SKIP() << "not a name";
  const int rank = world_rank();
  auto blocking = collectives::make_allreduce(GetParam(), world());
  EXPECT_EQ(blocking->name(), GetParam());
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max}) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{7}}) {
      std::vector<double> values = integer_values(rank, 3, n);
      const auto expected = reference(values, op);
      blocking->reduce(values, op);
      EXPECT_EQ(values, expected) << op_name(op) << " n " << n;
    }
  }
  EXPECT_EQ(blocking->sum(1.0), static_cast<double>(world_size()));
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ScheduleAllreduceTest, testing::ValuesIn(algorithms()),
                         test_name);

TEST(AllreduceNames, BadNamesAreBadInput) {
  for (const char* bad : {"knomial:1",
                          "knomial:0",
                          "knomial:-3",
                          "knomial:x",
                          "knomial:",
                          "knomial:2.5",
                          "knomial: 2",
                          "knomial:99999999999",
                          "twolevel:tree",
                          "twolevel:twolevel:rd",
                          "twolevel:",
                          "twolevel:knomial:1",
                          "ring",
                          "RD",
                          "knomial",
                          "",
                          "twolevel:shm",
                          "twolevel:shm+",
                          "twolevel:shm+tree",
                          "twolevel:shm+shm",
                          "twolevel:shm+twolevel:rd",
                          "shm+rd",
                          "SHM",
                          "shm:2",
                          "twolevel:shm+knomial:1"}) {
    try {
      collectives::check_allreduce_name(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const core::InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--allreduce '") + bad +
                    "': expected one of mpi, impi, tree, rd, shm, knomial:K (K >= 2), "
                    "twolevel:ALG or twolevel:shm+ALG (ALG: rd, knomial:K, mpi, impi); K at most "
                    "1024");
    }
    EXPECT_THROW(collectives::make_nonblocking_allreduce(bad, world(), 1), core::InputError) << bad;
    EXPECT_THROW(collectives::make_allreduce(bad, world()), core::InputError) << bad;
  }
  for (const char* good :
       {"mpi", "impi", "tree", "rd", "knomial:2", "knomial:17", "twolevel:impi", "twolevel:mpi",
        "twolevel:knomial:4", "twolevel:rd", "shm", "twolevel:shm+rd", "twolevel:shm+knomial:4",
        "twolevel:shm+impi", "twolevel:shm+mpi"}) {
    EXPECT_NO_THROW(collectives::check_allreduce_name(good)) << good;
    // Parsed once into a type, and back to the same name.
    EXPECT_EQ(collectives::parse_allreduce(good).name(), good);
  }
  const collectives::AllreduceAlgorithm two = collectives::parse_allreduce("twolevel:knomial:4");
  EXPECT_EQ(two.kind, collectives::AllreduceAlgorithm::Kind::twolevel);
  EXPECT_EQ(two.leader, collectives::AllreduceAlgorithm::Kind::knomial);
  EXPECT_EQ(two.leader_degree, 4);
  EXPECT_EQ(two.leader_algorithm(), collectives::parse_allreduce("knomial:4"));
  EXPECT_FALSE(two.shm_node);
  const collectives::AllreduceAlgorithm shm2 =
      collectives::parse_allreduce("twolevel:shm+knomial:4");
  EXPECT_EQ(shm2.kind, collectives::AllreduceAlgorithm::Kind::twolevel);
  EXPECT_TRUE(shm2.shm_node);
  EXPECT_EQ(shm2.leader_algorithm(), collectives::parse_allreduce("knomial:4"));
  EXPECT_EQ(collectives::parse_allreduce("shm").kind, collectives::AllreduceAlgorithm::Kind::shm);
  EXPECT_THROW(collectives::make_two_level_allreduce(world(), 1, "tree", ReduceOp::sum, 0),
               core::InputError);
  EXPECT_EQ(collectives::nonblocking_allreduce_names(),
            (std::vector<std::string>{"tree", "impi", "mpi", "rd", "shm"}));
}

// --- Schedules, checked locally for every rank count ----------------------

/// Every send a -> b pairs with a receive at b from a, in order and with the
/// same count (what the executor's fixed tag relies on); returns the total
/// number of messages.
std::size_t check_pairing(const std::vector<collectives::Schedule>& schedules) {
  using collectives::ScheduleAction;
  std::map<std::pair<int, int>, std::vector<std::size_t>> sent, received;
  for (int rank = 0; rank < static_cast<int>(schedules.size()); ++rank)
    for (const auto& a : schedules[static_cast<std::size_t>(rank)].actions()) {
      if (a.kind == ScheduleAction::Kind::send) sent[{rank, a.peer}].push_back(a.count);
      if (a.kind == ScheduleAction::Kind::recv) received[{a.peer, rank}].push_back(a.count);
      if (a.is_communication()) {
        EXPECT_NE(a.peer, rank);
        EXPECT_GE(a.peer, 0);
        EXPECT_LT(a.peer, static_cast<int>(schedules.size()));
      }
    }
  EXPECT_EQ(sent, received);
  std::size_t messages = 0;
  for (const auto& [pair, counts] : sent) messages += counts.size();
  return messages;
}

TEST(Schedules, MessageCountsAndPairing) {
  namespace d = collectives::detail;
  for (int ranks = 1; ranks <= 33; ++ranks) {
    int pof2 = 1;
    while (pof2 * 2 <= ranks) pof2 *= 2;
    int log2 = 0;
    while ((1 << log2) < pof2) ++log2;
    std::vector<collectives::Schedule> rd;
    for (int r = 0; r < ranks; ++r)
      rd.push_back(d::recursive_doubling(r, ranks, 4, ReduceOp::sum).schedule);
    EXPECT_EQ(check_pairing(rd), static_cast<std::size_t>(pof2 * log2 + 2 * (ranks - pof2)))
        << "rd, P = " << ranks;
    for (int k : {2, 3, 4, 7, 64}) {
      std::vector<collectives::Schedule> kn;
      for (int r = 0; r < ranks; ++r)
        kn.push_back(d::knomial(r, ranks, k, 4, ReduceOp::sum).schedule);
      EXPECT_EQ(check_pairing(kn), static_cast<std::size_t>(2 * (ranks - 1)))
          << "knomial:" << k << ", P = " << ranks;
    }
    for (int ways : {1, 2, 3}) {
      std::vector<collectives::Schedule> bar;
      for (int r = 0; r < ranks; ++r) bar.push_back(d::dissemination_barrier(r, ranks, ways));
      std::size_t per_rank = 0;
      std::size_t rounds = 0;
      for (long long dist = 1; dist < ranks; dist *= ways + 1, ++rounds)
        for (int i = 1; i <= ways && i * dist < ranks; ++i) ++per_rank;
      EXPECT_EQ(check_pairing(bar), per_rank * static_cast<std::size_t>(ranks))
          << "dissemination:" << ways << ", P = " << ranks;
      EXPECT_EQ(bar[0].rounds(), rounds);
    }
  }
  // Paper 001 Fig. 1: rank 0 of the 2-way barrier on 9 ranks.
  const auto fig1 = d::dissemination_barrier(0, 9, 2);
  ASSERT_EQ(fig1.rounds(), 2U);
  std::vector<std::pair<bool, int>> round0, round1;
  for (const auto& a : fig1.round(0))
    round0.emplace_back(a.kind == collectives::ScheduleAction::Kind::send, a.peer);
  for (const auto& a : fig1.round(1))
    round1.emplace_back(a.kind == collectives::ScheduleAction::Kind::send, a.peer);
  EXPECT_EQ(round0,
            (std::vector<std::pair<bool, int>>{{true, 1}, {false, 8}, {true, 2}, {false, 7}}));
  EXPECT_EQ(round1,
            (std::vector<std::pair<bool, int>>{{true, 3}, {false, 6}, {true, 6}, {false, 3}}));
}

// A hand-built schedule through the public interface: a ring shift.
TEST(Schedules, UserScheduleRingShift) {
  const int rank = world_rank();
  const int ranks = world_size();
  par::Comm dup = world().dup();
  collectives::Schedule s(4);
  s.add_send(0, 2, (rank + 1) % ranks);
  s.add_recv(2, 2, (rank + ranks - 1) % ranks);
  s.add_reduce(0, 2, 0, 2, ReduceOp::sum);
  s.end_round();
  collectives::ScheduleExecutor run(std::move(s), dup.get(), 0, 0, 2);
  const std::vector<double> values{static_cast<double>(rank), 1.0};
  run.start(values);
  while (!run.test()) {
  }
  EXPECT_EQ(run.outstanding_requests(), 0);
  const int left = (rank + ranks - 1) % ranks;
  EXPECT_EQ(run.result()[0], static_cast<double>(rank + left));
  EXPECT_EQ(run.result()[1], 2.0);
  dup.free();
}

// --- Barrier ----------------------------------------------------------------

class BarrierTest : public testing::TestWithParam<std::string> {};

/// Nanoseconds on the machine-wide monotonic clock.
long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The last rank sleeps 100 ms before it enters; no rank leaves before it
// entered. Its entry time travels to the others after the barrier.
TEST_P(BarrierTest, NoRankLeavesBeforeTheLateOneEnters) {
  const int rank = world_rank();
  const int late = world_size() - 1;
  auto barrier = collectives::make_nonblocking_barrier(GetParam(), world());
  for (int cycle = 0; cycle < 2; ++cycle) {
    EXPECT_FALSE(barrier->active());
    EXPECT_EQ(barrier->outstanding_requests(), 0);
    if (rank == late) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    long long entered = now_ns();
    barrier->start();
    if (cycle == 0) {
      barrier->wait();
    } else {
      while (!barrier->test()) std::this_thread::yield();
    }
    const long long left = now_ns();
    EXPECT_FALSE(barrier->active());
    EXPECT_EQ(barrier->outstanding_requests(), 0);
    MPI_Bcast(&entered, 1, MPI_LONG_LONG, late, MPI_COMM_WORLD);
    EXPECT_GE(left, entered) << "rank " << rank << " left "
                             << static_cast<double>(entered - left) * 1e-6 << " ms before rank "
                             << late << " entered (cycle " << cycle << ")";
  }
  barrier->free();
  EXPECT_EQ(barrier->comm().get(), MPI_COMM_NULL);
}

// Many barriers back to back on the cached schedule, with skew.
TEST_P(BarrierTest, BackToBack) {
  const int rank = world_rank();
  auto barrier = collectives::make_nonblocking_barrier(GetParam(), world());
  for (int cycle = 0; cycle < 50; ++cycle) {
    busy_work(((rank + cycle) % 3) * 100);
    barrier->start();
    EXPECT_THROW(barrier->start(), std::logic_error);
    while (!barrier->test()) {
    }
  }
  EXPECT_EQ(barrier->outstanding_requests(), 0);
  barrier->free();
}

INSTANTIATE_TEST_SUITE_P(Ways, BarrierTest,
                         testing::Values("dissemination", "dissemination:2", "dissemination:3"),
                         test_name);

TEST(BarrierNames, BadNamesAreBadInput) {
  for (const char* bad : {"dissemination:0", "dissemination:x", "dissemination:", "tree", ""})
    EXPECT_THROW(collectives::make_nonblocking_barrier(bad, world()), core::InputError) << bad;
  auto b = collectives::make_nonblocking_barrier("dissemination", world());
  EXPECT_EQ(b->name(), "dissemination:1");
  b->free();
}

}  // namespace
