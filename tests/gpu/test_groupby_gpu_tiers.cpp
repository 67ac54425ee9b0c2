// GPU group-by tiers against the oracle (tests/support): HGB on both sides of its shared-memory
// limit, its one-group variant, shared tier and table restart, the automatic choice, the
// phases' timing, and PGB past its shared tables, through its table restart, with more
// columns than one scatter moves and with a hot partition. GPU tests skip with a message
// when no GPU is present.
#include "gpu/groupby_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace joinery::test {
namespace {

#if defined(JOINERY_HAS_CUDA)

TEST(GpuHashGroupby, SharedMemoryLimitBoundary) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 1000 groups; count and sum of an int32. Tier 1 needs a table of 2048 slots (two 8-byte
  // accumulators and a 4-byte key per slot, about 40 KB): the limits below give it a table too
  // small (then tier 2 runs), none at all (0), or all it wants.
  std::vector<std::int32_t> keys(200000);
  for (std::size_t i = 0; i < keys.size(); ++i) { keys[i] = static_cast<std::int32_t>((i * 7919) % 1000); }
  auto const input = make_input(keys);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1}, {aggregation_kind::sum, 1}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (std::int64_t limit : {std::int64_t{16000}, std::int64_t{15999}, std::int64_t{0},
                             std::int64_t{1} << 20}) {
    detail::gpu::groupby_tuning t;
    t.hgb_shared_bytes = limit;
    t.hgb_dense_keys = false;  // the hashed table's boundary (the keys are dense)
    EXPECT_EQ(diff_groups(expected, groupby_rows(run_hgb(device, aggs, t).view())), "")
      << "shared limit " << limit;
  }
  // Every aggregate on both paths.
  auto const all = all_aggregations(input.view());
  auto const expected_all = oracle_groupby(input.view(), 0, all);
  for (std::int64_t limit : {std::int64_t{0}, std::int64_t{1} << 20}) {
    detail::gpu::groupby_tuning t;
    t.hgb_shared_bytes = limit;
    EXPECT_EQ(diff_groups(expected_all, groupby_rows(run_hgb(device, all, t).view())), "")
      << "all aggregates, shared limit " << limit;
  }
}

TEST(GpuHashGroupby, OneGroupVariantMatchesTheOracleOnEveryShape) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Both tier-1 variants, forced, on: one group; runs of 3000 equal keys (warps' items are
  // uniform, and a tile of a warp meets two such groups, so the carry restarts and the second
  // group takes the atomics); 1000 uniform groups (no uniform warp); a hot key on every other row.
  size_type const n = 300000;
  std::vector<std::vector<std::int64_t>> shapes(4, std::vector<std::int64_t>(n));
  auto const uniform = uniform_keys<std::int64_t>(n, 1000, 7);
  for (size_type i = 0; i < n; ++i) {
    auto const u = static_cast<std::size_t>(i);
    shapes[0][u] = -5;
    shapes[1][u] = i / 3000;
    shapes[2][u] = uniform[u];
    shapes[3][u] = i % 2 == 0 ? 77 : uniform[u];
  }
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    auto const input = make_input(shapes[s], 50 + s);
    auto const all = all_aggregations(input.view());
    auto const expected = oracle_groupby(input.view(), 0, all);
    auto const device = place(input.view(), memory_space::device);
    for (int one : {0, 1}) {
      for (bool dense : {false, true}) {  // the hashed table, and the dense tier's
        detail::gpu::groupby_tuning t;
        t.hgb_one_group = one;
        t.hgb_dense_keys = dense;
        EXPECT_EQ(diff_groups(expected, groupby_rows(run_hgb(device, all, t).view())), "")
          << "shape " << s << " one_group " << one << " dense " << dense;
      }
    }
  }
  // 4-byte keys, one group, derived choice.
  auto const input = make_input(std::vector<std::int32_t>(n, 9), 59);
  auto const all = all_aggregations(input.view());
  EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, all),
                        groupby_rows(run_hgb(place(input.view(), memory_space::device), all, {}).view())),
            "");
}

