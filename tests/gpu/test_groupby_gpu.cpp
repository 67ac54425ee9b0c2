// GPU group-bys (global_hash, hash = HGB, sort = SGB-UR, sort_transformed = SGB-TR,
// sort_dictionary = SGB-DE-TR, partition = PGB-UR, partition_transformed = PGB-TR) against the
// oracle (tests/support), the full result compared as a multiset (floating aggregates with a
// relative tolerance), groups checked strictly ascending when sorted output is asked for. Inputs:
// sizes at warp, block and tile edges, g = 1 (every row in one group), g = |R| (all distinct),
// one hot group, Zipf 1.5, 4- and 8-byte keys with their extreme values, every aggregate over
// int32/uint32/int64/uint64/float/double values drawn over the whole range (sums wrap, avg needs
// the exact 128-bit sum), HGB on both sides of its shared-memory limit and through its table
// restart, sort_dictionary's code widths at g = 2^k and 2^k + 1 and its dictionary table
// growing, PGB past its shared tables, through its table restart, with more columns than one
// scatter moves and with a hot partition. GPU tests skip with a message when no GPU is present.
#include "support/oracle.hpp"

#include <joinery/gen.hpp>
#include <joinery/groupby.hpp>

#if defined(JOINERY_HAS_CUDA)
#include "groupby/estimate.hpp"
#include "groupby/gpu/gpu_groupby.hpp"
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace joinery::test {
namespace {

constexpr groupby_algorithm gpu_algorithms[] = {
  groupby_algorithm::global_hash, groupby_algorithm::hash, groupby_algorithm::sort,
  groupby_algorithm::sort_transformed, groupby_algorithm::sort_dictionary,
  groupby_algorithm::partition, groupby_algorithm::partition_transformed};

bool skip_without_gpu() { return device_count() == 0; }
#define JOINERY_SKIP_WITHOUT_GPU()                                                  \
  do {                                                                              \
    if (skip_without_gpu()) {                                                       \
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh"; \
    }                                                                               \
  } while (0)

/// Random values over the type's whole range (floats in [-1000, 1000]).
template <class T>
std::vector<T> random_values(size_type n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(std::uniform_real_distribution<double>(-1000.0, 1000.0)(rng));
    } else {
      x = static_cast<T>(rng());
    }
  }
  return v;
}

/// Key column, then one value column of each aggregatable type.
template <class K>
table make_input(std::vector<K> const& keys, std::uint64_t seed = 7) {
  auto const n = static_cast<size_type>(keys.size());
  std::vector<column> cols;
  cols.push_back(column::from_host(keys));
  cols.push_back(column::from_host(random_values<std::int32_t>(n, seed + 1)));
  cols.push_back(column::from_host(random_values<std::uint32_t>(n, seed + 2)));
  cols.push_back(column::from_host(random_values<std::int64_t>(n, seed + 3)));
  cols.push_back(column::from_host(random_values<std::uint64_t>(n, seed + 4)));
  cols.push_back(column::from_host(random_values<float>(n, seed + 5)));
  cols.push_back(column::from_host(random_values<double>(n, seed + 6)));
  return table(std::move(cols));
}

/// count, then sum, min, max and avg of every value column (19 accumulators: several batches).
std::vector<aggregation> all_aggregations(table_view const& t) {
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}};
  for (size_type c = 1; c < t.num_columns(); ++c) {
    for (auto k : {aggregation_kind::sum, aggregation_kind::min, aggregation_kind::max,
                   aggregation_kind::avg}) {
      aggs.push_back({k, c});
    }
  }
  return aggs;
}

/// Strictly ascending keys (host column).
template <class K>
bool strictly_ascending(column const& keys) {
  auto const v = keys.to_vector<K>();
  return std::adjacent_find(v.begin(), v.end(), [](K a, K b) { return !(a < b); }) == v.end();
}

/// Runs `algo` on the device copy of `input` (sorted and unsorted) and compares with the oracle.
void check_against_oracle(groupby_algorithm algo, table const& input, std::string const& what,
                          std::vector<aggregation> aggs = {}) {
  if (aggs.empty()) { aggs = all_aggregations(input.view()); }
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (bool sorted : {false, true}) {
    groupby_options o;
    o.algorithm = algo;
    o.backend = backend::gpu;
    o.sort_by_key = sorted;
    auto const r = groupby(device.view(), 0, aggs, o);
    ASSERT_EQ(r.stats.algorithm, algo);
    ASSERT_EQ(r.stats.backend, backend::gpu);
    ASSERT_EQ(r.columns.num_columns(), static_cast<size_type>(aggs.size() + 1)) << what;
    EXPECT_EQ(r.columns.column(0).type(), input.column(0).type());
    EXPECT_EQ(r.columns.column(0).space(), memory_space::device);
    for (std::size_t i = 0; i < aggs.size(); ++i) {
      auto const in = aggs[i].kind == aggregation_kind::count ? type_id::int64
                                                              : input.column(aggs[i].column).type();
      EXPECT_EQ(r.columns.column(static_cast<size_type>(i + 1)).type(),
                aggregation_result_type(aggs[i].kind, in));
    }
    auto const host = place(r.columns.view(), memory_space::host);
    EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "")
      << what << (sorted ? " (sorted)" : "");
    if (sorted) {
      dispatch_key_type(host.column(0).type(), [&](auto tag) {
        using K = typename decltype(tag)::type;
        EXPECT_TRUE(strictly_ascending<K>(host.column(0))) << what;
      });
    }
  }
}

template <class K>
std::vector<K> uniform_keys(size_type n, size_type domain, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> v(static_cast<std::size_t>(n));
  for (auto& k : v) {
    auto const d = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(domain));
    // Signed keys straddle zero.
    k = static_cast<K>(std::is_signed_v<K> ? d - domain / 2 : d);
  }
  return v;
}

class GpuGroupby : public ::testing::TestWithParam<groupby_algorithm> {
 protected:
  void SetUp() override { JOINERY_SKIP_WITHOUT_GPU(); }
};

TEST_P(GpuGroupby, SizesAtWarpBlockAndTileEdges) {
  for (size_type n : {0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097,
                      65535, 65537}) {
    auto const keys = uniform_keys<std::int32_t>(n, std::max<size_type>(1, n / 3), 100 + n);
    check_against_oracle(GetParam(), make_input(keys), "n = " + std::to_string(n));
  }
}

TEST_P(GpuGroupby, OneGroupHeavyContention) {
  for (size_type n : {size_type{1}, size_type{4097}, size_type{300001}}) {
    std::vector<std::int64_t> keys(static_cast<std::size_t>(n), -42);
    check_against_oracle(GetParam(), make_input(keys), "g = 1, n = " + std::to_string(n));
  }
}

TEST_P(GpuGroupby, AllKeysDistinct) {
  for (size_type n : {size_type{4097}, size_type{200000}}) {
    std::vector<std::uint32_t> keys(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      keys[i] = static_cast<std::uint32_t>(i * 2654435761U);  // a bijection: all distinct
    }
    check_against_oracle(GetParam(), make_input(keys), "g = |R| = " + std::to_string(n));
  }
}

TEST_P(GpuGroupby, OneHotGroup) {
  auto keys = uniform_keys<std::uint64_t>(100000, 1 << 20, 5);
  std::mt19937_64 rng(6);
  for (auto& k : keys) {
    if (rng() % 10 != 0) { k = 123456789; }
  }
  check_against_oracle(GetParam(), make_input(keys), "one hot group (90% of rows)");
}

TEST_P(GpuGroupby, Zipf15) {
  for (auto key : {type_id::int32, type_id::int64}) {
    gen::relation_spec s;
    s.rows = 150000;
    s.kind = gen::key_kind::foreign;
    s.key_type = key;
    s.domain = 1 << 16;
    s.zipf = 1.5;
    s.seed = 11;
    auto const g = gen::generate(s);
    dispatch_key_type(key, [&](auto tag) {
      using K = typename decltype(tag)::type;
      check_against_oracle(GetParam(), make_input(g.column(0).template to_vector<K>()),
                           "Zipf 1.5, " + std::string(to_string(key)));
    });
  }
}

