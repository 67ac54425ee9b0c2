// Helpers shared by the GPU sort tests (test_sort_merge_path.cpp) and the merge path and
// sorted search tests (test_merge_path_search.cpp): key data, host/device copies, and the
// typed fixture over the four key types.
#pragma once

#include "core/hash.hpp"

#include <joinery/gen.hpp>
#include <joinery/primitives/sort.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace joinery::test {

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

template <class T>
std::vector<T> to_host(column const& c, stream_ref s) {
  auto const h = column::copy_of(c.view(), host_resource(), s);
  return h.to_vector<T>();
}

inline column to_device(column_view const& c, stream_ref s) {
  return column::copy_of(c, device_resource(), s);
}

template <class K>
column to_device(std::vector<K> const& v, stream_ref s) {
  return column::from_host(v, device_resource(), s);
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

inline constexpr key_mix mixes[] = {key_mix::wide, key_mix::duplicates, key_mix::all_equal,
                                    key_mix::extremes};

}  // namespace joinery::test