// The phases are the GPU's times between laps, written once the run is over: named, none
// negative, and together no longer than the call took.
TEST(GpuGroupbyPhases, AreTimedOnTheStream) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 1 << 20;
  auto const in = lo32_input(uniform_keys<std::int32_t>(n, 1 << 12, 86),
                             random_values<std::int32_t>(n, 87), 86);
  auto const device = place(in.view(), memory_space::device);
  std::vector<aggregation> const aggs{{aggregation_kind::sum, 1}, {aggregation_kind::max, 2}};
  for (auto const algo : {groupby_algorithm::hash, groupby_algorithm::sort_transformed,
                          groupby_algorithm::partition_transformed}) {
    std::vector<phase_time> phases;
    auto const t0 = std::chrono::steady_clock::now();
    auto const t = detail::gpu::run_groupby(algo, device.view(), 0, aggs, true, {}, &phases,
                                            nullptr, default_stream(), device_resource());
    double const wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string const what(to_string(algo));
    ASSERT_GE(phases.size(), 2U) << what;
    EXPECT_EQ(phases.back().name, "output") << what;
    double total = 0;
    for (auto const& p : phases) {
      EXPECT_FALSE(p.name.empty()) << what;
      EXPECT_GE(p.seconds, 0.0) << what << ": " << p.name;
      total += p.seconds;
    }
    EXPECT_LE(total, wall) << what;
    auto const host = place(t.view(), memory_space::host);
    EXPECT_EQ(diff_groups(oracle_groupby(in.view(), 0, aggs), groupby_rows(host.view())), "")
        << what;
  }
}

TEST(GpuHashGroupby, SharedTierMergesTheGroupsOfEveryBlock) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Sorted keys: each block meets a few hundred groups, the run 2^21 / 10 of them, so tier 1
  // succeeds and its merge fills a large global table. The keys straddle zero: -1 (all bits
  // set, the shared table's empty marker) is a group too.
  std::vector<std::int32_t> keys(std::size_t{1} << 21);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    keys[i] = static_cast<std::int32_t>(i / 10) - 100000;
  }
  auto const input = make_input(keys, 21);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::sum, 1},
                                      {aggregation_kind::max, 3},
                                      {aggregation_kind::min, 6}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  detail::gpu::groupby_tuning hashed;
  hashed.hgb_dense_keys = false;  // the keys are dense: the dense tier would take them
  EXPECT_EQ(diff_groups(expected, groupby_rows(run_hgb(device, aggs, hashed).view())), "");
  EXPECT_EQ(diff_groups(expected, groupby_rows(run_hgb(device, aggs, {}).view())), "");
}

TEST(GpuHashGroupby, SharedTierFindsKeysOffTheirHomeSlotsAndBuckets) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Spread keys in random order, up to nearly half a table's slots (max_groups): many keys sit
  // off their home slot and some off their home bucket, found by the warp's later probes while
  // other lanes still claim. A small shared-memory limit makes a small table (higher load).
  std::mt19937_64 rng(41);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::sum, 1},
                                      {aggregation_kind::max, 3},
                                      {aggregation_kind::min, 2}};
  for (std::size_t shared_bytes : {std::size_t{0}, std::size_t{48} << 10}) {
    for (std::uint64_t groups : {std::uint64_t{300}, std::uint64_t{1000}, std::uint64_t{3000}}) {
      SCOPED_TRACE("groups " + std::to_string(groups) + ", shared bytes " +
                   std::to_string(shared_bytes));
      detail::gpu::groupby_tuning hashed;
      hashed.hgb_dense_keys = false;
      if (shared_bytes != 0) { hashed.hgb_shared_bytes = static_cast<std::int64_t>(shared_bytes); }
      std::vector<std::int32_t> narrow(std::size_t{1} << 20);
      std::vector<std::uint64_t> wide(narrow.size());
      for (std::size_t i = 0; i < narrow.size(); ++i) {
        auto const g = rng() % groups;
        narrow[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(g) * 2654435761U);
        wide[i] = g * 0x9e3779b97f4a7c15ULL;
      }
      auto const narrow_input = make_input(narrow, 43);
      auto const wide_input = make_input(wide, 47);
      for (auto const* input : {&narrow_input, &wide_input}) {
        auto const expected = oracle_groupby(input->view(), 0, aggs);
        auto const device = place(input->view(), memory_space::device);
        EXPECT_EQ(diff_groups(expected, groupby_rows(run_hgb(device, aggs, hashed).view())), "");
      }
    }
  }
}