template <class K>
std::vector<K> extreme_keys(size_type n) {
  using lim = std::numeric_limits<K>;
  std::vector<K> special{lim::min(), lim::max(), K(0), K(1), K(lim::max() - 1), K(lim::min() + 1)};
  if constexpr (std::is_signed_v<K>) {
    special.push_back(K(-1));
    special.push_back(K(-2));
  }
  std::mt19937_64 rng(3);
  std::vector<K> v(static_cast<std::size_t>(n));
  for (auto& k : v) { k = rng() % 4 == 0 ? static_cast<K>(rng()) : special[rng() % special.size()]; }
  return v;
}

TEST_P(GpuGroupby, ExtremeKeysOfEveryKeyType) {
  check_against_oracle(GetParam(), make_input(extreme_keys<std::int32_t>(20000)), "int32 extremes");
  check_against_oracle(GetParam(), make_input(extreme_keys<std::uint32_t>(20000)), "uint32 extremes");
  check_against_oracle(GetParam(), make_input(extreme_keys<std::int64_t>(20000)), "int64 extremes");
  check_against_oracle(GetParam(), make_input(extreme_keys<std::uint64_t>(20000)), "uint64 extremes");
}

TEST_P(GpuGroupby, ManyGroupsOfEveryKeyType) {
  check_against_oracle(GetParam(), make_input(uniform_keys<std::int32_t>(120000, 30000, 1)), "int32");
  check_against_oracle(GetParam(), make_input(uniform_keys<std::uint32_t>(120000, 30000, 2)), "uint32");
  check_against_oracle(GetParam(), make_input(uniform_keys<std::int64_t>(120000, 30000, 3)), "int64");
  check_against_oracle(GetParam(), make_input(uniform_keys<std::uint64_t>(120000, 30000, 4)), "uint64");
}

TEST_P(GpuGroupby, HandComputedExtremeValues) {
  // Two groups; sums wrap modulo 2^64 and avg is the exact sum over the count.
  constexpr auto i64max = std::numeric_limits<std::int64_t>::max();
  constexpr auto i64min = std::numeric_limits<std::int64_t>::min();
  constexpr auto u64max = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::int32_t> keys{5, -5, 5, 5, -5};
  std::vector<std::int64_t> s{i64max, i64min, i64max, i64max, -1};
  std::vector<std::uint64_t> u{u64max, 0, u64max, 1, 0};
  std::vector<column> cols;
  cols.push_back(column::from_host(keys));
  cols.push_back(column::from_host(s));
  cols.push_back(column::from_host(u));
  table const input(std::move(cols));
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}, {aggregation_kind::sum, 1},
                                {aggregation_kind::min, 1},    {aggregation_kind::max, 1},
                                {aggregation_kind::avg, 1},    {aggregation_kind::sum, 2},
                                {aggregation_kind::avg, 2}};
  auto const device = place(input.view(), memory_space::device);
  groupby_options o;
  o.algorithm = GetParam();
  o.backend = backend::gpu;
  o.sort_by_key = true;
  auto const r = place(groupby(device.view(), 0, aggs, o).columns.view(), memory_space::host);
  ASSERT_EQ(r.num_rows(), 2);
  EXPECT_EQ(r.column(0).to_vector<std::int32_t>(), (std::vector<std::int32_t>{-5, 5}));
  EXPECT_EQ(r.column(1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 3}));
  // 3 * (2^63 - 1) mod 2^64 = 2^63 - 3 as two's complement; i64min - 1 wraps to i64max.
  EXPECT_EQ(r.column(2).to_vector<std::int64_t>(), (std::vector<std::int64_t>{i64max, i64max - 2}));
  EXPECT_EQ(r.column(3).to_vector<std::int64_t>(), (std::vector<std::int64_t>{i64min, i64max}));
  EXPECT_EQ(r.column(4).to_vector<std::int64_t>(), (std::vector<std::int64_t>{-1, i64max}));
  auto const avg = r.column(5).to_vector<double>();
  EXPECT_DOUBLE_EQ(avg[0], (static_cast<double>(i64min) - 1.0) / 2.0);
  EXPECT_DOUBLE_EQ(avg[1], static_cast<double>(i64max));
  EXPECT_EQ(r.column(6).to_vector<std::uint64_t>(),
            (std::vector<std::uint64_t>{0, u64max + u64max + 1}));  // wraps to u64max
  auto const uavg = r.column(7).to_vector<double>();
  EXPECT_DOUBLE_EQ(uavg[0], 0.0);
  EXPECT_DOUBLE_EQ(uavg[1], (2.0 * static_cast<double>(u64max) + 1.0) / 3.0);
}

TEST_P(GpuGroupby, HostInputAndCountOnly) {
  // Host-resident input goes over to the device; no value columns at all.
  auto const keys = uniform_keys<std::int64_t>(50000, 777, 9);
  std::vector<column> cols;
  cols.push_back(column::from_host(keys));
  table const input(std::move(cols));
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  groupby_options o;
  o.algorithm = GetParam();
  o.backend = backend::gpu;
  auto const r = groupby(input.view(), 0, aggs, o);
  auto const host = place(r.columns.view(), memory_space::host);
  EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "");
  check_against_oracle(GetParam(), input, "count only", aggs);
  // No aggregates: the distinct keys alone.
  auto const keys_only = groupby(input.view(), 0, {}, o);
  ASSERT_EQ(keys_only.columns.num_columns(), 1);
  EXPECT_EQ(keys_only.num_groups(), 777);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, GpuGroupby, ::testing::ValuesIn(gpu_algorithms),
                         [](auto const& info) { return std::string(to_string(info.param)); });

TEST(GpuGroupbyRegistry, EveryGpuAlgorithmIsRegisteredWhenBuiltWithCuda) {
  auto const list = groupby_algorithms_on(backend::gpu);
  if (!built_with_cuda()) {
    EXPECT_TRUE(list.empty());
    return;
  }
  for (auto a : gpu_algorithms) {
    EXPECT_NE(std::find(list.begin(), list.end(), a), list.end()) << to_string(a);
  }
}

