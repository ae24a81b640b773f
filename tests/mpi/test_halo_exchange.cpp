// Halo exchange on P ranks, for every strategy of make_halo_exchange: after
// an exchange, every halo point that lies in a neighbour's block holds that
// neighbour's value and every other halo point keeps its sentinel, for faces
// only and for faces, edges and corners, with halo widths 1 and 2, on even and
// uneven splits, over several exchanges in a row. The overlapped strategies
// are shown to be in flight while the caller computes.
//
// Failures are reported with EXPECT (not ASSERT) wherever returning early
// would skip a collective call and leave the other ranks hanging.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../support/world.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/core/error.hpp"

using namespace asyncsolve;
using grid::Int3;

namespace asyncsolve::comm {
// How GoogleTest prints a Neighbourhood parameter.
void PrintTo(Neighbourhood n, std::ostream* os) {
  *os << (n == Neighbourhood::full ? "full" : "faces");
}
}  // namespace asyncsolve::comm

namespace {

constexpr double sentinel = -1.0;

/// The value of global point (gi, gj, gk) in exchange `round`: distinct per
/// point and round, and exact in a double.
double tag_value(int gi, int gj, int gk, int round) {
  return gi + 1000.0 * gj + 1.0e6 * gk + 1.0e8 * round;
}

bool in_neighbourhood(comm::Neighbourhood neighbourhood, int nonzero) {
  return nonzero > 0 && (neighbourhood == comm::Neighbourhood::full || nonzero == 1);
}

/// Every direction of `neighbourhood` with a neighbour rank.
std::vector<Int3> neighbour_dirs(const grid::Decomposition& d, comm::Neighbourhood neighbourhood) {
  std::vector<Int3> dirs;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const Int3 dir{dx, dy, dz};
        if (in_neighbourhood(neighbourhood, std::abs(dx) + std::abs(dy) + std::abs(dz)) &&
            d.neighbour(dir) != MPI_PROC_NULL)
          dirs.push_back(dir);
      }
  return dirs;
}

/// A decomposition of `global` over the world and a field on it.
struct Fixture {
  Fixture(const Int3& global, int width)
      : d(grid::Decomposition::create(par::Comm::view(MPI_COMM_WORLD),
                                      grid::DecompositionSpec{global, {}, {}})),
        f(d.local(), width) {
    f.fill(sentinel);
  }
  /// Writes round `round`'s values into the interior (the halo is kept).
  void fill_interior(int round) {
    const Int3& n = d.local();
    const Int3& o = d.offset();
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) f(i, j, k) = tag_value(o[0] + i, o[1] + j, o[2] + k, round);
  }
  grid::Decomposition d;
  grid::Field f;
};

/// Checks the whole halo after round `round`; returns the halo points that
/// hold a neighbour's value.
long check_halo(const Fixture& s, comm::Neighbourhood neighbourhood, int round,
                const std::string& what) {
  const grid::Decomposition& d = s.d;
  const grid::Field& f = s.f;
  const int width = f.halo();
  const Int3& n = d.local();
  const Int3& o = d.offset();
  long filled = 0;
  long wrong = 0;
  std::string first;
  for (int k = -width; k < n[2] + width; ++k)
    for (int j = -width; j < n[1] + width; ++j)
      for (int i = -width; i < n[0] + width; ++i) {
        const Int3 p{i, j, k};
        Int3 dir{};
        int outside = 0;
        bool in_domain = true;
        for (int a = 0; a < 3; ++a) {
          dir[a] = p[a] < 0 ? -1 : (p[a] >= n[a] ? 1 : 0);
          outside += std::abs(dir[a]);
          const int g = o[a] + p[a];
          in_domain = in_domain && g >= 0 && g < d.global()[a];
        }
        if (outside == 0) continue;
        const bool expect_filled = in_domain && d.neighbour(dir) != MPI_PROC_NULL &&
                                   in_neighbourhood(neighbourhood, outside);
        const double expected =
            expect_filled ? tag_value(o[0] + i, o[1] + j, o[2] + k, round) : sentinel;
        if (expect_filled) ++filled;
        if (f(i, j, k) != expected) {
          if (wrong++ == 0) {
            std::ostringstream m;
            m << "halo point " << i << "," << j << "," << k << " holds " << f(i, j, k)
              << ", expected " << expected;
            first = m.str();
          }
        }
      }
  EXPECT_EQ(wrong, 0) << what << " round " << round << " on rank " << d.rank() << ": " << first;
  return filled;
}

std::string describe(const std::string& name, comm::Neighbourhood neighbourhood, int width,
                     const Int3& global) {
  std::ostringstream m;
  m << name << (neighbourhood == comm::Neighbourhood::full ? " full" : " faces") << " width "
    << width << " global " << global[0] << "x" << global[1] << "x" << global[2];
  return m.str();
}

// ---------------------------------------------------------------------------
// Correctness of every strategy.

using Case = std::tuple<std::string, comm::Neighbourhood, int, Int3>;

class HaloStrategy : public testing::TestWithParam<Case> {};