TEST(GpuHashGroupby, SharedTierOverflowingLateStartsOverCleanly) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Most rows hold 8 groups; the last 2^17 rows are all distinct. Blocks that only meet the
  // former merge their groups into the global table before the blocks meeting the latter
  // overflow their shared tables: the run must discard that merge and start over.
  auto const n = std::size_t{1} << 22;
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = i + (std::size_t{1} << 17) < n ? (i % 8) * 0x9e3779b97f4a7c15ULL : i;
  }
  keys[3] = ~0ULL;  // the empty marker of the shared table as a key
  auto const input = make_input(keys, 22);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::sum, 4},
                                      {aggregation_kind::avg, 1}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  EXPECT_EQ(diff_groups(expected, groupby_rows(run_hgb(device, aggs, {}).view())), "");
  // Keys only (no aggregates): the groups are still found.
  auto const keys_only = oracle_groupby(input.view(), 0, {});
  EXPECT_EQ(diff_groups(keys_only, groupby_rows(run_hgb(device, {}, {}).view())), "");
}

/// `automatic` through the internal entry point with `tuning`: the algorithm it ran; the result in
/// `host_result`.
groupby_algorithm automatic_ran(table const& device_input, std::vector<aggregation> const& aggs,
                                detail::gpu::groupby_tuning const& tuning, table& host_result) {
  groupby_algorithm used = groupby_algorithm::automatic;
  auto r = detail::gpu::run_groupby(groupby_algorithm::automatic, device_input.view(), 0, aggs,
                                    false, tuning, nullptr, &used, default_stream(),
                                    device_resource());
  default_stream().synchronize();
  host_result = place(r.view(), memory_space::host);
  return used;
}

TEST(GpuHashGroupby, AutomaticTurnsToPartitionOrSortBeyondTheFirstTable) {
  JOINERY_SKIP_WITHOUT_GPU();
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1}, {aggregation_kind::max, 2}};
  detail::gpu::groupby_tuning t;
  t.hgb_shared_bytes = 0;  // straight to the global table
  t.hgb_initial_groups = 1000;
  // Beyond the table: PGB-TR for 4- and 8-byte keys.
  auto const check = [&](auto const& keys, size_type domain, groupby_algorithm beyond) {
    auto const input = make_input(keys);
    table host;
    EXPECT_EQ(automatic_ran(place(input.view(), memory_space::device), aggs, t, host),
              domain <= 1000 ? groupby_algorithm::hash : beyond)
      << domain;
    EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, aggs), groupby_rows(host.view())), "")
      << domain;
  };
  for (size_type domain : {size_type{500}, size_type{50000}}) {
    check(uniform_keys<std::int64_t>(200000, domain, 5), domain,
          groupby_algorithm::partition_transformed);
    check(uniform_keys<std::int32_t>(200000, domain, 5), domain,
          groupby_algorithm::partition_transformed);
  }
  // Through the public API: the algorithm actually run is reported.
  auto const input = make_input(uniform_keys<std::int32_t>(100000, 64, 6));
  groupby_options o;
  o.backend = backend::gpu;
  auto const r = groupby(place(input.view(), memory_space::device).view(), 0, aggs, o);
  EXPECT_EQ(r.stats.algorithm, groupby_algorithm::hash);
  EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, aggs),
                        groupby_rows(place(r.columns.view(), memory_space::host).view())),
            "");
}

