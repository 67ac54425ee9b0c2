// The sort-based CPU joins where the conformance suite does not reach: the CSS-tree itself,
// band widths near overflow for the indexed nested-loop join, and merge joins whose key runs
// straddle the split points of the parallel sort, merge and join (several threads forced).
#include "cpu/css_tree.hpp"
#include "support/oracle.hpp"
#include "support/threads.hpp"

#include <joinery/join.hpp>

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

using detail::cpu::css_tree;

/// Sorted keys with duplicates and the key type's extremes mixed in.
template <class Key>
std::vector<Key> sorted_keys(size_type n, std::mt19937_64& rng, bool narrow_range) {
  std::vector<Key> v(static_cast<std::size_t>(n));
  for (auto& k : v) {
    auto const r = rng();
    if (narrow_range) {
      k = static_cast<Key>(static_cast<std::int64_t>(r % 64) - 16);  // many duplicates
    } else if (r % 17 == 0) {
      k = (r & 32) != 0 ? std::numeric_limits<Key>::max() : std::numeric_limits<Key>::lowest();
    } else {
      k = static_cast<Key>(r);
    }
  }
  std::sort(v.begin(), v.end());
  return v;
}

template <class Key>
void check_tree(std::vector<Key> const& keys, std::mt19937_64& rng) {
  css_tree<Key> const tree(keys.data(), static_cast<size_type>(keys.size()));
  std::vector<Key> queries;
  auto check = [&](Key x) {
    queries.push_back(x);
    auto const lb = std::lower_bound(keys.begin(), keys.end(), x) - keys.begin();
    auto const ub = std::upper_bound(keys.begin(), keys.end(), x) - keys.begin();
    ASSERT_EQ(tree.lower_bound(x), lb) << "n=" << keys.size() << " x=" << +x;
    ASSERT_EQ(tree.upper_bound(x), ub) << "n=" << keys.size() << " x=" << +x;
  };
  constexpr auto lowest = std::numeric_limits<Key>::lowest();
  constexpr auto highest = std::numeric_limits<Key>::max();
  for (Key x : {lowest, static_cast<Key>(lowest + 1), Key{0}, Key{1}, static_cast<Key>(highest - 1),
                highest}) {
    check(x);
  }
  for (auto k : keys) {
    check(k);
    if (k != lowest) { check(static_cast<Key>(k - 1)); }
    if (k != highest) { check(static_cast<Key>(k + 1)); }
  }
  for (int i = 0; i < 2000; ++i) {
    check(static_cast<Key>(rng()));
    check(static_cast<Key>(static_cast<std::int64_t>(rng() % 64) - 16));
  }
  // The interleaved batch search gives the same answers, whatever the batch size.
  for (size_type batch : {1, 7, 32}) {
    std::vector<size_type> got(static_cast<std::size_t>(batch));
    for (std::size_t q0 = 0; q0 < queries.size(); q0 += static_cast<std::size_t>(batch)) {
      auto const count = std::min<size_type>(batch, static_cast<size_type>(queries.size() - q0));
      tree.lower_bound_batch(queries.data() + q0, count, got.data());
      for (size_type g = 0; g < count; ++g) {
        auto const x = queries[q0 + static_cast<std::size_t>(g)];
        ASSERT_EQ(got[static_cast<std::size_t>(g)],
                  std::lower_bound(keys.begin(), keys.end(), x) - keys.begin())
          << "batch of " << batch << ", n=" << keys.size() << " x=" << +x;
      }
    }
  }
}

template <class Key>
void tree_sizes_match_std() {
  constexpr size_type m = css_tree<Key>::node_keys;
  constexpr size_type f = css_tree<Key>::fanout;
  std::mt19937_64 rng(42 + sizeof(Key) + std::is_signed_v<Key>);
  // Empty, one key, a node +- 1, one full directory level +- 1, two levels +- 1, and larger trees.
  std::vector<size_type> sizes{0, 1, 2, m - 1, m, m + 1, m * f - 1, m * f, m * f + 1,
                               m * f * f - 1, m * f * f, m * f * f + 1, 100003};
  for (auto n : sizes) {
    for (bool narrow : {false, true}) {
      SCOPED_TRACE("n=" + std::to_string(n) + (narrow ? " narrow" : " wide"));
      auto const keys = sorted_keys<Key>(n, rng, narrow);
      check_tree(keys, rng);
      if (::testing::Test::HasFatalFailure()) { return; }
    }
  }
  // The directory has the height the fanout implies.
  auto const keys = sorted_keys<Key>(m * f * f + 1, rng, false);
  EXPECT_EQ(css_tree<Key>(keys.data(), m).levels(), 0);
  EXPECT_EQ(css_tree<Key>(keys.data(), m + 1).levels(), 1);
  EXPECT_EQ(css_tree<Key>(keys.data(), m * f).levels(), 1);
  EXPECT_EQ(css_tree<Key>(keys.data(), m * f + 1).levels(), 2);
  EXPECT_EQ(css_tree<Key>(keys.data(), m * f * f + 1).levels(), 3);
}

