// The group-by's general key path: several key columns, NULL and NaN keys, 1-/2-byte and float
// keys, values with NULLs (SQL's aggregates: NULLs skipped, NULL where a group has no value,
// COUNT(*) against COUNT(column), COUNT(DISTINCT column)), and SUMs checked for overflow, on
// every group-by algorithm of both backends, against a reference written with std::map.
#include "support/columns.hpp"
#include "support/oracle.hpp"

#include <joinery/groupby.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>

namespace joinery::test {
namespace {

/// A value as a number (for sums, min, max, avg) and as canonical bits (for keys: -0.0 as 0.0,
/// one NaN).
double number_at(column_view const& c, size_type i) {
  return dispatch_type(c.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return static_cast<double>(static_cast<T const*>(c.data())[i]);
  });
}

std::optional<std::uint64_t> key_at(column_view const& c, size_type i) {
  if (!c.is_valid(i)) { return std::nullopt; }
  if (is_floating(c.type())) {
    double d = number_at(c, i);
    if (d == 0) { d = 0; }
    if (std::isnan(d)) { return ~std::uint64_t{0}; }
    std::uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
  }
  return dispatch_type(c.type(), [&](auto tag) -> std::uint64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      return 0;
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<T const*>(c.data())[i]));
    } else {
      return static_cast<std::uint64_t>(static_cast<T const*>(c.data())[i]);
    }
  });
}

/// One output cell: NULL, or a number (compared with a relative tolerance for float64 results).
using cell = std::optional<double>;
using group_cells = std::vector<cell>;

struct groupby_case {
  std::string name;
  table input;
  std::vector<size_type> keys;
  std::vector<aggregation> aggs;
};

