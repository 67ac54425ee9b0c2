// How the multi-GPU joins split rows over ranks: shares of the input, key bins,
// and the runs of bins each rank owns (pure arithmetic, so it runs without a
// GPU).
#include "core/rank_plan.hpp"

#include <joinery/common.hpp>
#include <joinery/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace joinery::test {
namespace {

TEST(MultiGpuPlan, SharesCoverEveryRowOnceAndDifferByAtMostOne) {
  for (size_type rows :
       {size_type{0}, size_type{1}, size_type{7}, size_type{1000003}, (size_type{1} << 62) + 5}) {
    for (int ranks : {1, 2, 3, 8, 13}) {
      size_type next = 0;
      size_type smallest = rows;
      size_type largest = 0;
      for (int r = 0; r < ranks; ++r) {
        auto const s = detail::rank_share(rows, ranks, r);
        EXPECT_EQ(s.first, next) << rows << " rows, rank " << r << " of " << ranks;
        EXPECT_LE(s.first, s.last);
        smallest = std::min(smallest, s.last - s.first);
        largest = std::max(largest, s.last - s.first);
        next = s.last;
      }
      EXPECT_EQ(next, rows);
      EXPECT_LE(largest - smallest, 1);
    }
  }
}

TEST(MultiGpuPlan, BinsSpanTheKeyRangeInAtMostTheMaximum) {
  auto const one = detail::bins_over(5, 5);
  EXPECT_EQ(one.count, 1U);
  EXPECT_EQ(one.base, 5U);
  auto const narrow = detail::bins_over(100, 1099);  // 1000 keys: one bin each
  EXPECT_EQ(narrow.shift, 0U);
  EXPECT_EQ(narrow.count, 1000U);
  auto const all = detail::bins_over(0, ~std::uint64_t{0});
  EXPECT_EQ(all.count, 1U << detail::max_bin_bits);
  EXPECT_EQ(all.shift, 64U - detail::max_bin_bits);
  EXPECT_EQ((~std::uint64_t{0} - all.base) >> all.shift,
            all.count - 1);                                   // the largest key fits
  auto const none = detail::bins_over(~std::uint64_t{0}, 0);  // no keys at all
  EXPECT_EQ(none.count, 1U);
}

/// Rows per rank under `ranks_of_bins`, checking that ranks own ascending runs
/// of bins.
std::vector<std::uint64_t> rows_per_rank(std::vector<std::uint64_t> const& hist, int ranks) {
  auto const owner = detail::ranks_of_bins(hist, ranks);
  EXPECT_EQ(owner.size(), hist.size());
  std::vector<std::uint64_t> rows(static_cast<std::size_t>(ranks), 0);
  for (std::size_t b = 0; b < hist.size(); ++b) {
    EXPECT_LT(owner[b], static_cast<std::uint32_t>(ranks));
    if (b > 0) { EXPECT_GE(owner[b], owner[b - 1]) << "bin " << b; }
    rows[owner[b]] += hist[b];
  }
  return rows;
}

TEST(MultiGpuPlan, RanksOwnBalancedRunsOfBins) {
  std::vector<std::uint64_t> uniform(4096, 10);
  for (int ranks : {1, 2, 3, 4, 8}) {
    auto const rows = rows_per_rank(uniform, ranks);
    for (auto r : rows) {
      EXPECT_NEAR(static_cast<double>(r), 40960.0 / ranks, 10.0) << ranks << " ranks";
    }
  }
  // Skewed bins: each rank within one bin's rows of its share.
  std::vector<std::uint64_t> skewed(1000);
  for (std::size_t b = 0; b < skewed.size(); ++b) { skewed[b] = 1 + b % 17 * 3; }
  auto const total = std::accumulate(skewed.begin(), skewed.end(), std::uint64_t{0});
  for (auto r : rows_per_rank(skewed, 4)) {
    EXPECT_NEAR(static_cast<double>(r), static_cast<double>(total) / 4, 49.0);
  }
}

TEST(MultiGpuPlan, AHotBinStaysWholeAndEmptyInputsGoToRankZero) {
  std::vector<std::uint64_t> hot(100, 1);
  hot[50] = 1000000;  // one key with nearly every row: one rank takes it whole
  auto const rows = rows_per_rank(hot, 4);
  EXPECT_EQ(*std::max_element(rows.begin(), rows.end()) >= 1000000, true);
  auto const owner = detail::ranks_of_bins(std::vector<std::uint64_t>(16, 0), 4);
  for (auto o : owner) { EXPECT_EQ(o, 0U); }
}

TEST(MultiGpuPlan, ExchangeMethodsByName) {
  for (auto m : {exchange_method::automatic, exchange_method::peer_copy, exchange_method::nccl}) {
    EXPECT_EQ(exchange_method_from_string(to_string(m)), m);
  }
  try {
    (void)exchange_method_from_string("mpi");
    FAIL() << "an unknown exchange method was accepted";
  } catch (logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("peer_copy"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace joinery::test