TEST(CssTree, MatchesStdBoundsInt32) { tree_sizes_match_std<std::int32_t>(); }
TEST(CssTree, MatchesStdBoundsInt64) { tree_sizes_match_std<std::int64_t>(); }
TEST(CssTree, MatchesStdBoundsUint32) { tree_sizes_match_std<std::uint32_t>(); }
TEST(CssTree, MatchesStdBoundsUint64) { tree_sizes_match_std<std::uint64_t>(); }

TEST(CssTree, NodesAreCacheLines) {
  EXPECT_EQ(css_tree<std::int32_t>::node_keys, 16);
  EXPECT_EQ(css_tree<std::uint64_t>::node_keys, 8);
  EXPECT_EQ(css_tree<std::uint64_t>::fanout, 9);
}

/// Every join kind of `algo` on (build, probe) against the oracle: index form compared in full,
/// plus the aggregate form's count and checksum.
template <class Key>
void expect_all_kinds_match(std::vector<Key> const& bk, std::vector<Key> const& pk,
                            join_algorithm algo, predicate pred) {
  std::vector<std::int32_t> bp(bk.size()), pp(pk.size());
  for (std::size_t i = 0; i < bp.size(); ++i) { bp[i] = static_cast<std::int32_t>(i * 7 + 1); }
  for (std::size_t i = 0; i < pp.size(); ++i) { pp[i] = static_cast<std::int32_t>(i * 3 + 5); }
  table_view const build{{column_view::of(bk), column_view::of(bp)}};
  table_view const probe{{column_view::of(pk), column_view::of(pp)}};
  for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                    join_kind::left_outer}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    join_options o;
    o.algorithm = algo;
    o.backend = backend::cpu;
    o.kind = kind;
    o.pred = pred;
    auto const ri = join(build, 0, probe, 0, o);
    EXPECT_EQ(ri.stats.algorithm, algo);
    EXPECT_EQ(diff_rows(oracle_join_index(build, 0, probe, 0, kind, pred), index_rows(ri, kind)),
              "");
    o.output = output_form::aggregate;
    o.build_payloads = {1};
    o.probe_payloads = {1};
    auto const expected = aggregate_of(oracle_join_table(build, 0, probe, 0, o));
    auto const ra = join(build, 0, probe, 0, o);
    EXPECT_EQ(ra.aggregate.count, expected.count);
    EXPECT_EQ(ra.aggregate.checksum, expected.checksum);
  }
}

/// Keys clustered at both ends of the key type's range and around zero, where p - d overflows.
template <class Key>
std::vector<Key> edge_keys(std::size_t n, std::mt19937_64& rng) {
  constexpr auto lowest = std::numeric_limits<Key>::lowest();
  constexpr auto highest = std::numeric_limits<Key>::max();
  std::vector<Key> v(n);
  for (auto& k : v) {
    auto const off = static_cast<Key>(rng() % 5);
    switch (rng() % 3) {
      case 0: k = static_cast<Key>(lowest + off); break;
      case 1: k = static_cast<Key>(highest - off); break;
      default: k = static_cast<Key>(static_cast<Key>(rng() % 5) - static_cast<Key>(2)); break;
    }
  }
  return v;
}

template <class Key>
void band_widths_near_overflow() {
  std::mt19937_64 rng(7 + sizeof(Key));
  auto const bk = edge_keys<Key>(40, rng);
  auto const pk = edge_keys<Key>(30, rng);
  using U = std::make_unsigned_t<Key>;
  constexpr std::uint64_t full = std::numeric_limits<U>::max();
  for (std::uint64_t d : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{3}, full / 2 - 1,
                          full / 2, full / 2 + 1, full - 4, full - 1, full,
                          std::uint64_t{0xFFFFFFFFULL}, std::uint64_t{0x100000000ULL},
                          std::uint64_t{1} << 63, ~std::uint64_t{0} - 1, ~std::uint64_t{0}}) {
    SCOPED_TRACE("d=" + std::to_string(d));
    expect_all_kinds_match(bk, pk, join_algorithm::indexed_nested_loop, predicate::band(d));
  }
}

TEST(IndexedNestedLoop, BandWidthsNearOverflowInt32) { band_widths_near_overflow<std::int32_t>(); }
TEST(IndexedNestedLoop, BandWidthsNearOverflowInt64) { band_widths_near_overflow<std::int64_t>(); }
TEST(IndexedNestedLoop, BandWidthsNearOverflowUint32) {
  band_widths_near_overflow<std::uint32_t>();
}
TEST(IndexedNestedLoop, BandWidthsNearOverflowUint64) {
  band_widths_near_overflow<std::uint64_t>();
}