/// n rows (n >= g) over exactly g distinct keys, each at least once, the type's extremes first
/// among them, shuffled.
template <class K>
std::vector<K> keys_with_groups(size_type g, size_type n, std::uint64_t seed) {
  using lim = std::numeric_limits<K>;
  std::mt19937_64 rng(seed);
  std::vector<K> distinct;
  std::unordered_set<K> seen;
  auto add = [&](K k) {
    if (static_cast<size_type>(distinct.size()) < g && seen.insert(k).second) {
      distinct.push_back(k);
    }
  };
  for (K k : {lim::min(), lim::max(), K(0), K(lim::min() + 1), K(lim::max() - 1)}) { add(k); }
  while (static_cast<size_type>(distinct.size()) < g) { add(static_cast<K>(rng())); }
  std::vector<K> v(distinct);
  while (static_cast<size_type>(v.size()) < n) { v.push_back(distinct[rng() % distinct.size()]); }
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

TEST(GpuDictionaryGroupby, CodeWidthsAtPowersOfTwo) {
  JOINERY_SKIP_WITHOUT_GPU();
  // The codes are sorted on their ceil(log2 g) low bits: g = 2^k takes k bits, 2^k + 1 one more
  // (2^8 + 1 and 2^16 + 1 add a radix pass); g = 1 still sorts one bit. The type's extremes are
  // keys (g = 1: its minimum alone), and the output is in key order even unasked.
  auto const algo = groupby_algorithm::sort_dictionary;
  for (size_type g : {1, 2, 3, 4, 5, 256, 257, 65536, 65537}) {
    auto const n = std::max<size_type>(3 * g, 5000);
    auto const what = "g = " + std::to_string(g);
    auto check = [&](auto const& keys) {
      using K = typename std::decay_t<decltype(keys)>::value_type;
      auto const input = make_input(keys, static_cast<std::uint64_t>(g));
      check_against_oracle(algo, input, what + ", " + std::string(to_string(type_to_id_v<K>)));
      groupby_options o;
      o.algorithm = algo;
      o.backend = backend::gpu;
      auto const r = groupby(place(input.view(), memory_space::device).view(), 0, {}, o);
      EXPECT_EQ(r.num_groups(), g) << what;
      EXPECT_TRUE(strictly_ascending<K>(place(r.columns.view(), memory_space::host).column(0)))
        << what;
    };
    check(keys_with_groups<std::int32_t>(g, n, 1));
    check(keys_with_groups<std::uint32_t>(g, n, 2));
    check(keys_with_groups<std::int64_t>(g, n, 3));
    check(keys_with_groups<std::uint64_t>(g, n, 4));
  }
}

#if defined(JOINERY_HAS_CUDA)

/// `algo` through the internal entry point with its tuning knobs (the result on the host).
table run_tuned(groupby_algorithm algo, table const& device_input,
                std::vector<aggregation> const& aggs, detail::gpu::groupby_tuning const& tuning) {
  auto t = detail::gpu::run_groupby(algo, device_input.view(), 0, aggs, false, tuning, nullptr,
                                    nullptr, default_stream(), device_resource());
  default_stream().synchronize();
  return place(t.view(), memory_space::host);
}

/// HGB through the internal entry point with its tuning knobs.
table run_hgb(table const& device_input, std::vector<aggregation> const& aggs,
              detail::gpu::groupby_tuning const& tuning) {
  return run_tuned(groupby_algorithm::hash, device_input, aggs, tuning);
}

/// `algo` on every aggregate of `input` (about 20000 groups) against the oracle, its first table
/// sized by `set_first(tuning, groups)` for 1, 16, 19999, 20000 and 2^20 groups.
template <class SetFirst>
void check_first_table_sizes(groupby_algorithm algo, table const& input, SetFirst set_first) {
  auto const aggs = all_aggregations(input.view());
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (std::int64_t first : {std::int64_t{1}, std::int64_t{16}, std::int64_t{19999},
                             std::int64_t{20000}, std::int64_t{1} << 20}) {
    detail::gpu::groupby_tuning t;
    set_first(t, first);
    EXPECT_EQ(diff_groups(expected, groupby_rows(run_tuned(algo, device, aggs, t).view())), "")
      << to_string(algo) << ", initial groups " << first;
  }
}

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

/// HGB with its phases: whether the dense tier produced the result.
bool dense_tier_ran(table_view const& device_input, std::vector<aggregation> const& aggs,
                    detail::gpu::groupby_tuning const& tuning, table& host_result,
                    int* team = nullptr, bool* narrow = nullptr, bool* lo32 = nullptr,
                    bool* counted = nullptr, bool* own_lo32 = nullptr, bool* wsum = nullptr) {
  // The wrapped sums (", wrapped 32-bit sums") take SUM of two int32 columns before the other
  // forms; the tests of those switch them off unless they ask whether they ran (`wsum`).
  auto tuned = tuning;
  if (wsum == nullptr) { tuned.hgb_dense_wsum = false; }
  std::vector<phase_time> phases;
  auto t = detail::gpu::run_groupby(groupby_algorithm::hash, device_input, 0, aggs, false,
                                    tuned, &phases, nullptr, default_stream(), device_resource());
  default_stream().synchronize();
  host_result = place(t.view(), memory_space::host);
  // "aggregate in shared memory, dense keys", with ", teams of N" when a team holds the window,
  // ", 32-bit sums" when int32 sums ran as 32-bit partials (", 32-bit sums counted in shared
  // memory" when their overflows counted there first), ", own 32-bit sum kernel" when a pass of
  // them ran hgb_dense_kernel's Lo32Only instantiation, and ", 16-byte loads" when every pass
  // ran the narrow kernel.
  std::string const name = "aggregate in shared memory, dense keys";
  std::string const teams = ", teams of ";
  std::string const wide = ", 16-byte loads";
  for (auto const& p : phases) {
    if (p.name.rfind(name, 0) != 0) { continue; }
    if (team != nullptr) {
      *team = p.name.compare(name.size(), teams.size(), teams) == 0
                ? std::stoi(p.name.substr(name.size() + teams.size()))
                : 1;
    }
    if (narrow != nullptr) {
      *narrow = p.name.size() >= wide.size() &&
                p.name.compare(p.name.size() - wide.size(), wide.size(), wide) == 0;
    }
    if (lo32 != nullptr) { *lo32 = p.name.find(", 32-bit sums") != std::string::npos; }
    if (counted != nullptr) { *counted = p.name.find(" counted in shared memory") != std::string::npos; }
    if (own_lo32 != nullptr) { *own_lo32 = p.name.find(", own 32-bit sum kernel") != std::string::npos; }
    if (wsum != nullptr) { *wsum = p.name.find(", wrapped 32-bit sums") != std::string::npos; }
    return true;
  }
  return false;
}
bool dense_tier_ran(table const& device_input, std::vector<aggregation> const& aggs,
                    detail::gpu::groupby_tuning const& tuning, table& host_result,
                    int* team = nullptr, bool* narrow = nullptr) {
  return dense_tier_ran(device_input.view(), aggs, tuning, host_result, team, narrow);
}

/// `keys` with two outliers (10^9 and -10^9) on rows the dense tier's evenly spaced sample skips,
/// one near the start and one near the end: a block meets them mid-run.
template <class K>
std::vector<K> with_unsampled_outliers(std::vector<K> keys) {
  auto const n = static_cast<size_type>(keys.size());
  size_type const samples = std::min<size_type>(n, size_type{1} << 14);
  std::vector<bool> sampled(keys.size(), false);
  for (size_type i = 0; i < samples; ++i) { sampled[static_cast<std::size_t>(i * n / samples)] = true; }
  std::size_t first = 1;
  while (sampled[first]) { ++first; }
  std::size_t last = keys.size() - 1;
  while (sampled[last]) { --last; }
  // 8-byte keys: beyond 32 bits as well, so that a 64-bit offset is needed to see them.
  K const far = sizeof(K) == 8 ? static_cast<K>(std::int64_t{1} << 40) : K{1000000000};
  keys[first] = far;
  keys[last] = static_cast<K>(-far);
  return keys;
}

/// Every aggregate of `keys` through HGB against the oracle; `dense` says whether the dense
/// tier must have produced it (else the hashed tiers did, after it declined or overflowed).
template <class K>
void check_dense_tier(std::vector<K> const& keys, bool dense, std::string const& what) {
  auto const input = make_input(keys, 31);
  auto const all = all_aggregations(input.view());
  auto const expected = oracle_groupby(input.view(), 0, all);
  auto const device = place(input.view(), memory_space::device);
  for (int one : {-1, 0, 1}) {
    detail::gpu::groupby_tuning t;
    t.hgb_one_group = one;
    table host;
    EXPECT_EQ(dense_tier_ran(device, all, t, host), dense) << what << ", one_group " << one;
    EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << what << ", one_group " << one;
  }
}

TEST(GpuHashGroupby, DenseTierTakesKeysWithinOneWindow) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 300000;
  // 1000 keys straddling zero.
  check_dense_tier(uniform_keys<std::int32_t>(n, 1000, 3), true, "int32 over [-500, 500)");
  // Windows that wrap: the centred window starts below the smallest key of the type (int32,
  // int64) or ends past the largest (uint32, uint64, whose all-ones key is the hashed table's
  // empty marker).
  std::vector<std::int32_t> low32(static_cast<std::size_t>(n));
  std::vector<std::uint32_t> high32(low32.size());
  std::vector<std::int64_t> low64(low32.size());
  std::vector<std::uint64_t> high64(low32.size());
  auto const u = uniform_keys<std::uint64_t>(n, 3000, 4);
  for (std::size_t i = 0; i < low32.size(); ++i) {
    low32[i] = std::numeric_limits<std::int32_t>::min() + static_cast<std::int32_t>(u[i]);
    high32[i] = std::numeric_limits<std::uint32_t>::max() - static_cast<std::uint32_t>(u[i]);
    low64[i] = std::numeric_limits<std::int64_t>::min() + static_cast<std::int64_t>(u[i]);
    high64[i] = std::numeric_limits<std::uint64_t>::max() - u[i];
  }
  low32[5] = std::numeric_limits<std::int32_t>::min();
  high32[5] = std::numeric_limits<std::uint32_t>::max();
  low64[5] = std::numeric_limits<std::int64_t>::min();
  high64[5] = std::numeric_limits<std::uint64_t>::max();
  check_dense_tier(low32, true, "int32 from the smallest key");
  check_dense_tier(high32, true, "uint32 to the largest key");
  check_dense_tier(low64, true, "int64 from the smallest key");
  check_dense_tier(high64, true, "uint64 to the largest key");
  // One group, and runs of equal keys (uniform warps, the carry).
  check_dense_tier(std::vector<std::int64_t>(static_cast<std::size_t>(n), -5), true, "one group");
  std::vector<std::uint32_t> runs(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < runs.size(); ++i) { runs[i] = static_cast<std::uint32_t>(i / 3000); }
  check_dense_tier(runs, true, "runs of 3000");
  // Fewer rows than one tile, and than the sample.
  check_dense_tier(uniform_keys<std::int32_t>(5000, 50, 5), true, "5000 rows");
  check_dense_tier(uniform_keys<std::int32_t>(7, 3, 5), true, "7 rows");
}