TEST(GpuHashGroupby, AutomaticSortsOrPartitionsHeavilySkewedKeysPastTheSharedTier) {
  JOINERY_SKIP_WITHOUT_GPU();
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1}, {aggregation_kind::max, 2},
                                      {aggregation_kind::sum, 1}};
  detail::gpu::groupby_tuning t;
  t.hgb_shared_bytes = 0;  // past tier 1 at once: the skew test decides
  auto const run = [&](auto keys, groupby_algorithm expected_algo, char const* what) {
    auto const input = make_input(keys);
    table host;
    EXPECT_EQ(automatic_ran(place(input.view(), memory_space::device), aggs, t, host),
              expected_algo)
      << what;
    EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, aggs), groupby_rows(host.view())), "")
      << what;
  };
  // 40% of the rows on one key, the rest over 50000 keys: PGB-TR, by the estimate or where
  // skew_partition_share asks for it.
  auto hot32 = uniform_keys<std::int32_t>(300000, 50000, 7);
  for (std::size_t i = 0; i < hot32.size(); i += 5) { hot32[i] = hot32[i + 1] = -17; }
  auto hot64 = uniform_keys<std::uint64_t>(300000, 50000, 8);
  for (std::size_t i = 0; i < hot64.size(); i += 5) { hot64[i] = hot64[i + 1] = ~0ULL; }
  run(hot32, groupby_algorithm::partition_transformed, "int32, one key 40%");
  run(hot64, groupby_algorithm::partition_transformed, "uint64, the largest key 40%");
  t.skew_partition_share = 0.2;
  run(hot32, groupby_algorithm::partition_transformed, "int32, one key 40%, partitioned");
  run(hot64, groupby_algorithm::partition_transformed, "uint64, the largest key 40%, partitioned");
  // Fewer rows than samples, every row one key.
  run(std::vector<std::int64_t>(1000, 5), groupby_algorithm::partition_transformed, "one key");
  t.skew_partition_share = -1;
  // Uniform keys, or the test switched off: tier 2.
  run(uniform_keys<std::int32_t>(300000, 50000, 9), groupby_algorithm::hash, "uniform");
  t.skew_partition_share = 2;
  t.skew_sort_groups = -1;
  run(hot32, groupby_algorithm::hash, "switched off");
  // A share below the threshold (one key 10%): PGB-TR from an estimate of more groups than one
  // of its partitions takes (5120), tier 2 below.
  t.skew_partition_share = -1;
  t.skew_sort_groups = 0;
  for (int domain : {50000, 36000, 2000}) {
    auto const name = std::to_string(domain);
    auto warm = uniform_keys<std::int32_t>(300000, domain, 10);
    for (std::size_t i = 0; i < warm.size(); i += 10) { warm[i] = 3; }
    run(warm, domain > 2000 ? groupby_algorithm::partition_transformed : groupby_algorithm::hash,
        ("one key 10%, " + name + " keys").c_str());
    auto warm64 = uniform_keys<std::int64_t>(300000, domain, 11);
    for (std::size_t i = 0; i < warm64.size(); i += 10) { warm64[i] = -3; }
    run(warm64, domain > 2000 ? groupby_algorithm::partition_transformed : groupby_algorithm::hash,
        ("int64, one key 10%, " + name + " keys").c_str());
  }
  // Switched off: tier 2 at any estimate.
  t.skew_sort_groups = -1;
  auto warm = uniform_keys<std::int32_t>(300000, 50000, 10);
  for (std::size_t i = 0; i < warm.size(); i += 10) { warm[i] = 3; }
  run(warm, groupby_algorithm::hash, "one key 10%, the sort switch off");
}

/// automatic on `keys` (and make_input's value columns) runs `expected` and matches the oracle.
template <class K>
void expect_automatic(std::vector<K> const& keys, std::vector<aggregation> const& aggs,
                      detail::gpu::groupby_tuning const& t, groupby_algorithm expected,
                      std::string const& what) {
  auto const input = make_input(keys);
  table host;
  EXPECT_EQ(automatic_ran(place(input.view(), memory_space::device), aggs, t, host), expected)
    << what;
  EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, aggs), groupby_rows(host.view())), "")
    << what;
}

