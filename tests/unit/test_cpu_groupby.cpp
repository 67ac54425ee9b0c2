// The CPU group-bys beyond what the conformance suite reaches: both paths of the hash group-by
// forced, 1 and 4 threads, every key type, floating columns, extreme values, g = |R|, a hot
// partition split across threads, chunks of one key, the derived table-size limit; the sort
// group-by's key order, groups spanning thread ranges, values carried or gathered.
#include "support/oracle.hpp"
#include "support/threads.hpp"

#include "cpu/cpu_groupby.hpp"

#include <joinery/gen.hpp>
#include <joinery/groupby.hpp>

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

namespace joinery::test {
namespace {

using detail::cpu::hash_groupby_path;
using detail::cpu::hash_groupby_policy;
using detail::cpu::sort_groupby_policy;

/// count, then sum/min/max/avg of every column but the key.
std::vector<aggregation> all_aggregates(table_view const& t) {
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}};
  for (size_type c = 1; c < t.num_columns(); ++c) {
    for (auto k : {aggregation_kind::sum, aggregation_kind::min, aggregation_kind::max,
                   aggregation_kind::avg}) {
      aggs.push_back({k, c});
    }
  }
  return aggs;
}

/// Keys over `domain` values (uniform or Zipf), integer payloads of every 4/8-byte type, then
/// a float and a double column (positive, so that float sums are well conditioned).
table make_input(size_type rows, size_type domain, type_id key, double zipf, std::uint64_t seed) {
  gen::relation_spec s;
  s.rows = rows;
  s.kind = domain == rows && zipf == 0 ? gen::key_kind::primary : gen::key_kind::foreign;
  s.domain = domain;
  s.zipf = zipf;
  s.key_type = key;
  s.payload_types = {type_id::int32, type_id::int64, type_id::uint32, type_id::uint64};
  s.seed = seed;
  auto cols = gen::generate(s).release();
  std::vector<float> f(static_cast<std::size_t>(rows));
  std::vector<double> d(static_cast<std::size_t>(rows));
  for (std::size_t i = 0; i < f.size(); ++i) {
    f[i] = 0.25f + static_cast<float>((i * 7919) % 1000) / 8.0f;
    d[i] = 1.0 + static_cast<double>((i * 104729) % 100000) / 3.0;
  }
  cols.push_back(column::from_host(f));
  cols.push_back(column::from_host(d));
  return table(std::move(cols));
}

void expect_matches_oracle(table const& in, table const& result) {
  auto const aggs = all_aggregates(in.view());
  ASSERT_EQ(result.num_columns(), static_cast<size_type>(aggs.size() + 1));
  for (std::size_t i = 0; i < aggs.size(); ++i) {
    auto const t = aggs[i].kind == aggregation_kind::count ? type_id::int64
                                                           : in.column(aggs[i].column).type();
    EXPECT_EQ(result.column(static_cast<size_type>(i + 1)).type(),
              aggregation_result_type(aggs[i].kind, t));
  }
  EXPECT_EQ(diff_groups(oracle_groupby(in.view(), 0, aggs), groupby_rows(result.view())), "");
}

/// A host table from host vectors (columns are move-only).
template <class... V>
table table_of(V const&... v) {
  std::vector<column> cols;
  (cols.push_back(column::from_host(v)), ...);
  return table(std::move(cols));
}

template <class K>
bool keys_sorted(table const& t) {
  auto const v = t.column(0).to_vector<K>();
  return std::is_sorted(v.begin(), v.end());
}

// ---- hash: each path forced, over key types, thread counts and group counts ----

using hash_case = std::tuple<type_id, int, hash_groupby_path, size_type>;  // key, threads, path, g

std::string hash_case_name(hash_case const& c) {
  auto const& [key, threads, path, groups] = c;
  return std::string(to_string(key)) + "_t" + std::to_string(threads) +
         (path == hash_groupby_path::partition ? "_partition" : "_preagg") + "_g" +
         std::to_string(groups);
}

