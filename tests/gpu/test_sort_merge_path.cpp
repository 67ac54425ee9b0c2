// GPU sort (sort_keys, sort_pairs, merge_sort_pairs in both orders, the dispatch layer's radix
// sort on the keys' low bits) against CPU references (std::stable_sort) on random data for the
// four key types: sizes 0, 1, tile edges, several blocks, duplicate-heavy and all-equal keys,
// extreme values. GPU tests skip with a message when no GPU is present. Merge path
// partitioning, sorted search and the refusals: test_merge_path_search.cpp.
#include "gpu/sort_merge_path_test_util.hpp"
#include "primitives/detail/sort_policy.hpp"
#include "primitives/sort_dispatch.hpp"

#include <joinery/primitives/sort.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace joinery::test {
namespace {

using detail::gpu::merge_sort_policy;
using detail::gpu::radix_sort_policy;

constexpr size_type tile = radix_sort_policy::tile_items;
/// Sizes at 0, 1, warp and tile edges, and several blocks of every kernel (and of CUB's sort).
std::vector<size_type> const sizes = {0,        1,        2,        31,         32,       33,
                                      tile - 1, tile,     tile + 1, 4 * tile + 1, 65537,
                                      300007};

std::uint64_t payload_bits(column_view const& c, std::size_t i) {
  auto const w = size_of(c.type());
  std::uint64_t v = 0;
  std::memcpy(&v, static_cast<std::uint8_t const*>(c.data()) + i * w, w);
  return v;
}

/// The stable permutation of the keys ordered by `comp` (the reference of every sort test).
template <class K, class Compare = std::less<>>
std::vector<std::size_t> stable_order(std::vector<K> const& keys, Compare comp = {}) {
  std::vector<std::size_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t x, std::size_t y) { return comp(keys[x], keys[y]); });
  return idx;
}

// ---- sort_keys ------------------------------------------------------------------------------

TYPED_TEST(SortMergePath, SortKeysMatchesStdSort) {
  using K = TypeParam;
  for (auto mix : mixes) {
    for (auto n : sizes) {
      SCOPED_TRACE("n=" + std::to_string(n) + " mix=" + std::to_string(int(mix)));
      auto keys = make_keys<K>(n, mix, 7 + n);
      auto const d = to_device(keys, this->stream_);
      auto const out = sort_keys(d.view(), this->stream_);
      ASSERT_EQ(out.type(), type_to_id_v<K>);
      ASSERT_EQ(out.size(), n);
      ASSERT_EQ(out.space(), memory_space::device);
      auto const got = to_host<K>(out, this->stream_);
      std::sort(keys.begin(), keys.end());
      ASSERT_EQ(got, keys);
    }
  }
}

// ---- sort_pairs -----------------------------------------------------------------------------

/// A sort of (keys, payloads) under test: sort_pairs or merge_sort_pairs in one order.
using pair_sorter = std::function<table(column_view const&, std::vector<column_view> const&)>;