TEST(GpuHashGroupby, AutomaticSortsFloatSumsOnAHotKey) {
  JOINERY_SKIP_WITHOUT_GPU();
  using k = aggregation_kind;
  std::vector<aggregation> const avg{{k::avg, 6}};             // float64: a float sum and a count
  std::vector<aggregation> const sum{{k::sum, 1}, {k::count, -1}};  // int32: no float sum
  std::vector<aggregation> const mixed{{k::sum, 1}, {k::sum, 3}, {k::max, 5}, {k::sum, 6}};
  detail::gpu::groupby_tuning t;
  auto const run = [&](auto const& keys, std::vector<aggregation> const& aggs,
                       groupby_algorithm expected, std::string const& what) {
    expect_automatic(keys, aggs, t, expected, what);
  };
  // Every `every`-th row on one key, the others uniform over `domain` keys spread by an odd
  // factor (dense keys would run the dense tier, which takes them before any of this).
  auto const hot = [](auto zero, size_type domain, int every, std::uint64_t seed) {
    using K = decltype(zero);
    auto keys = uniform_keys<K>(200000, domain, seed);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      keys[i] = i % static_cast<std::size_t>(every) == 0 ? K{42} : static_cast<K>(keys[i] * 40503);
    }
    return keys;
  };
  // A third of the rows on one key over 50 keys: the sort for AVG (with a dictionary at so few
  // groups), HGB for integer sums and for a plan whose float sums are under a third of its
  // accumulators.
  auto const hot32 = hot(std::int32_t{}, 50, 3, 21);
  auto const hot64 = hot(std::int64_t{}, 50, 3, 22);
  run(hot32, avg, groupby_algorithm::sort_dictionary, "int32, AVG, a hot key");
  run(hot64, avg, groupby_algorithm::sort_dictionary, "int64, AVG, a hot key");
  run(hot32, sum, groupby_algorithm::hash, "int32, SUM of int32, a hot key");
  run(hot32, mixed, groupby_algorithm::hash, "int32, one float sum in four, a hot key");
  // A tenth on one key: HGB at few groups; past tier 1, over many groups, the sort.
  run(hot(std::int32_t{}, 50, 10, 23), avg, groupby_algorithm::hash, "int32, AVG, one key 10%");
  t.hgb_shared_bytes = 0;  // past tier 1 at once
  run(hot(std::int32_t{}, 50000, 10, 24), avg, groupby_algorithm::sort_dictionary,
      "int32, AVG, one key 10%, past tier 1");
  auto few = t;  // the dictionary only up to 1000 groups: 50000 sort without it
  few.dictionary_automatic_groups = 1000;
  expect_automatic(hot(std::int32_t{}, 50000, 10, 24), avg, few,
                   groupby_algorithm::sort_transformed,
                   "int32, AVG, one key 10%, past tier 1, dictionary up to 1000 groups");
  run(hot(std::int64_t{}, 50000, 10, 25), mixed, groupby_algorithm::sort_dictionary,
      "int64, one float sum in four, one key 10%, past tier 1");
}