TEST(GpuHashGroupby, DenseTierDeclinesOrStartsOverBeyondItsWindow) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 300000;
  // Keys spread over 2^40 values: the sample spans too much; the hashed tiers run.
  check_dense_tier(uniform_keys<std::int64_t>(n, std::int64_t{1} << 40, 6), false, "2^40 domain");
  // 4-byte keys spread by a large odd factor: the sample spans too much.
  auto spread = uniform_keys<std::uint32_t>(n, 1000, 7);
  for (auto& k : spread) { k *= 2654435761U; }
  check_dense_tier(spread, false, "1000 keys spread over 2^32");
  // Dense keys with outliers on rows the sample skips (one in the first tile, one in the last):
  // a block overflows the window mid-run, after others may have merged their groups, and the
  // run starts over with the hashed tiers.
  check_dense_tier(with_unsampled_outliers(uniform_keys<std::int32_t>(n, 1000, 8)), false,
                   "outliers the sample misses");
  check_dense_tier(with_unsampled_outliers(uniform_keys<std::int64_t>(n, 1000, 10)), false,
                   "int64 outliers the sample misses");
  // Off: the hashed table even for dense keys.
  auto const input = make_input(uniform_keys<std::int32_t>(n, 1000, 9), 32);
  std::vector<aggregation> const aggs{{aggregation_kind::sum, 1}, {aggregation_kind::max, 3}};
  detail::gpu::groupby_tuning off;
  off.hgb_dense_keys = false;
  table host;
  EXPECT_FALSE(dense_tier_ran(place(input.view(), memory_space::device), aggs, off, host));
  EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, aggs), groupby_rows(host.view())), "");
}

TEST(GpuHashGroupby, DenseTierRunsOneAccumulatorAPassWhenPairsDoNotFit) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 2^14 dense keys: two 8-byte accumulators a pass (SUM of int32 and of int64) take 256 KB of
  // shared memory, more than a block has; one a pass takes 128 KB and fits.
  auto const input = make_input(uniform_keys<std::int32_t>(600000, 1 << 14, 21), 21);
  auto const device = place(input.view(), memory_space::device);
  std::vector<std::vector<aggregation>> const cases{
    {{aggregation_kind::sum, 1}, {aggregation_kind::sum, 3}},
    {{aggregation_kind::count, -1}, {aggregation_kind::avg, 1}, {aggregation_kind::max, 4},
     {aggregation_kind::sum, 6}, {aggregation_kind::min, 2}}};
  for (auto const& aggs : cases) {
    auto const expected = oracle_groupby(input.view(), 0, aggs);
    for (int one : {-1, 0}) {
      detail::gpu::groupby_tuning t;
      t.hgb_one_group = one;
      table host;
      EXPECT_TRUE(dense_tier_ran(device, aggs, t, host)) << aggs.size() << " aggregates";
      EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << aggs.size() << " aggregates";
    }
  }
  // 100 kB and one block a window: not even one accumulator a pass fits; the hashed tiers run.
  detail::gpu::groupby_tuning small;
  small.hgb_shared_bytes = 100000;
  small.hgb_dense_team = 1;
  table host;
  EXPECT_FALSE(dense_tier_ran(device, cases[0], small, host));
  EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, cases[0]), groupby_rows(host.view())), "");
}

TEST(GpuHashGroupby, DenseTierSplitsAWideWindowOverATeamOfBlocks) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 2^16 dense keys straddling zero: wider than one block's shared memory even for one 4-byte
  // accumulator, so teams of blocks share the window, each member aggregating its slice.
  std::vector<std::int32_t> keys = uniform_keys<std::int32_t>(700000, 1 << 16, 23);
  for (auto& k : keys) { k -= 30000; }
  auto const input = make_input(keys, 23);
  auto const device = place(input.view(), memory_space::device);
  // MAX: one pass of 3 members (cost 3 x (16 + 8) = 72 against 80 for two passes of 2); SUM of
  // the int32 and the uint32 column in 8-byte sums: two passes of 3 (120, as much as one pass of
  // 5: the smaller team); with the int32 sum in 32-bit partials (4 + 8 bytes and a seen byte a
  // slot) one pass of 4 (96); five aggregates, the bound raised.
  struct team_case {
    std::vector<aggregation> aggs;
    int row_cost;
    int team;  ///< expected; 0: not checked
    int lo32 = -1;
  };
  std::vector<team_case> const cases{
    {{{aggregation_kind::max, 1}, {aggregation_kind::max, 2}}, 0, 3},
    {{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}}, 0, 3},
    {{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}}, 0, 4, 1},
    {{{aggregation_kind::count, -1}, {aggregation_kind::avg, 1}, {aggregation_kind::max, 4},
      {aggregation_kind::sum, 6}, {aggregation_kind::min, 2}}, 1000, 0}};
  for (auto const& c : cases) {
    auto const expected = oracle_groupby(input.view(), 0, c.aggs);
    for (int one : {-1, 0, 1}) {
      detail::gpu::groupby_tuning t;
      t.hgb_one_group = one;
      t.hgb_dense_row_cost = c.row_cost;
      t.hgb_dense_lo32 = c.lo32;
      table host;
      int team = 0;
      EXPECT_TRUE(dense_tier_ran(device, c.aggs, t, host, &team)) << c.aggs.size() << " aggregates";
      EXPECT_GT(team, 1) << c.aggs.size() << " aggregates";
      if (c.team > 0) { EXPECT_EQ(team, c.team) << c.aggs.size() << " aggregates"; }
      EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << c.aggs.size() << " aggregates";
    }
  }
  // 2^14 keys, one 8-byte sum: in 33 kB a block teams of 5, in 23 kB of 7 (the grid a whole
  // number of teams); 4-byte keys and 8-byte keys at the top of their range.
  std::vector<aggregation> const sum{{aggregation_kind::sum, 1}};
  auto top64 = uniform_keys<std::int64_t>(300000, 1 << 14, 25);
  // uniform_keys straddles zero: [-2^13, 2^13) -> [max - 2^14 + 1, max].
  for (auto& k : top64) { k = std::numeric_limits<std::int64_t>::max() - (k + (1 << 13)); }
  auto const narrow32 = make_input(uniform_keys<std::int32_t>(300000, 1 << 14, 24), 24);
  auto const narrow64 = make_input(top64, 25);
  for (auto const* narrow : {&narrow32, &narrow64}) {
    auto const narrow_device = place(narrow->view(), memory_space::device);
    auto const expected = oracle_groupby(narrow->view(), 0, sum);
    for (auto const [bytes, expected_team] : {std::pair{33000, 5}, std::pair{23000, 7}}) {
      for (int one : {-1, 1}) {
        detail::gpu::groupby_tuning t;
        t.hgb_shared_bytes = bytes;
        t.hgb_dense_row_cost = 1000;
        t.hgb_one_group = one;
        std::string const what = std::to_string(bytes) + " bytes, " +
                                 (narrow == &narrow32 ? "int32" : "int64") + " keys";
        table host;
        int team = 0;
        EXPECT_TRUE(dense_tier_ran(narrow_device, sum, t, host, &team)) << what;
        EXPECT_EQ(team, expected_team) << what;
        EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << what;
      }
    }
  }
  // Outliers on rows the sample skips (first and last tile): a member overflows mid-run and the
  // run starts over with the hashed tiers.
  for (auto const& input_out :
       {make_input(with_unsampled_outliers(uniform_keys<std::int32_t>(300000, 1 << 14, 26)), 26),
        make_input(with_unsampled_outliers(uniform_keys<std::int64_t>(300000, 1 << 14, 27)), 27)}) {
    detail::gpu::groupby_tuning t;
    t.hgb_shared_bytes = 33000;
    t.hgb_dense_row_cost = 1000;
    table host;
    EXPECT_FALSE(dense_tier_ran(place(input_out.view(), memory_space::device), sum, t, host));
    EXPECT_EQ(diff_groups(oracle_groupby(input_out.view(), 0, sum), groupby_rows(host.view())), "");
  }
  // The hashed tiers: a team of at most 1 (one block a window), a window wider than 8 blocks,
  // or a row cost above the bound (SUM: 120 against 40).
  struct refusal {
    int shared_bytes, team, row_cost;
  };
  for (auto const r : {refusal{-1, 1, 1000}, refusal{10000, 0, 1000}, refusal{-1, 0, 40}}) {
    detail::gpu::groupby_tuning t;
    t.hgb_shared_bytes = r.shared_bytes;
    t.hgb_dense_team = r.team;
    t.hgb_dense_row_cost = r.row_cost;
    std::string const what = std::to_string(r.shared_bytes) + " bytes, team " +
                             std::to_string(r.team) + ", row cost " + std::to_string(r.row_cost);
    table host;
    EXPECT_FALSE(dense_tier_ran(device, cases[1].aggs, t, host)) << what;
    EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, cases[1].aggs), groupby_rows(host.view())),
              "")
        << what;
  }
}

