// String columns: keys of joins (alone, beside an integer key, string against large_string) and
// of group-bys, string payloads, COUNT / MIN / MAX of strings, NULLs, every join kind and output
// form, on every algorithm of both backends, against brute-force references over std::string.
#include "support/columns.hpp"

#include <joinery/groupby.hpp>
#include <joinery/join.hpp>
#include <joinery/primitives/checksum.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>

namespace joinery::test {
namespace {

using cell = std::optional<std::string>;

/// A cell of any column as text ("NULL" apart): strings as they are, integers in decimal.
cell cell_at(column_view const& c, size_type i) {
  if (!c.is_valid(i)) { return std::nullopt; }
  if (is_string(c.type())) { return std::string(c.string_at(i)); }
  return dispatch_type(c.type(), [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    return std::to_string(static_cast<T const*>(c.data())[i]);
  });
}

using row = std::vector<cell>;

std::vector<row> rows_of(table_view const& t) {
  std::vector<row> out(static_cast<std::size_t>(t.num_rows()));
  for (size_type i = 0; i < t.num_rows(); ++i) {
    for (auto const& c : t) { out[static_cast<std::size_t>(i)].push_back(cell_at(c, i)); }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Strings that share prefixes, cross the 8-byte word boundaries of the hash, hold UTF-8 and
/// NUL bytes, and the empty string.
std::vector<std::string> pool() {
  return {"", "a", "ab", "abc", "abcdefgh", "abcdefghi", "abcdefgh\x01", "zebra",
          "Zebra", "caf\xc3\xa9", std::string("nul\0byte", 8), "a long string past sixteen bytes",
          "a long string past sixteen bytez", " lead", "trail "};
}

struct string_case {
  std::string name;
  table build, probe;
  std::vector<size_type> build_keys, probe_keys, build_payloads, probe_payloads;
};

std::vector<string_case> cases() {
  std::mt19937_64 rng(7);
  auto const p = pool();
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  auto strings = [&](size_type n, std::size_t distinct, int null_every, type_id t) {
    std::vector<cell> v;
    for (size_type i = 0; i < n; ++i) {
      if (null_every > 0 && i % null_every == 1) {
        v.emplace_back(std::nullopt);
      } else {
        v.emplace_back(p[pick(std::min(distinct, p.size()))]);
      }
    }
    return make_strings(v, t);
  };
  std::vector<string_case> v;
  {  // one string key with NULLs; string and integer payloads on both sides
    string_case c{"string_key", {}, {}, {0}, {0}, {1, 2}, {2, 1}};
    std::vector<column> b, q;
    b.push_back(strings(70, 12, 9, type_id::string));
    b.push_back(make_column<std::int32_t>(70, [](size_type i) { return static_cast<std::int32_t>(i); }));
    b.push_back(strings(70, 15, 5, type_id::string));
    q.push_back(strings(90, 15, 7, type_id::string));
    q.push_back(make_column<std::int64_t>(90, [](size_type i) { return 1000 + i; }));
    q.push_back(strings(90, 15, 0, type_id::string));
    c.build = table(std::move(b));
    c.probe = table(std::move(q));
    v.push_back(std::move(c));
  }
  {  // a string key beside an int32 key; large_string against string; the key as a payload
    string_case c{"string_and_int_keys", {}, {}, {1, 0}, {0, 1}, {1}, {0}};
    std::vector<column> b, q;
    b.push_back(make_column<std::int32_t>(60, [](size_type i) { return static_cast<std::int32_t>(i % 3); },
                                          [](size_type i) { return i % 17 == 3; }));
    b.push_back(strings(60, 6, 11, type_id::large_string));
    q.push_back(strings(80, 8, 0, type_id::string));
    q.push_back(make_column<std::int32_t>(80, [](size_type i) { return static_cast<std::int32_t>(i % 4); }));
    c.build = table(std::move(b));
    c.probe = table(std::move(q));
    v.push_back(std::move(c));
  }
  return v;
}

bool keys_match(string_case const& c, size_type b, size_type p, join_options const& o) {
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

/// The reference pairs of the kind (-1: the missing side), then the rows of its table form.
std::pair<std::vector<std::pair<std::int64_t, std::int64_t>>, std::vector<row>> reference(
  string_case const& c, join_options const& o) {
  auto const B = c.build.num_rows(), P = c.probe.num_rows();
  std::vector<std::pair<std::int64_t, std::int64_t>> inner, pairs;
  std::vector<bool> bhit(static_cast<std::size_t>(B)), phit(static_cast<std::size_t>(P));
  for (size_type p = 0; p < P; ++p) {
    for (size_type b = 0; b < B; ++b) {
      if (keys_match(c, b, p, o)) {
        inner.emplace_back(b, p);
        bhit[static_cast<std::size_t>(b)] = phit[static_cast<std::size_t>(p)] = true;
      }
    }
  }
  auto const k = o.kind;
  if (k == join_kind::inner || k == join_kind::left_outer || k == join_kind::right_outer ||
      k == join_kind::full_outer) {
    pairs = inner;
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
  std::vector<row> rows;
  auto const bv = c.build.view(), pv = c.probe.view();
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
  // Semi / anti forms return one side's ids only.
  if (k == join_kind::left_semi || k == join_kind::left_anti) {
    for (auto& pr : pairs) { pr.first = -2; }
  }
  if (k == join_kind::right_semi || k == join_kind::right_anti) {
    for (auto& pr : pairs) { pr.second = -2; }
  }
  std::sort(pairs.begin(), pairs.end());
  return {pairs, rows};
}

std::vector<std::pair<std::int64_t, std::int64_t>> pairs_of(join_result const& r) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  auto const n = static_cast<size_type>(r.aggregate.count);
  auto const b = r.build_rows.size() > 0 ? column::copy_of(r.build_rows.view()) : column();
  auto const p = r.probe_rows.size() > 0 ? column::copy_of(r.probe_rows.view()) : column();
  for (size_type i = 0; i < n; ++i) {
    out.emplace_back(b.size() > 0 ? b.view().data_as<std::int64_t>()[i] : -2,
                     p.size() > 0 ? p.view().data_as<std::int64_t>()[i] : -2);
  }
  std::sort(out.begin(), out.end());
  return out;
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

class StringJoin : public ::testing::TestWithParam<algo_case> {};

TEST_P(StringJoin, EveryKindAndFormMatchesReference) {
  auto const a = GetParam();
  if (a.be == backend::gpu && device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
  for (auto const& c : cases()) {
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
        auto const [want_pairs, want_rows] = reference(c, o);
        if (kind == join_kind::inner) { ASSERT_GT(want_rows.size(), 20U); }
        o.output = output_form::index;
        auto const ids = join(c.build.view(), c.build_keys, c.probe.view(), c.probe_keys, o);
        EXPECT_EQ(pairs_of(ids), want_pairs);
        o.output = output_form::table;
        auto const t = join(c.build.view(), c.build_keys, c.probe.view(), c.probe_keys, o);
        ASSERT_EQ(rows_of(t.columns.view()), want_rows);
        std::uint64_t sum = 0;
        for (auto const& col : t.columns.view()) { sum += checksum(col); }
        EXPECT_EQ(t.aggregate.checksum, sum);
        o.output = output_form::aggregate;
        auto const agg = join(c.build.view(), c.build_keys, c.probe.view(), c.probe_keys, o);
        EXPECT_EQ(agg.aggregate.count, want_rows.size());
        EXPECT_EQ(agg.aggregate.checksum, t.aggregate.checksum);
        // Batch by batch, the batches' rows are the table form's.
        o.output = output_form::table;
        std::vector<row> batched;
        auto const totals = join_batches(c.build.view(), c.build_keys, c.probe.view(), c.probe_keys, o,
                     [&](join_result&& r) {
                       auto rs = rows_of(r.columns.view());
                       batched.insert(batched.end(), rs.begin(), rs.end());
                     });
        std::sort(batched.begin(), batched.end());
        EXPECT_EQ(batched, want_rows);
        EXPECT_EQ(totals.aggregate.count, want_rows.size());
        EXPECT_EQ(totals.aggregate.checksum, t.aggregate.checksum);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, StringJoin, ::testing::ValuesIn(join_algorithms()),
                         [](auto const& info) {
                           return std::string(to_string(info.param.be)) + "_" +
                                  std::string(to_string(info.param.algo));
                         });

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

class StringGroupby : public ::testing::TestWithParam<groupby_case> {};

// Groups on (string, int32) keys with NULLs; COUNT(*), COUNT / MIN / MAX of a string column,
// SUM of an integer; sorted output in the strings' byte order, NULLs last.
TEST_P(StringGroupby, KeysAndAggregatesMatchReference) {
  auto const a = GetParam();
  if (a.be == backend::gpu && device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
  std::mt19937_64 rng(11);
  auto const p = pool();
  size_type const n = 3000;
  std::vector<cell> k0, val;
  for (size_type i = 0; i < n; ++i) {
    k0.emplace_back(i % 13 == 4 ? cell{} : cell{p[rng() % p.size()]});
    val.emplace_back(i % 7 == 2 ? cell{} : cell{p[rng() % p.size()] + std::to_string(rng() % 50)});
  }
  std::vector<column> cols;
  cols.push_back(make_strings(k0));
  cols.push_back(make_column<std::int32_t>(n, [](size_type i) { return static_cast<std::int32_t>(i % 3); }));
  cols.push_back(make_strings(val, type_id::large_string));
  cols.push_back(make_column<std::int64_t>(n, [](size_type i) { return i * 7 - 500; }));
  table const input(std::move(cols));
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1},
                                      {aggregation_kind::count_valid, 2},
                                      {aggregation_kind::min, 2},
                                      {aggregation_kind::max, 2},
                                      {aggregation_kind::sum, 3}};
  // Reference.
  struct acc { std::int64_t rows = 0, valid = 0, sum = 0; cell lo, hi; };
  std::map<std::pair<cell, std::int32_t>, acc> ref;
  for (size_type i = 0; i < n; ++i) {
    auto& g = ref[{k0[static_cast<std::size_t>(i)], static_cast<std::int32_t>(i % 3)}];
    ++g.rows;
    g.sum += i * 7 - 500;
    auto const& v = val[static_cast<std::size_t>(i)];
    if (v) {
      ++g.valid;
      if (!g.lo || *v < *g.lo) { g.lo = v; }
      if (!g.hi || *v > *g.hi) { g.hi = v; }
    }
  }
  std::vector<row> want;
  for (auto const& [k, g] : ref) {
    want.push_back({k.first, std::to_string(k.second), std::to_string(g.rows),
                    std::to_string(g.valid), g.lo, g.hi, std::to_string(g.sum)});
  }
  std::sort(want.begin(), want.end());
  groupby_options o;
  o.algorithm = a.algo;
  o.backend = a.be;
  for (bool sorted : {false, true}) {
    o.sort_by_key = sorted;
    auto const r = groupby(input.view(), {0, 1}, aggs, o);
    ASSERT_EQ(rows_of(r.columns.view()), want);
    EXPECT_EQ(r.columns.column(4).type(), type_id::large_string);
    if (!sorted) { continue; }
    auto const keys = r.columns.view();
    for (size_type g = 1; g < keys.num_rows(); ++g) {
      auto const at = [&](size_type i) {
        auto const s = cell_at(keys.column(0), i);
        return std::tuple{!s.has_value(), s.value_or(""),
                          keys.column(1).data_as<std::int32_t>()[i]};
      };
      ASSERT_LT(at(g - 1), at(g)) << "groups " << g - 1 << " and " << g << " out of order";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, StringGroupby, ::testing::ValuesIn(groupby_algorithms()),
                         [](auto const& info) {
                           return std::string(to_string(info.param.be)) + "_" +
                                  std::string(to_string(info.param.algo));
                         });

// Many rows over many distinct strings: the dictionary's partitions and threads all take part.
// The CPU backend's radix join and hash group-by against std::map counts.
TEST(StringScale, ManyDistinctStringsMatchAMapReference) {
  std::mt19937_64 rng(5);
  auto const text = [&](std::uint64_t id) {
    return "key-" + std::to_string(id * 2654435761ULL % 1000003) + std::string(id % 23, 'x');
  };
  size_type const nb = 120000, np = 200000;
  std::vector<cell> b, p;
  std::map<std::string, std::int64_t> build_count, probe_count;
  for (size_type i = 0; i < nb; ++i) {
    auto s = text(rng() % 90000);
    ++build_count[s];
    b.emplace_back(std::move(s));
  }
  for (size_type i = 0; i < np; ++i) {
    auto s = text(rng() % 150000);
    ++probe_count[s];
    p.emplace_back(std::move(s));
  }
  std::uint64_t matches = 0;
  for (auto const& [s, n] : probe_count) {
    auto const it = build_count.find(s);
    if (it != build_count.end()) { matches += static_cast<std::uint64_t>(n * it->second); }
  }
  std::vector<column> bc, pc;
  bc.push_back(make_strings(b));
  pc.push_back(make_strings(p, type_id::large_string));
  table const bt(std::move(bc)), pt(std::move(pc));
  join_options o;
  o.backend = backend::cpu;
  o.algorithm = join_algorithm::radix_hash;
  o.output = output_form::aggregate;
  auto const r = join(bt.view(), 0, pt.view(), 0, o);
  EXPECT_EQ(r.aggregate.count, matches);
  groupby_options g;
  g.backend = backend::cpu;
  g.sort_by_key = true;
  auto const groups = groupby(pt.view(), 0, {{aggregation_kind::count, -1}}, g);
  ASSERT_EQ(groups.num_groups(), static_cast<size_type>(probe_count.size()));
  auto const v = groups.columns.view();
  size_type i = 0;
  for (auto const& [s, n] : probe_count) {  // std::map's order is the byte order
    ASSERT_EQ(v.column(0).string_at(i), s) << "group " << i;
    ASSERT_EQ(v.column(1).data_as<std::int64_t>()[i], n) << "group " << i;
    ++i;
  }
}

// Inside a caller's OpenMP region the library's own regions get one thread (nested parallelism
// is off): every share of the strings must still be hashed, counted, scattered and scanned.
TEST(StringScale, SameResultFromInsideACallersParallelRegion) {
  std::vector<cell> b, p;
  for (size_type i = 0; i < 20000; ++i) {
    b.emplace_back(i % 101 == 7 ? cell{} : cell{"b" + std::to_string(i % 5000)});
    p.emplace_back(cell{"b" + std::to_string((i * 7) % 6000)});
  }
  std::vector<column> bc, pc;
  bc.push_back(make_strings(b));
  pc.push_back(make_strings(p));
  table const bt(std::move(bc)), pt(std::move(pc));
  join_options o;
  o.backend = backend::cpu;
  o.kind = join_kind::full_outer;
  o.output = output_form::table;
  o.build_payloads = {0};
  auto const outside = join(bt.view(), 0, pt.view(), 0, o);
  join_result inside;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    inside = join(bt.view(), 0, pt.view(), 0, o);
  }
  EXPECT_GT(outside.aggregate.count, 20000U);
  EXPECT_EQ(inside.aggregate.count, outside.aggregate.count);
  EXPECT_EQ(inside.aggregate.checksum, outside.aggregate.checksum);
  EXPECT_EQ(rows_of(inside.columns.view()), rows_of(outside.columns.view()));
  groupby_options g;
  g.backend = backend::cpu;
  g.sort_by_key = true;
  auto const groups_outside = groupby(pt.view(), 0, {{aggregation_kind::count, -1}}, g);
  groupby_result groups_inside;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    groups_inside = groupby(pt.view(), 0, {{aggregation_kind::count, -1}}, g);
  }
  EXPECT_EQ(groups_outside.num_groups(), 6000);  // 7 and 6000 are coprime: every residue
  EXPECT_EQ(rows_of(groups_inside.columns.view()), rows_of(groups_outside.columns.view()));
}

TEST(StringRequest, RefusesWhatStringsCannotDo) {
  std::vector<column> cols;
  cols.push_back(make_strings({cell{"a"}, cell{"b"}}));
  cols.push_back(make_column<std::int32_t>(2, [](size_type i) { return static_cast<std::int32_t>(i); }));
  table const t(std::move(cols));
  join_options o;
  o.backend = backend::cpu;
  try {
    (void)join(t.view(), std::vector<size_type>{0}, t.view(), std::vector<size_type>{1}, o);
    FAIL() << "a string key joined an int32 key";
  } catch (std::logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("a string key joins a string key"), std::string::npos)
      << e.what();
  }
  groupby_options g;
  g.backend = backend::cpu;
  try {
    (void)groupby(t.view(), std::vector<size_type>{1}, {{aggregation_kind::sum, 0}}, g);
    FAIL() << "a string column was summed";
  } catch (std::logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("strings take count, count_valid, min and max"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace joinery::test