TEST(GpuHashGroupby, AutomaticPartitionsManyAccumulatorsOrCountsPastTierOne) {
  JOINERY_SKIP_WITHOUT_GPU();
  using k = aggregation_kind;
  detail::gpu::groupby_tuning t;
  t.hgb_shared_bytes = 0;  // past tier 1 at once
  auto const run = [&](auto const& keys, std::vector<aggregation> const& aggs,
                       groupby_algorithm expected, std::string const& what) {
    expect_automatic(keys, aggs, t, expected, what);
  };
  // Uniform keys over 20000 groups, fewer than partition_groups: tier 2 for four accumulators,
  // PGB-TR for five and for COUNT(*) alone.
  std::vector<aggregation> const four{{k::max, 1}, {k::min, 1}, {k::sum, 1}, {k::count, -1}};
  std::vector<aggregation> const five{{k::max, 1}, {k::min, 1}, {k::sum, 1}, {k::count, -1},
                                      {k::max, 2}};
  std::vector<aggregation> const count{{k::count, -1}};
  run(uniform_keys<std::int32_t>(200000, 20000, 31), four, groupby_algorithm::hash, "int32, four");
  run(uniform_keys<std::int32_t>(200000, 20000, 31), five, groupby_algorithm::partition_transformed,
      "int32, five");
  run(uniform_keys<std::int64_t>(200000, 20000, 32), five, groupby_algorithm::partition_transformed,
      "int64, five");
  run(uniform_keys<std::int64_t>(200000, 20000, 33), count,
      groupby_algorithm::partition_transformed, "int64, COUNT(*)");
}

TEST(GpuHashGroupby, TierTwoReducesTheLanesOfOneSlotFirst) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Tier 2 alone (no shared memory): warps whose lanes share slots without being uniform.
  size_type const n = 200000;
  auto const uniform = uniform_keys<std::int64_t>(n, 5000, 13);
  std::mt19937_64 rng(14);
  std::vector<std::vector<std::int64_t>> shapes(4, std::vector<std::int64_t>(static_cast<std::size_t>(n)));
  for (std::size_t i = 0; i < shapes[0].size(); ++i) {
    shapes[0][i] = rng() % 10 < 6 ? 42 : uniform[i];             // a hot key on 60% of rows
    shapes[1][i] = static_cast<std::int64_t>((i / 2) % 1000);     // pairs of equal keys
    shapes[2][i] = static_cast<std::int64_t>(rng() % 4) - 2;      // 4 groups, few uniform warps
    shapes[3][i] = static_cast<std::int64_t>(i % 3 == 0 ? 7 : i);  // every third row one key
  }
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    detail::gpu::groupby_tuning t;
    t.hgb_shared_bytes = 0;
    auto const check = [&](table const& input) {
      auto const all = all_aggregations(input.view());
      EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, all),
                            groupby_rows(run_hgb(place(input.view(), memory_space::device), all, t).view())),
                "")
        << "shape " << s;
    };
    check(make_input(shapes[s], 70 + s));
    std::vector<std::uint32_t> narrow(shapes[s].size());
    for (std::size_t i = 0; i < narrow.size(); ++i) { narrow[i] = static_cast<std::uint32_t>(shapes[s][i]); }
    check(make_input(narrow, 80 + s));
  }
}

TEST(GpuHashGroupby, RestartsWhenTheFirstTableOverflows) {
  JOINERY_SKIP_WITHOUT_GPU();
  check_first_table_sizes(groupby_algorithm::hash,
                          make_input(uniform_keys<std::uint64_t>(100000, 20000, 12)),
                          [](auto& t, std::int64_t g) { t.hgb_initial_groups = g; });
}

constexpr groupby_algorithm pgb_algorithms[] = {groupby_algorithm::partition,
                                                groupby_algorithm::partition_transformed};

TEST(GpuPartitionGroupby, PartitionsTooFullForTheirTablesArePartitionedAgain) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 50000 groups in 1, 2 or 8 partitions first, with tables of 64 and 128 slots (48 and 96
  // groups) or the derived size: the run partitions again, finer, until every partition fits.
  auto const input = make_input(uniform_keys<std::int32_t>(300000, 50000, 31), 31);
  auto const aggs = all_aggregations(input.view());
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (auto algo : pgb_algorithms) {
    for (auto [bits, slots] : {std::pair{0, 64}, std::pair{1, 128}, std::pair{3, 0}}) {
      detail::gpu::groupby_tuning t;
      t.pgb_bits = bits;
      t.pgb_slots = slots;
      EXPECT_EQ(diff_groups(expected, groupby_rows(run_tuned(algo, device, aggs, t).view())), "")
        << to_string(algo) << " bits " << bits << " slots " << slots;
    }
  }
}