/// Checks sort(keys, payloads) against the stable permutation by `comp`, payload bits exactly.
/// `with_row_ids` adds the input position as an int64 payload: the stability check in plain view.
template <class K, class Compare = std::less<>>
void check_sorted_pairs(std::vector<K> const& keys, std::vector<type_id> const& payload_types,
                        bool with_row_ids, stream_ref s, pair_sorter const& sort,
                        Compare comp = {}) {
  auto const n = static_cast<size_type>(keys.size());
  // Random payloads (joinery::gen) plus, optionally, the row id itself as an int64 payload.
  gen::relation_spec spec;
  spec.rows = n;
  spec.kind = gen::key_kind::foreign;
  spec.key_type = type_id::int64;
  spec.domain = std::max<size_type>(n, 1);
  spec.payload_types = payload_types;
  spec.seed = 1234 + n;
  auto const t = gen::generate(spec);
  std::vector<column> host_payloads;
  for (size_type i = 1; i < t.num_columns(); ++i) {
    host_payloads.push_back(column::copy_of(t.view().column(i)));
  }
  std::vector<std::int64_t> ids(keys.size());
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  if (with_row_ids) { host_payloads.push_back(column::from_host(ids)); }

  auto const d_keys = to_device(keys, s);
  std::vector<column> d_payloads;
  std::vector<column_view> views;
  for (auto const& p : host_payloads) { d_payloads.push_back(to_device(p.view(), s)); }
  for (auto const& p : d_payloads) { views.push_back(p.view()); }

  auto const out = sort(d_keys.view(), views);
  ASSERT_EQ(out.num_columns(), static_cast<size_type>(views.size()) + 1);
  ASSERT_EQ(out.num_rows(), n);
  ASSERT_EQ(out.column(0).type(), type_to_id_v<K>);
  ASSERT_EQ(out.column(0).space(), memory_space::device);

  auto const order = stable_order(keys, comp);
  auto const got_keys = to_host<K>(out.column(0), s);
  ASSERT_EQ(got_keys.size(), keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    ASSERT_EQ(got_keys[i], keys[order[i]]) << "key at row " << i;
  }
  for (std::size_t c = 0; c < host_payloads.size(); ++c) {
    auto const& col = out.column(static_cast<size_type>(c) + 1);
    ASSERT_EQ(col.type(), host_payloads[c].type());
    ASSERT_EQ(col.size(), n);
    auto const got = column::copy_of(col.view(), host_resource(), s);
    for (std::size_t i = 0; i < order.size(); ++i) {
      ASSERT_EQ(payload_bits(got.view(), i), payload_bits(host_payloads[c].view(), order[i]))
        << "payload " << c << " (" << to_string(col.type()) << ") at row " << i
        << ": not the stable order";
    }
  }
}

template <class K>
void check_sort_pairs(std::vector<K> const& keys, std::vector<type_id> const& payload_types,
                      bool with_row_ids, stream_ref s) {
  check_sorted_pairs(keys, payload_types, with_row_ids, s,
                     [s](column_view const& k, std::vector<column_view> const& p) {
                       return sort_pairs(k, p, s);
                     });
}

TYPED_TEST(SortMergePath, SortPairsOnePayloadDirect) {
  using K = TypeParam;
  for (auto mix : mixes) {
    for (auto n : sizes) {
      SCOPED_TRACE("n=" + std::to_string(n) + " mix=" + std::to_string(int(mix)));
      auto const keys = make_keys<K>(n, mix, 11 + n);
      check_sort_pairs(keys, {}, /*with_row_ids=*/true, this->stream_);    // 8-byte direct
      check_sort_pairs(keys, {type_id::uint32}, false, this->stream_);     // 4-byte direct
      check_sort_pairs(keys, {type_id::int64}, false, this->stream_);      // 8-byte direct
    }
  }
}

TYPED_TEST(SortMergePath, SortPairsSeveralAndNarrowPayloads) {
  using K = TypeParam;
  for (auto mix : mixes) {
    for (auto n : sizes) {
      SCOPED_TRACE("n=" + std::to_string(n) + " mix=" + std::to_string(int(mix)));
      auto const keys = make_keys<K>(n, mix, 13 + n);
      check_sort_pairs(keys, {type_id::int8}, false, this->stream_);   // 1-byte: gather path
      check_sort_pairs(keys, {type_id::uint16}, true, this->stream_);
      check_sort_pairs(keys, {type_id::int8, type_id::int16, type_id::uint32, type_id::int64},
                       true, this->stream_);
    }
  }
}

TYPED_TEST(SortMergePath, SortPairsNoPayloadIsSortKeys) {
  using K = TypeParam;
  auto keys = make_keys<K>(4 * tile + 3, key_mix::wide, 5);
  auto const d = to_device(keys, this->stream_);
  auto const out = sort_pairs(d.view(), {}, this->stream_);
  ASSERT_EQ(out.num_columns(), 1);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(to_host<K>(out.column(0), this->stream_), keys);
}

