// Statistics over repeats (core/statistics.hpp): hand-checkable cases.
#include <gtest/gtest.h>

#include <vector>

#include "asyncsolve/core/statistics.hpp"

using namespace asyncsolve::core;

TEST(Statistics, MedianOfOddAndEvenCountsAndOfNone) {
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median({7.0}), 7.0);
  EXPECT_EQ(median({}), 0.0);
}

TEST(Statistics, MinimumAndMaximum) {
  const std::vector<double> v{2.0, -1.0, 5.0, 0.5};
  EXPECT_EQ(minimum(v), -1.0);
  EXPECT_EQ(maximum(v), 5.0);
  EXPECT_EQ(minimum(std::vector<double>{}), 0.0);
  EXPECT_EQ(maximum(std::vector<double>{}), 0.0);
}

TEST(Statistics, RatiosAreTakenRepeatByRepeat) {
  const std::vector<double> num{2.0, 6.0, 1.0};
  const std::vector<double> den{1.0, 3.0, 0.0, 9.0};
  EXPECT_EQ(ratios(num, den), (std::vector<double>{2.0, 2.0, 0.0}));
}

TEST(Statistics, SeriesJsonHasEveryRepeatAndItsSummary) {
  const std::vector<double> v{3.0, 1.0, 2.0, 10.0};
  const auto j = series_json(v);
  ASSERT_EQ(j.size(), 4U);
  auto key = j.begin();
  EXPECT_EQ(key.key(), "repeats");
  EXPECT_EQ(j["repeats"].get<std::vector<double>>(), v);  // in the order measured
  EXPECT_EQ(j["min"].get<double>(), 1.0);
  EXPECT_EQ(j["median"].get<double>(), 2.5);
  EXPECT_EQ(j["max"].get<double>(), 10.0);
  const auto named = series_json(v, "per_repeat");
  EXPECT_TRUE(named.contains("per_repeat"));
  EXPECT_FALSE(named.contains("repeats"));
}