std::vector<group_cells> reference(groupby_case const& c) {
  auto const t = c.input.view();
  std::map<std::vector<std::optional<std::uint64_t>>, std::vector<size_type>> groups;
  for (size_type r = 0; r < t.num_rows(); ++r) {
    std::vector<std::optional<std::uint64_t>> k;
    for (auto col : c.keys) { k.push_back(key_at(t.column(col), r)); }
    groups[k].push_back(r);
  }
  std::vector<group_cells> out;
  for (auto const& [k, rows] : groups) {
    group_cells g;
    auto const first = rows.front();
    for (auto col : c.keys) {
      auto const& kc = t.column(col);
      g.push_back(kc.is_valid(first) ? cell(number_at(kc, first)) : std::nullopt);
      if (g.back() && std::isnan(*g.back())) { g.back() = std::numeric_limits<double>::infinity(); }
      if (g.back() && *g.back() == 0) { g.back() = 0.0; }
    }
    for (auto const& a : c.aggs) {
      if (a.kind == aggregation_kind::count) {
        g.push_back(static_cast<double>(rows.size()));
        continue;
      }
      auto const& v = t.column(a.column);
      double sum = 0, lo = INFINITY, hi = -INFINITY;
      std::int64_t n = 0;
      std::set<std::uint64_t> distinct;  // canonical bits: one NaN, -0.0 as 0.0
      for (auto r : rows) {
        if (!v.is_valid(r)) { continue; }
        distinct.insert(*key_at(v, r));
        auto const x = number_at(v, r);
        sum += x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        ++n;
      }
      switch (a.kind) {
        case aggregation_kind::count_valid: g.push_back(static_cast<double>(n)); break;
        case aggregation_kind::count_distinct: g.push_back(static_cast<double>(distinct.size())); break;
        case aggregation_kind::sum: g.push_back(n ? cell(sum) : std::nullopt); break;
        case aggregation_kind::min: g.push_back(n ? cell(lo) : std::nullopt); break;
        case aggregation_kind::max: g.push_back(n ? cell(hi) : std::nullopt); break;
        case aggregation_kind::avg: g.push_back(n ? cell(sum / static_cast<double>(n)) : std::nullopt); break;
        case aggregation_kind::count: break;
      }
    }
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<group_cells> cells_of(table const& result, std::size_t keys) {
  auto const host = place(result.view(), memory_space::host);
  auto const t = host.view();
  std::vector<group_cells> out;
  for (size_type r = 0; r < t.num_rows(); ++r) {
    group_cells g;
    for (size_type c = 0; c < t.num_columns(); ++c) {
      auto const& col = t.column(c);
      if (!col.is_valid(r)) {
        g.push_back(std::nullopt);
        continue;
      }
      double x = number_at(col, r);
      // The sums of unsigned / signed integer columns are their 64-bit words.
      if (static_cast<std::size_t>(c) < keys && std::isnan(x)) { x = std::numeric_limits<double>::infinity(); }
      g.push_back(x);
    }
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void expect_same_groups(std::vector<group_cells> const& want, std::vector<group_cells> const& got) {
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t g = 0; g < want.size(); ++g) {
    ASSERT_EQ(want[g].size(), got[g].size());
    for (std::size_t c = 0; c < want[g].size(); ++c) {
      ASSERT_EQ(want[g][c].has_value(), got[g][c].has_value()) << "group " << g << " column " << c;
      if (!want[g][c]) { continue; }
      auto const w = *want[g][c];
      auto const x = *got[g][c];
      if (w == x) { continue; }  // infinities too
      EXPECT_NEAR(w, x, 1e-9 * std::max(1.0, std::fabs(w))) << "group " << g << " column " << c;
    }
  }
}

std::vector<groupby_case> cases() {
  std::vector<groupby_case> v;
  std::mt19937_64 rng(7);
  auto const pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  auto const every = [](size_type k, size_type r) { return [k, r](size_type i) { return i % k == r; }; };
  std::vector<aggregation> const all_kinds = {
    {aggregation_kind::count, -1}, {aggregation_kind::count_valid, 2}, {aggregation_kind::sum, 2},
    {aggregation_kind::min, 2},    {aggregation_kind::max, 2},         {aggregation_kind::avg, 2},
    {aggregation_kind::sum, 3},    {aggregation_kind::min, 3},         {aggregation_kind::max, 3},
    {aggregation_kind::count_distinct, 2}, {aggregation_kind::count_distinct, 3}};
  {
    groupby_case c{"two_int32_keys_nullable_values", {}, {0, 1}, all_kinds};
    std::vector<column> t;
    size_type const n = 2000;
    t.push_back(make_column<std::int32_t>(n, [&](size_type) { return static_cast<std::int32_t>(pick(-4, 4)); }));
    t.push_back(make_column<std::int32_t>(n, [&](size_type) { return static_cast<std::int32_t>(pick(1000, 1012)); }));
    t.push_back(make_column<std::int64_t>(n, [&](size_type) { return pick(-1000000, 1000000); }, every(5, 2)));
    t.push_back(make_column<std::int8_t>(n, [&](size_type) { return static_cast<std::int8_t>(pick(-100, 100)); }));
    c.input = table(std::move(t));
    v.push_back(std::move(c));
  }
  {
    groupby_case c{"nullable_int16_and_float64_keys", {}, {0, 1}, all_kinds};
    double const fv[] = {0.0, -0.0, 2.5, -7.25, std::nan(""), 1e10};
    std::vector<column> t;
    size_type const n = 1500;
    t.push_back(make_column<std::int16_t>(n, [&](size_type) { return static_cast<std::int16_t>(pick(-2, 2)); }, every(7, 3)));
    t.push_back(make_column<double>(n, [&](size_type) { return fv[pick(0, 5)]; }, every(9, 1)));
    t.push_back(make_column<float>(n, [&](size_type) { return static_cast<float>(pick(-50, 50)) * 0.5F; }, every(3, 0)));
    t.push_back(make_column<std::uint16_t>(n, [&](size_type) { return static_cast<std::uint16_t>(pick(0, 65535)); }));
    c.input = table(std::move(t));
    v.push_back(std::move(c));
  }
  {
    // COUNT(DISTINCT) of floats: all NaNs one value, -0.0 that of 0.0, NULLs not counted.
    groupby_case c{"float_values_counted_distinct", {}, {0},
                   {{aggregation_kind::count_distinct, 2}, {aggregation_kind::count, -1},
                    {aggregation_kind::count_valid, 2}, {aggregation_kind::count_distinct, 3},
                    {aggregation_kind::sum, 3}, {aggregation_kind::count_distinct, 1}}};
    double const fv[] = {0.0, -0.0, 2.5, std::nan(""), -std::nan(""), 1e300, -7.0};
    std::vector<column> t;
    size_type const n = 1200;
    t.push_back(make_column<std::int64_t>(n, [&](size_type) { return pick(-20, 20) * 1000003; }));
    t.push_back(make_column<std::int32_t>(n, [&](size_type i) { return static_cast<std::int32_t>(i); }));
    t.push_back(make_column<double>(n, [&](size_type) { return fv[pick(0, 6)]; }, every(6, 5)));
    t.push_back(make_column<std::uint64_t>(n, [&](size_type) { return static_cast<std::uint64_t>(pick(0, 9)) << 40; }));
    c.input = table(std::move(t));
    v.push_back(std::move(c));
  }
  {
    groupby_case c{"nullable_int32_key_and_an_all_null_value", {}, {0}, all_kinds};
    std::vector<column> t;
    size_type const n = 700;
    t.push_back(make_column<std::int32_t>(n, [&](size_type i) { return static_cast<std::int32_t>(i % 50); }, every(4, 1)));
    t.push_back(make_column<std::int32_t>(n, [](size_type i) { return static_cast<std::int32_t>(i); }));
    t.push_back(make_column<std::uint32_t>(n, [](size_type) { return 5U; }, [](size_type) { return true; }));
    t.push_back(make_column<std::int64_t>(n, [](size_type i) { return i * 3; }, every(2, 0)));
    c.input = table(std::move(t));
    v.push_back(std::move(c));
  }
  return v;
}

struct algo_case {
  backend be;
  groupby_algorithm algo;
};

std::vector<algo_case> algorithms() {
  std::vector<algo_case> v;
  for (auto be : {backend::cpu, backend::gpu}) {
    for (auto a : groupby_algorithms_on(be)) {
      if (a != groupby_algorithm::multi_gpu) { v.push_back({be, a}); }
    }
  }
  return v;
}

class GeneralGroupby : public ::testing::TestWithParam<algo_case> {};

TEST_P(GeneralGroupby, KeysAndNullsMatchReference) {
  auto const a = GetParam();
  if (a.be == backend::gpu && device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
  for (auto const& c : cases()) {
    SCOPED_TRACE(c.name);
    auto const want = reference(c);
    std::vector<memory_space> spaces{memory_space::host};
    if (a.be == backend::gpu) { spaces.push_back(memory_space::device); }
    for (auto space : spaces) {
      auto const input = place(c.input.view(), space);
      groupby_options o;
      o.algorithm = a.algo;
      o.backend = a.be;
      auto const r = groupby(input, c.keys, c.aggs, o);
      expect_same_groups(want, cells_of(r.columns, c.keys.size()));
      for (std::size_t j = 0; j < c.aggs.size(); ++j) {
        auto const in = c.aggs[j].kind == aggregation_kind::count
                          ? type_id::int64 : c.input.column(c.aggs[j].column).type();
        EXPECT_EQ(r.columns.column(static_cast<size_type>(c.keys.size() + j)).type(),
                  aggregation_result_type(c.aggs[j].kind, in));
      }
      // Sorted: the key columns ascending, NULLs last.
      o.sort_by_key = true;
      auto const sorted = groupby(input, c.keys, c.aggs, o);
      auto const host = place(sorted.columns.view(), memory_space::host);
      auto const hv = host.view();
      for (size_type g = 1; g < hv.num_rows(); ++g) {
        std::vector<std::pair<bool, double>> prev, cur;
        for (std::size_t k = 0; k < c.keys.size(); ++k) {
          auto const& col = hv.column(static_cast<size_type>(k));
          auto const at = [&](size_type r) {
            double x = col.is_valid(r) ? number_at(col, r) : 0;
            if (std::isnan(x)) { x = std::numeric_limits<double>::infinity(); }
            return std::pair{!col.is_valid(r), x};
          };
          prev.push_back(at(g - 1));
          cur.push_back(at(g));
        }
        ASSERT_LT(prev, cur) << "groups " << g - 1 << " and " << g << " out of order";
      }
    }
  }
}

/// Exact int64 / uint64 result cells by key (the checked sums' tests compare exactly).
template <class T>
std::map<std::int64_t, std::optional<T>> exact_by_key(table const& result, size_type value_column) {
  auto const host = place(result.view(), memory_space::host);
  auto const t = host.view();
  std::map<std::int64_t, std::optional<T>> out;
  auto const& k = t.column(0);
  auto const& v = t.column(value_column);
  for (size_type r = 0; r < t.num_rows(); ++r) {
    out[k.data_as<std::int64_t>()[r]] =
      v.is_valid(r) ? std::optional<T>(v.data_as<T>()[r]) : std::nullopt;
  }
  return out;
}

TEST_P(GeneralGroupby, CheckedSumsAreExactOrRefused) {
  auto const a = GetParam();
  if (a.be == backend::gpu && device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
  constexpr auto max64 = std::numeric_limits<std::int64_t>::max();
  constexpr auto min64 = std::numeric_limits<std::int64_t>::min();
  constexpr auto umax64 = std::numeric_limits<std::uint64_t>::max();
  // Groups of 300 rows (past the 255 of 32-bit partials): key 1 sums +-max64 pairs and 5 (the
  // running sum leaves int64, the total does not), key 2 reaches min64 exactly, key 3 holds
  // only NULLs, key 4 sums to max64; the uint64 column sums to umax64 in key 1. Key 0 (only in
  // the overflowing input) sums 300 x max64 / 200.
  auto const make = [&](bool overflow, bool unsigned_overflow) {
    size_type const per = 300;
    size_type const groups = 5;
    auto const key = [&](size_type i) { return static_cast<std::int64_t>(i % groups); };
    auto const at = [&](size_type i) { return i / groups; };  // the row's index in its group
    std::vector<column> t;
    t.push_back(make_column<std::int64_t>(per * groups, key));
    t.push_back(make_column<std::int64_t>(
      per * groups,
      [&](size_type i) -> std::int64_t {
        switch (key(i)) {
          case 0: return overflow ? max64 / 200 : 1;
          case 1: return at(i) == 0 ? 5 : at(i) == per - 1 ? 0 : (at(i) % 2 == 1 ? max64 : -max64);
          case 2: return at(i) == 0 ? min64 + 299 : -1;
          case 4: return at(i) == 0 ? max64 - 299 : 1;
          default: return 7;
        }
      },
      [&](size_type i) { return key(i) == 3; }));
    t.push_back(make_column<std::uint64_t>(per * groups, [&](size_type i) -> std::uint64_t {
      if (key(i) != 1) { return 3; }
      return at(i) == 0 ? umax64 - 299 + (unsigned_overflow ? 1 : 0) : 1;
    }));
    return table(std::move(t));
  };
  std::vector<aggregation> const aggs = {{aggregation_kind::sum, 1},
                                         {aggregation_kind::sum, 2},
                                         {aggregation_kind::count_distinct, 1}};
  std::vector<memory_space> spaces{memory_space::host};
  if (a.be == backend::gpu) { spaces.push_back(memory_space::device); }
  for (auto space : spaces) {
    groupby_options o;
    o.algorithm = a.algo;
    o.backend = a.be;
    o.sum_overflow = overflow_policy::error;
    auto const fits = make(false, false);
    auto const r = groupby(place(fits.view(), space), std::vector<size_type>{0}, aggs, o);
    auto const sums = exact_by_key<std::int64_t>(r.columns, 1);
    auto const usums = exact_by_key<std::uint64_t>(r.columns, 2);
    auto const distinct = exact_by_key<std::int64_t>(r.columns, 3);
    ASSERT_EQ(sums.size(), 5U);
    EXPECT_EQ(sums.at(0), 300);
    EXPECT_EQ(sums.at(1), 5);  // 149 x max64 against 149 x -max64
    EXPECT_EQ(sums.at(2), min64);
    EXPECT_EQ(sums.at(3), std::nullopt);
    EXPECT_EQ(sums.at(4), max64);
    EXPECT_EQ(usums.at(1), umax64);
    EXPECT_EQ(usums.at(0), 900U);
    EXPECT_EQ(distinct.at(0), 1);
    EXPECT_EQ(distinct.at(1), 4);
    EXPECT_EQ(distinct.at(2), 2);
    EXPECT_EQ(distinct.at(3), 0);
    EXPECT_EQ(r.columns.column(1).type(), type_id::int64);
    EXPECT_EQ(r.columns.column(2).type(), type_id::uint64);
    for (auto [over, uover] : {std::pair{true, false}, std::pair{false, true}}) {
      auto const bad = make(over, uover);
      EXPECT_THROW(groupby(place(bad.view(), space), std::vector<size_type>{0}, aggs, o),
                   overflow_error);
      // wrap (the default): the sums modulo 2^64, as without the check
      groupby_options wrap = o;
      wrap.sum_overflow = overflow_policy::wrap;
      auto const w = groupby(place(bad.view(), space), std::vector<size_type>{0}, aggs, wrap);
      auto const ws = exact_by_key<std::int64_t>(w.columns, 1);
      auto const wu = exact_by_key<std::uint64_t>(w.columns, 2);
      EXPECT_EQ(ws.at(0), over ? static_cast<std::int64_t>(300 * static_cast<std::uint64_t>(max64 / 200))
                               : 300);
      EXPECT_EQ(wu.at(1), uover ? std::uint64_t{0} : umax64);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, GeneralGroupby, ::testing::ValuesIn(algorithms()),
                         [](auto const& info) {
                           return std::string(to_string(info.param.be)) + "_" +
                                  std::string(to_string(info.param.algo));
                         });

TEST(GeneralGroupbyRequest, CountDistinctOfStringsAndDates) {
  // COUNT(DISTINCT) of a string column (NULLs skipped, "" a value) and of a date32 column,
  // grouped on an int32 key, sorted: the same on both backends.
  std::vector<std::optional<std::string>> const words = {"a", "b", "a", std::nullopt, "", "b",
                                                         "c", "b", std::nullopt, "a"};
  size_type const n = static_cast<size_type>(words.size());
  std::vector<column> cols;
  cols.push_back(make_column<std::int32_t>(n, [](size_type i) { return static_cast<std::int32_t>(i % 2); }));
  cols.push_back(make_strings(words));
  cols.push_back(make_column<std::int32_t>(
    n, [](size_type i) { return static_cast<std::int32_t>(19000 + (i % 2 == 1 ? 0 : i % 3)); }));
  cols.back().set_type(type_id::date32);
  table const t(std::move(cols));
  for (auto be : {backend::cpu, backend::gpu}) {
    if (be == backend::gpu && device_count() == 0) { continue; }  // the GPU runs on a lent GPU
    groupby_options o;
    o.backend = be;
    o.sort_by_key = true;
    auto const r = groupby(t, std::vector<size_type>{0},
                           {{aggregation_kind::count_distinct, 1}, {aggregation_kind::count_distinct, 2},
                            {aggregation_kind::count, -1}}, o);
    auto const host = place(r.columns.view(), memory_space::host);
    auto const v = host.view();
    ASSERT_EQ(v.num_rows(), 2);
    // key 0: rows 0 2 4 6 8 -> "a" "a" "" "c" NULL: 3; dates 0 2 1 0 2 -> 3
    // key 1: rows 1 3 5 7 9 -> "b" NULL "b" "b" "a": 2; dates all 0 -> 1
    EXPECT_EQ(v.column(0).data_as<std::int32_t>()[0], 0);
    EXPECT_EQ(v.column(1).data_as<std::int64_t>()[0], 3);
    EXPECT_EQ(v.column(1).data_as<std::int64_t>()[1], 2);
    EXPECT_EQ(v.column(2).data_as<std::int64_t>()[0], 3);
    EXPECT_EQ(v.column(2).data_as<std::int64_t>()[1], 1);
    EXPECT_EQ(v.column(3).data_as<std::int64_t>()[0], 5);
    EXPECT_EQ(v.column(3).data_as<std::int64_t>()[1], 5);
  }
}

TEST(GeneralGroupbyRequest, ComposedResultsLandWhereTheKeysAre) {
  if (device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
  // A host key column beside a device-resident counted column: every result column in host
  // memory, as the one-key group-by leaves it; with a pinned `mr`, every column pinned.
  size_type const n = 5000;
  auto const keys = make_column<std::int32_t>(n, [](size_type i) { return static_cast<std::int32_t>(i % 7); });
  auto const host_values = make_column<std::int64_t>(n, [](size_type i) { return (i % 5) << 40; });
  auto const values = column::copy_of(host_values.view(), device_resource());
  table_view const mixed({keys.view(), values.view()});
  groupby_options o;
  o.backend = backend::gpu;
  o.sum_overflow = overflow_policy::error;
  std::vector<aggregation> const aggs{{aggregation_kind::count_distinct, 1}, {aggregation_kind::sum, 1}};
  for (auto const& [only_distinct, pinned] : {std::pair{true, false}, std::pair{false, false},
                                              std::pair{false, true}}) {
    auto const request = only_distinct ? std::vector<aggregation>{aggs[0]} : aggs;
    auto const r = groupby(mixed, std::vector<size_type>{0}, request, o, default_stream(),
                           pinned ? pinned_host_resource() : nullptr);
    ASSERT_EQ(r.num_groups(), 7);
    for (size_type c = 0; c < r.columns.num_columns(); ++c) {
      EXPECT_TRUE(host_accessible(r.columns.column(c).space())) << "column " << c;
      if (pinned) { EXPECT_EQ(r.columns.column(c).resource(), pinned_host_resource()) << c; }
    }
    auto const k = r.columns.column(0).to_vector<std::int32_t>();
    auto const d = r.columns.column(1).to_vector<std::int64_t>();
    for (size_type g = 0; g < 7; ++g) { EXPECT_EQ(d[static_cast<std::size_t>(g)], 5) << k[static_cast<std::size_t>(g)]; }
    if (!only_distinct) {
      auto const sums = r.columns.column(2).to_vector<std::int64_t>();
      for (size_type g = 0; g < 7; ++g) {
        std::int64_t want = 0;
        for (size_type i = k[static_cast<std::size_t>(g)]; i < n; i += 7) { want += (i % 5) << 40; }
        EXPECT_EQ(sums[static_cast<std::size_t>(g)], want);
      }
    }
  }
}

TEST(GeneralGroupbyRequest, RefusesBadColumnsAndRanksWideKeys) {
  std::vector<column> cols;
  cols.push_back(make_column<std::int64_t>(4, [](size_type i) { return i << 62; }));
  cols.push_back(make_column<std::int64_t>(4, [](size_type i) { return -i; }));
  table const t(std::move(cols));
  groupby_options o;
  o.backend = backend::cpu;
  EXPECT_THROW(groupby(t, std::vector<size_type>{}, {}, o), logic_error);
  EXPECT_THROW(groupby(t, {0, 7}, {}, o), logic_error);
  EXPECT_THROW(groupby(t, {0, 1}, {{aggregation_kind::count_valid, 9}}, o), logic_error);
  EXPECT_THROW(groupby(t, {0, 1}, {{aggregation_kind::count_distinct, 9}}, o), logic_error);
  EXPECT_THROW(groupby(t, {0, 1, 0, 1, 0, 1, 0, 1}, {{aggregation_kind::count_distinct, 1}}, o),
               logic_error);  // 8 keys and the counted column
  EXPECT_EQ(aggregation_result_type(aggregation_kind::count_distinct, type_id::string),
            type_id::int64);
  // Two int64 columns spanning their whole range: ranked, not packed; still two groups.
  std::vector<column> wide;
  wide.push_back(make_column<std::int64_t>(2, [](size_type i) {
    return i == 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max(); }));
  wide.push_back(make_column<std::int64_t>(2, [](size_type i) { return i == 0 ? -1 : 1; }));
  table const w(std::move(wide));
  auto const r = groupby(w, {0, 1}, {{aggregation_kind::count, -1}}, o);
  EXPECT_EQ(r.num_groups(), 2);
}

}  // namespace
}  // namespace joinery::test