class CpuHashGroupby : public ::testing::TestWithParam<hash_case> {};

TEST_P(CpuHashGroupby, MatchesOracle) {
  auto const [key, threads, path, groups] = GetParam();
  scoped_threads ts(threads);
  size_type const rows = 40000;
  auto const in = make_input(rows, groups, key, 0.0, 11 + static_cast<std::uint64_t>(groups));
  hash_groupby_policy p;
  p.serial_rows = 0;  // parallel even for small inputs
  p.max_local_groups = path == hash_groupby_path::partition ? 0 : std::int64_t{1} << 40;
  hash_groupby_path taken{};
  std::vector<phase_time> phases;
  auto const r = detail::cpu::hash_groupby(in.view(), 0, all_aggregates(in.view()), p, &phases,
                                           &taken);
  EXPECT_EQ(taken, path);
  EXPECT_FALSE(phases.empty());
  expect_matches_oracle(in, r);
}

INSTANTIATE_TEST_SUITE_P(
  PathsKeysThreads, CpuHashGroupby,
  ::testing::Combine(::testing::Values(type_id::int32, type_id::int64, type_id::uint32,
                                       type_id::uint64),
                     ::testing::Values(1, 4),
                     ::testing::Values(hash_groupby_path::pre_aggregate,
                                       hash_groupby_path::partition),
                     ::testing::Values(size_type{1}, size_type{1000}, size_type{40000})),
  [](auto const& info) { return hash_case_name(info.param); });

TEST(CpuHashGroupby, ManyDistinctKeysSwitchToPartitioningByThemselves) {
  scoped_threads ts(4);
  // g = |R| with a small cache: the thread tables overflow and the run partitions.
  auto const in = make_input(60000, 60000, type_id::int64, 0.0, 5);
  hash_groupby_policy p;
  p.serial_rows = 0;
  p.cache_bytes = 64 << 10;
  hash_groupby_path taken{};
  auto const r = detail::cpu::hash_groupby(in.view(), 0, all_aggregates(in.view()), p, nullptr,
                                           &taken);
  EXPECT_EQ(taken, hash_groupby_path::partition);
  EXPECT_EQ(r.num_rows(), 60000);
  expect_matches_oracle(in, r);
  // Few groups with the same policy stay in the thread tables, merged across hash partitions.
  auto const few = make_input(60000, 800, type_id::int64, 0.0, 6);
  auto const r2 = detail::cpu::hash_groupby(few.view(), 0, all_aggregates(few.view()), p,
                                            nullptr, &taken);
  EXPECT_EQ(taken, hash_groupby_path::pre_aggregate);
  expect_matches_oracle(few, r2);
}

TEST(CpuHashGroupby, HotPartitionIsSplitAcrossThreads) {
  scoped_threads ts(4);
  auto const in = make_input(80000, 20000, type_id::int32, 1.5, 7);
  hash_groupby_policy p;
  p.serial_rows = 0;
  p.max_local_groups = 0;
  p.split_factor = 1.5;
  p.chunk_rows = 64;
  auto const r = detail::cpu::hash_groupby(in.view(), 0, all_aggregates(in.view()), p);
  expect_matches_oracle(in, r);
}

TEST(CpuHashGroupby, ThreadTablesMayOutgrowL2UpToThePolicyFactor) {
  scoped_threads ts(4);
  auto const in = make_input(60000, 3000, type_id::int32, 0.0, 8);
  hash_groupby_policy p;
  p.serial_rows = 0;
  p.cache_bytes = 32 << 10;  // ~100 groups of all_aggregates' accumulators, far below 3000
  hash_groupby_path taken{};
  for (double factor : {1.0, 64.0}) {
    p.l2_overflow = factor;
    auto const r = detail::cpu::hash_groupby(in.view(), 0, all_aggregates(in.view()), p, nullptr,
                                             &taken);
    // The derived limit is at least 1024 groups: 3000 overflow it at 1x, not at 64x.
    EXPECT_EQ(taken, factor == 1.0 ? hash_groupby_path::partition
                                   : hash_groupby_path::pre_aggregate);
    expect_matches_oracle(in, r);
  }
}