#if defined(JOINERY_HAS_CUDA)
TYPED_TEST(SortMergePath, RadixSortOverLowBits) {
  // The dispatch layer's bit range (sort_dictionary sorts its codes, below 2^b, on their b low
  // bits): keys below 2^end_bit come out in full-sort order, stably; bits above end_bit are
  // ignored (the same keys with random high bits sort by their low bits, stably).
  using K = TypeParam;
  auto const s = this->stream_.ref();
  for (int end_bit : {1, 7, 8, 9, 16, 17, 31}) {
    for (auto n : {size_type{1}, size_type{33}, tile + 1, size_type{65537}}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " end_bit=" + std::to_string(end_bit));
      auto const mask = (std::uint64_t{1} << end_bit) - 1;
      auto const wide = make_keys<K>(n, key_mix::wide, 31 + n + static_cast<size_type>(end_bit));
      std::vector<K> low(wide.size());
      for (std::size_t i = 0; i < wide.size(); ++i) {
        low[i] = static_cast<K>(static_cast<std::uint64_t>(wide[i]) & mask);
      }
      auto const order = stable_order(low);
      std::vector<std::uint32_t> ids(wide.size());
      std::iota(ids.begin(), ids.end(), std::uint32_t{0});
      auto const d_ids = to_device(ids, s);
      std::vector<K> const* const variants[] = {&low, &wide};
      for (auto const* keys : variants) {
        auto const d_keys = to_device(*keys, s);
        column sorted(type_to_id_v<K>, n, device_resource(), s);
        column sorted_ids(type_id::uint32, n, device_resource(), s);
        auto const* in_keys = static_cast<K const*>(d_keys.view().data());
        detail::gpu::radix_sort_pairs<K, std::uint32_t>(
            in_keys, sorted.data_as<K>(), static_cast<std::uint32_t const*>(d_ids.view().data()),
            sorted_ids.data_as<std::uint32_t>(), n, s, device_resource(), 0, end_bit);
        auto const got = to_host<K>(sorted, s);
        auto const got_ids = to_host<std::uint32_t>(sorted_ids, s);
        for (std::size_t i = 0; i < order.size(); ++i) {
          ASSERT_EQ(got[i], (*keys)[order[i]]) << "key at row " << i;
          ASSERT_EQ(got_ids[i], order[i]) << "row id at row " << i << ": not the stable order";
        }
        column keys_only(type_to_id_v<K>, n, device_resource(), s);
        detail::gpu::radix_sort_keys<K>(in_keys, keys_only.data_as<K>(), n, s, device_resource(), 0,
                                        end_bit);
        auto const got_keys = to_host<K>(keys_only, s);
        for (std::size_t i = 0; i < order.size(); ++i) {
          ASSERT_EQ(static_cast<std::uint64_t>(got_keys[i]) & mask,
                    static_cast<std::uint64_t>(low[order[i]]))
            << "keys only, row " << i;
        }
      }
    }
  }
}
#endif

// ---- merge_sort_pairs -----------------------------------------------------------------------

template <class K>
class MergeSort : public SortMergePath<K> {};
TYPED_TEST_SUITE(MergeSort, key_types);

constexpr size_type msort_tile = merge_sort_policy::tile_items;
/// Sizes at the merge sort's tile edges, one pass (2 tiles), an odd run left over (3 tiles),
/// non-power-of-two tile counts (5, 7, 12 tiles), and many passes.
std::vector<size_type> const merge_sort_sizes = {
  0,  1,  2,  33, msort_tile - 1, msort_tile, msort_tile + 1, 2 * msort_tile,
  2 * msort_tile + 1, 3 * msort_tile - 1, 5 * msort_tile + 7, 7 * msort_tile,
  12 * msort_tile + 1, 65537, 300007};

constexpr key_mix merge_sort_mixes[] = {key_mix::wide, key_mix::duplicates, key_mix::all_equal,
                                        key_mix::extremes, key_mix::hot};

/// Checks merge_sort_pairs in `order` against std::stable_sort in that order.
template <class K>
void check_merge_sort(std::vector<K> const& keys, std::vector<type_id> const& payload_types,
                      bool with_row_ids, sort_order order, stream_ref s) {
  auto const sort = [s, order](column_view const& k, std::vector<column_view> const& p) {
    return merge_sort_pairs(k, p, order, s);
  };
  if (order == sort_order::ascending) {
    check_sorted_pairs(keys, payload_types, with_row_ids, s, sort, std::less<>{});
  } else {
    check_sorted_pairs(keys, payload_types, with_row_ids, s, sort, std::greater<>{});
  }
}

constexpr sort_order orders[] = {sort_order::ascending, sort_order::descending};

