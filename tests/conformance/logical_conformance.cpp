// bool, date32, timestamps, decimal64 and decimal128 columns: join keys (alone, several, with
// NULLs; decimal128 values past 2^64), payloads of every such type, group-by keys and every
// aggregate they take (SUM of decimal64 past int64 into decimal128), on every algorithm of both
// backends, against brute-force references over the stored integers; the result columns keep
// their types and decimal formats; aggregates they do not take are refused.
#include "support/columns.hpp"

#include <joinery/groupby.hpp>
#include <joinery/join.hpp>
#include <joinery/primitives/checksum.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>

namespace joinery::test {
namespace {

using i128 = __int128;
using cell = std::optional<std::string>;
using row = std::vector<cell>;

std::string to_text(i128 v) {
  if (v == 0) { return "0"; }
  bool const neg = v < 0;
  auto u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

i128 value_at(column_view const& c, size_type i) {
  if (c.type() == type_id::decimal128) {
    i128 v = 0;
    std::memcpy(&v, static_cast<char const*>(c.data()) + i * 16, 16);
    return v;
  }
  auto const v = c.with_type(storage_type(c.type()));
  return dispatch_type(v.type(), [&](auto tag) -> i128 {
    using T = typename decltype(tag)::type;
    return static_cast<i128>(static_cast<T const*>(v.data())[i]);
  });
}

/// A cell as text: the stored integer (floats through %.6g), NULL as nullopt.
cell cell_at(column_view const& c, size_type i) {
  if (!c.is_valid(i)) { return std::nullopt; }
  if (c.type() == type_id::float64) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double const*>(c.data())[i]);
    return std::string(buf);
  }
  return to_text(value_at(c, i));
}

std::vector<row> rows_of(table_view const& t) {
  std::vector<row> out(static_cast<std::size_t>(t.num_rows()));
  for (size_type i = 0; i < t.num_rows(); ++i) {
    for (auto const& c : t) { out[static_cast<std::size_t>(i)].push_back(cell_at(c, i)); }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A host column of a logical type over int64 values (decimal128: sign-extended).
column logical_column(type_id t, size_type n, std::function<i128(size_type)> const& value,
                      std::function<bool(size_type)> const& null = {},
                      decimal_format decimal = {}) {
  auto c = make_column<std::int64_t>(n, [](size_type) { return std::int64_t{0}; }, null);
  column out(t, n);
  for (size_type i = 0; i < n; ++i) {
    auto const v = value(i);
    std::memcpy(static_cast<char*>(out.data()) + i * static_cast<size_type>(size_of(t)), &v,
                size_of(t));
  }
  if (null) {
    std::memcpy(out.make_nullable(), c.view().null_mask(), null_mask_bytes(n));
    out.set_null_count(c.view().null_count());
  }
  out.set_type(t, decimal);
  return out;
}

constexpr i128 big = static_cast<i128>(1) << 70;

struct join_case {
  std::string name;
  table build, probe;
  std::vector<size_type> build_keys, probe_keys, build_payloads, probe_payloads;
};

std::vector<join_case> join_cases() {
  std::vector<join_case> v;
  auto const dec2 = decimal_format{12, 2};
  {  // a date32 key with NULLs beside a decimal128 key past 2^64; payloads of every type
    join_case c{"date_and_decimal128_keys", {}, {}, {0, 1}, {1, 0}, {2, 3, 4, 5}, {2, 3}};
    std::vector<column> b, p;
    b.push_back(logical_column(type_id::date32, 70, [](size_type i) { return 18000 + i % 6; },
                               [](size_type i) { return i % 13 == 5; }));
    b.push_back(logical_column(type_id::decimal128, 70,
                               [](size_type i) { return (i % 3 - 1) * big + i % 2; }, {},
                               {38, 4}));
    b.push_back(logical_column(type_id::timestamp_us, 70,
                               [](size_type i) { return 1700000000000000LL + i * 999; }));
    b.push_back(logical_column(type_id::bool8, 70, [](size_type i) { return i % 3 == 0; },
                               [](size_type i) { return i % 11 == 2; }));
    b.push_back(logical_column(type_id::decimal64, 70, [](size_type i) { return -5 * i - 1; },
                               {}, dec2));
    b.push_back(logical_column(type_id::decimal128, 70, [](size_type i) { return -big * i; },
                               [](size_type i) { return i % 7 == 1; }, {30, 3}));
    p.push_back(logical_column(type_id::decimal128, 90,
                               [](size_type i) { return (i % 4 - 1) * big + i % 2; }, {},
                               {20, 4}));
    p.push_back(logical_column(type_id::date32, 90, [](size_type i) { return 18000 + i % 7; },
                               [](size_type i) { return i % 17 == 3; }));
    p.push_back(logical_column(type_id::date32, 90, [](size_type i) { return -100 + i; }));
    p.push_back(logical_column(type_id::decimal64, 90, [](size_type i) { return i * 1001; },
                               [](size_type i) { return i % 5 == 0; }, dec2));
    c.build = table(std::move(b));
    c.probe = table(std::move(p));
    v.push_back(std::move(c));
  }
  {  // one decimal64 key without NULLs (the one-key path), a timestamp payload
    join_case c{"decimal64_key", {}, {}, {0}, {0}, {1}, {1}};
    std::vector<column> b, p;
    b.push_back(logical_column(type_id::decimal64, 64, [](size_type i) { return i * 25; }, {},
                               dec2));
    b.push_back(logical_column(type_id::timestamp_ns, 64,
                               [](size_type i) { return -i * 1000000007LL; }));
    p.push_back(logical_column(type_id::decimal64, 96, [](size_type i) { return (i % 50) * 25; },
                               {}, dec2));
    p.push_back(logical_column(type_id::bool8, 96, [](size_type i) { return i % 2; }));
    c.build = table(std::move(b));
    c.probe = table(std::move(p));
    v.push_back(std::move(c));
  }
  return v;
}

bool keys_match(join_case const& c, size_type b, size_type p, join_options const& o) {
  for (std::size_t k = 0; k < c.build_keys.size(); ++k) {
    auto const x = cell_at(c.build.view().column(c.build_keys[k]), b);
    auto const y = cell_at(c.probe.view().column(c.probe_keys[k]), p);
    if (!x || !y) {
      if (!(!x && !y && o.nulls == null_equality::equal)) { return false; }
    } else if (*x != *y) {
      return false;
    }
  }
  return true;
}

std::vector<row> reference(join_case const& c, join_options const& o) {
  auto const B = c.build.num_rows(), P = c.probe.num_rows();
  std::vector<std::pair<size_type, size_type>> pairs;
  std::vector<bool> bhit(static_cast<std::size_t>(B)), phit(static_cast<std::size_t>(P));
  auto const k = o.kind;
  bool const pairs_kept = k == join_kind::inner || k == join_kind::left_outer ||
                          k == join_kind::right_outer || k == join_kind::full_outer;
  for (size_type p = 0; p < P; ++p) {
    for (size_type b = 0; b < B; ++b) {
      if (!keys_match(c, b, p, o)) { continue; }
      if (pairs_kept) { pairs.emplace_back(b, p); }
      bhit[static_cast<std::size_t>(b)] = phit[static_cast<std::size_t>(p)] = true;
    }
  }
  for (size_type p = 0; p < P; ++p) {
    bool const hit = phit[static_cast<std::size_t>(p)];
    if ((k == join_kind::left_semi && hit) || (k == join_kind::left_anti && !hit) ||
        ((k == join_kind::left_outer || k == join_kind::full_outer) && !hit)) {
      pairs.emplace_back(-1, p);
    }
  }
  for (size_type b = 0; b < B; ++b) {
    bool const hit = bhit[static_cast<std::size_t>(b)];
    if ((k == join_kind::right_semi && hit) || (k == join_kind::right_anti && !hit) ||
        ((k == join_kind::right_outer || k == join_kind::full_outer) && !hit)) {
      pairs.emplace_back(b, -1);
    }
  }
  bool const with_build = k != join_kind::left_semi && k != join_kind::left_anti;
  bool const with_probe = k != join_kind::right_semi && k != join_kind::right_anti;
  auto const bv = c.build.view(), pv = c.probe.view();
  std::vector<row> rows;
  for (auto [b, p] : pairs) {
    row r;
    for (std::size_t i = 0; i < c.build_keys.size(); ++i) {
      r.push_back(p >= 0 ? cell_at(pv.column(c.probe_keys[i]), p)
                         : cell_at(bv.column(c.build_keys[i]), b));
    }
    if (with_build) {
      for (auto col : c.build_payloads) {
        r.push_back(b >= 0 ? cell_at(bv.column(col), b) : std::nullopt);
      }
    }
    if (with_probe) {
      for (auto col : c.probe_payloads) {
        r.push_back(p >= 0 ? cell_at(pv.column(col), p) : std::nullopt);
      }
    }
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

/// The result columns' expected types and formats.
std::vector<std::pair<type_id, decimal_format>> expected_types(join_case const& c, join_kind k) {
  std::vector<std::pair<type_id, decimal_format>> v;
  auto const bv = c.build.view(), pv = c.probe.view();
  for (std::size_t i = 0; i < c.build_keys.size(); ++i) {  // the wider precision of the pair
    auto d = pv.column(c.probe_keys[i]).decimal();
    d.precision = std::max(d.precision, bv.column(c.build_keys[i]).decimal().precision);
    v.emplace_back(pv.column(c.probe_keys[i]).type(), d);
  }
  if (k != join_kind::left_semi && k != join_kind::left_anti) {
    for (auto col : c.build_payloads) {
      v.emplace_back(bv.column(col).type(), bv.column(col).decimal());
    }
  }
  if (k != join_kind::right_semi && k != join_kind::right_anti) {
    for (auto col : c.probe_payloads) {
      v.emplace_back(pv.column(col).type(), pv.column(col).decimal());
    }
  }
  return v;
}

struct algo_case {
  backend be;
  join_algorithm algo;
};

std::vector<algo_case> join_algorithms() {
  std::vector<algo_case> v;
  for (auto be : {backend::cpu, backend::gpu}) {
    for (auto a : join_algorithms_on(be)) {
      if (a != join_algorithm::multi_gpu_hash && a != join_algorithm::multi_gpu_sort_merge) {
        v.push_back({be, a});
      }
    }
  }
  return v;
}

class LogicalJoin : public ::testing::TestWithParam<algo_case> {};

TEST_P(LogicalJoin, EveryKindAndFormMatchesReference) {
  auto const a = GetParam();
  if (a.be == backend::gpu && device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
  for (auto const& c : join_cases()) {
    for (auto nulls : {null_equality::unequal, null_equality::equal}) {
      for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                        join_kind::left_outer, join_kind::right_semi, join_kind::right_anti,
                        join_kind::right_outer, join_kind::full_outer}) {
        SCOPED_TRACE(c.name + " " + std::string(to_string(kind)) +
                     (nulls == null_equality::equal ? " nulls equal" : ""));
        join_options o;
        o.algorithm = a.algo;
        o.backend = a.be;
        o.kind = kind;
        o.nulls = nulls;
        o.build_payloads = c.build_payloads;
        o.probe_payloads = c.probe_payloads;
        auto const want = reference(c, o);
        if (kind == join_kind::inner) { ASSERT_GT(want.size(), 20U); }
        o.output = output_form::index;
        auto const ids = join(c.build.view(), c.build_keys, c.probe.view(), c.probe_keys, o);
        EXPECT_EQ(ids.aggregate.count, want.size());
        o.output = output_form::table;
        auto const t = join(c.build.view(), c.build_keys, c.probe.view(), c.probe_keys, o);
        ASSERT_EQ(rows_of(t.columns.view()), want);
        auto const types = expected_types(c, kind);
        ASSERT_EQ(t.columns.num_columns(), static_cast<size_type>(types.size()));
        std::uint64_t sum = 0;
        for (size_type i = 0; i < t.columns.num_columns(); ++i) {
          auto const col = t.columns.view().column(i);
          EXPECT_EQ(col.type(), types[static_cast<std::size_t>(i)].first) << "column " << i;
          if (is_decimal(col.type())) {
            EXPECT_EQ(col.decimal(), types[static_cast<std::size_t>(i)].second) << "column " << i;
          }
          sum += checksum(col);
        }
        EXPECT_EQ(t.aggregate.checksum, sum);
        o.output = output_form::aggregate;
        auto const agg = join(c.build.view(), c.build_keys, c.probe.view(), c.probe_keys, o);
        EXPECT_EQ(agg.aggregate.count, want.size());
        EXPECT_EQ(agg.aggregate.checksum, sum);
        o.output = output_form::table;
        std::vector<row> batched;
        auto const totals = join_batches(
          c.build.view(), c.build_keys, c.probe.view(), c.probe_keys, o, [&](join_result&& r) {
            EXPECT_EQ(r.columns.num_columns(), static_cast<size_type>(types.size()));
            if (r.columns.num_columns() > 0) {
              EXPECT_EQ(r.columns.column(0).type(), types[0].first);
            }
            auto rs = rows_of(r.columns.view());
            batched.insert(batched.end(), rs.begin(), rs.end());
          });
        std::sort(batched.begin(), batched.end());
        EXPECT_EQ(batched, want);
        EXPECT_EQ(totals.aggregate.count, want.size());
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, LogicalJoin, ::testing::ValuesIn(join_algorithms()),
                         [](auto const& info) {
                           return std::string(to_string(info.param.be)) + "_" +
                                  std::string(to_string(info.param.algo));
                         });

TEST(LogicalJoinRefusals, KeyTypesAndScalesMustMatch) {
  auto const d = logical_column(type_id::date32, 4, [](size_type i) { return i; });
  auto const i32 = make_column<std::int32_t>(4, [](size_type i) { return static_cast<std::int32_t>(i); });
  auto const p2 = logical_column(type_id::decimal64, 4, [](size_type i) { return i; }, {}, {12, 2});
  auto const p3 = logical_column(type_id::decimal64, 4, [](size_type i) { return i; }, {}, {12, 3});
  join_options o;
  o.backend = backend::cpu;
  auto const expect_refusal = [&](column const& x, column const& y, char const* says) {
    try {
      (void)join(table_view({x.view()}), 0, table_view({y.view()}), 0, o);
      ADD_FAILURE() << "accepted " << to_string(x.type()) << " against " << to_string(y.type());
    } catch (std::logic_error const& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  expect_refusal(d, i32, "mismatched key types: build key 0 is date32, probe key 0 is int32");
  expect_refusal(i32, d, "probe key 0 is date32");
  expect_refusal(p2, p3, "decimal64(12,3)");
}

// Arrow's decimal128 of at most 18 digits arrives as decimal64: it joins a wider decimal128 of
// the same scale, the key coming out as decimal128.
TEST(LogicalJoinKeys, Decimal64JoinsDecimal128OfTheSameScale) {
  auto const narrow = logical_column(type_id::decimal64, 5, [](size_type i) { return i * 250 - 500; },
                                     [](size_type i) { return i == 4; }, {12, 2});
  auto const wide = logical_column(type_id::decimal128, 4,
                                   [](size_type i) { return i == 3 ? big : i * 500 - 500; }, {},
                                   {30, 2});
  for (auto be : {backend::cpu}) {
    join_options o;
    o.backend = be;
    o.output = output_form::table;
    o.kind = join_kind::full_outer;
    auto const r = join(table_view({narrow.view()}), 0, table_view({wide.view()}), 0, o);
    EXPECT_EQ(r.columns.column(0).type(), type_id::decimal128);
    EXPECT_EQ(r.columns.column(0).decimal(), (decimal_format{30, 2}));
    // build -500 -250 0 250 NULL; probe -500 0 500 2^70: two matches, three build rows alone,
    // two probe rows alone.
    EXPECT_EQ(rows_of(r.columns.view()),
              (std::vector<row>{{cell{}}, {"-250"}, {"-500"}, {"0"}, {"1180591620717411303424"},
                                {"250"}, {"500"}}));
  }
}

struct groupby_case {
  backend be;
  groupby_algorithm algo;
};

std::vector<groupby_case> groupby_algorithms() {
  std::vector<groupby_case> v;
  for (auto be : {backend::cpu, backend::gpu}) {
    for (auto a : groupby_algorithms_on(be)) {
      if (a != groupby_algorithm::multi_gpu) { v.push_back({be, a}); }
    }
  }
  return v;
}

class LogicalGroupby : public ::testing::TestWithParam<groupby_case> {};

// Keys (date32 with NULLs, bool8); COUNT(*), COUNT(decimal128), MIN / MAX of a timestamp,
// SUM / AVG / MIN / MAX of a decimal64 whose sums pass int64, SUM / AVG / MAX of a bool.
TEST_P(LogicalGroupby, KeysAndAggregatesMatchReference) {
  auto const a = GetParam();
  if (a.be == backend::gpu && device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
  size_type const n = 4000;
  auto const key_null = [](size_type i) { return i % 29 == 3; };
  auto const dec_null = [](size_type i) { return i % 9 == 4; };
  auto const dec_value = [](size_type i) -> std::int64_t {
    return (i % 5 == 0 ? (std::int64_t{1} << 61) : -(i * 1234567)) + i;
  };
  std::vector<column> cols;
  cols.push_back(logical_column(type_id::date32, n, [](size_type i) { return -3 + i % 11; },
                                key_null));
  cols.push_back(logical_column(type_id::bool8, n, [](size_type i) { return i % 4 == 1; }));
  cols.push_back(logical_column(type_id::decimal128, n, [](size_type i) { return big * i; },
                                [](size_type i) { return i % 6 == 0; }, {38, 2}));
  cols.push_back(logical_column(type_id::timestamp_ms, n,
                                [](size_type i) { return 1600000000000LL - i * 7919 % 100003; }));
  cols.push_back(logical_column(type_id::decimal64, n, dec_value, dec_null, {18, 3}));
  cols.push_back(logical_column(type_id::bool8, n, [](size_type i) { return i % 7 < 3; }));
  table const input(std::move(cols));
  std::vector<aggregation> const aggs{
    {aggregation_kind::count, -1}, {aggregation_kind::count_valid, 2},
    {aggregation_kind::min, 3},    {aggregation_kind::max, 3},
    {aggregation_kind::sum, 4},    {aggregation_kind::avg, 4},
    {aggregation_kind::min, 4},    {aggregation_kind::max, 4},
    {aggregation_kind::sum, 5},    {aggregation_kind::avg, 5},
    {aggregation_kind::max, 5}};
  struct acc {
    std::int64_t rows = 0, valid128 = 0, dec_count = 0, trues = 0, bool_max = 0;
    i128 ts_lo = 0, ts_hi = 0, dec_sum = 0, dec_lo = 0, dec_hi = 0;
    bool ts_seen = false;
  };
  std::map<std::pair<std::optional<std::int64_t>, std::int64_t>, acc> ref;
  for (size_type i = 0; i < n; ++i) {
    std::optional<std::int64_t> k0;
    if (!key_null(i)) { k0 = -3 + i % 11; }
    auto& g = ref[{k0, i % 4 == 1 ? 1 : 0}];
    ++g.rows;
    if (i % 6 != 0) { ++g.valid128; }
    i128 const ts = 1600000000000LL - i * 7919 % 100003;
    if (!g.ts_seen || ts < g.ts_lo) { g.ts_lo = ts; }
    if (!g.ts_seen || ts > g.ts_hi) { g.ts_hi = ts; }
    g.ts_seen = true;
    if (!dec_null(i)) {
      i128 const d = dec_value(i);
      if (g.dec_count == 0 || d < g.dec_lo) { g.dec_lo = d; }
      if (g.dec_count == 0 || d > g.dec_hi) { g.dec_hi = d; }
      g.dec_sum += d;
      ++g.dec_count;
    }
    std::int64_t const b = i % 7 < 3 ? 1 : 0;
    g.trues += b;
    g.bool_max = std::max(g.bool_max, b);
  }
  auto const float_text = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return std::string(buf);
  };
  std::vector<row> want;
  bool sum_past_int64 = false;
  for (auto const& [k, g] : ref) {
    row r{k.first ? cell{std::to_string(*k.first)} : cell{}, std::to_string(k.second),
          std::to_string(g.rows), std::to_string(g.valid128), to_text(g.ts_lo), to_text(g.ts_hi)};
    if (g.dec_count > 0) {
      r.push_back(to_text(g.dec_sum));
      r.push_back(float_text(static_cast<double>(g.dec_sum) / static_cast<double>(g.dec_count) /
                             1000.0));
      r.push_back(to_text(g.dec_lo));
      r.push_back(to_text(g.dec_hi));
    } else {
      r.insert(r.end(), 4, std::nullopt);
    }
    sum_past_int64 = sum_past_int64 || g.dec_sum > static_cast<i128>(INT64_MAX);
    r.push_back(std::to_string(g.trues));
    r.push_back(float_text(static_cast<double>(g.trues) / static_cast<double>(g.rows)));
    r.push_back(std::to_string(g.bool_max));
    want.push_back(std::move(r));
  }
  ASSERT_TRUE(sum_past_int64);
  std::sort(want.begin(), want.end());
  groupby_options o;
  o.algorithm = a.algo;
  o.backend = a.be;
  for (bool sorted : {false, true}) {
    o.sort_by_key = sorted;
    auto const r = groupby(input.view(), {0, 1}, aggs, o);
    ASSERT_EQ(rows_of(r.columns.view()), want);
    std::vector<type_id> const types{
      type_id::date32,       type_id::bool8,      type_id::int64,       type_id::int64,
      type_id::timestamp_ms, type_id::timestamp_ms, type_id::decimal128, type_id::float64,
      type_id::decimal64,    type_id::decimal64,  type_id::int64,       type_id::float64,
      type_id::bool8};
    ASSERT_EQ(r.columns.num_columns(), static_cast<size_type>(types.size()));
    for (size_type i = 0; i < r.columns.num_columns(); ++i) {
      EXPECT_EQ(r.columns.column(i).type(), types[static_cast<std::size_t>(i)]) << "column " << i;
    }
    EXPECT_EQ(r.columns.column(6).decimal(), (decimal_format{38, 3}));
    EXPECT_EQ(r.columns.column(8).decimal(), (decimal_format{18, 3}));
    if (!sorted) { continue; }
    auto const keys = r.columns.view();
    for (size_type g = 1; g < keys.num_rows(); ++g) {
      auto const at = [&](size_type i) {
        return std::tuple{!keys.column(0).is_valid(i),
                          keys.column(0).is_valid(i) ? value_at(keys.column(0), i) : i128{0},
                          value_at(keys.column(1), i)};
      };
      ASSERT_LT(at(g - 1), at(g)) << "groups " << g - 1 << " and " << g << " out of order";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, LogicalGroupby, ::testing::ValuesIn(groupby_algorithms()),
                         [](auto const& info) {
                           return std::string(to_string(info.param.be)) + "_" +
                                  std::string(to_string(info.param.algo));
                         });

// decimal128 keys past 2^64 and below zero, sorted as numbers.
TEST(LogicalGroupbyKeys, Decimal128KeysSortAsNumbers) {
  size_type const n = 600;
  auto const key = [](size_type i) { return (i % 7 - 3) * big + (i % 3) - 1; };
  std::vector<column> cols;
  cols.push_back(logical_column(type_id::decimal128, n, key, {}, {38, 0}));
  cols.push_back(make_column<std::int32_t>(n, [](size_type i) { return static_cast<std::int32_t>(i); }));
  table const input(std::move(cols));
  std::map<i128, std::int64_t> ref;
  for (size_type i = 0; i < n; ++i) { ref[key(i)] += i; }
  for (auto be : {backend::cpu}) {
    groupby_options o;
    o.backend = be;
    o.sort_by_key = true;
    auto const r = groupby(input.view(), {0}, {{aggregation_kind::sum, 1}}, o);
    ASSERT_EQ(r.num_groups(), static_cast<size_type>(ref.size()));
    EXPECT_EQ(r.columns.column(0).type(), type_id::decimal128);
    size_type g = 0;
    for (auto const& [k, s] : ref) {
      EXPECT_TRUE(value_at(r.columns.view().column(0), g) == k) << "group " << g;
      EXPECT_EQ(r.columns.view().column(1).data_as<std::int64_t>()[g], s) << "group " << g;
      ++g;
    }
  }
}

TEST(LogicalGroupbyRefusals, AggregatesATypeDoesNotTake) {
  auto const d = logical_column(type_id::date32, 8, [](size_type i) { return i; });
  auto const w = logical_column(type_id::decimal128, 8, [](size_type i) { return i; });
  auto const k = make_column<std::int32_t>(8, [](size_type i) { return static_cast<std::int32_t>(i % 2); });
  table_view const t({k.view(), d.view(), w.view()});
  groupby_options o;
  o.backend = backend::cpu;
  for (auto [kind, col, says] :
       {std::tuple{aggregation_kind::sum, 1, "sum of a date32 column is not supported"},
        std::tuple{aggregation_kind::avg, 1, "dates and timestamps take count"},
        std::tuple{aggregation_kind::min, 2, "decimal128 values take count and count_valid"}}) {
    try {
      (void)groupby(t, 0, {{kind, col}}, o);
      ADD_FAILURE() << to_string(kind) << " of column " << col << " accepted";
    } catch (std::logic_error const& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(aggregation_result_type(aggregation_kind::sum, type_id::decimal64),
            type_id::decimal128);
  EXPECT_EQ(aggregation_result_type(aggregation_kind::max, type_id::date32), type_id::date32);
  EXPECT_THROW((void)aggregation_result_type(aggregation_kind::sum, type_id::timestamp_us),
               std::logic_error);
}

}  // namespace
}  // namespace joinery::test