TEST(GpuHashGroupby, DenseTierLoadsAlignedFourByteColumnsSixteenBytesAtATime) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Rows not a multiple of a tile (the last tiles load row by row); one block a window (1000
  // keys) and teams (2^16 keys); 4- and 8-byte keys (runs of 2 rows a thread for 8-byte keys
  // without a team, else of 4).
  size_type const n = 700001;
  auto const small32 = make_input(uniform_keys<std::int32_t>(n, 1000, 41), 41);
  auto const wide32 = make_input(uniform_keys<std::int32_t>(n, 1 << 16, 42), 42);
  auto const wide64 = make_input(uniform_keys<std::int64_t>(n, 1 << 16, 43), 43);
  auto const small64 = make_input(uniform_keys<std::int64_t>(n, 1000, 44), 44);
  // Columns 1 and 2 are int32 and uint32; column 3 is int64.
  std::vector<aggregation> const max12{{aggregation_kind::max, 1}, {aggregation_kind::max, 2}};
  std::vector<aggregation> const sum12{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  std::vector<aggregation> const with8{{aggregation_kind::min, 1}, {aggregation_kind::sum, 3}};
  struct load_case {
    table const* input;
    std::vector<aggregation> const* aggs;
    bool narrow;  ///< expected with the narrow form allowed
    char const* what;
  };
  for (auto const& c : {load_case{&small32, &max12, true, "1000 keys, MAX"},
                        load_case{&small32, &sum12, true, "1000 keys, SUM"},
                        load_case{&wide32, &max12, true, "2^16 int32 keys, MAX"},
                        load_case{&wide32, &sum12, true, "2^16 int32 keys, SUM"},
                        load_case{&wide64, &max12, true, "2^16 int64 keys, MAX"},
                        load_case{&small64, &sum12, true, "1000 int64 keys, SUM"},
                        load_case{&small32, &with8, false, "an 8-byte column"}}) {
    auto const device = place(c.input->view(), memory_space::device);
    auto const expected = oracle_groupby(c.input->view(), 0, *c.aggs);
    for (bool const allow : {true, false}) {
      detail::gpu::groupby_tuning t;
      t.hgb_dense_narrow = allow;
      t.hgb_dense_row_cost = 1000;
      table host;
      bool narrow = !(allow && c.narrow);
      EXPECT_TRUE(dense_tier_ran(device, *c.aggs, t, host, nullptr, &narrow)) << c.what;
      EXPECT_EQ(narrow, allow && c.narrow) << c.what << ", narrow allowed: " << allow;
      EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << c.what;
    }
  }
  // Columns that start 4 bytes past a 16-byte boundary (views one row into the device
  // columns): the general form, with the same result.
  auto const device = place(wide32.view(), memory_space::device);
  auto const device_view = device.view();
  auto const host_view = wide32.view();
  std::vector<column_view> shifted_device;
  std::vector<column_view> shifted_host;
  for (size_type i = 0; i < 3; ++i) {
    auto const& d = device_view.column(i);
    auto const& h = host_view.column(i);
    auto const bytes = static_cast<std::size_t>(size_of(d.type()));
    shifted_device.emplace_back(d.type(), static_cast<char const*>(d.data()) + bytes, n - 1,
                                memory_space::device);
    shifted_host.emplace_back(h.type(), static_cast<char const*>(h.data()) + bytes, n - 1,
                              memory_space::host);
  }
  table_view const shifted(shifted_device);
  for (auto const* aggs : {&max12, &sum12}) {
    detail::gpu::groupby_tuning t;
    t.hgb_dense_row_cost = 1000;
    table host;
    bool narrow = true;
    EXPECT_TRUE(dense_tier_ran(shifted, *aggs, t, host, nullptr, &narrow));
    EXPECT_FALSE(narrow);
    EXPECT_EQ(diff_groups(oracle_groupby(table_view(shifted_host), 0, *aggs),
                          groupby_rows(host.view())),
              "");
  }
}

/// Keys, two int32 value columns (`v` and full-range random ones) and a uint32 column.
template <class K>
table lo32_input(std::vector<K> const& keys, std::vector<std::int32_t> const& v,
                 std::uint64_t seed) {
  auto const n = static_cast<size_type>(keys.size());
  std::vector<column> cols;
  cols.push_back(column::from_host(keys));
  cols.push_back(column::from_host(v));
  cols.push_back(column::from_host(random_values<std::int32_t>(n, seed + 1)));
  cols.push_back(column::from_host(random_values<std::uint32_t>(n, seed + 2)));
  return table(std::move(cols));
}

TEST(GpuHashGroupby, DenseTierSumsInt32ValuesInThirtyTwoBitPartials) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 300001;
  // One block a window (1000 keys), teams (2^16 int32 and int64 keys), and a window whose first
  // tiles hold one key (the one-group blocks, whose warps add 32 rows' 64-bit sum at once).
  auto hot_first = uniform_keys<std::int32_t>(n, 1 << 16, 52);
  std::fill(hot_first.begin(), hot_first.begin() + n / 3, 5);
  std::vector<table> inputs;
  std::vector<std::string> names;
  // Values: full range (a quarter of the adds overflow), and the extremes, where every add after
  // a group's first overflows the partial.
  std::vector<std::pair<std::vector<std::int32_t>, std::string>> const values{
    {random_values<std::int32_t>(n, 53), "random values"},
    {std::vector<std::int32_t>(static_cast<std::size_t>(n), std::numeric_limits<std::int32_t>::max()),
     "INT32_MAX"},
    {std::vector<std::int32_t>(static_cast<std::size_t>(n), std::numeric_limits<std::int32_t>::min()),
     "INT32_MIN"}};
  for (auto const& [v, vname] : values) {
    inputs.push_back(lo32_input(uniform_keys<std::int32_t>(n, 1000, 50), v, 50));
    names.push_back("1000 int32 keys, " + vname);
    inputs.push_back(lo32_input(uniform_keys<std::int32_t>(n, 1 << 16, 51), v, 51));
    names.push_back("2^16 int32 keys, " + vname);
    inputs.push_back(lo32_input(uniform_keys<std::int64_t>(n, 1 << 16, 54), v, 54));
    names.push_back("2^16 int64 keys, " + vname);
    inputs.push_back(lo32_input(hot_first, v, 55));
    names.push_back("2^16 keys, the first third one key, " + vname);
  }
  // Two 32-bit sums (one update branch for both), and a mix of them with other accumulators.
  std::vector<aggregation> const sums{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  std::vector<aggregation> const mixed{{aggregation_kind::avg, 2}, {aggregation_kind::max, 1},
                                       {aggregation_kind::sum, 1}, {aggregation_kind::sum, 3},
                                       {aggregation_kind::count, -1}};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto const device = place(inputs[i].view(), memory_space::device);
    for (auto const* aggs : {&sums, &mixed}) {
      auto const expected = oracle_groupby(inputs[i].view(), 0, *aggs);
      // 2: the overflows counted in shared memory first (6 bytes a group: the 2^16 windows
      // take teams of 4).
      for (int const lo32 : {2, 1, -1}) {
        // one_group 0: every block runs hgb_dense_kernel, whose warps on one key (the first
        // third) add their reduced rows at once.
        // own_kernel false: the two sums through the narrow kernel of every operation.
        for (int const one : {-1, 0, 1}) {
          for (bool const own_kernel : {true, false}) {
            if (!own_kernel && (aggs != &sums || lo32 < 0)) { continue; }
            detail::gpu::groupby_tuning t;
            t.hgb_dense_lo32 = lo32;
            t.hgb_one_group = one;
            t.hgb_dense_row_cost = 1000;
            t.hgb_dense_lo32_kernel = own_kernel;
            std::string const what = names[i] + ", " + std::to_string(aggs->size()) +
                                     " aggregates, lo32 " + std::to_string(lo32) + ", one_group " +
                                     std::to_string(one) + ", own kernel " +
                                     std::to_string(own_kernel);
            table host;
            bool ran = lo32 < 0;
            bool counted = lo32 != 2;
            int team = 0;
            bool narrow = false;
            bool own = !own_kernel;
            EXPECT_TRUE(
                dense_tier_ran(device, *aggs, t, host, &team, &narrow, &ran, &counted, &own))
                << what;
            EXPECT_EQ(ran, lo32 > 0) << what;
            EXPECT_EQ(counted, lo32 == 2) << what;
            // The own kernel takes a pass whose every accumulator (policy::fused_accs of them)
            // is a 32-bit partial, unless a team over 4-byte keys holds the window. The two sums
            // make such passes, except counted over 2^16 8-byte keys, whose cheapest layout
            // (dense_layout_for) takes one sum a pass. The mixed set's passes may pair two of
            // its sums, so only its off switch is checked.
            bool const int32_keys = inputs[i].view().column(0).type() == type_id::int32;
            bool const one_sum_a_pass = lo32 == 2 && !int32_keys && team > 1;
            if (aggs == &sums) {
              EXPECT_TRUE(narrow) << what;
              EXPECT_EQ(own, own_kernel && lo32 > 0 && !(int32_keys && team > 1) &&
                               !one_sum_a_pass)
                  << what;
            } else if (!own_kernel) {
              EXPECT_FALSE(own) << what;
            }
            EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << what;
          }
        }
      }
    }
  }
  // The derived choice: spilled from 3 * 2^14 sampled keys and without a hot key (the first
  // third of the rows on one key is one); counted where one block then holds what 8-byte sums
  // need two passes or a team of 2 for (2^14 keys), with or without a hot key.
  inputs.push_back(lo32_input(uniform_keys<std::int32_t>(n, 1 << 14, 58), values[0].first, 58));
  names.push_back("2^14 int32 keys, random values");
  auto hot_small = uniform_keys<std::int32_t>(n, 1 << 14, 59);
  std::fill(hot_small.begin(), hot_small.begin() + n / 3, 7);
  inputs.push_back(lo32_input(hot_small, values[0].first, 59));
  names.push_back("2^14 int32 keys, the first third one key, random values");
  struct choice {
    std::size_t index;
    bool lo32;
    bool counted;
  };
  for (auto const& c : {choice{0, false, false}, choice{1, true, false}, choice{2, true, false},
                        choice{3, false, false}, choice{inputs.size() - 2, true, true},
                        choice{inputs.size() - 1, true, true}}) {
    auto const device = place(inputs[c.index].view(), memory_space::device);
    table host;
    bool ran = !c.lo32;
    bool counted = !c.counted;
    EXPECT_TRUE(dense_tier_ran(device, sums, {}, host, nullptr, nullptr, &ran, &counted))
        << names[c.index];
    EXPECT_EQ(ran, c.lo32) << names[c.index];
    EXPECT_EQ(counted, c.counted) << names[c.index];
    EXPECT_EQ(diff_groups(oracle_groupby(inputs[c.index].view(), 0, sums), groupby_rows(host.view())),
              "")
        << names[c.index];
  }
  // A key outside the window on rows the sample skips: the dense tier stops, its spills with
  // it, and the hashed tiers give the result.
  auto const outliers = lo32_input(with_unsampled_outliers(uniform_keys<std::int32_t>(n, 1 << 16, 56)),
                                   random_values<std::int32_t>(n, 57), 56);
  for (int const lo32 : {1, 2}) {
    detail::gpu::groupby_tuning forced;
    forced.hgb_dense_lo32 = lo32;
    table host;
    EXPECT_FALSE(dense_tier_ran(place(outliers.view(), memory_space::device), sums, forced, host));
    EXPECT_EQ(diff_groups(oracle_groupby(outliers.view(), 0, sums), groupby_rows(host.view())), "")
        << lo32;
  }
}