/// `rows` rows in runs of `run` equal keys (0, 1, 2, ...), so that whole chunks hold one key.
table clustered_input(size_type rows, size_type run, std::uint64_t seed) {
  std::vector<std::int64_t> k(static_cast<std::size_t>(rows));
  std::vector<std::int32_t> a(k.size());
  std::vector<double> d(k.size());
  std::uint64_t x = seed;
  for (std::size_t i = 0; i < k.size(); ++i) {
    k[i] = static_cast<std::int64_t>(i) / run;
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    a[i] = static_cast<std::int32_t>(x >> 33) - (1 << 30);
    d[i] = static_cast<double>((x >> 40) % 1000) / 7.0;
  }
  return table_of(k, a, d);
}

TEST(CpuHashGroupby, ChunksOfOneKeyFoldInRegistersOnEveryThread) {
  // g = 1 (every chunk one key), long runs (most chunks one key, some two), and runs shorter
  // than a chunk (no chunk one key), on both paths, several threads, chunks not dividing rows.
  for (size_type run : {size_type{50000}, size_type{700}, size_type{3}}) {
    auto const in = clustered_input(50000, run, 3);
    for (int threads : {1, 4}) {
      scoped_threads ts(threads);
      for (std::int64_t limit : {std::int64_t{0}, std::int64_t{1} << 40}) {
        hash_groupby_policy p;
        p.serial_rows = 0;
        p.chunk_rows = 96;
        p.max_local_groups = limit;
        expect_matches_oracle(in, detail::cpu::hash_groupby(in.view(), 0,
                                                            all_aggregates(in.view()), p));
      }
    }
  }
}

// ---- extremes: min/max/sum at the limits of every value type ----

TEST(CpuGroupby, ExtremeValuesBothAlgorithmsBothPaths) {
  constexpr auto i64min = std::numeric_limits<std::int64_t>::min();
  constexpr auto i64max = std::numeric_limits<std::int64_t>::max();
  constexpr auto u64max = std::numeric_limits<std::uint64_t>::max();
  constexpr auto i32min = std::numeric_limits<std::int32_t>::min();
  constexpr auto i32max = std::numeric_limits<std::int32_t>::max();
  std::vector<std::int64_t> k;
  std::vector<std::int64_t> a;
  std::vector<std::uint64_t> b;
  std::vector<std::int32_t> c;
  std::vector<double> d;
  for (int i = 0; i < 30000; ++i) {
    // Keys at the ends of int64 too.
    k.push_back(i % 3 == 0 ? i64min : i % 3 == 1 ? i64max : i % 97);
    a.push_back(i % 2 == 0 ? i64min : i64max);
    b.push_back(i % 5 == 0 ? u64max : static_cast<std::uint64_t>(i));
    c.push_back(i % 2 == 0 ? i32min : i32max);
    d.push_back(i % 7 == 0 ? 1e300 : -1e-300 * i);
  }
  auto const in = table_of(k, a, b, c, d);
  auto const aggs = all_aggregates(in.view());
  for (int threads : {1, 4}) {
    scoped_threads ts(threads);
    for (std::int64_t limit : {std::int64_t{0}, std::int64_t{1} << 40}) {
      hash_groupby_policy p;
      p.serial_rows = 0;
      p.max_local_groups = limit;
      expect_matches_oracle(in, detail::cpu::hash_groupby(in.view(), 0, aggs, p));
    }
    sort_groupby_policy sp;
    sp.serial_rows = 0;
    auto const r = detail::cpu::sort_groupby(in.view(), 0, aggs, sp);
    expect_matches_oracle(in, r);
    EXPECT_TRUE(keys_sorted<std::int64_t>(r));
  }
  // The extremes themselves, checked directly (one group holding all of them).
  std::vector<std::uint32_t> one{7, 7, 7};
  std::vector<std::int64_t> s{i64min, i64max, -1};
  std::vector<std::uint64_t> u{u64max, 0, 1};
  auto const t = table_of(one, s, u);
  std::vector<aggregation> mm{{aggregation_kind::min, 1}, {aggregation_kind::max, 1},
                              {aggregation_kind::min, 2}, {aggregation_kind::max, 2},
                              {aggregation_kind::sum, 1}, {aggregation_kind::sum, 2},
                              {aggregation_kind::avg, 1}};
  for (int algo = 0; algo < 2; ++algo) {
    auto const r = algo == 0 ? detail::cpu::hash_groupby(t.view(), 0, mm)
                             : detail::cpu::sort_groupby(t.view(), 0, mm);
    ASSERT_EQ(r.num_rows(), 1);
    EXPECT_EQ(r.column(1).to_vector<std::int64_t>()[0], i64min);
    EXPECT_EQ(r.column(2).to_vector<std::int64_t>()[0], i64max);
    EXPECT_EQ(r.column(3).to_vector<std::uint64_t>()[0], 0ULL);
    EXPECT_EQ(r.column(4).to_vector<std::uint64_t>()[0], u64max);
    EXPECT_EQ(r.column(5).to_vector<std::int64_t>()[0], -2);         // min + max - 1
    EXPECT_EQ(r.column(6).to_vector<std::uint64_t>()[0], 0ULL);      // 2^64 wraps to 0
    EXPECT_DOUBLE_EQ(r.column(7).to_vector<double>()[0], -2.0 / 3);  // exact despite overflow
  }
}