TEST_P(HaloStrategy, FillsExactlyTheNeighboursValues) {
  const auto& [name, neighbourhood, width, global] = GetParam();
  const std::string what = describe(name, neighbourhood, width, global);
  Fixture s(global, width);
  auto halo = comm::make_halo_exchange(name, s.d, s.f, neighbourhood);
  EXPECT_EQ(halo->name(), name);

  // Several exchanges in a row, each with new interior values: the buffers
  // (and, for persistent, the requests) are reused and carry fresh data.
  const int rounds = name == "persistent" ? 6 : 3;
  long filled = 0;
  for (int round = 0; round < rounds; ++round) {
    s.fill_interior(round);
    if (round % 2 == 0) {
      halo->exchange(s.f);
    } else {
      halo->start(s.f);
      halo->finish(s.f);
    }
    filled = check_halo(s, neighbourhood, round, what);
  }
  EXPECT_EQ(halo->tests(), 0);
  if (world_size() > 1) {
    long total = filled;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_GT(total, 0) << what;
  }
  halo->close();
  halo.reset();
  s.d.free();
}

std::string case_name(const testing::TestParamInfo<Case>& p) {
  const auto& [name, neighbourhood, width, global] = p.param;
  return name + (neighbourhood == comm::Neighbourhood::full ? "_full" : "_faces") + "_w" +
         std::to_string(width) + "_" + std::to_string(global[0]) + "x" + std::to_string(global[1]) +
         "x" + std::to_string(global[2]);
}

// Global sizes: 13x11x9 and 10x7x5 split unevenly on 2, 3, 4 and 8 ranks
// (blocks of 4/3/3, 4/3, 3/2 points), 17x16x18 mostly evenly. Every block
// is at least 2 points wide (the widest halo) on up to 8 ranks.
INSTANTIATE_TEST_SUITE_P(
    AllStrategies, HaloStrategy,
    testing::Combine(testing::ValuesIn(comm::halo_exchange_names()),
                     testing::Values(comm::Neighbourhood::faces, comm::Neighbourhood::full),
                     testing::Values(1, 2),
                     testing::Values(Int3{13, 11, 9}, Int3{10, 7, 5}, Int3{17, 16, 18})),
    case_name);

TEST(HaloExchange, NamesInOrder) {
  const std::vector<std::string> expected{"waitall", "alltoallv", "ialltoallv", "neighbor",
                                          "persistent"};
  EXPECT_EQ(comm::halo_exchange_names(), expected);
}

TEST(HaloExchange, UnknownNameIsInputError) {
  Fixture s({8, 8, 8}, 1);
  EXPECT_THROW(comm::make_halo_exchange("nope", s.d, s.f, comm::Neighbourhood::faces),
               core::InputError);
  s.d.free();
}

// The collective strategies group the slabs per neighbour rank. On the
// non-periodic Cartesian grid every direction leads to a different rank, so
// each group holds one slab: check that on several process grids.
TEST(HaloExchange, EveryDirectionHasADistinctRank) {
  const int p = world_size();
  for (const Int3& dims : {Int3{0, 0, 0}, Int3{p, 1, 1}, Int3{1, p, 1}, Int3{1, 1, p}}) {
    grid::DecompositionSpec spec;
    spec.global = Int3{16, 16, 16};
    if (dims[0] != 0) spec.dims = dims;
    grid::Decomposition d = grid::Decomposition::create(par::Comm::view(MPI_COMM_WORLD), spec);
    std::set<int> ranks;
    const std::vector<Int3> dirs = neighbour_dirs(d, comm::Neighbourhood::full);
    for (const Int3& dir : dirs) ranks.insert(d.neighbour(dir));
    EXPECT_EQ(ranks.size(), dirs.size());
    EXPECT_EQ(ranks.count(d.rank()), 0u);
    d.free();
  }
}

TEST(HaloExchange, MessagesAndBytesAgreeAcrossStrategies) {
  for (const auto neighbourhood : {comm::Neighbourhood::faces, comm::Neighbourhood::full}) {
    for (const int width : {1, 2}) {
      Fixture s({13, 11, 9}, width);
      // What the exchange must send, counted here from the boxes.
      int messages = 0;
      std::size_t bytes = 0;
      for (const Int3& dir : neighbour_dirs(s.d, neighbourhood)) {
        ++messages;
        bytes += static_cast<std::size_t>(s.f.send_box(dir).size()) * sizeof(double);
      }
      for (const std::string& name : comm::halo_exchange_names()) {
        auto halo = comm::make_halo_exchange(name, s.d, s.f, neighbourhood);
        EXPECT_EQ(halo->messages_per_exchange(), messages) << name;
        EXPECT_EQ(halo->bytes_per_exchange(), bytes) << name;
        halo->close();
      }
      s.d.free();
    }
  }
}