std::string trace(size_type n, key_mix mix, sort_order order) {
  return "n=" + std::to_string(n) + " mix=" + std::to_string(int(mix)) +
         (order == sort_order::ascending ? " ascending" : " descending");
}

TYPED_TEST(MergeSort, MatchesStableSortAtTileEdges) {
  using K = TypeParam;
  for (auto order : orders) {
    for (auto mix : merge_sort_mixes) {
      for (auto n : merge_sort_sizes) {
        SCOPED_TRACE(trace(n, mix, order));
        auto const keys = make_keys<K>(n, mix, 17 + n);
        // A random 4-byte payload and the input position (int64): stable order checked exactly.
        check_merge_sort(keys, {type_id::uint32}, /*with_row_ids=*/true, order, this->stream_);
      }
    }
  }
}

TYPED_TEST(MergeSort, KeysOnlyAndNarrowOrSeveralPayloads) {
  using K = TypeParam;
  for (auto order : orders) {
    for (auto n : {size_type{0}, size_type{1}, msort_tile + 1, 5 * msort_tile + 7}) {
      SCOPED_TRACE(trace(n, key_mix::duplicates, order));
      auto const keys = make_keys<K>(n, key_mix::duplicates, 19 + n);
      check_merge_sort(keys, {}, false, order, this->stream_);
      check_merge_sort(keys, {type_id::int8}, false, order, this->stream_);
      check_merge_sort(keys, {type_id::uint16}, true, order, this->stream_);
      check_merge_sort(keys, {type_id::int8, type_id::int16, type_id::uint32, type_id::int64},
                       true, order, this->stream_);
    }
  }
}

TYPED_TEST(MergeSort, AboutTwoToThe20RowsManyPasses) {
  using K = TypeParam;
  size_type const n = (size_type{1} << 20) + 3;
  for (auto order : orders) {
    for (auto mix : {key_mix::wide, key_mix::duplicates, key_mix::hot}) {
      SCOPED_TRACE(trace(n, mix, order));
      auto const keys = make_keys<K>(n, mix, 23);
      check_merge_sort(keys, {type_id::uint64}, true, order, this->stream_);
    }
  }
}

#if defined(JOINERY_HAS_CUDA)
TYPED_TEST(MergeSort, SixtyFourBitRowIdsPath) {
  // The 64-bit id path runs by itself from 2^32 rows; forced here at sizes a test can afford.
  using K = TypeParam;
  auto const s = this->stream_.ref();
  for (auto order : orders) {
    for (auto n : {size_type{1}, msort_tile, msort_tile + 1, 3 * msort_tile - 1,
                   12 * msort_tile + 1, size_type{300007}}) {
      SCOPED_TRACE(trace(n, key_mix::duplicates, order));
      auto const keys = make_keys<K>(n, key_mix::duplicates, 29 + n);
      auto const d_keys = to_device(keys, s);
      column sorted(type_to_id_v<K>, n, device_resource(), s);
      column ids(type_id::int64, n, device_resource(), s);
      auto const ascending = order == sort_order::ascending;
      auto sort = [&](auto comp) {
        detail::gpu::merge_sort_pairs<K>(static_cast<K const*>(d_keys.view().data()),
                                         static_cast<K*>(sorted.data()),
                                         ids.data_as<std::int64_t>(), n, comp,
                                         detail::gpu::merge_sort_ids::wide, s, device_resource());
      };
      if (ascending) {
        sort(detail::gpu::sort_less{});
      } else {
        sort(detail::gpu::sort_greater{});
      }
      auto const expect = ascending ? stable_order(keys, std::less<>{})
                                    : stable_order(keys, std::greater<>{});
      auto const got_keys = to_host<K>(sorted, s);
      auto const got_ids = to_host<std::int64_t>(ids, s);
      ASSERT_EQ(got_keys.size(), keys.size());
      ASSERT_EQ(got_ids.size(), keys.size());
      for (std::size_t i = 0; i < expect.size(); ++i) {
        ASSERT_EQ(got_ids[i], static_cast<std::int64_t>(expect[i])) << "row id at row " << i;
        ASSERT_EQ(got_keys[i], keys[expect[i]]) << "key at row " << i;
      }
    }
  }
}
#endif

}  // namespace
}  // namespace joinery::test
