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
// Here: the suite over every algorithm, the registry and sort_dictionary; HGB's dense tier in
// test_groupby_gpu_dense.cpp, its other tiers, the automatic choice and PGB in
// test_groupby_gpu_tiers.cpp.
#include "gpu/groupby_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace joinery::test {
namespace {

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

#endif

}  // namespace
}  // namespace joinery::test