/// Keys uniform over `domain` but for `hot`, which holds `count` rows from row `at` on (and no
/// others).
template <class K>
std::vector<K> keys_with_run(size_type n, size_type domain, std::uint64_t seed, K hot,
                             std::size_t at, std::size_t count) {
  auto keys = uniform_keys<K>(n, domain, seed);
  for (auto& k : keys) {
    if (k == hot) { k = static_cast<K>(hot + 1); }
  }
  std::fill(keys.begin() + static_cast<std::ptrdiff_t>(at),
            keys.begin() + static_cast<std::ptrdiff_t>(at + count), hot);
  return keys;
}

TEST(GpuHashGroupby, DenseTierWrappedSums) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 300001;  // a partial last tile
  std::vector<aggregation> const sums{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  struct case_t {
    table input;
    std::string what;
    bool wsum;  ///< the wrapped sums give the result
    int team;   ///< then in teams of (0: not checked)
  };
  std::vector<case_t> cases;
  std::vector<std::pair<std::vector<std::int32_t>, std::string>> const values{
    {random_values<std::int32_t>(n, 61), "random values"},
    {std::vector<std::int32_t>(static_cast<std::size_t>(n), std::numeric_limits<std::int32_t>::max()),
     "INT32_MAX"},
    {std::vector<std::int32_t>(static_cast<std::size_t>(n), std::numeric_limits<std::int32_t>::min()),
     "INT32_MIN"}};
  for (auto const& [v, vname] : values) {
    // 2^16 keys straddling zero: 4 blocks of 17,800 slots each (H100 / H200: 227 KiB less the
    // static reserve), a window that wraps past the type's end for the unsigned keys.
    cases.push_back({lo32_input(uniform_keys<std::int32_t>(n, 1 << 16, 62), v, 62),
                     "2^16 int32 keys, " + vname, true, 4});
    cases.push_back({lo32_input(uniform_keys<std::int64_t>(n, 1 << 16, 63), v, 63),
                     "2^16 int64 keys, " + vname, true, 4});
    cases.push_back({lo32_input(uniform_keys<std::uint32_t>(n, 1 << 16, 64), v, 64),
                     "2^16 uint32 keys, " + vname, true, 4});
    cases.push_back({lo32_input(uniform_keys<std::uint64_t>(n, 3 << 13, 65), v, 65),
                     "3 * 2^13 uint64 keys, " + vname, true, 2});
    cases.push_back({lo32_input(uniform_keys<std::int32_t>(n, 1000, 66), v, 66),
                     "1000 int32 keys, " + vname, true, 1});
  }
  // One key's rows inside the second half of the first tile (rows 4096..8191 of 8192 a tile,
  // whose counts are never read back during the pass): 255 rows, the most a count holds, decode
  // exactly (with random values and with the extremes, where the top bytes' sum reaches
  // 255 * -128 and the low bytes' 255 * (2^24 - 1)); 256 wrap the count, the counts then fall
  // short of the rows and the run starts over without them. A run of 1000 from row 0: the early
  // stop (counts read back on rows 0, 4, 8, ...) or that check sends it the other way too.
  auto const big = random_values<std::int32_t>(n, 67);
  for (auto const& [v, vname] : values) {
    cases.push_back(
        {lo32_input(keys_with_run<std::int32_t>(n, 1 << 16, 68, 7, 4096, 255), v, 68),
         "255 rows of one key in one block, " + vname, true, 4});
  }
  cases.push_back({lo32_input(keys_with_run<std::int32_t>(n, 1 << 16, 69, 7, 4096, 256), big, 69),
                   "256 rows of one key in one block", false, 0});
  cases.push_back({lo32_input(keys_with_run<std::int32_t>(n, 1 << 16, 70, 7, 0, 1000), big, 70),
                   "1000 rows of one key in one block", false, 0});
  // A key outside the window on rows the sample skips: the wrapped sums stop, and the other
  // forms give the result.
  cases.push_back({lo32_input(with_unsampled_outliers(uniform_keys<std::int32_t>(n, 1 << 16, 71)),
                              big, 71),
                   "a key outside the window", false, 0});
  // The teams above assume a block's 227 KiB of shared memory (H100, H200); with less, wider
  // teams are declined, so only the results are checked there.
  bool const full_smem = get_device_info(0).shared_memory_per_block_optin >= 232448;
  for (auto const& c : cases) {
    auto const device = place(c.input.view(), memory_space::device);
    auto const expected = oracle_groupby(c.input.view(), 0, sums);
    for (bool const on : {true, false}) {
      detail::gpu::groupby_tuning t;
      t.hgb_dense_wsum = on;
      std::string const what = c.what + (on ? ", on" : ", off");
      table host;
      int team = 0;
      bool wsum = false;
      bool const dense = dense_tier_ran(device, sums, t, host, &team, nullptr, nullptr, nullptr,
                                        nullptr, &wsum);
      if (full_smem || !(on && c.wsum)) { EXPECT_EQ(dense && wsum, on && c.wsum) << what; }
      if (full_smem && on && c.wsum) {
        EXPECT_TRUE(dense) << what;
        EXPECT_EQ(team, c.team) << what;
      }
      EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << what;
    }
  }
  // Declined before any pass: a column off a 16-byte boundary, a third accumulator, a sum of uint32
  // values, and 64 keys over 2^21 rows (more than 128 rows a block's group on 132 SMs or fewer).
  auto const base = lo32_input(uniform_keys<std::int32_t>(n, 1 << 16, 72), big, 72);
  auto const base_device = place(base.view(), memory_space::device);
  auto const base_device_view = base_device.view();
  auto const base_view = base.view();
  std::vector<column_view> shifted;
  for (size_type i = 0; i < 3; ++i) {
    auto const& d = base_device_view.column(i);
    shifted.emplace_back(d.type(), static_cast<char const*>(d.data()) + size_of(d.type()), n - 1,
                         memory_space::device);
  }
  std::vector<column_view> shifted_host;
  for (size_type i = 0; i < 3; ++i) {
    auto const& h = base_view.column(i);
    shifted_host.emplace_back(h.type(), static_cast<char const*>(h.data()) + size_of(h.type()),
                              n - 1, memory_space::host);
  }
  auto const many = size_type{1} << 21;
  auto const dense_many = lo32_input(uniform_keys<std::int32_t>(many, 64, 73),
                                     random_values<std::int32_t>(many, 74), 73);
  // (SUM of one column twice is one accumulator: still two sums.)
  std::vector<aggregation> const three{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2},
                                       {aggregation_kind::count, -1}};
  std::vector<aggregation> const wide{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 3}};
  struct declined {
    table_view device;
    table_view host;
    std::vector<aggregation> const* aggs;
    std::string what;
  };
  auto const many_device = place(dense_many.view(), memory_space::device);
  for (auto const& d : {declined{table_view(shifted), table_view(shifted_host), &sums, "unaligned"},
                        declined{base_device.view(), base.view(), &three, "a count beside the sums"},
                        declined{base_device.view(), base.view(), &wide, "a uint32 column"},
                        declined{many_device.view(), dense_many.view(), &sums, "64 keys, 2^21 rows"}}) {
    table host;
    bool wsum = true;
    EXPECT_TRUE(dense_tier_ran(d.device, *d.aggs, {}, host, nullptr, nullptr, nullptr, nullptr,
                               nullptr, &wsum))
        << d.what;
    EXPECT_FALSE(wsum) << d.what;
    EXPECT_EQ(diff_groups(oracle_groupby(d.host, 0, *d.aggs), groupby_rows(host.view())), "")
        << d.what;
  }
}