TEST(IndexedNestedLoop, BandAndEqualityOnLargeTreesWithFourThreads) {
  scoped_threads threads(4);
  std::mt19937_64 rng(11);
  // Enough build rows for several sort chunks and a three-level tree; runs of equal keys.
  std::vector<std::int64_t> bk(70000), pk(20000);
  for (auto& k : bk) { k = static_cast<std::int64_t>(rng() % 60000) - 30000; }
  for (auto& k : pk) { k = static_cast<std::int64_t>(rng() % 70000) - 35000; }
  expect_all_kinds_match(bk, pk, join_algorithm::indexed_nested_loop, predicate::equal());
  expect_all_kinds_match(bk, pk, join_algorithm::indexed_nested_loop, predicate::band(2));
}

/// Probe keys in few long runs, so that runs cross every split point of the chunked sort, the
/// multiway merge and the merge join's probe ranges; some keys have no build rows.
template <class Key>
void runs_across_split_points(std::uint64_t seed) {
  scoped_threads threads(4);
  std::mt19937_64 rng(seed);
  std::vector<Key> const distinct{std::numeric_limits<Key>::lowest(), static_cast<Key>(3),
                                  static_cast<Key>(5), static_cast<Key>(40),
                                  static_cast<Key>(std::numeric_limits<Key>::max() - 1),
                                  std::numeric_limits<Key>::max()};
  std::vector<Key> pk(70000), bk;
  for (auto& k : pk) {
    // One hot key (half the rows), the rest spread over the others.
    k = rng() % 2 == 0 ? static_cast<Key>(5) : distinct[rng() % distinct.size()];
  }
  // Three build rows per key except 40 (probe rows without a match), plus a key only the build
  // side has.
  for (int rep = 0; rep < 3; ++rep) {
    for (auto k : distinct) {
      if (k != static_cast<Key>(40)) { bk.push_back(k); }
    }
  }
  bk.push_back(static_cast<Key>(4));  // a build key no probe row has
  std::shuffle(bk.begin(), bk.end(), rng);
  expect_all_kinds_match(bk, pk, join_algorithm::sort_merge, predicate::equal());
  // Swap the roles: a large build side with long runs, small probe side.
  std::vector<Key> small(pk.begin(), pk.begin() + 20);
  small.push_back(static_cast<Key>(40));
  std::vector<Key> big(pk.begin(), pk.begin() + 40000);
  expect_all_kinds_match(big, small, join_algorithm::sort_merge, predicate::equal());
}

TEST(SortMerge, RunsAcrossSplitPointsInt32) { runs_across_split_points<std::int32_t>(1); }
TEST(SortMerge, RunsAcrossSplitPointsInt64) { runs_across_split_points<std::int64_t>(2); }
TEST(SortMerge, RunsAcrossSplitPointsUint32) { runs_across_split_points<std::uint32_t>(3); }
TEST(SortMerge, RunsAcrossSplitPointsUint64) { runs_across_split_points<std::uint64_t>(4); }

/// Full-range random keys (every radix pass used) over several chunks, with duplicates.
template <class Key>
void wide_keys_many_chunks() {
  scoped_threads threads(4);
  std::mt19937_64 rng(99 + sizeof(Key));
  std::vector<Key> bk(70000), pk(80000);
  for (auto& k : bk) { k = static_cast<Key>(rng()); }
  for (auto& k : pk) { k = rng() % 3 == 0 ? static_cast<Key>(rng()) : bk[rng() % bk.size()]; }
  bk[17] = std::numeric_limits<Key>::lowest();
  bk[18] = std::numeric_limits<Key>::max();
  pk[5] = std::numeric_limits<Key>::lowest();
  pk[6] = std::numeric_limits<Key>::max();
  expect_all_kinds_match(bk, pk, join_algorithm::sort_merge, predicate::equal());
  expect_all_kinds_match(bk, pk, join_algorithm::indexed_nested_loop, predicate::equal());
}

TEST(SortMerge, WideKeysManyChunksInt32) { wide_keys_many_chunks<std::int32_t>(); }
TEST(SortMerge, WideKeysManyChunksInt64) { wide_keys_many_chunks<std::int64_t>(); }
TEST(SortMerge, WideKeysManyChunksUint32) { wide_keys_many_chunks<std::uint32_t>(); }
TEST(SortMerge, WideKeysManyChunksUint64) { wide_keys_many_chunks<std::uint64_t>(); }

TEST(SortMerge, OneSideEmpty) {
  std::vector<std::int32_t> const none, some{1, 2, 2, 3};
  expect_all_kinds_match(none, some, join_algorithm::sort_merge, predicate::equal());
  expect_all_kinds_match(some, none, join_algorithm::sort_merge, predicate::equal());
  expect_all_kinds_match(none, some, join_algorithm::indexed_nested_loop, predicate::band(5));
}

}  // namespace
}  // namespace joinery::test