TEST(GpuPartitionGroupby, SplitPartitionsAreMergedForEveryAggregate) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 100000 rows in 1, 4 or 16 partitions: each partition is larger than a work item, so its
  // items' partial groups (counts, 64-bit sums, minima, averages) are aggregated again.
  auto const input = make_input(uniform_keys<std::uint64_t>(100000, 20000, 13), 13);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::sum, 3},
                                      {aggregation_kind::min, 5},
                                      {aggregation_kind::avg, 1}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (auto algo : pgb_algorithms) {
    for (int bits : {0, 2, 4}) {
      detail::gpu::groupby_tuning t;
      t.pgb_bits = bits;
      EXPECT_EQ(diff_groups(expected, groupby_rows(run_tuned(algo, device, aggs, t).view())), "")
        << to_string(algo) << " bits " << bits;
    }
  }
}

TEST(GpuPartitionGroupby, FewKeysLeaveMostPartitionsEmpty) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 5 keys in 2^12 or 2^16 partitions (two passes): most partitions of both passes are empty.
  auto const input = make_input(uniform_keys<std::int64_t>(100000, 5, 29), 29);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::sum, 2},
                                      {aggregation_kind::max, 3}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (auto algo : pgb_algorithms) {
    for (int bits : {12, 16}) {
      detail::gpu::groupby_tuning t;
      t.pgb_bits = bits;
      EXPECT_EQ(diff_groups(expected, groupby_rows(run_tuned(algo, device, aggs, t).view())), "")
        << to_string(algo) << " bits " << bits;
    }
  }
}

TEST(GpuPartitionGroupby, MoreAccumulatorsThanATableTakesAreRefused) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 33 value columns, one SUM each: 33 accumulators, past the 32 a table takes.
  size_type const n = 1000;
  std::vector<column> cols;
  cols.push_back(column::from_host(uniform_keys<std::int32_t>(n, 50, 33)));
  std::vector<aggregation> aggs;
  for (size_type c = 1; c <= 33; ++c) {
    cols.push_back(column::from_host(random_values<std::int32_t>(n, 200 + static_cast<std::uint64_t>(c))));
    aggs.push_back({aggregation_kind::sum, c});
  }
  table const input(std::move(cols));
  auto const device = place(input.view(), memory_space::device);
  for (auto algo : pgb_algorithms) {
    EXPECT_THROW((void)run_tuned(algo, device, aggs, {}), logic_error) << to_string(algo);
  }
  check_against_oracle(groupby_algorithm::hash, input, "33 sums", aggs);
}

TEST(GpuPartitionGroupby, EstimateMatchesTheSampleProfileOnTheHost) {
  JOINERY_SKIP_WITHOUT_GPU();
  // The GPU's estimate (distinct, once- and twice-drawn keys of 2^14 evenly spaced samples) must
  // equal groups_from_profile over the same samples counted here: uniform keys, Zipf 1 keys, and
  // fewer rows than samples (every row sampled: exact).
  auto const check = [](std::vector<std::int32_t> const& keys, char const* what) {
    auto const n = static_cast<size_type>(keys.size());
    size_type const samples = std::min<size_type>(n, size_type{1} << 14);
    std::unordered_map<std::int32_t, size_type> drawn;
    for (size_type i = 0; i < samples; ++i) { ++drawn[keys[static_cast<std::size_t>(i * n / samples)]]; }
    size_type once = 0;
    size_type twice = 0;
    for (auto const& [key, c] : drawn) {
      once += c == 1 ? 1 : 0;
      twice += c == 2 ? 1 : 0;
    }
    auto const expected = detail::groups_from_profile(static_cast<size_type>(drawn.size()), once,
                                                      twice, samples, n);
    std::vector<column> cols;
    cols.push_back(column::from_host(keys));
    auto const device = place(table(std::move(cols)).view(), memory_space::device);
    auto const got = detail::gpu::gb::estimate_groups<std::int32_t>(
        static_cast<std::int32_t const*>(device.view().column(0).data()), n, 8, default_stream(),
        device_resource());
    EXPECT_EQ(got, expected) << what;
  };
  size_type const n = 1 << 20;
  check(uniform_keys<std::int32_t>(n, 50000, 23), "uniform over 50000 keys");
  std::vector<double> weights(1 << 16);
  for (std::size_t r = 0; r < weights.size(); ++r) { weights[r] = 1.0 / static_cast<double>(r + 1); }
  std::discrete_distribution<std::int32_t> zipf(weights.begin(), weights.end());
  std::mt19937_64 rng(24);
  std::vector<std::int32_t> skewed(static_cast<std::size_t>(n));
  for (auto& k : skewed) { k = zipf(rng) * 7 - 1000; }
  check(skewed, "Zipf 1 over 2^16 keys");
  check(uniform_keys<std::int32_t>(5000, 700, 25), "5000 rows");
}

