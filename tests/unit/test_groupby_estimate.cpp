// The group-count estimate behind PGB's fanout and sort_dictionary's first table
// (src/groupby/estimate.cpp): exact cases, the bounds, and simulated uniform and Zipf samples.
#include "groupby/estimate.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

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

/// Draws `samples` keys and returns {distinct, drawn once, drawn twice}.
template <class Draw>
std::array<size_type, 3> profile_of(size_type samples, Draw draw) {
  std::unordered_map<std::uint64_t, size_type> count;
  for (size_type i = 0; i < samples; ++i) { ++count[draw()]; }
  std::array<size_type, 3> p{static_cast<size_type>(count.size()), 0, 0};
  for (auto const& [key, c] : count) {
    if (c == 1) { ++p[1]; }
    if (c == 2) { ++p[2]; }
  }
  return p;
}

TEST(GroupsFromProfile, ExactWhenEveryRowIsSampledAndBoundedByTheRows) {
  EXPECT_EQ(detail::groups_from_profile(37, 20, 10, 100, 100), 37);
  EXPECT_EQ(detail::groups_from_profile(1, 0, 0, 100, 1000), 1);
  // Every sample distinct: no bound below the rows.
  EXPECT_EQ(detail::groups_from_profile(1 << 14, 1 << 14, 0, 1 << 14, 1 << 28), 1 << 28);
  EXPECT_EQ(detail::groups_from_profile(9000, 8990, 5, 1 << 14, 1 << 20), 1 << 20);
}

TEST(GroupsFromProfile, AgreesWithTheUniformModelOnUniformKeys) {
  size_type const samples = 1 << 14;
  size_type const rows = size_type{1} << 28;
  std::mt19937_64 rng(7);
  for (size_type g : {size_type{1}, size_type{1000}, size_type{1} << 14, size_type{1} << 16}) {
    auto const p = profile_of(samples, [&] { return rng() % static_cast<std::uint64_t>(g); });
    auto const est = static_cast<double>(detail::groups_from_profile(p[0], p[1], p[2], samples, rows));
    EXPECT_LE(est, static_cast<double>(g) * 1.1) << "g = " << g;
    EXPECT_GE(est, static_cast<double>(g) / 1.1) << "g = " << g;
  }
}

TEST(GroupsFromProfile, SeesMoreOfZipfsTailThanTheUniformModel) {
  // Zipf 1 over g = 2^16 keys: the uniform model sees about 6600 groups in 2^14 samples, Chao1
  // about three times as many; neither passes g.
  size_type const samples = 1 << 14;
  size_type const rows = size_type{1} << 28;
  size_type const g = size_type{1} << 16;
  std::vector<double> weights(static_cast<std::size_t>(g));
  for (std::size_t r = 0; r < weights.size(); ++r) { weights[r] = 1.0 / static_cast<double>(r + 1); }
  std::discrete_distribution<std::uint64_t> zipf(weights.begin(), weights.end());
  std::mt19937_64 rng(11);
  auto const p = profile_of(samples, [&] { return zipf(rng); });
  auto const uniform = groups_from_sample(p[0], samples, rows);
  auto const est = detail::groups_from_profile(p[0], p[1], p[2], samples, rows);
  EXPECT_GE(est, 2 * uniform);
  EXPECT_LE(est, g);
}

}  // namespace
}  // namespace joinery::test
