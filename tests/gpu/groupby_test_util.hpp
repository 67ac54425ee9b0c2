// Helpers shared by the GPU group-by tests (test_groupby_gpu.cpp, test_groupby_gpu_dense.cpp,
// test_groupby_gpu_tiers.cpp): inputs, the oracle check, and (with CUDA) the internal entry
// point with its tuning knobs.
#pragma once

#include "support/oracle.hpp"

#include <joinery/gen.hpp>
#include <joinery/groupby.hpp>

#if defined(JOINERY_HAS_CUDA)
#include "groupby/estimate.hpp"
#include "groupby/gpu/gpu_groupby.hpp"
#endif

#include <gtest/gtest.h>

#include <algorithm>
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

inline constexpr groupby_algorithm gpu_algorithms[] = {
  groupby_algorithm::global_hash, groupby_algorithm::hash, groupby_algorithm::sort,
  groupby_algorithm::sort_transformed, groupby_algorithm::sort_dictionary,
  groupby_algorithm::partition, groupby_algorithm::partition_transformed};

inline bool skip_without_gpu() { return device_count() == 0; }
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
inline std::vector<aggregation> all_aggregations(table_view const& t) {
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
inline void check_against_oracle(groupby_algorithm algo, table const& input,
                                 std::string const& what, std::vector<aggregation> aggs = {}) {
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

#if defined(JOINERY_HAS_CUDA)

/// `algo` through the internal entry point with its tuning knobs (the result on the host).
inline table run_tuned(groupby_algorithm algo, table const& device_input,
                       std::vector<aggregation> const& aggs,
                       detail::gpu::groupby_tuning const& tuning) {
  auto t = detail::gpu::run_groupby(algo, device_input.view(), 0, aggs, false, tuning, nullptr,
                                    nullptr, default_stream(), device_resource());
  default_stream().synchronize();
  return place(t.view(), memory_space::host);
}

/// HGB through the internal entry point with its tuning knobs.
inline table run_hgb(table const& device_input, std::vector<aggregation> const& aggs,
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

#endif

}  // namespace joinery::test
