#include "cpu/cpu_groupby.hpp"

#include "core/hash.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

namespace joinery::detail::cpu {

namespace {

using joinery::detail::mix64;

/// group_of[i] = dense id of row i's key; first_row[g] = first row of group g.
template <class Key>
void assign_groups(Key const* keys, size_type n, std::vector<std::int64_t>& group_of,
                   std::vector<std::int64_t>& first_row) {
  auto const capacity = std::bit_ceil(static_cast<std::uint64_t>(std::max<size_type>(2 * n, 16)));
  auto const mask = capacity - 1;
  std::vector<Key> slot_key(capacity);
  std::vector<std::int64_t> slot_group(capacity, -1);
  group_of.resize(static_cast<std::size_t>(n));
  for (size_type i = 0; i < n; ++i) {
    auto s = mix64(static_cast<std::uint64_t>(keys[i])) & mask;
    while (slot_group[s] >= 0 && slot_key[s] != keys[i]) { s = (s + 1) & mask; }
    if (slot_group[s] < 0) {
      slot_key[s] = keys[i];
      slot_group[s] = static_cast<std::int64_t>(first_row.size());
      first_row.push_back(i);
    }
    group_of[static_cast<std::size_t>(i)] = slot_group[s];
  }
}

template <class T>
column aggregate(aggregation_kind kind, T const* v, std::vector<std::int64_t> const& group_of,
                 size_type groups) {
  auto const n = static_cast<size_type>(group_of.size());
  auto const out_type = aggregation_result_type(kind, type_to_id_v<T>);
  column out(out_type, groups);
  auto const g = static_cast<std::size_t>(groups);
  switch (kind) {
    case aggregation_kind::count: {
      auto* o = out.data_as<std::int64_t>();
      std::fill(o, o + groups, 0);
      for (size_type i = 0; i < n; ++i) { ++o[group_of[static_cast<std::size_t>(i)]]; }
      break;
    }
    case aggregation_kind::sum: {
      if constexpr (std::is_floating_point_v<T>) {
        auto* o = out.data_as<double>();
        std::fill(o, o + groups, 0.0);
        for (size_type i = 0; i < n; ++i) { o[group_of[static_cast<std::size_t>(i)]] += v[i]; }
      } else {
        // Wrapping: accumulate in uint64 and reinterpret (two's complement).
        std::vector<std::uint64_t> acc(g, 0);
        for (size_type i = 0; i < n; ++i) {
          acc[static_cast<std::size_t>(group_of[static_cast<std::size_t>(i)])] +=
            static_cast<std::uint64_t>(static_cast<std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>(v[i]));
        }
        std::memcpy(out.data(), acc.data(), g * sizeof(std::uint64_t));
      }
      break;
    }
    case aggregation_kind::min:
    case aggregation_kind::max: {
      auto* o = out.data_as<T>();
      bool const is_min = kind == aggregation_kind::min;
      std::fill(o, o + groups,
                is_min ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest());
      for (size_type i = 0; i < n; ++i) {
        auto& slot = o[group_of[static_cast<std::size_t>(i)]];
        slot = is_min ? std::min(slot, v[i]) : std::max(slot, v[i]);
      }
      break;
    }
    case aggregation_kind::avg: {
      std::vector<std::int64_t> cnt(g, 0);
      auto* o = out.data_as<double>();
      if constexpr (std::is_floating_point_v<T>) {
        std::vector<double> acc(g, 0.0);
        for (size_type i = 0; i < n; ++i) {
          auto const k = static_cast<std::size_t>(group_of[static_cast<std::size_t>(i)]);
          acc[k] += v[i];
          ++cnt[k];
        }
        for (std::size_t k = 0; k < g; ++k) { o[k] = acc[k] / static_cast<double>(cnt[k]); }
      } else {
        // Exact integer sums (no wrap) so the average is right even when the sum overflows 64 bits.
        std::vector<__int128> acc(g, 0);
        for (size_type i = 0; i < n; ++i) {
          auto const k = static_cast<std::size_t>(group_of[static_cast<std::size_t>(i)]);
          acc[k] += v[i];
          ++cnt[k];
        }
        for (std::size_t k = 0; k < g; ++k) {
          o[k] = static_cast<double>(static_cast<long double>(acc[k]) / cnt[k]);
        }
      }
      break;
    }
  }
  return out;
}

}  // namespace

table hash_groupby(table_view const& input, size_type key_column,
                   std::vector<aggregation> const& aggregations) {
  auto const key = input.column(key_column);
  std::vector<std::int64_t> group_of;
  std::vector<std::int64_t> first_row;
  dispatch_key_type(key.type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    assign_groups(key.data_as<K>(), key.size(), group_of, first_row);
  });
  auto const groups = static_cast<size_type>(first_row.size());
  std::vector<column> cols;
  column keys(key.type(), groups);
  dispatch_key_type(key.type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    auto const* k = key.data_as<K>();
    auto* o = keys.data_as<K>();
    for (size_type g = 0; g < groups; ++g) { o[g] = k[first_row[static_cast<std::size_t>(g)]]; }
  });
  cols.push_back(std::move(keys));
  for (auto const& a : aggregations) {
    if (a.kind == aggregation_kind::count) {
      std::int64_t const* dummy = nullptr;
      cols.push_back(aggregate(a.kind, dummy, group_of, groups));
      continue;
    }
    auto const col = input.column(a.column);
    cols.push_back(dispatch_type(col.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return aggregate(a.kind, static_cast<T const*>(col.data()), group_of, groups);
    }));
  }
  return table(std::move(cols));
}

}  // namespace joinery::detail::cpu
