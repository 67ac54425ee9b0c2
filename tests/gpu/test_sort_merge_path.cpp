// GPU sort (sort_keys, sort_pairs, merge_sort_pairs in both orders, the dispatch layer's radix
// sort on the keys' low bits), merge path partitioning (device and host) and sorted search
// (lower_bound, upper_bound) against CPU references (std::stable_sort, std::merge,
// std::lower_bound / std::upper_bound) on random data for the four key types: sizes 0, 1, tile
// edges, several blocks, duplicate-heavy and all-equal keys, extreme values; and the refusals.
// GPU tests skip with a message when no GPU is present; the refusals and the host merge path run
// everywhere.
#include "core/hash.hpp"
#include "primitives/detail/sort_policy.hpp"
#include "primitives/sort_dispatch.hpp"

#include <joinery/gen.hpp>
#include <joinery/primitives/merge_path.hpp>
#include <joinery/primitives/sort.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace joinery::test {
namespace {

using detail::gpu::merge_sort_policy;
using detail::gpu::radix_sort_policy;
using detail::gpu::sorted_search_policy;

constexpr size_type tile = radix_sort_policy::tile_items;
/// Sizes at 0, 1, warp and tile edges, and several blocks of every kernel (and of CUB's sort).
std::vector<size_type> const sizes = {0,        1,        2,        31,         32,       33,
                                      tile - 1, tile,     tile + 1, 4 * tile + 1, 65537,
                                      300007};

// ---------------------------------------------------------------------------------------------
// Data.

enum class key_mix : std::uint8_t {
  wide,        ///< random bits over the key's whole width (negative keys included when signed)
  duplicates,  ///< few distinct keys (|K| = 7), negative ones included when signed
  all_equal,   ///< one key repeated
  extremes,    ///< min, max, 0, -1 (as the type's bit pattern), min + 1, max - 1 and random keys
  hot,         ///< one key in about 9 rows of 10, random keys over the whole width in the rest
};

/// Generated keys (joinery::gen, never all zero), reshaped by `mix`.
template <class K>
std::vector<K> make_keys(size_type n, key_mix mix, std::uint64_t seed) {
  if (n == 0) { return {}; }
  gen::relation_spec spec;
  spec.rows = n;
  spec.kind = gen::key_kind::foreign;
  spec.key_type = type_to_id_v<K>;
  spec.domain = mix == key_mix::duplicates ? 7 : std::max<size_type>(2 * n + 17, 1000);
  spec.key_offset = std::is_signed_v<K> ? -spec.domain / 2 : 1;
  spec.seed = seed;
  auto const t = gen::generate(spec);
  std::vector<K> keys = t.column(0).to_vector<K>();
  switch (mix) {
    case key_mix::wide:
    case key_mix::hot:
      for (auto& k : keys) {
        k = static_cast<K>(detail::mix64(static_cast<std::uint64_t>(k) ^ (seed * 0x9e3779b97f4a7c15ULL)));
      }
      if (mix == key_mix::hot) {
        for (std::size_t i = 1; i < keys.size(); ++i) {
          if (detail::mix64(i ^ seed) % 10 != 0) { keys[i] = keys[0]; }
        }
      }
      break;
    case key_mix::duplicates: break;
    case key_mix::all_equal: std::fill(keys.begin(), keys.end(), keys.front()); break;
    case key_mix::extremes: {
      K const special[] = {std::numeric_limits<K>::min(), std::numeric_limits<K>::max(), K(0),
                           static_cast<K>(-1), static_cast<K>(std::numeric_limits<K>::min() + 1),
                           static_cast<K>(std::numeric_limits<K>::max() - 1)};
      for (std::size_t i = 0; i < keys.size(); ++i) {
        auto const h = detail::mix64(i ^ seed);
        if (h % 3 != 0) { keys[i] = special[(h >> 8) % std::size(special)]; }
      }
      break;
    }
  }
  return keys;
}

std::uint64_t payload_bits(column_view const& c, std::size_t i) {
  auto const w = size_of(c.type());
  std::uint64_t v = 0;
  std::memcpy(&v, static_cast<std::uint8_t const*>(c.data()) + i * w, w);
  return v;
}

template <class T>
std::vector<T> to_host(column const& c, stream_ref s) {
  auto const h = column::copy_of(c.view(), host_resource(), s);
  return h.to_vector<T>();
}

column to_device(column_view const& c, stream_ref s) {
  return column::copy_of(c, device_resource(), s);
}

template <class K>
column to_device(std::vector<K> const& v, stream_ref s) {
  return column::from_host(v, device_resource(), s);
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

void expect_refused(std::function<void()> const& f, std::string const& needle) {
  try {
    f();
    ADD_FAILURE() << "expected a refusal mentioning '" << needle << "'";
  } catch (logic_error const& e) {
    std::string const what = e.what();
    if (!built_with_cuda()) {
      EXPECT_NE(what.find("needs the GPU backend, built without CUDA"), std::string::npos) << what;
    } else {
      EXPECT_NE(what.find(needle), std::string::npos)
        << "message '" << what << "' does not mention '" << needle << "'";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Typed fixture over the four key types.

template <class K>
class SortMergePath : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;  // non-blocking: the library must not rely on the default stream
};

using key_types = ::testing::Types<std::int32_t, std::int64_t, std::uint32_t, std::uint64_t>;
TYPED_TEST_SUITE(SortMergePath, key_types);

constexpr key_mix mixes[] = {key_mix::wide, key_mix::duplicates, key_mix::all_equal,
                             key_mix::extremes};

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

// ---- merge path -----------------------------------------------------------------------------

struct tagged {
  std::uint64_t key_bits;
  int source;  // 0: A, 1: B
  std::size_t index;
  bool operator==(tagged const&) const = default;
};

/// The stable merge with ties from A first, every element tagged with its source and index.
template <class K>
std::vector<tagged> reference_merge(std::vector<K> const& a, std::size_t a0, std::size_t a1,
                                    std::vector<K> const& b, std::size_t b0, std::size_t b1) {
  std::vector<std::pair<K, tagged>> ta;
  std::vector<std::pair<K, tagged>> tb;
  for (auto i = a0; i < a1; ++i) { ta.push_back({a[i], {static_cast<std::uint64_t>(a[i]), 0, i}}); }
  for (auto i = b0; i < b1; ++i) { tb.push_back({b[i], {static_cast<std::uint64_t>(b[i]), 1, i}}); }
  std::vector<std::pair<K, tagged>> m;
  std::merge(ta.begin(), ta.end(), tb.begin(), tb.end(), std::back_inserter(m),
             [](auto const& x, auto const& y) { return x.first < y.first; });
  std::vector<tagged> out;
  for (auto const& e : m) { out.push_back(e.second); }
  return out;
}

/// Checks splits (a_i, b_i) of `parts` diagonals: diagonal sums, bounds, monotonicity, the
/// merge-path invariant, and that the per-diagonal merges concatenate to the whole merge.
template <class K>
void check_splits(std::vector<K> const& a, std::vector<K> const& b, size_type parts,
                  std::vector<std::int64_t> const& sa, std::vector<std::int64_t> const& sb) {
  auto const na = static_cast<size_type>(a.size());
  auto const nb = static_cast<size_type>(b.size());
  ASSERT_EQ(sa.size(), static_cast<std::size_t>(parts) + 1);
  ASSERT_EQ(sb.size(), static_cast<std::size_t>(parts) + 1);
  EXPECT_EQ(sa.front(), 0);
  EXPECT_EQ(sb.front(), 0);
  EXPECT_EQ(sa.back(), na);
  EXPECT_EQ(sb.back(), nb);
  std::vector<tagged> concat;
  for (size_type i = 0; i <= parts; ++i) {
    auto const ai = sa[static_cast<std::size_t>(i)];
    auto const bi = sb[static_cast<std::size_t>(i)];
    SCOPED_TRACE("diagonal " + std::to_string(i) + " split (" + std::to_string(ai) + ", " +
                 std::to_string(bi) + ")");
    ASSERT_EQ(ai + bi, merge_path_diagonal(na + nb, parts, i));
    ASSERT_GE(ai, 0);
    ASSERT_LE(ai, na);
    ASSERT_GE(bi, 0);
    ASSERT_LE(bi, nb);
    if (ai > 0 && bi < nb) { ASSERT_TRUE(a[ai - 1] <= b[bi]) << "A[a-1] > B[b]"; }
    if (bi > 0 && ai < na) { ASSERT_TRUE(b[bi - 1] < a[ai]) << "B[b-1] >= A[a]: tie not from A"; }
    if (i > 0) {
      auto const pa = sa[static_cast<std::size_t>(i) - 1];
      auto const pb = sb[static_cast<std::size_t>(i) - 1];
      ASSERT_LE(pa, ai);
      ASSERT_LE(pb, bi);
      auto const piece = reference_merge(a, pa, ai, b, pb, bi);
      concat.insert(concat.end(), piece.begin(), piece.end());
    }
  }
  auto const whole = reference_merge(a, 0, a.size(), b, 0, b.size());
  ASSERT_EQ(concat.size(), whole.size());
  ASSERT_TRUE(concat == whole) << "the per-diagonal merges do not concatenate to std::merge";
}

template <class K>
std::vector<K> sorted_keys(size_type n, key_mix mix, std::uint64_t seed) {
  auto v = make_keys<K>(n, mix, seed);
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::pair<size_type, size_type>> const merge_sizes = {
  {0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 1000}, {1000, 0}, {33, 31}, {1023, 1025}, {5000, 17},
  {17, 5000}, {65537, 40000}};

std::vector<size_type> merge_parts(size_type total) {
  std::vector<size_type> p = {1, 2, 3, 7, 64, 1000};
  p.push_back(std::max<size_type>(total, 1));
  p.push_back(total + 5);
  return p;
}

TYPED_TEST(SortMergePath, MergePathPartitionInvariant) {
  using K = TypeParam;
  for (auto mix : mixes) {
    for (auto [na, nb] : merge_sizes) {
      auto const a = sorted_keys<K>(na, mix, 21 + na);
      auto const b = sorted_keys<K>(nb, mix, 22 + nb + 1000003);
      auto const da = to_device(a, this->stream_);
      auto const db = to_device(b, this->stream_);
      for (auto parts : merge_parts(na + nb)) {
        SCOPED_TRACE("|A|=" + std::to_string(na) + " |B|=" + std::to_string(nb) +
                     " parts=" + std::to_string(parts) + " mix=" + std::to_string(int(mix)));
        auto const s = merge_path_partition(da.view(), db.view(), parts, this->stream_);
        ASSERT_EQ(s.parts, parts);
        auto const sa = to_host<std::int64_t>(s.a, this->stream_);
        auto const sb = to_host<std::int64_t>(s.b, this->stream_);
        check_splits(a, b, parts, sa, sb);
        // The host version gives the same splits.
        auto const host = merge_path_partition(std::span<K const>(a), std::span<K const>(b), parts);
        ASSERT_EQ(host, sa);
      }
    }
  }
}

// ---- sorted search --------------------------------------------------------------------------

TYPED_TEST(SortMergePath, SortedSearchMatchesStd) {
  using K = TypeParam;
  constexpr size_type st = sorted_search_policy::tile_items;
  std::vector<std::pair<size_type, size_type>> const cases = {
    {0, 0}, {0, 5}, {5, 0}, {1, 1}, {1, 100}, {100, st - 1}, {1000, st + 1}, {st, 4 * st + 3},
    {65537, 300007}};
  for (auto mix : mixes) {
    for (auto [n, m] : cases) {
      SCOPED_TRACE("|sorted|=" + std::to_string(n) + " probes=" + std::to_string(m) +
                   " mix=" + std::to_string(int(mix)));
      auto const sorted = sorted_keys<K>(n, mix, 31 + n);
      // Probes: keys of the same distribution (hits and misses), plus the extremes.
      auto probes = make_keys<K>(m, mix, 32 + m + 77);
      K const special[] = {std::numeric_limits<K>::min(), std::numeric_limits<K>::max(), K(0),
                           static_cast<K>(-1)};
      for (std::size_t i = 0; i < probes.size() && i < std::size(special); ++i) {
        probes[i] = special[i];
      }
      // Some probes taken from the sorted column itself (exact hits on runs of duplicates).
      for (std::size_t i = std::size(special); i < probes.size() && !sorted.empty(); i += 3) {
        probes[i] = sorted[detail::mix64(i) % sorted.size()];
      }
      auto const ds = to_device(sorted, this->stream_);
      auto const dp = to_device(probes, this->stream_);
      auto const lo = lower_bound(ds.view(), dp.view(), this->stream_);
      auto const hi = upper_bound(ds.view(), dp.view(), this->stream_);
      ASSERT_EQ(lo.type(), type_id::int64);
      ASSERT_EQ(hi.type(), type_id::int64);
      ASSERT_EQ(lo.size(), m);
      ASSERT_EQ(hi.size(), m);
      auto const glo = to_host<std::int64_t>(lo, this->stream_);
      auto const ghi = to_host<std::int64_t>(hi, this->stream_);
      for (std::size_t i = 0; i < probes.size(); ++i) {
        auto const elo = std::lower_bound(sorted.begin(), sorted.end(), probes[i]) - sorted.begin();
        auto const ehi = std::upper_bound(sorted.begin(), sorted.end(), probes[i]) - sorted.begin();
        ASSERT_EQ(glo[i], elo) << "lower_bound of probe " << i << " = " << probes[i];
        ASSERT_EQ(ghi[i], ehi) << "upper_bound of probe " << i << " = " << probes[i];
      }
    }
  }
}

// ---- beyond 2^31 rows: 64-bit positions in the merge path and the sorted search --------------

class SortMergePathLarge : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;
};

TEST_F(SortMergePathLarge, BeyondTwoToThe31Rows) {
  // A[i] = i / 3 over 2^31 + 2^16 + 3 int32 rows (sorted, runs of 3 equal keys), B[j] = j / 5:
  // lower and upper bounds have closed forms (3v and 3(v + 1), clamped), independent of std.
  size_type const na = (size_type{1} << 31) + (size_type{1} << 16) + 3;
  size_type const nb = (size_type{1} << 20) + 7;
  size_type const m = (size_type{1} << 20) + 1;
  std::size_t const device_need = sizeof(std::int32_t) * static_cast<std::size_t>(na) +
                                  (std::size_t{2} << 30);
  std::size_t const host_need = 2 * sizeof(std::int32_t) * static_cast<std::size_t>(na);
  auto const host_bytes = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  if (get_device_info(0).free_memory < device_need || host_bytes < host_need) {
    GTEST_SKIP() << "needs " << (device_need >> 30) << " GiB free device memory and "
                 << (host_need >> 30) << " GiB host memory";
  }
  std::vector<std::int32_t> a(static_cast<std::size_t>(na));
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < na; ++i) { a[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i / 3); }
  std::vector<std::int32_t> b(static_cast<std::size_t>(nb));
  for (size_type j = 0; j < nb; ++j) { b[static_cast<std::size_t>(j)] = static_cast<std::int32_t>(j / 5); }
  std::int64_t const max_a = (na - 1) / 3;
  std::vector<std::int32_t> probes(static_cast<std::size_t>(m));
  for (size_type k = 0; k < m; ++k) {
    // Spread over [-1, max_a + 1]: below all keys, every run, above all keys.
    auto const v = static_cast<std::int64_t>(detail::mix64(static_cast<std::uint64_t>(k) + 99) %
                                             static_cast<std::uint64_t>(max_a + 3)) - 1;
    probes[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(v);
  }
  probes[0] = -1;
  probes[1] = static_cast<std::int32_t>(max_a);
  probes[2] = static_cast<std::int32_t>(max_a + 1);
  auto const da = to_device(a, stream_);
  auto const db = to_device(b, stream_);
  auto const dp = to_device(probes, stream_);

  auto const lo = to_host<std::int64_t>(lower_bound(da.view(), dp.view(), stream_), stream_);
  auto const hi = to_host<std::int64_t>(upper_bound(da.view(), dp.view(), stream_), stream_);
  auto clamp = [&](std::int64_t x) { return std::min<std::int64_t>(std::max<std::int64_t>(x, 0), na); };
  for (size_type k = 0; k < m; ++k) {
    std::int64_t const v = probes[static_cast<std::size_t>(k)];
    ASSERT_EQ(lo[static_cast<std::size_t>(k)], clamp(3 * v)) << "lower_bound of " << v;
    ASSERT_EQ(hi[static_cast<std::size_t>(k)], clamp(3 * (v + 1))) << "upper_bound of " << v;
  }

  size_type const parts = 4099;
  auto const s = merge_path_partition(da.view(), db.view(), parts, stream_);
  auto const sa = to_host<std::int64_t>(s.a, stream_);
  auto const sb = to_host<std::int64_t>(s.b, stream_);
  auto const host = merge_path_partition(std::span<std::int32_t const>(a),
                                         std::span<std::int32_t const>(b), parts);
  ASSERT_EQ(sa, host);
  ASSERT_EQ(sa.back(), na);
  ASSERT_EQ(sb.back(), nb);
  for (size_type i = 0; i <= parts; ++i) {
    auto const ai = sa[static_cast<std::size_t>(i)];
    auto const bi = sb[static_cast<std::size_t>(i)];
    ASSERT_EQ(ai + bi, merge_path_diagonal(na + nb, parts, i));
    ASSERT_TRUE(ai >= 0 && ai <= na && bi >= 0 && bi <= nb) << "diagonal " << i;
    if (ai > 0 && bi < nb) { ASSERT_LE(a[ai - 1], b[bi]) << "diagonal " << i; }
    if (bi > 0 && ai < na) { ASSERT_LT(b[bi - 1], a[ai]) << "diagonal " << i; }
    if (i > 0) {
      ASSERT_LE(sa[static_cast<std::size_t>(i) - 1], ai);
      ASSERT_LE(sb[static_cast<std::size_t>(i) - 1], bi);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// No GPU needed: the host merge path and the refusals.

TEST(MergePathHost, InvariantOnRandomAndTiedData) {
  for (auto mix : mixes) {
    for (auto [na, nb] : merge_sizes) {
      auto const a = sorted_keys<std::int32_t>(na, mix, 41 + na);
      auto const b = sorted_keys<std::int32_t>(nb, mix, 42 + nb + 99991);
      for (auto parts : merge_parts(na + nb)) {
        SCOPED_TRACE("|A|=" + std::to_string(na) + " |B|=" + std::to_string(nb) +
                     " parts=" + std::to_string(parts) + " mix=" + std::to_string(int(mix)));
        auto const sa = merge_path_partition(std::span<std::int32_t const>(a),
                                             std::span<std::int32_t const>(b), parts);
        std::vector<std::int64_t> sb;
        for (size_type i = 0; i <= parts; ++i) {
          sb.push_back(merge_path_diagonal(na + nb, parts, i) - sa[static_cast<std::size_t>(i)]);
        }
        check_splits(a, b, parts, sa, sb);
      }
    }
  }
}

TEST(MergePathHost, DiagonalsDoNotOverflow) {
  size_type const total = size_type{1} << 40;
  size_type const parts = (size_type{1} << 31) - 1;
  EXPECT_EQ(merge_path_diagonal(total, parts, 0), 0);
  EXPECT_EQ(merge_path_diagonal(total, parts, parts), total);
  EXPECT_EQ(merge_path_diagonal(10, 3, 1), 3);
  EXPECT_EQ(merge_path_diagonal(10, 3, 2), 6);
  EXPECT_THROW((void)merge_path_partition(std::span<std::int32_t const>(),
                                          std::span<std::int32_t const>(), 0),
               logic_error);
}

TEST(SortMergePathRefusals, HostColumnsNeedTheDevice) {
  std::vector<std::int32_t> const k = {3, 1, 2};
  auto const host = column::from_host(k);
  expect_refused([&] { (void)sort_keys(host.view()); }, "must be in device memory");
  expect_refused([&] { (void)sort_pairs(host.view(), {host.view()}); }, "must be in device memory");
  expect_refused([&] { (void)merge_path_partition(host.view(), host.view(), 4); },
                 "must be in device memory");
  expect_refused([&] { (void)lower_bound(host.view(), host.view()); }, "must be in device memory");
  expect_refused([&] { (void)upper_bound(host.view(), host.view()); }, "must be in device memory");
}

TEST(SortMergePathRefusals, NonKeyTypes) {
  std::vector<double> const d = {1.0, 2.0};
  std::vector<std::int16_t> const s = {1, 2};
  std::vector<std::int32_t> const k = {1, 2};
  auto const dc = column::from_host(d);
  auto const sc = column::from_host(s);
  auto const kc = column::from_host(k);
  expect_refused([&] { (void)sort_keys(dc.view()); }, "keys must be int32, int64, uint32 or uint64");
  expect_refused([&] { (void)sort_pairs(sc.view(), {kc.view()}); },
                 "keys must be int32, int64, uint32 or uint64");
  expect_refused([&] { (void)merge_path_partition(dc.view(), dc.view(), 2); },
                 "must be int32, int64, uint32 or uint64");
  expect_refused([&] { (void)lower_bound(kc.view(), sc.view()); },
                 "must be int32, int64, uint32 or uint64");
}

TEST(SortMergePathRefusals, MismatchedLengthsAndTypes) {
  std::vector<std::int32_t> const k = {1, 2, 3};
  std::vector<std::int64_t> const p = {1, 2};
  std::vector<std::int64_t> const k64 = {1, 2, 3};
  auto const kc = column::from_host(k);
  auto const pc = column::from_host(p);
  auto const k64c = column::from_host(k64);
  expect_refused([&] { (void)sort_pairs(kc.view(), {pc.view()}); },
                 "the payload 0 column has 2 rows but the keys have 3");
  expect_refused([&] { (void)sort_pairs(kc.view(), {kc.view(), pc.view()}); },
                 "the payload 1 column has 2 rows but the keys have 3");
  expect_refused([&] { (void)merge_path_partition(kc.view(), k64c.view(), 2); },
                 "same key type");
  expect_refused([&] { (void)upper_bound(k64c.view(), kc.view()); }, "same key type");
  expect_refused([&] { (void)merge_path_partition(kc.view(), kc.view(), 0); },
                 "parts must lie in [1, 2^31)");
}

TEST(SortMergePathRefusals, MergeSortPairs) {
  std::vector<std::int32_t> const k = {3, 1, 2};
  std::vector<std::int64_t> const p = {1, 2};
  std::vector<double> const d = {1.0, 2.0, 3.0};
  auto const kc = column::from_host(k);
  auto const pc = column::from_host(p);
  auto const dc = column::from_host(d);
  auto nk = column::from_host(k);
  nk.make_nullable();
  auto const asc = sort_order::ascending;
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {}, asc); }, "must be in device memory");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {kc.view()}, sort_order::descending); },
                 "the key column is in host memory but must be in device memory");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {pc.view()}, asc); },
                 "merge_sort_pairs: the payload 0 column has 2 rows but the keys have 3");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {kc.view(), pc.view()}, asc); },
                 "the payload 1 column has 2 rows but the keys have 3");
  expect_refused([&] { (void)merge_sort_pairs(dc.view(), {}, asc); },
                 "merge_sort_pairs: keys must be int32, int64, uint32 or uint64, got float64");
  expect_refused([&] { (void)merge_sort_pairs(nk.view(), {}, asc); }, "nullable");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {nk.view()}, asc); },
                 "payload 0 column is nullable");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {}, static_cast<sort_order>(7)); },
                 "the order must be ascending or descending, got 7");
}

TEST(SortMergePathRefusals, Nullable) {
  std::vector<std::int32_t> const k = {1, 2, 3};
  auto nk = column::from_host(k);
  nk.make_nullable();
  auto const kc = column::from_host(k);
  expect_refused([&] { (void)sort_keys(nk.view()); }, "nullable");
  expect_refused([&] { (void)sort_pairs(kc.view(), {nk.view()}); }, "payload 0 column is nullable");
  expect_refused([&] { (void)merge_path_partition(kc.view(), nk.view(), 2); }, "nullable");
  expect_refused([&] { (void)lower_bound(nk.view(), kc.view()); }, "nullable");
}

}  // namespace
}  // namespace joinery::test