// ---- sort: key order, key types, thread counts, g = |R| ----

using sort_case = std::tuple<type_id, int, size_type>;

std::string sort_case_name(sort_case const& c) {
  auto const& [key, threads, groups] = c;
  return std::string(to_string(key)) + "_t" + std::to_string(threads) + "_g" +
         std::to_string(groups);
}

class CpuSortGroupby : public ::testing::TestWithParam<sort_case> {};

TEST_P(CpuSortGroupby, MatchesOracleInKeyOrder) {
  auto const [key, threads, groups] = GetParam();
  scoped_threads ts(threads);
  auto const in = make_input(40000, groups, key, 0.0, 21 + static_cast<std::uint64_t>(groups));
  sort_groupby_policy p;
  p.serial_rows = 0;
  p.radix_bits = 6;  // digits that do not divide the key width
  auto const r = detail::cpu::sort_groupby(in.view(), 0, all_aggregates(in.view()), p);
  expect_matches_oracle(in, r);
  dispatch_key_type(key, [&](auto tag) {
    EXPECT_TRUE(keys_sorted<typename decltype(tag)::type>(r));
  });
}

INSTANTIATE_TEST_SUITE_P(
  KeysThreads, CpuSortGroupby,
  ::testing::Combine(::testing::Values(type_id::int32, type_id::int64, type_id::uint32,
                                       type_id::uint64),
                     ::testing::Values(1, 4),
                     ::testing::Values(size_type{1}, size_type{1000}, size_type{40000})),
  [](auto const& info) { return sort_case_name(info.param); });