TEST(GpuPartitionGroupby, SkewHidesTheGroupsFromTheEstimate) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 40% of the rows on one key, the rest over 60000 keys: the sample sees few of them, so the
  // fanout is too small and the run partitions again; the hot key's partition is split.
  auto keys = uniform_keys<std::int32_t>(400000, 60000, 19);
  for (std::size_t i = 0; i < keys.size(); i += 5) { keys[i] = keys[i + 1] = 11; }
  auto const input = make_input(keys, 19);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::max, 2},
                                      {aggregation_kind::sum, 1}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (auto algo : pgb_algorithms) {
    for (int slots : {0, 256}) {
      detail::gpu::groupby_tuning t;
      t.pgb_slots = slots;
      EXPECT_EQ(diff_groups(expected, groupby_rows(run_tuned(algo, device, aggs, t).view())), "")
        << to_string(algo) << " slots " << slots;
    }
  }
}

TEST(GpuPartitionGroupby, TransformedMovesRowIdsBeyondSixteenColumns) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 17 aggregated columns: more than one scatter moves, so PGB-TR moves row ids instead.
  size_type const n = 70000;
  std::vector<column> cols;
  cols.push_back(column::from_host(uniform_keys<std::int64_t>(n, 3000, 17)));
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}};
  for (size_type c = 1; c <= 17; ++c) {
    cols.push_back(column::from_host(random_values<std::int32_t>(n, 100 + static_cast<std::uint64_t>(c))));
    aggs.push_back({c % 2 == 0 ? aggregation_kind::sum : aggregation_kind::max, c});
  }
  table const input(std::move(cols));
  check_against_oracle(groupby_algorithm::partition_transformed, input, "17 columns", aggs);
  check_against_oracle(groupby_algorithm::partition, input, "17 columns", aggs);
}

TEST(GpuPartitionGroupby, HotPartitionIsSpreadOverBlocks) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Half of 2^21 rows hold one key; its partition is cut into many work items, whose partial
  // groups are aggregated again. Also in two passes, at the largest fanout, and past it refused.
  auto keys = uniform_keys<std::uint32_t>(size_type{1} << 21, size_type{1} << 15, 41);
  for (std::size_t i = 0; i < keys.size(); i += 2) { keys[i] = 42; }
  auto const input = make_input(keys, 41);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::sum, 1},
                                      {aggregation_kind::max, 4},
                                      {aggregation_kind::avg, 6}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (auto algo : pgb_algorithms) {
    for (int bits : {-1, 11, 16}) {
      detail::gpu::groupby_tuning t;
      t.pgb_bits = bits;
      EXPECT_EQ(diff_groups(expected, groupby_rows(run_tuned(algo, device, aggs, t).view())), "")
        << to_string(algo) << " bits " << bits;
    }
    detail::gpu::groupby_tuning t;
    t.pgb_bits = 17;
    EXPECT_THROW((void)run_tuned(algo, device, aggs, t), logic_error) << to_string(algo);
  }
}

#endif

}  // namespace
}  // namespace joinery::test