// Every strategy runs an exchange in the same steps (StagedHalo): close()
// refuses while one is in flight, and nothing starts after close().
TEST(HaloExchange, CloseInFlightAndStartAfterCloseThrow) {
  for (const std::string& name : comm::halo_exchange_names()) {
    Fixture s({9, 6, 5}, 1);
    auto halo = comm::make_halo_exchange(name, s.d, s.f, comm::Neighbourhood::faces);
    s.fill_interior(0);
    halo->start(s.f);
    EXPECT_THROW(halo->close(), std::logic_error) << name;
    halo->finish(s.f);
    check_halo(s, comm::Neighbourhood::faces, 0, name);
    halo->close();
    EXPECT_THROW(halo->start(s.f), std::logic_error) << name;  // before any MPI call
    halo.reset();
    s.d.free();
  }
}

TEST(HaloExchange, FinishWithoutStartAndDoubleStartThrow) {
  for (const std::string& name : comm::halo_exchange_names()) {
    Fixture s({10, 7, 5}, 1);
    auto halo = comm::make_halo_exchange(name, s.d, s.f, comm::Neighbourhood::full);
    EXPECT_THROW(halo->finish(s.f), std::logic_error) << name;
    s.fill_interior(0);
    halo->start(s.f);
    EXPECT_THROW(halo->start(s.f), std::logic_error) << name;  // before any MPI call
    halo->finish(s.f);
    check_halo(s, comm::Neighbourhood::full, 0, name);
    halo->close();
    halo.reset();
    s.d.free();
  }
}

// ---------------------------------------------------------------------------
// In flight: start() returns with the exchange still under way.

TEST(HaloExchange, BlockingAlltoallvIsCompleteAfterStart) {
  Fixture s({13, 11, 9}, 1);
  auto halo = comm::make_halo_exchange("alltoallv", s.d, s.f, comm::Neighbourhood::full);
  s.fill_interior(0);
  halo->start(s.f);
  EXPECT_TRUE(halo->test());
  EXPECT_TRUE(halo->test());
  EXPECT_EQ(halo->tests(), 2);
  halo->finish(s.f);
  check_halo(s, comm::Neighbourhood::full, 0, "alltoallv");
  halo.reset();
  s.d.free();
}

// Rank 1 (a face neighbour of rank 0 on every process grid: the two differ by
// one in the last coordinate that has more than one rank) does not start
// until rank 0 has started and tested: rank 0 sends it a "go" message on the
// world communicator only after its first test(). So that first test() must
// be false: rank 1 cannot have sent anything. Rank 0 then keeps computing
// and testing until the exchange completes, and finish() must give the right
// halo. Nothing here depends on timing; rank 1's short sleep after "go" only
// makes rank 0 test a while before rank 1 starts.
class HaloInFlight : public testing::TestWithParam<std::tuple<std::string, comm::Neighbourhood>> {};

TEST_P(HaloInFlight, IncompleteUntilThePeerStarts) {
  if (world_size() < 2) GTEST_SKIP() << "needs a peer";
  const auto& [name, neighbourhood] = GetParam();
  const int rank = world_rank();
  constexpr int go_tag = 4711;
  Fixture s({13, 11, 9}, 2);
  auto halo = comm::make_halo_exchange(name, s.d, s.f, neighbourhood);
  if (rank == 0) {
    bool peer_is_neighbour = false;
    for (const Int3& dir : neighbour_dirs(s.d, neighbourhood))
      peer_is_neighbour = peer_is_neighbour || s.d.neighbour(dir) == 1;
    EXPECT_TRUE(peer_is_neighbour);
  }

  for (int round = 0; round < 2; ++round) {
    s.fill_interior(round);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      const long before = halo->tests();
      halo->start(s.f);
      EXPECT_FALSE(halo->test()) << name << ": complete before the peer started";
      MPI_Send(nullptr, 0, MPI_BYTE, 1, go_tag, MPI_COMM_WORLD);
      // Compute while the exchange is in flight, testing now and then.
      long calls = 1;
      volatile double sink = 0;
      while (true) {
        for (int i = 0; i < 1000; ++i) sink = sink + i;
        ++calls;
        if (halo->test()) break;
      }
      EXPECT_EQ(halo->tests() - before, calls);
      EXPECT_TRUE(halo->test());  // stays complete until finish()
      halo->finish(s.f);
    } else {
      if (rank == 1) {
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, go_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      halo->start(s.f);
      halo->finish(s.f);
    }
    check_halo(s, neighbourhood, round, name + " in flight");
  }
  halo->close();
  halo.reset();
  s.d.free();
}

std::string in_flight_name(
    const testing::TestParamInfo<std::tuple<std::string, comm::Neighbourhood>>& p) {
  return std::get<0>(p.param) +
         (std::get<1>(p.param) == comm::Neighbourhood::full ? "_full" : "_faces");
}

INSTANTIATE_TEST_SUITE_P(
    Overlapped, HaloInFlight,
    testing::Combine(testing::Values(std::string("waitall"), std::string("ialltoallv"),
                                     std::string("neighbor"), std::string("persistent")),
                     testing::Values(comm::Neighbourhood::faces, comm::Neighbourhood::full)),
    in_flight_name);

}  // namespace