// The wrapped sums' kernel reads the sample itself and declines a window wider than its teams
// hold (2^17 keys: 8 blocks of 17,800 slots) before any pass; the host then reads the sample the
// kernel copied for the other forms. Signed keys straddling zero and unsigned keys at the top
// of their range check the sample's order (its bits with the sign flipped).
TEST(GpuHashGroupby, DenseTierWrappedSumsDeclineFromTheDeviceSample) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 200003;
  std::vector<aggregation> const sums{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  auto const wide = lo32_input(uniform_keys<std::int32_t>(n, 1 << 17, 81),
                               random_values<std::int32_t>(n, 82), 81);
  auto const device = place(wide.view(), memory_space::device);
  table host;
  bool wsum = true;
  dense_tier_ran(device, sums, {}, host, nullptr, nullptr, nullptr, nullptr, nullptr, &wsum);
  EXPECT_FALSE(wsum);
  EXPECT_EQ(diff_groups(oracle_groupby(wide.view(), 0, sums), groupby_rows(host.view())), "");
  // 1000 keys just below zero and just below the unsigned maximum: one block each.
  std::vector<std::int32_t> negative(static_cast<std::size_t>(n));
  std::vector<std::uint32_t> top(static_cast<std::size_t>(n));
  auto const u = uniform_keys<std::int32_t>(n, 1000, 83);
  for (std::size_t i = 0; i < negative.size(); ++i) {
    auto const k = u[i] % 1000;
    negative[i] = -1 - (k < 0 ? -k : k);
    top[i] = std::numeric_limits<std::uint32_t>::max() - static_cast<std::uint32_t>(k < 0 ? -k : k);
  }
  for (auto const& in : {lo32_input(negative, random_values<std::int32_t>(n, 84), 84),
                         lo32_input(top, random_values<std::int32_t>(n, 85), 85)}) {
    auto const d = place(in.view(), memory_space::device);
    int team = 0;
    bool ran = false;
    EXPECT_TRUE(dense_tier_ran(d, sums, {}, host, &team, nullptr, nullptr, nullptr, nullptr,
                               &ran));
    EXPECT_TRUE(ran);
    EXPECT_EQ(team, 1);
    EXPECT_EQ(diff_groups(oracle_groupby(in.view(), 0, sums), groupby_rows(host.view())), "");
  }
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

TEST(GpuHashGroupby, DenseTierCountedSumsMoveFullCountersToTheSpills) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Two groups, every value INT32_MAX in one column and INT32_MIN in the other: every second
  // add overflows each partial, one way in the first sum and the other way in the second. With
  // 2^25 rows over at most 2 * 132 blocks (H100/H200) a block meets each group about 63,000
  // times, so each counter passes +-2^14 (policy lo32_count_flush) and moves it to the spills.
  // The first half holds the keys in runs of 2048 (warps on one key: the one-group blocks, or
  // with one_group 0 the dense kernel's reduced adds, many overflows at once), the second half
  // alternates them (one add a row).
  auto const n = std::size_t{1} << 25;
  std::vector<std::int32_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = static_cast<std::int32_t>(i < n / 2 ? (i / 2048) % 2 : i % 2);
  }
  std::vector<column> cols;
  cols.push_back(column::from_host(keys));
  cols.push_back(column::from_host(std::vector<std::int32_t>(n, std::numeric_limits<std::int32_t>::max())));
  cols.push_back(column::from_host(std::vector<std::int32_t>(n, std::numeric_limits<std::int32_t>::min())));
  table const input(std::move(cols));
  std::vector<aggregation> const sums{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  auto const expected = oracle_groupby(input.view(), 0, sums);
  auto const device = place(input.view(), memory_space::device);
  for (int const one : {-1, 0}) {
    detail::gpu::groupby_tuning t;
    t.hgb_dense_lo32 = 2;
    t.hgb_one_group = one;
    table host;
    bool ran = false;
    bool counted = false;
    EXPECT_TRUE(dense_tier_ran(device, sums, t, host, nullptr, nullptr, &ran, &counted)) << one;
    EXPECT_TRUE(counted) << one;
    EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << one;
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

TEST(GpuHashGroupby, AutomaticTurnsToSortBeyondTheFirstTable) {
  JOINERY_SKIP_WITHOUT_GPU();
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1}, {aggregation_kind::max, 2}};
  detail::gpu::groupby_tuning t;
  t.hgb_shared_bytes = 0;  // straight to the global table
  t.hgb_initial_groups = 1000;
  // Beyond the table: 8-byte keys sort as dictionary codes, 4-byte keys sort themselves.
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
    check(uniform_keys<std::int64_t>(200000, domain, 5), domain, groupby_algorithm::sort_dictionary);
    check(uniform_keys<std::int32_t>(200000, domain, 5), domain, groupby_algorithm::sort_transformed);
  }
  // 8-byte keys with more estimated groups than the dictionary's limit: sort_transformed.
  t.dictionary_automatic_groups = 1000;
  check(uniform_keys<std::int64_t>(200000, 50000, 5), 50000, groupby_algorithm::sort_transformed);
  t.dictionary_automatic_groups = 0;
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

