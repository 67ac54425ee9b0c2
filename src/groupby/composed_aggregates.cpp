// Aggregates composed from other group-bys (composed_aggregates.hpp).
#include "groupby/composed_aggregates.hpp"

#include <joinery/error.hpp>

#include "core/transfer.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

namespace joinery::detail {

namespace {

using i128 = __int128;
using u128 = unsigned __int128;

bool checked_sum(aggregation const& a, table_view const& input, groupby_options const& options) {
  if (options.sum_overflow != overflow_policy::error || a.kind != aggregation_kind::sum ||
      a.column < 0 || a.column >= input.num_columns()) {
    return false;
  }
  auto const t = input.column(a.column).type();
  return t == type_id::int64 || t == type_id::uint64;
}

/// The high (int32, or uint32 for uint64) and low (uint32) 32-bit words of a 64-bit integer
/// column, in its memory space.
struct word_halves {
  column high;
  column low;
};

word_halves split_words(column_view const& c, stream_ref stream) {
  auto const n = c.size();
  auto* mr = resource_for(c.space());
  word_halves h{column(c.type() == type_id::uint64 ? type_id::uint32 : type_id::int32, n, mr,
                       stream),
                column(type_id::uint32, n, mr, stream)};
  auto const rows = static_cast<std::size_t>(n);
  if (rows > 0) {  // little-endian: the low word first
    copy_strided(h.low.data(), 4, c.data(), 8, 4, rows, c.space(), stream);
    copy_strided(h.high.data(), 4, static_cast<char const*>(c.data()) + 4, 8, 4, rows, c.space(),
                 stream);
  }
  return h;
}

/// A view of a word column with the whole column's validity.
column_view word_view(column const& w, column_view const& whole) {
  return column_view(w.type(), w.view().data(), w.size(), w.space(), whole.null_mask(),
                     whole.null_count());
}

column host_copy(column const& c, stream_ref stream) {
  return column::copy_of(c.view(), host_resource(), stream);
}

/// `out` (host) from the resource of `like` (pinned host memory or the device too).
column in_resource_of(column out, column const& like, stream_ref stream) {
  if (like.resource() == out.resource()) { return out; }
  return column::copy_of(out.view(), like.resource(), stream);
}

std::string to_decimal_string(i128 v) {
  bool const negative = v < 0;
  u128 u = negative ? static_cast<u128>(-(v + 1)) + 1 : static_cast<u128>(v);
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  return negative ? "-" + s : s;
}

/// The exact sums high * 2^32 + low of every group, checked against the range of `type`
/// (int64 or uint64); NULL where the group had no values.
column exact_sums(column const& high, column const& low, type_id type, size_type source,
                  stream_ref stream) {
  auto const hh = host_copy(high, stream);
  auto const lh = host_copy(low, stream);
  auto const hv = hh.view();
  auto const* lo = lh.view().data_as<std::uint64_t>();
  auto const n = hh.size();
  column out(type, n);
  auto const overflow = [&](i128 exact) {
    throw overflow_error("SUM of column " + std::to_string(source) + " overflows " +
                         std::string(to_string(type)) + ": a group's exact sum is " +
                         to_decimal_string(exact) +
                         " (groupby_options::sum_overflow is error; wrap gives the sum modulo "
                         "2^64)");
  };
  bool const is_unsigned = type == type_id::uint64;
  i128 const lowest = is_unsigned ? i128{0} : i128{std::numeric_limits<std::int64_t>::min()};
  i128 const highest = is_unsigned ? i128{std::numeric_limits<std::uint64_t>::max()}
                                   : i128{std::numeric_limits<std::int64_t>::max()};
  // The high words' sums: int64 (signed input) or uint64.
  auto const* signed_high = is_unsigned ? nullptr : hv.data_as<std::int64_t>();
  auto const* unsigned_high = is_unsigned ? hv.data_as<std::uint64_t>() : nullptr;
  auto* o = static_cast<std::uint64_t*>(out.data());  // either type's bits
  for (size_type i = 0; i < n; ++i) {
    if (!hv.is_valid(i)) {
      o[i] = 0;
      continue;
    }
    i128 const high_sum = is_unsigned ? static_cast<i128>(unsigned_high[i]) : signed_high[i];
    i128 const exact = high_sum * (i128{1} << 32) + static_cast<i128>(lo[i]);
    if (exact < lowest || exact > highest) { overflow(exact); }
    o[i] = static_cast<std::uint64_t>(exact);
  }
  if (hv.nullable()) {
    std::memcpy(out.make_nullable(), hv.null_mask(), null_mask_bytes(n));
    out.set_null_count(hv.null_count());
  }
  return in_resource_of(std::move(out), high, stream);
}

/// Whether two key columns hold the same groups in the same order (NaN equal to NaN, -0.0 to
/// 0.0, as the group-bys group them).
bool same_groups(column const& a, column const& b, stream_ref stream) {
  if (a.size() != b.size() || a.type() != b.type()) { return false; }
  auto const ha = host_copy(a, stream);
  auto const hb = host_copy(b, stream);
  auto const va = ha.view();
  auto const vb = hb.view();
  auto const t = a.type();
  for (size_type i = 0; i < va.size(); ++i) {
    if (va.is_valid(i) != vb.is_valid(i)) { return false; }
    if (!va.is_valid(i)) { continue; }
    bool same = false;
    if (is_string(t)) {
      same = va.string_at(i) == vb.string_at(i);
    } else if (t == type_id::float32 || t == type_id::float64) {
      double const x = t == type_id::float32 ? va.data_as<float>()[i] : va.data_as<double>()[i];
      double const y = t == type_id::float32 ? vb.data_as<float>()[i] : vb.data_as<double>()[i];
      same = x == y || (std::isnan(x) && std::isnan(y));
    } else {
      auto const w = size_of(t);
      same = std::memcmp(static_cast<char const*>(va.data()) + i * w,
                         static_cast<char const*>(vb.data()) + i * w, w) == 0;
    }
    if (!same) { return false; }
  }
  return true;
}

/// How a requested aggregate comes out of the composed runs.
struct composed_item {
  enum class source : std::uint8_t { plain, checked_sum, distinct } how = source::plain;
  std::size_t at = 0;  // plain: its column among the main run's aggregates; checked_sum: the
                       // first of its two; distinct: its index among the distinct counts
  type_id type = type_id::int64;
  size_type column = -1;
};

}  // namespace

bool needs_composed_groupby(table_view const& input, std::vector<aggregation> const& aggregations,
                            groupby_options const& options) {
  for (auto const& a : aggregations) {
    if (a.kind == aggregation_kind::count_distinct || checked_sum(a, input, options)) {
      return true;
    }
  }
  return false;
}

groupby_result composed_groupby(table_view const& input, std::vector<size_type> const& keys,
                                std::vector<aggregation> const& aggregations,
                                groupby_options const& options, stream_ref stream,
                                memory_resource_ref mr) {
  auto const t0 = std::chrono::steady_clock::now();
  JOINERY_EXPECTS(!keys.empty(), "group-by needs at least one key column");
  for (auto c : keys) {
    JOINERY_EXPECTS(c >= 0 && c < input.num_columns(),
                    "key column " + std::to_string(c) + " does not exist (the input has " +
                      std::to_string(input.num_columns()) + " columns)");
  }
  std::vector<column_view> views(input.begin(), input.end());
  std::vector<column> owned;  // the words of checked sums' columns
  std::vector<aggregation> base;
  std::vector<composed_item> items;
  std::vector<size_type> distinct_columns;
  for (auto const& a : aggregations) {
    if (a.kind == aggregation_kind::count_distinct) {
      JOINERY_EXPECTS(a.column >= 0 && a.column < input.num_columns(),
                      "count_distinct over column " + std::to_string(a.column) +
                        ", which does not exist (the input has " +
                        std::to_string(input.num_columns()) + " columns)");
      items.push_back({composed_item::source::distinct, distinct_columns.size(), type_id::int64,
                       a.column});
      distinct_columns.push_back(a.column);
    } else if (checked_sum(a, input, options)) {
      // Below 2^32 rows neither word sum can wrap (|high| < 2^31 and low < 2^32 a row).
      JOINERY_EXPECTS(input.num_rows() < (size_type{1} << 32),
                      "SUM with sum_overflow error takes inputs of fewer than 2^32 rows");
      auto const& v = input.column(a.column);
      auto w = split_words(v, stream);
      auto const at = static_cast<size_type>(views.size());
      views.push_back(word_view(w.high, v));
      views.push_back(word_view(w.low, v));
      owned.push_back(std::move(w.high));
      owned.push_back(std::move(w.low));
      items.push_back({composed_item::source::checked_sum, base.size(), v.type(), a.column});
      base.push_back({aggregation_kind::sum, at});
      base.push_back({aggregation_kind::sum, at + 1});
    } else {
      items.push_back({composed_item::source::plain, base.size(), type_id::int64, a.column});
      base.push_back(a);
    }
  }
  auto const nk = keys.size();
  // Every run's results from one resource: without `mr`, where the one-key group-by puts them
  // (host memory for a host-resident key column), not where each run's own columns would.
  if (mr == nullptr) {
    auto const space = input.column(keys.front()).space();
    mr = host_accessible(space) ? host_resource() : resource_for(space);
  }
  groupby_options inner = options;
  inner.sum_overflow = overflow_policy::wrap;  // the word sums cannot wrap
  // The distinct counts come from other runs: every run orders its groups by key, so that
  // their rows line up (checked below).
  if (!distinct_columns.empty()) {
    // A decimal128 column is two storage keys (its halves).
    auto const width = [&](size_type c) {
      return input.column(c).type() == type_id::decimal128 ? std::size_t{2} : std::size_t{1};
    };
    std::size_t key_width = 0;
    for (auto c : keys) { key_width += width(c); }
    for (auto c : distinct_columns) {
      JOINERY_EXPECTS(key_width + width(c) <= 8,
                      "count_distinct groups on the key columns and the counted column, at most "
                      "8 in all (a decimal128 column counts twice): at most 7 key columns");
    }
    inner.sort_by_key = true;
  }

  std::optional<groupby_result> main;
  if (!base.empty()) { main = groupby(table_view(views), keys, base, inner, stream, mr); }
  std::vector<column> group_keys;
  std::vector<column> base_columns;
  if (main) {
    auto cols = main->columns.release();
    for (std::size_t i = 0; i < cols.size(); ++i) {
      (i < nk ? group_keys : base_columns).push_back(std::move(cols[i]));
    }
  }
  auto const distinct_start = std::chrono::steady_clock::now();
  std::optional<groupby_stats> first_stats;
  std::vector<column> distinct_counts;
  for (auto c : distinct_columns) {
    std::vector<size_type> pair_keys = keys;
    pair_keys.push_back(c);
    groupby_options pair_options = inner;
    pair_options.sort_by_key = false;
    auto pairs = groupby(input, pair_keys, {{aggregation_kind::count, -1}}, pair_options, stream,
                         mr);
    std::vector<column_view> pair_views;
    for (std::size_t i = 0; i <= nk; ++i) { pair_views.push_back(pairs.columns.column(i)); }
    std::vector<size_type> group_on(nk);
    for (std::size_t i = 0; i < nk; ++i) { group_on[i] = static_cast<size_type>(i); }
    auto per = groupby(table_view(pair_views), group_on,
                       {{aggregation_kind::count_valid, static_cast<size_type>(nk)}}, inner,
                       stream, mr);
    if (!first_stats) { first_stats = per.stats; }
    auto cols = per.columns.release();
    if (group_keys.empty()) {
      for (std::size_t i = 0; i < nk; ++i) { group_keys.push_back(std::move(cols[i])); }
    } else {
      for (std::size_t i = 0; i < nk; ++i) {
        JOINERY_EXPECTS(same_groups(group_keys[i], cols[i], stream),
                        "count_distinct: the distinct counts' groups did not line up with the "
                        "other aggregates' (key column " + std::to_string(keys[i]) + ")");
      }
    }
    distinct_counts.push_back(std::move(cols[nk]));
  }
  double const distinct_seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - distinct_start).count();

  std::vector<column> out = std::move(group_keys);
  for (auto const& item : items) {
    switch (item.how) {
      case composed_item::source::plain: out.push_back(std::move(base_columns[item.at])); break;
      case composed_item::source::checked_sum:
        out.push_back(exact_sums(base_columns[item.at], base_columns[item.at + 1],
                                 item.type == type_id::uint64 ? type_id::uint64 : type_id::int64,
                                 item.column, stream));
        break;
      case composed_item::source::distinct:
        out.push_back(std::move(distinct_counts[item.at]));
        break;
    }
  }
  groupby_result r;
  r.stats = main ? main->stats : *first_stats;
  if (!distinct_columns.empty()) {
    r.stats.phases.push_back({"count distinct", distinct_seconds});
  }
  r.columns = table(std::move(out));
  r.stats.seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace joinery::detail
