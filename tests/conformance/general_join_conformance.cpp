// The general key path: several key columns, NULL and NaN keys, every integer width, floats,
// nullable payloads, and all eight join kinds, on every algorithm of both backends, against a
// brute-force reference that applies the SQL rules row pair by row pair.
#include "support/columns.hpp"
#include "support/oracle.hpp"

#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <string>

namespace joinery::test {
namespace {

/// A value as the comparisons see it: its bits (integers sign-extended), nullopt for NULL.
std::optional<std::uint64_t> value_at(column_view const& c, size_type i) {
  if (!c.is_valid(i)) { return std::nullopt; }
  return dispatch_type(c.type(), [&](auto tag) -> std::uint64_t {
    using T = typename decltype(tag)::type;
    T v;
    std::memcpy(&v, static_cast<char const*>(c.data()) + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, float>) {
      std::uint32_t b;
      std::memcpy(&b, &v, 4);
      return b;
    } else if constexpr (std::is_same_v<T, double>) {
      std::uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    } else {
      return static_cast<std::uint64_t>(v);
    }
  });
}

/// SQL equality of two key values (the reference's rule, written independently of the library).
bool key_equal(column_view const& a, size_type i, column_view const& b, size_type j,
               join_options const& o) {
  bool const va = a.is_valid(i);
  bool const vb = b.is_valid(j);
  if (!va || !vb) { return !va && !vb && o.nulls == null_equality::equal; }
  if (is_floating(a.type())) {
    double x = a.type() == type_id::float32 ? a.data_as<float>()[i] : a.data_as<double>()[i];
    double y = b.type() == type_id::float32 ? b.data_as<float>()[j] : b.data_as<double>()[j];
    if (std::isnan(x) || std::isnan(y)) { return std::isnan(x) && std::isnan(y) && o.nans_equal; }
    return x == y;
  }
  return value_at(a, i) == value_at(b, j);
}

struct general_case {
  std::string name;
  table build;
  table probe;
  std::vector<size_type> build_keys;
  std::vector<size_type> probe_keys;
  std::vector<size_type> build_payloads;
  std::vector<size_type> probe_payloads;
};

/// Reference: the (build, probe) row pairs of `kind` (-1 for a missing side), sorted.
std::vector<std::pair<std::int64_t, std::int64_t>> reference_pairs(general_case const& c,
                                                                   join_options const& o) {
  auto const B = c.build.num_rows();
  auto const P = c.probe.num_rows();
  auto const bv = c.build.view();
  auto const pv = c.probe.view();
  std::vector<std::uint8_t> build_hit(static_cast<std::size_t>(B), 0);
  std::vector<std::uint8_t> probe_hit(static_cast<std::size_t>(P), 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> inner;
  for (size_type p = 0; p < P; ++p) {
    for (size_type b = 0; b < B; ++b) {
      bool eq = true;
      for (std::size_t k = 0; k < c.build_keys.size() && eq; ++k) {
        eq = key_equal(bv.column(c.build_keys[k]), b, pv.column(c.probe_keys[k]), p, o);
      }
      if (eq) {
        inner.emplace_back(b, p);
        build_hit[static_cast<std::size_t>(b)] = 1;
        probe_hit[static_cast<std::size_t>(p)] = 1;
      }
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  auto const lone_probe = [&](bool hit) {
    for (size_type p = 0; p < P; ++p) {
      if (probe_hit[static_cast<std::size_t>(p)] == hit) { out.emplace_back(-1, p); }
    }
  };
  auto const lone_build = [&](bool hit) {
    for (size_type b = 0; b < B; ++b) {
      if (build_hit[static_cast<std::size_t>(b)] == hit) { out.emplace_back(b, -1); }
    }
  };
  switch (o.kind) {
    case join_kind::inner: out = inner; break;
    case join_kind::left_semi: lone_probe(true); break;
    case join_kind::left_anti: lone_probe(false); break;
    case join_kind::left_outer: out = inner; lone_probe(false); break;
    case join_kind::right_semi: lone_build(true); break;
    case join_kind::right_anti: lone_build(false); break;
    case join_kind::right_outer: out = inner; lone_build(false); break;
    case join_kind::full_outer: out = inner; lone_probe(false); lone_build(false); break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool has_build(join_kind k) { return k != join_kind::left_semi && k != join_kind::left_anti; }
bool has_probe(join_kind k) { return k != join_kind::right_semi && k != join_kind::right_anti; }

/// The table rows the pairs stand for: keys (probe's, else build's), build payloads, probe
/// payloads.
rows reference_table(general_case const& c, join_options const& o,
                     std::vector<std::pair<std::int64_t, std::int64_t>> const& pairs) {
  rows out;
  auto const bv = c.build.view();
  auto const pv = c.probe.view();
  for (auto [b, p] : pairs) {
    row r;
    for (std::size_t k = 0; k < c.build_keys.size(); ++k) {
      auto v = p >= 0 ? value_at(pv.column(c.probe_keys[k]), p) : std::nullopt;
      if (!v && b >= 0 && has_build(o.kind)) { v = value_at(bv.column(c.build_keys[k]), b); }
      r.push_back(v);
    }
    if (has_build(o.kind)) {
      for (auto col : c.build_payloads) {
        r.push_back(b >= 0 ? value_at(bv.column(col), b) : std::nullopt);
      }
    }
    if (has_probe(o.kind)) {
      for (auto col : c.probe_payloads) {
        r.push_back(p >= 0 ? value_at(pv.column(col), p) : std::nullopt);
      }
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end());
  return out;
}

rows host_table_rows(table const& t) {
  std::vector<column> host;
  for (auto const& c : t.view()) { host.push_back(column::copy_of(c)); }
  table h(std::move(host));
  rows out;
  for (size_type i = 0; i < h.num_rows(); ++i) {
    row r;
    for (auto const& c : h.view()) { r.push_back(value_at(c, i)); }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::int64_t> host_ids(column const& c) {
  if (c.size() == 0) { return {}; }
  auto h = column::copy_of(c.view());
  if (h.type() == type_id::int32) {
    auto v = h.to_vector<std::int32_t>();
    return {v.begin(), v.end()};
  }
  return h.to_vector<std::int64_t>();
}

std::uint64_t rows_checksum(rows const& t) {
  std::uint64_t s = 0;
  for (auto const& r : t) {
    for (auto const& v : r) { s += v.value_or(0); }
  }
  return s;
}

/// Every kind and form of `c` with `o` (algorithm, backend, null rules set) against the reference.
void expect_general_matches(general_case const& c, join_options o, memory_space space) {
  auto const build = place(c.build.view(), space);
  auto const probe = place(c.probe.view(), space);
  for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                    join_kind::left_outer, join_kind::right_semi, join_kind::right_anti,
                    join_kind::right_outer, join_kind::full_outer}) {
    SCOPED_TRACE("kind " + std::string(to_string(kind)));
    o.kind = kind;
    auto const pairs = reference_pairs(c, o);
    o.output = output_form::index;
    for (auto index_type : {type_id::int64, type_id::int32}) {
      o.index_type = index_type;
      auto const r = join(build, c.build_keys, probe, c.probe_keys, o);
      auto const b = host_ids(r.build_rows);
      auto const p = host_ids(r.probe_rows);
      std::vector<std::pair<std::int64_t, std::int64_t>> got;
      auto const n = static_cast<std::size_t>(r.num_rows());
      ASSERT_EQ(b.size(), has_build(kind) ? n : 0U);
      ASSERT_EQ(p.size(), has_probe(kind) ? n : 0U);
      for (std::size_t i = 0; i < n; ++i) {
        got.emplace_back(has_build(kind) ? b[i] : -1, has_probe(kind) ? p[i] : -1);
      }
      std::sort(got.begin(), got.end());
      auto expected = pairs;
      if (!has_build(kind) || !has_probe(kind)) {
        for (auto& [eb, ep] : expected) {
          if (!has_build(kind)) { eb = -1; }
          if (!has_probe(kind)) { ep = -1; }
        }
        std::sort(expected.begin(), expected.end());
      }
      ASSERT_EQ(expected, got) << "index form, " << to_string(index_type);
    }
    o.index_type = type_id::int64;
    o.build_payloads = c.build_payloads;
    o.probe_payloads = c.probe_payloads;
    o.output = output_form::table;
    auto const expected = reference_table(c, o, pairs);
    auto const r = join(build, c.build_keys, probe, c.probe_keys, o);
    EXPECT_EQ(diff_rows(expected, host_table_rows(r.columns)), "") << "table form";
    EXPECT_EQ(r.aggregate.count, expected.size());
    EXPECT_EQ(r.aggregate.checksum, rows_checksum(expected));
    o.output = output_form::aggregate;
    auto const a = join(build, c.build_keys, probe, c.probe_keys, o);
    EXPECT_EQ(a.aggregate.count, expected.size()) << "aggregate form";
    EXPECT_EQ(a.aggregate.checksum, rows_checksum(expected)) << "aggregate form";
    o.build_payloads.clear();
    o.probe_payloads.clear();
  }
}

std::vector<general_case> general_cases() {
  std::vector<general_case> v;
  std::mt19937_64 rng(20261128);
  auto const pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  auto const every = [](size_type k, size_type r) {
    return [k, r](size_type i) { return i % k == r; };
  };
  {  // two int32 key columns of small ranges (packed), nullable payloads
    general_case c{"two_int32_keys", {}, {}, {0, 1}, {1, 0}, {2}, {2}};
    std::vector<column> b;
    std::vector<std::int32_t> b0(150), b1(150);
    for (auto& x : b0) { x = static_cast<std::int32_t>(pick(-5, 5)); }
    for (auto& x : b1) { x = static_cast<std::int32_t>(pick(100, 108)); }
    b.push_back(make_column<std::int32_t>(150, [&](size_type i) { return b0[i]; }));
    b.push_back(make_column<std::int32_t>(150, [&](size_type i) { return b1[i]; }));
    b.push_back(make_column<std::int64_t>(150, [](size_type i) { return 1000 + i; }, every(7, 3)));
    std::vector<column> p;
    p.push_back(make_column<std::int32_t>(230, [&](size_type) {
      return static_cast<std::int32_t>(pick(98, 110)); }));
    p.push_back(make_column<std::int32_t>(230, [&](size_type) {
      return static_cast<std::int32_t>(pick(-7, 7)); }));
    p.push_back(make_column<std::uint16_t>(230, [](size_type i) {
      return static_cast<std::uint16_t>(60000 + i); }, every(5, 1)));
    c.build = table(std::move(b));
    c.probe = table(std::move(p));
    v.push_back(std::move(c));
  }
  {  // uint8 and int64 keys, every row matchable, plain integer payloads: the left kinds'
     // table and aggregate come straight from the algorithm
    general_case c{"packed_plain_payloads", {}, {}, {0, 1}, {0, 1}, {2, 3}, {2}};
    auto const side = [&](size_type n) {
      std::vector<column> t;
      t.push_back(make_column<std::uint8_t>(n, [&](size_type) {
        return static_cast<std::uint8_t>(pick(250, 255)); }));
      t.push_back(make_column<std::int64_t>(n, [&](size_type) { return pick(-3, 3) << 40; }));
      t.push_back(make_column<std::int16_t>(n, [](size_type i) { return static_cast<std::int16_t>(-i); }));
      t.push_back(make_column<std::uint64_t>(n, [](size_type i) { return ~std::uint64_t{0} - i; }));
      return table(std::move(t));
    };
    c.build = side(140);
    c.probe = side(190);
    v.push_back(std::move(c));
  }
  {  // int8, uint16 and int64 keys with NULLs on both sides; float payloads
    general_case c{"narrow_keys_with_nulls", {}, {}, {0, 1, 2}, {0, 1, 2}, {3}, {3}};
    auto const side = [&](size_type n, size_type null_mod) {
      std::vector<column> t;
      t.push_back(make_column<std::int8_t>(n, [&](size_type) {
        return static_cast<std::int8_t>(pick(-2, 1)); }, every(null_mod, 0)));
      t.push_back(make_column<std::uint16_t>(n, [&](size_type) {
        return static_cast<std::uint16_t>(pick(65533, 65535)); }));
      t.push_back(make_column<std::int64_t>(n, [&](size_type) {
        return pick(0, 2) * 1000000000000LL; }, every(null_mod + 2, 1)));
      t.push_back(make_column<float>(n, [](size_type i) { return 0.5F * static_cast<float>(i); },
                                     every(9, 4)));
      return table(std::move(t));
    };
    c.build = side(120, 6);
    c.probe = side(170, 5);
    v.push_back(std::move(c));
  }
  {  // float64 keys: -0.0 and 0.0, NaNs, infinities
    general_case c{"float_keys", {}, {}, {0}, {0}, {1}, {1}};
    double const values[] = {0.0, -0.0, 1.5, -2.25, std::nan(""), -std::nan(""),
                             std::numeric_limits<double>::infinity(), 1e300};
    auto const side = [&](size_type n) {
      std::vector<column> t;
      t.push_back(make_column<double>(n, [&](size_type) { return values[pick(0, 7)]; },
                                      [](size_type i) { return i % 11 == 10; }));
      t.push_back(make_column<std::int32_t>(n, [](size_type i) {
        return static_cast<std::int32_t>(i * 3); }));
      return table(std::move(t));
    };
    c.build = side(90);
    c.probe = side(110);
    v.push_back(std::move(c));
  }
  {  // two int64 columns over the full range: more than 64 bits, hashed and checked
    general_case c{"wide_hashed_keys", {}, {}, {0, 1}, {0, 1}, {2}, {}};
    std::vector<std::int64_t> pool0(12), pool1(12);
    for (auto& x : pool0) { x = static_cast<std::int64_t>(rng()); }
    for (auto& x : pool1) { x = static_cast<std::int64_t>(rng()); }
    auto const side = [&](size_type n) {
      std::vector<column> t;
      t.push_back(make_column<std::int64_t>(n, [&](size_type) { return pool0[pick(0, 3)]; }));
      t.push_back(make_column<std::int64_t>(n, [&](size_type) { return pool1[pick(0, 3)]; },
                                            [](size_type i) { return i % 13 == 0; }));
      t.push_back(make_column<std::uint32_t>(n, [](size_type i) {
        return static_cast<std::uint32_t>(4000000000U + i); }));
      return table(std::move(t));
    };
    c.build = side(80);
    c.probe = side(100);
    v.push_back(std::move(c));
  }
  {  // one int32 key with NULLs, and a build side whose keys are all NULL
    general_case c{"nullable_int32_key", {}, {}, {0}, {0}, {1}, {1}};
    std::vector<column> b;
    b.push_back(make_column<std::int32_t>(60, [](size_type i) {
      return static_cast<std::int32_t>(i % 20); }, every(4, 2)));
    b.push_back(make_column<std::int32_t>(60, [](size_type i) { return static_cast<std::int32_t>(-i); }));
    std::vector<column> p;
    p.push_back(make_column<std::int32_t>(75, [](size_type i) {
      return static_cast<std::int32_t>(i % 25); }, every(3, 0)));
    p.push_back(make_column<std::int64_t>(75, [](size_type i) { return i * 11; }));
    c.build = table(std::move(b));
    c.probe = table(std::move(p));
    v.push_back(std::move(c));
    general_case all_null{"all_null_build_keys", {}, {}, {0}, {0}, {}, {}};
    std::vector<column> b2;
    b2.push_back(make_column<std::int32_t>(10, [](size_type) { return 1; },
                                           [](size_type) { return true; }));
    std::vector<column> p2;
    p2.push_back(make_column<std::int32_t>(12, [](size_type i) {
      return static_cast<std::int32_t>(i % 3); }, every(4, 0)));
    all_null.build = table(std::move(b2));
    all_null.probe = table(std::move(p2));
    v.push_back(std::move(all_null));
  }
  return v;
}

struct algo_case {
  backend be;
  join_algorithm algo;
};

std::vector<algo_case> equality_algorithms() {
  std::vector<algo_case> v;
  for (auto be : {backend::cpu, backend::gpu}) {
    for (auto a : join_algorithms_on(be)) {
      // The multi-GPU joins have their own conformance suite (one rank per GPU present).
      if (a == join_algorithm::multi_gpu_hash || a == join_algorithm::multi_gpu_sort_merge) {
        continue;
      }
      v.push_back({be, a});
    }
  }
  return v;
}

class GeneralJoin : public ::testing::TestWithParam<algo_case> {};

TEST_P(GeneralJoin, EveryKindAndKeyShapeMatchesReference) {
  auto const c = GetParam();
  if (c.be == backend::gpu && device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
  auto const cases = general_cases();
  for (auto const& gc : cases) {
    for (auto nulls : {null_equality::unequal, null_equality::equal}) {
      for (bool nans : {false, true}) {
        SCOPED_TRACE(gc.name + (nulls == null_equality::equal ? ", nulls equal" : "") +
                     (nans ? ", nans equal" : ""));
        join_options o;
        o.algorithm = c.algo;
        o.backend = c.be;
        o.nulls = nulls;
        o.nans_equal = nans;
        expect_general_matches(gc, o, memory_space::host);
        if (c.be == backend::gpu) { expect_general_matches(gc, o, memory_space::device); }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, GeneralJoin, ::testing::ValuesIn(equality_algorithms()),
                         [](auto const& info) {
                           return std::string(to_string(info.param.be)) + "_" +
                                  std::string(to_string(info.param.algo));
                         });

TEST(GeneralJoinRequest, SameResultFromInsideACallersParallelRegion) {
  // Inside a caller's OpenMP region the library's own regions get one thread (nested
  // parallelism is off): every share of the rows must still be visited.
  // Keys whose second half lies outside the first half's range, and NULLs in both halves.
  general_case c{"ordered_keys", {}, {}, {0, 1}, {0, 1}, {}, {}};
  auto const side = [](size_type n, bool reversed) {
    std::vector<column> t;
    auto const id = [=](size_type i) { return reversed ? n - 1 - i : i; };
    t.push_back(make_column<std::int32_t>(n, [=](size_type i) {
      return static_cast<std::int32_t>(id(i) / 10); }, [=](size_type i) { return id(i) % 17 == 3; }));
    t.push_back(make_column<std::int64_t>(n, [=](size_type i) { return id(i) % 10 * 1000; }));
    return table(std::move(t));
  };
  c.build = side(1000, false);
  c.probe = side(1000, true);
  join_options o;
  o.backend = backend::cpu;
  o.output = output_form::aggregate;
  o.build_payloads = c.build_payloads;
  o.probe_payloads = c.probe_payloads;
  auto const outside = join(c.build, c.build_keys, c.probe, c.probe_keys, o);
  join_aggregate inside;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    inside = join(c.build, c.build_keys, c.probe, c.probe_keys, o).aggregate;
  }
  EXPECT_EQ(outside.aggregate.count, 1000U - 59U);  // the rows without a NULL key
  EXPECT_EQ(inside.count, outside.aggregate.count);
  EXPECT_EQ(inside.checksum, outside.aggregate.checksum);
}

TEST(GeneralJoinRequest, RefusesWhatItCannotDo) {
  std::vector<column> cols;
  cols.push_back(make_column<std::int32_t>(4, [](size_type i) { return static_cast<std::int32_t>(i); }));
  cols.push_back(make_column<std::int64_t>(4, [](size_type i) { return i; }));
  table const t(std::move(cols));
  join_options o;
  o.backend = backend::cpu;
  EXPECT_THROW(join(t, {0, 1}, t, {0}, o), logic_error);  // key counts differ
  EXPECT_THROW(join(t, {0}, t, {1}, o), logic_error);     // key types differ
  EXPECT_THROW(join(t, {0, 5}, t, {0, 1}, o), logic_error);
  EXPECT_THROW(join(t, std::vector<size_type>(9, 0), t, std::vector<size_type>(9, 0), o),
               logic_error);
  o.pred = predicate::band(2);
  o.kind = join_kind::full_outer;
  EXPECT_THROW(join(t, {0}, t, {0}, o), logic_error);  // band needs the one-key path
}

}  // namespace
}  // namespace joinery::test