TEST(GpuHashGroupby, AutomaticPartitionsHeavilySkewedKeysPastTheSharedTier) {
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
  // 40% of the rows on one key, the rest over 50000 keys: PGB-TR.
  auto hot32 = uniform_keys<std::int32_t>(300000, 50000, 7);
  for (std::size_t i = 0; i < hot32.size(); i += 5) { hot32[i] = hot32[i + 1] = -17; }
  run(hot32, groupby_algorithm::partition_transformed, "int32, one key 40%");
  auto hot64 = uniform_keys<std::uint64_t>(300000, 50000, 8);
  for (std::size_t i = 0; i < hot64.size(); i += 5) { hot64[i] = hot64[i + 1] = ~0ULL; }
  run(hot64, groupby_algorithm::partition_transformed, "uint64, the largest key 40%");
  // Fewer rows than samples, every row one key.
  run(std::vector<std::int64_t>(1000, 5), groupby_algorithm::partition_transformed, "one key");
  // Uniform keys, or the test switched off: tier 2.
  run(uniform_keys<std::int32_t>(300000, 50000, 9), groupby_algorithm::hash, "uniform");
  t.skew_partition_share = 2;
  t.skew_sort_groups = -1;
  run(hot32, groupby_algorithm::hash, "switched off");
  // A share below the threshold (one key 10%): over 50000 keys (estimated past
  // skew_sort_groups) the sort group-by, over 5000 tier 2. With 8-byte keys the sort of their
  // dictionary codes.
  // 36000 keys (estimated about that) lie past the bound of 4-byte keys (28000) and below that
  // of 8-byte keys (43000), whose sort costs more: the sort for int32 keys, tier 2 for int64.
  t.skew_partition_share = -1;
  t.skew_sort_groups = 0;
  for (int domain : {50000, 36000, 5000}) {
    auto const name = std::to_string(domain);
    auto warm = uniform_keys<std::int32_t>(300000, domain, 10);
    for (std::size_t i = 0; i < warm.size(); i += 10) { warm[i] = 3; }
    run(warm, domain > 5000 ? groupby_algorithm::sort_transformed : groupby_algorithm::hash,
        ("one key 10%, " + name + " keys").c_str());
    auto warm64 = uniform_keys<std::int64_t>(300000, domain, 11);
    for (std::size_t i = 0; i < warm64.size(); i += 10) { warm64[i] = -3; }
    run(warm64, domain > 36000 ? groupby_algorithm::sort_dictionary : groupby_algorithm::hash,
        ("int64, one key 10%, " + name + " keys").c_str());
  }
  // Switched off: tier 2 at any estimate.
  t.skew_sort_groups = -1;
  auto warm = uniform_keys<std::int32_t>(300000, 50000, 10);
  for (std::size_t i = 0; i < warm.size(); i += 10) { warm[i] = 3; }
  run(warm, groupby_algorithm::hash, "one key 10%, the sort switch off");
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

TEST(GpuDictionaryGroupby, DictionaryTableGrowsWhenItOverflows) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Exactly 20000 groups; the first dictionary table holds 1 (then grows five times), 16,
  // g - 1, g or more groups.
  auto const set_first = [](auto& t, std::int64_t g) { t.dictionary_initial_groups = g; };
  auto const algo = groupby_algorithm::sort_dictionary;
  check_first_table_sizes(algo, make_input(keys_with_groups<std::int64_t>(20000, 100000, 15)),
                          set_first);
  check_first_table_sizes(algo, make_input(keys_with_groups<std::uint32_t>(20000, 100000, 16)),
                          set_first);
}

constexpr groupby_algorithm pgb_algorithms[] = {groupby_algorithm::partition,
                                                groupby_algorithm::partition_transformed};

TEST(GpuPartitionGroupby, GroupsBeyondTheSharedTableGoToTheGlobalTable) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 50000 groups in 1, 2 or 8 partitions, with tables of 64 and 128 slots (32 and 64 groups) or
  // the derived size: most rows' groups are not in their block's table.
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

TEST(GpuPartitionGroupby, RestartsWhenTheFirstGlobalTableOverflows) {
  JOINERY_SKIP_WITHOUT_GPU();
  auto const input = make_input(uniform_keys<std::uint64_t>(100000, 20000, 13), 13);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::sum, 3},
                                      {aggregation_kind::min, 5},
                                      {aggregation_kind::avg, 1}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (auto algo : pgb_algorithms) {
    for (std::int64_t first : {std::int64_t{1}, std::int64_t{16}, std::int64_t{19999},
                               std::int64_t{20000}}) {
      detail::gpu::groupby_tuning t;
      t.pgb_initial_groups = first;
      EXPECT_EQ(diff_groups(expected, groupby_rows(run_tuned(algo, device, aggs, t).view())), "")
        << to_string(algo) << " initial groups " << first;
    }
  }
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
  // fanout and the first global table are far too small and the table grows several times.
  auto keys = uniform_keys<std::int32_t>(400000, 60000, 19);
  for (std::size_t i = 0; i < keys.size(); i += 5) { keys[i] = keys[i + 1] = 11; }
  auto const input = make_input(keys, 19);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::max, 2},
                                      {aggregation_kind::sum, 1}};
  auto const expected = oracle_groupby(input.view(), 0, aggs);
  auto const device = place(input.view(), memory_space::device);
  for (auto algo : pgb_algorithms) {
    for (std::int64_t first : {std::int64_t{0}, std::int64_t{64}}) {
      detail::gpu::groupby_tuning t;
      t.pgb_initial_groups = first;
      EXPECT_EQ(diff_groups(expected, groupby_rows(run_tuned(algo, device, aggs, t).view())), "")
        << to_string(algo) << " initial groups " << first;
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
  // groups meet in the global table. Also at the largest fanout, and a fanout past it refused.
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
    for (int bits : {-1, 11}) {
      detail::gpu::groupby_tuning t;
      t.pgb_bits = bits;
      EXPECT_EQ(diff_groups(expected, groupby_rows(run_tuned(algo, device, aggs, t).view())), "")
        << to_string(algo) << " bits " << bits;
    }
    detail::gpu::groupby_tuning t;
    t.pgb_bits = 12;
    EXPECT_THROW((void)run_tuned(algo, device, aggs, t), logic_error) << to_string(algo);
  }
}

#endif

}  // namespace
}  // namespace joinery::test