TEST(CpuSortGroupby, GroupsSpanningThreadRangesAreSplitAndMerged) {
  // One group (all keys equal: no sort pass, the input read in place), two groups each wider
  // than a thread's range, and runs crossing range boundaries; values carried in the sort
  // records (one int32 and one double: 3 words; none for count alone). Row ids (values too
  // wide to carry) are covered by MatchesOracleInKeyOrder.
  for (size_type run : {size_type{50000}, size_type{25000}, size_type{4999}, size_type{1}}) {
    auto const in = clustered_input(50000, run, 9);
    std::vector<aggregation> narrow{{aggregation_kind::count, -1}, {aggregation_kind::sum, 1},
                                    {aggregation_kind::max, 1}, {aggregation_kind::avg, 2}};
    for (int threads : {1, 3, 4}) {
      scoped_threads ts(threads);
      sort_groupby_policy p;
      p.serial_rows = 0;
      p.chunk_rows = 100;
      std::vector<aggregation> count_only{{aggregation_kind::count, -1}};
      for (auto const& aggs : {narrow, all_aggregates(in.view()), count_only}) {
        auto const r = detail::cpu::sort_groupby(in.view(), 0, aggs, p);
        EXPECT_EQ(diff_groups(oracle_groupby(in.view(), 0, aggs), groupby_rows(r.view())), "")
          << "run " << run << ", " << threads << " threads, " << aggs.size() << " aggregates";
        EXPECT_TRUE(keys_sorted<std::int64_t>(r));
      }
    }
  }
}

TEST(CpuSortGroupby, NegativeKeysSortBelowPositive) {
  std::vector<std::int32_t> k{5, -3, 0, std::numeric_limits<std::int32_t>::min(), -3, 5,
                              std::numeric_limits<std::int32_t>::max()};
  std::vector<std::int32_t> v{1, 2, 3, 4, 5, 6, 7};
  auto const in = table_of(k, v);
  auto const r = detail::cpu::sort_groupby(in.view(), 0, {{aggregation_kind::sum, 1}});
  EXPECT_EQ(r.column(0).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(), -3, 0, 5,
                                       std::numeric_limits<std::int32_t>::max()}));
  EXPECT_EQ(r.column(1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{4, 7, 3, 7, 7}));
}

TEST(CpuGroupby, EmptyInputGivesNoGroups) {
  std::vector<std::uint64_t> k;
  std::vector<double> v;
  auto const in = table_of(k, v);
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}, {aggregation_kind::avg, 1}};
  EXPECT_EQ(detail::cpu::hash_groupby(in.view(), 0, aggs).num_rows(), 0);
  EXPECT_EQ(detail::cpu::sort_groupby(in.view(), 0, aggs).num_rows(), 0);
}

}  // namespace
}  // namespace joinery::test

// Called from inside a caller's OpenMP region (nested parallelism off, so the library's regions
// get one thread while omp_get_max_threads() still names the outer team): every row is counted
// on both CPU algorithms, no thread's share is lost.
TEST(CpuGroupbyInsideParallelRegion, SameGroupsAsOutside) {
  std::vector<std::uint32_t> keys(200000);
  std::vector<std::int64_t> values(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    keys[i] = static_cast<std::uint32_t>((i * 7) % 6000);
    values[i] = static_cast<std::int64_t>(i) - 1000;
  }
  joinery::table_view const t({joinery::column_view::of(keys), joinery::column_view::of(values)});
  std::vector<joinery::aggregation> const aggs{{joinery::aggregation_kind::count, -1},
                                               {joinery::aggregation_kind::sum, 1}};
  for (auto algo : {joinery::groupby_algorithm::hash, joinery::groupby_algorithm::sort}) {
    joinery::groupby_options o;
    o.backend = joinery::backend::cpu;
    o.algorithm = algo;
    o.sort_by_key = true;
    auto const outside = joinery::groupby(t, 0, aggs, o);
    joinery::groupby_result inside;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
      inside = joinery::groupby(t, 0, aggs, o);
    }
    ASSERT_EQ(outside.num_groups(), 6000);
    ASSERT_EQ(inside.num_groups(), 6000);
    for (joinery::size_type c = 0; c < 3; ++c) {
      auto const a = joinery::column::copy_of(outside.columns.column(c).view());
      auto const b = joinery::column::copy_of(inside.columns.column(c).view());
      auto const bytes = static_cast<std::size_t>(a.size()) * joinery::size_of(a.type());
      EXPECT_EQ(std::memcmp(a.view().data(), b.view().data(), bytes), 0) << "column " << c;
    }
  }
}
