// The group-count estimate behind PGB's fanout and sort_dictionary's first table
// (src/groupby/estimate.cpp): exact cases, the bounds, and simulated uniform samples.
#include "groupby/estimate.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_set>

namespace joinery::test {
namespace {

using detail::groups_from_sample;

TEST(GroupsFromSample, EveryRowSampledIsExact) {
  EXPECT_EQ(groups_from_sample(1, 100, 100), 1);
  EXPECT_EQ(groups_from_sample(37, 100, 100), 37);
  EXPECT_EQ(groups_from_sample(100, 100, 100), 100);
  EXPECT_EQ(groups_from_sample(5, 200, 100), 5);  // more samples than rows: still every row
}

TEST(GroupsFromSample, NearlyAllDistinctSamplesBoundNothingBelowTheRows) {
  EXPECT_EQ(groups_from_sample(1 << 14, 1 << 14, 1 << 28), 1 << 28);
  EXPECT_EQ(groups_from_sample((1 << 14) - 1, 1 << 14, 1 << 28), 1 << 28);
}

TEST(GroupsFromSample, StaysBetweenTheDistinctKeysAndTheRowsAndGrowsWithThem) {
  size_type const samples = 1 << 14;
  size_type const rows = size_type{1} << 28;
  size_type last = 0;
  for (size_type d = 1; d < samples - 1; d += 97) {
    auto const g = groups_from_sample(d, samples, rows);
    EXPECT_GE(g, d);
    EXPECT_LE(g, rows);
    EXPECT_GE(g, last) << d;
    last = g;
  }
}

TEST(GroupsFromSample, RecoversUniformGroupCounts) {
  // 2^14 uniform draws from g keys: the estimate is within 10% up to g = 2^16 and within a
  // factor 1.5 at 2^18 (where about 3% of the samples repeat).
  size_type const samples = 1 << 14;
  size_type const rows = size_type{1} << 28;
  std::mt19937_64 rng(2026);
  for (size_type g : {size_type{1}, size_type{7}, size_type{1000}, size_type{1} << 12,
                      size_type{1} << 14, size_type{1} << 16, size_type{1} << 18}) {
    std::unordered_set<std::uint64_t> seen;
    for (size_type i = 0; i < samples; ++i) {
      seen.insert(rng() % static_cast<std::uint64_t>(g));
    }
    auto const est = static_cast<double>(
      groups_from_sample(static_cast<size_type>(seen.size()), samples, rows));
    double const tolerance = g <= (size_type{1} << 16) ? 1.1 : 1.5;
    EXPECT_LE(est, static_cast<double>(g) * tolerance) << "g = " << g;
    EXPECT_GE(est, static_cast<double>(g) / tolerance) << "g = " << g;
  }
}

}  // namespace
}  // namespace joinery::test
