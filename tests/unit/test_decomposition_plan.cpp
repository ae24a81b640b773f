#include <gtest/gtest.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/grid/decomposition.hpp"

using namespace asyncsolve::grid;
using asyncsolve::core::InputError;

TEST(BlockRange, CoversEverythingWithSizesDifferingByAtMostOne) {
  for (int n = 1; n <= 40; ++n) {
    for (int parts = 1; parts <= n; ++parts) {
      int next = 0;
      int smallest = n;
      int largest = 0;
      for (int i = 0; i < parts; ++i) {
        const Range r = block_range(n, parts, i);
        EXPECT_EQ(r.begin, next);
        next += r.count;
        smallest = std::min(smallest, r.count);
        largest = std::max(largest, r.count);
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1);
      EXPECT_GE(smallest, 1);
    }
  }
}

TEST(BlockRange, HandCheckedSplit) {
  // 10 points over 3 parts: 4, 3, 3.
  EXPECT_EQ(block_range(10, 3, 0).count, 4);
  EXPECT_EQ(block_range(10, 3, 1).begin, 4);
  EXPECT_EQ(block_range(10, 3, 2).begin, 7);
  EXPECT_EQ(block_range(10, 3, 2).count, 3);
}

TEST(PlanDecomposition, WeakScalingGrowsXThenYThenZ) {
  DecompositionSpec spec;
  spec.local = Int3{50, 50, 50};
  EXPECT_EQ(plan_decomposition(1, spec).global, (Int3{50, 50, 50}));
  EXPECT_EQ(plan_decomposition(2, spec).global, (Int3{100, 50, 50}));
  EXPECT_EQ(plan_decomposition(4, spec).global, (Int3{100, 100, 50}));
  EXPECT_EQ(plan_decomposition(8, spec).global, (Int3{100, 100, 100}));
  EXPECT_EQ(plan_decomposition(3, spec).dims, (Int3{3, 1, 1}));
}

TEST(PlanDecomposition, DefaultIsFiftyCubedPerRank) {
  EXPECT_EQ(plan_decomposition(2, {}).global, (Int3{100, 50, 50}));
}

TEST(PlanDecomposition, ForcedDims) {
  DecompositionSpec spec;
  spec.global = Int3{10, 20, 30};
  spec.dims = Int3{1, 1, 4};
  const auto plan = plan_decomposition(4, spec);
  EXPECT_EQ(plan.dims, (Int3{1, 1, 4}));
  EXPECT_EQ(plan.global, (Int3{10, 20, 30}));
}

TEST(PlanDecomposition, RejectsDimsNotMatchingRanks) {
  DecompositionSpec spec;
  spec.dims = Int3{2, 2, 1};
  EXPECT_THROW(plan_decomposition(3, spec), InputError);
  try {
    plan_decomposition(3, spec);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--dims 2,2,1"), std::string::npos) << e.what();
  }
}

TEST(PlanDecomposition, RejectsMoreRanksThanPoints) {
  DecompositionSpec spec;
  spec.global = Int3{2, 8, 8};
  spec.dims = Int3{4, 1, 1};
  EXPECT_THROW(plan_decomposition(4, spec), InputError);
  spec.dims.reset();
  spec.global = Int3{1, 1, 1};
  EXPECT_THROW(plan_decomposition(2, spec), InputError);
}

TEST(PlanDecomposition, RejectsGlobalAndLocalTogether) {
  DecompositionSpec spec;
  spec.global = Int3{8, 8, 8};
  spec.local = Int3{8, 8, 8};
  EXPECT_THROW(plan_decomposition(1, spec), InputError);
}

TEST(PlanDecomposition, RejectsOverflowingGlobalSize) {
  DecompositionSpec spec;
  spec.local = Int3{1 << 30, 1, 1};
  spec.dims = Int3{2, 1, 1};
  EXPECT_THROW(plan_decomposition(2, spec), InputError);
}
