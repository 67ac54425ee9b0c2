#include <joinery/gen.hpp>

#include "gen/random.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace {

using joinery::size_type;
using joinery::type_id;
using joinery::gen::key_kind;
using joinery::gen::relation_spec;

relation_spec primary(size_type rows, type_id key_type = type_id::int64) {
  relation_spec s;
  s.rows = rows;
  s.kind = key_kind::primary;
  s.key_type = key_type;
  return s;
}

relation_spec foreign(size_type rows, size_type domain, double zipf = 0.0,
                      type_id key_type = type_id::int64) {
  relation_spec s;
  s.rows = rows;
  s.kind = key_kind::foreign;
  s.key_type = key_type;
  s.domain = domain;
  s.zipf = zipf;
  return s;
}

// Key column widened to int64 (every test's keys fit).
std::vector<std::int64_t> keys_of(joinery::table const& t) {
  std::vector<std::int64_t> out;
  joinery::dispatch_key_type(t.column(0).type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T v : t.column(0).to_vector<T>()) { out.push_back(static_cast<std::int64_t>(v)); }
  });
  return out;
}

bool same_bytes(joinery::table const& a, joinery::table const& b) {
  if (a.num_columns() != b.num_columns() || a.num_rows() != b.num_rows()) { return false; }
  for (size_type c = 0; c < a.num_columns(); ++c) {
    auto const va = a.column(c).view();
    auto const vb = b.column(c).view();
    if (va.type() != vb.type()) { return false; }
    auto const bytes = static_cast<std::size_t>(va.size()) * joinery::size_of(va.type());
    if (bytes != 0 && std::memcmp(va.data(), vb.data(), bytes) != 0) { return false; }
  }
  return true;
}

// Pearson chi-square of observed counts against expected ones; bins with small expectations
// are pooled so that the statistic is meaningful. Returns (statistic, degrees of freedom).
std::pair<double, double> chi_square(std::vector<double> const& observed,
                                     std::vector<double> const& expected) {
  double stat = 0;
  double bins = 0;
  double pooled_o = 0;
  double pooled_e = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    if (expected[i] < 20) {
      pooled_o += observed[i];
      pooled_e += expected[i];
      continue;
    }
    stat += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
    ++bins;
  }
  if (pooled_e > 0) {
    stat += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
    ++bins;
  }
  return {stat, bins - 1};
}

// ---- building blocks ----

TEST(GenRandom, FeistelIsABijection) {
  for (std::uint64_t n : {1ull, 2ull, 3ull, 4ull, 5ull, 7ull, 64ull, 1000ull, 4097ull, 65536ull}) {
    joinery::gen::detail::feistel_permutation const perm(n, 0x1234u + n);
    std::vector<char> seen(n, 0);
    std::uint64_t fixed_points = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      auto const v = perm(i);
      ASSERT_LT(v, n) << "n=" << n;
      ASSERT_FALSE(seen[v]) << "n=" << n << " repeats " << v;
      seen[v] = 1;
      fixed_points += v == i;
    }
    if (n >= 1000) { EXPECT_LT(fixed_points, 10u) << "n=" << n << ": hardly shuffled"; }
  }
}

TEST(GenRandom, FeistelDependsOnKey) {
  joinery::gen::detail::feistel_permutation const a(1000, 1);
  joinery::gen::detail::feistel_permutation const b(1000, 2);
  int same = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) { same += a(i) == b(i); }
  EXPECT_LT(same, 10);
}

TEST(GenRandom, BoundedAndUnitStayInRange) {
  using joinery::gen::detail::bounded;
  using joinery::gen::detail::unit_double;
  EXPECT_EQ(bounded(~0ull, 10), 9u);
  EXPECT_EQ(bounded(0, 10), 0u);
  EXPECT_LT(unit_double(~0ull), 1.0);
  EXPECT_EQ(unit_double(0), 0.0);
}

// ---- determinism ----

TEST(GenDeterminism, SameSeedSameTableOtherSeedOtherTable) {
  for (auto spec : {primary(5000), foreign(5000, 300), foreign(5000, 300, 1.2)}) {
    spec.payload_types = {type_id::int32, type_id::uint8};
    spec.hot_key_fraction = 0.1;
    auto const a = joinery::gen::generate(spec);
    auto const b = joinery::gen::generate(spec);
    EXPECT_TRUE(same_bytes(a, b));
    spec.seed = 43;
    auto const c = joinery::gen::generate(spec);
    EXPECT_NE(keys_of(a), keys_of(c));
    EXPECT_NE(a.column(1).to_vector<std::int32_t>(), c.column(1).to_vector<std::int32_t>());
  }
}

TEST(GenDeterminism, IndependentOfThreadCount) {
  int const saved = omp_get_max_threads();
  for (auto spec : {primary(100'003), foreign(100'003, 777), foreign(100'003, 1 << 20, 0.9)}) {
    spec.payload_types = {type_id::int64, type_id::int16};
    spec.match_ratio = spec.kind == key_kind::primary ? 0.6 : 1.0;
    spec.hot_key_fraction = 0.05;
    omp_set_num_threads(1);
    auto const one = joinery::gen::generate(spec);
    omp_set_num_threads(4);
    auto const four = joinery::gen::generate(spec);
    EXPECT_TRUE(same_bytes(one, four));
  }
  omp_set_num_threads(saved);
}

TEST(GenDeterminism, ColumnsAreIndependentStreams) {
  auto spec = foreign(1000, 0);
  spec.payload_types = {type_id::uint64, type_id::uint64};
  auto const t = joinery::gen::generate(spec);
  EXPECT_NE(t.column(1).to_vector<std::uint64_t>(), t.column(2).to_vector<std::uint64_t>());
}

// ---- primary keys ----

TEST(GenPrimary, IsAPermutationOfTheDenseRange) {
  auto spec = primary(10'000);
  spec.key_offset = 7;
  auto const keys = keys_of(joinery::gen::generate(spec));
  auto sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) { ASSERT_EQ(sorted[i], 7 + std::int64_t(i)); }
  EXPECT_NE(keys, sorted) << "keys are not shuffled";
}

TEST(GenPrimary, MatchRatioKeepsExactCountAndUniqueness) {
  size_type const rows = 10'000;
  for (double m : {0.0, 0.25, 0.5, 0.999, 1.0}) {
    auto spec = primary(rows);
    spec.match_ratio = m;
    spec.key_offset = -100;
    auto const keys = keys_of(joinery::gen::generate(spec));
    std::int64_t inside = 0;
    for (auto k : keys) {
      ASSERT_GE(k, -100);
      ASSERT_LT(k, -100 + 2 * rows);
      inside += k < -100 + rows;
    }
    EXPECT_EQ(inside, std::llround(m * rows)) << "m=" << m;
    EXPECT_EQ(std::unordered_set<std::int64_t>(keys.begin(), keys.end()).size(), keys.size());
  }
}

TEST(GenPrimary, HotKeys) {
  auto spec = primary(20'000);
  spec.hot_key_fraction = 0.3;
  auto const keys = keys_of(joinery::gen::generate(spec));
  auto const hot = std::count(keys.begin(), keys.end(), spec.key_offset);
  // 6000 hot rows, plus the row that holds the offset naturally if it is not hot.
  EXPECT_GE(hot, 6000);
  EXPECT_LE(hot, 6001);
}

// ---- foreign keys ----

TEST(GenForeign, UniformInDomainWithFlatFrequencies) {
  size_type const rows = 1 << 20;
  size_type const domain = 1000;
  auto spec = foreign(rows, domain);
  spec.key_offset = 10;
  auto const keys = keys_of(joinery::gen::generate(spec));
  std::vector<double> counts(domain, 0);
  double sum = 0;
  for (auto k : keys) {
    ASSERT_GE(k, 10);
    ASSERT_LT(k, 10 + domain);
    counts[static_cast<std::size_t>(k - 10)] += 1;
    sum += static_cast<double>(k);
  }
  double const mean = sum / rows;
  EXPECT_NEAR(mean, 10 + (domain - 1) / 2.0, 2.0);  // sigma of the mean is about 0.28
  std::vector<double> const expected(domain, double(rows) / domain);
  auto const [stat, df] = chi_square(counts, expected);
  EXPECT_LT(stat, df + 6 * std::sqrt(2 * df)) << "chi-square " << stat << " with " << df << " df";
  EXPECT_GT(stat, df - 6 * std::sqrt(2 * df)) << "suspiciously flat";
}

TEST(GenForeign, DefaultDomainIsRows) {
  auto const keys = keys_of(joinery::gen::generate(foreign(5000, 0)));
  for (auto k : keys) {
    ASSERT_GE(k, 1);
    ASSERT_LE(k, 5000);
  }
  // About 1 - 1/e of the domain is hit by uniform draws.
  auto const distinct = std::unordered_set<std::int64_t>(keys.begin(), keys.end()).size();
  EXPECT_NEAR(double(distinct) / 5000, 1 - std::exp(-1.0), 0.03);
}

TEST(GenForeign, ZipfMatchesTheoreticalFrequencies) {
  size_type const rows = 1 << 20;
  size_type const domain = 1000;
  // 1 - 1e-9 checks the log1p/expm1 path right next to the z == 1 limit.
  for (double z : {0.1, 0.5, 1.0 - 1e-9, 1.0, 1.5, 2.0, 3.0}) {
    auto const keys = keys_of(joinery::gen::generate(foreign(rows, domain, z)));
    std::vector<double> counts(domain, 0);
    for (auto k : keys) {
      ASSERT_GE(k, 1);
      ASSERT_LE(k, domain);
      counts[static_cast<std::size_t>(k - 1)] += 1;
    }
    double norm = 0;
    for (size_type r = 1; r <= domain; ++r) { norm += std::pow(double(r), -z); }
    std::vector<double> expected(domain);
    for (size_type r = 1; r <= domain; ++r) {
      expected[r - 1] = rows * std::pow(double(r), -z) / norm;
    }
    for (int r = 1; r <= 5; ++r) {
      double const e = expected[r - 1];
      EXPECT_NEAR(counts[r - 1] / e, 1.0, 0.03) << "z=" << z << " rank " << r;
      EXPECT_NEAR(counts[r - 1], e, 5 * std::sqrt(e)) << "z=" << z << " rank " << r;
    }
    auto const [stat, df] = chi_square(counts, expected);
    EXPECT_LT(stat, df + 6 * std::sqrt(2 * df)) << "z=" << z << ": chi-square " << stat;
  }
}

TEST(GenForeign, ZipfHugeDomainStaysInRange) {
  size_type const domain = size_type{1} << 40;
  for (double z : {0.5, 1.0, 1.5, 2.0}) {
    auto spec = foreign(1 << 16, domain, z);
    spec.key_offset = -5;
    auto const keys = keys_of(joinery::gen::generate(spec));
    std::int64_t top = 0;
    std::int64_t beyond_2_32 = 0;
    for (auto k : keys) {
      ASSERT_GE(k, -5);
      ASSERT_LT(k, -5 + domain);
      top += k == -5;
      beyond_2_32 += k - (-5) >= (std::int64_t{1} << 32);
    }
    if (z >= 1.0) { EXPECT_GT(top, 0) << "z=" << z; }  // for z = 0.5, P(rank 1) is 5e-7
    if (z == 0.5) {
      // P(rank > 2^32) = 1 - about sqrt(2^32 / 2^40) = 15/16 for z = 0.5.
      EXPECT_NEAR(double(beyond_2_32) / keys.size(), 15.0 / 16, 0.01);
    }
    if (z == 1.0) {
      // P(rank <= r) is about ln(r) / ln(N) (+ Euler's gamma): rank 1 about 1 / (ln 2^40 + 0.58).
      EXPECT_NEAR(double(top) / keys.size(), 1 / (40 * std::log(2.0) + 0.5772), 0.004);
    }
  }
}

TEST(GenForeign, HotKeyFraction) {
  for (double z : {0.0, 1.0}) {
    auto spec = foreign(100'000, 1 << 20, z);
    spec.hot_key_fraction = 0.25;
    auto const keys = keys_of(joinery::gen::generate(spec));
    auto const hot = std::count(keys.begin(), keys.end(), spec.key_offset);
    EXPECT_GE(hot, 25'000);  // exact count of hot rows, plus natural draws of the first key
    if (z == 0.0) { EXPECT_LE(hot, 25'010); }
  }
  auto spec = foreign(1000, 50);
  spec.hot_key_fraction = 1.0;
  for (auto k : keys_of(joinery::gen::generate(spec))) { ASSERT_EQ(k, spec.key_offset); }
}

// ---- types ----

TEST(GenTypes, AllKeyTypes) {
  for (auto t : {type_id::int32, type_id::int64, type_id::uint32, type_id::uint64}) {
    auto const table = joinery::gen::generate(primary(1000, t));
    ASSERT_EQ(table.column(0).type(), t);
    auto keys = keys_of(table);
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys.front(), 1);
    EXPECT_EQ(keys.back(), 1000);
    auto const f = joinery::gen::generate(foreign(1000, 10, 1.0, t));
    ASSERT_EQ(f.column(0).type(), t);
    for (auto k : keys_of(f)) {
      ASSERT_GE(k, 1);
      ASSERT_LE(k, 10);
    }
  }
}

TEST(GenTypes, NegativeOffsetWithSignedKeys) {
  for (auto t : {type_id::int32, type_id::int64}) {
    auto spec = primary(1000, t);
    spec.key_offset = -500;
    auto keys = keys_of(joinery::gen::generate(spec));
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys.front(), -500);
    EXPECT_EQ(keys.back(), 499);
  }
  // The most negative int32 offset.
  auto spec = primary(1000, type_id::int32);
  spec.key_offset = std::numeric_limits<std::int32_t>::min();
  auto keys = keys_of(joinery::gen::generate(spec));
  EXPECT_EQ(*std::min_element(keys.begin(), keys.end()), spec.key_offset);
}

TEST(GenTypes, KeysReachTheTopOfTheType) {
  auto spec = primary(10, type_id::int32);
  spec.key_offset = std::numeric_limits<std::int32_t>::max() - 9;
  auto keys = keys_of(joinery::gen::generate(spec));
  EXPECT_EQ(*std::max_element(keys.begin(), keys.end()), std::numeric_limits<std::int32_t>::max());

  // uint64 keys above the int64 range.
  auto big = foreign(1000, std::numeric_limits<std::int64_t>::max(), 0.0, type_id::uint64);
  big.key_offset = std::numeric_limits<std::int64_t>::max();
  auto const t = joinery::gen::generate(big);
  for (auto k : t.column(0).to_vector<std::uint64_t>()) {
    ASSERT_GE(k, std::uint64_t(big.key_offset));
    ASSERT_LE(k, std::numeric_limits<std::uint64_t>::max() - 1);
  }
}

template <class T>
void expect_random_payload(joinery::column const& c) {
  auto const v = c.to_vector<T>();
  std::unordered_set<T> distinct(v.begin(), v.end());
  // 4096 draws: 8-bit types show (nearly) all 256 values, wider ones nearly all distinct.
  if constexpr (sizeof(T) == 1) {
    EXPECT_GT(distinct.size(), 250u);
  } else {
    EXPECT_GT(distinct.size(), sizeof(T) == 2 ? 3500u : 4090u);
  }
  // Full range: the top bit is set in about half of the values.
  using U = std::make_unsigned_t<T>;
  std::size_t top = 0;
  for (T x : v) { top += (static_cast<U>(x) >> (8 * sizeof(T) - 1)) & 1u; }
  EXPECT_NEAR(double(top) / v.size(), 0.5, 0.05);
}

TEST(GenTypes, PayloadsOfEveryIntegerType) {
  auto spec = foreign(4096, 100);
  spec.payload_types = {type_id::int8,  type_id::int16,  type_id::int32,  type_id::int64,
                        type_id::uint8, type_id::uint16, type_id::uint32, type_id::uint64};
  auto const t = joinery::gen::generate(spec);
  ASSERT_EQ(t.num_columns(), 9);
  ASSERT_EQ(t.num_rows(), 4096);
  for (std::size_t j = 0; j < spec.payload_types.size(); ++j) {
    auto const& c = t.column(static_cast<size_type>(j + 1));
    ASSERT_EQ(c.type(), spec.payload_types[j]);
    joinery::dispatch_type(c.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) { expect_random_payload<T>(c); }
    });
  }
  auto const names = joinery::gen::column_names(spec);
  ASSERT_EQ(names.size(), 9u);
  EXPECT_EQ(names[0], "key");
  EXPECT_EQ(names[1], "p0");
  EXPECT_EQ(names[8], "p7");
}

TEST(GenTypes, EmptyRelationHasTheColumns) {
  for (auto spec : {primary(0, type_id::uint32), foreign(0, 0, 1.5)}) {
    spec.payload_types = {type_id::int16, type_id::uint64};
    auto const t = joinery::gen::generate(spec);
    ASSERT_EQ(t.num_columns(), 3);
    EXPECT_EQ(t.num_rows(), 0);
    EXPECT_EQ(t.column(0).type(), spec.key_type);
    EXPECT_EQ(t.column(1).type(), type_id::int16);
    EXPECT_EQ(t.column(2).type(), type_id::uint64);
  }
}

// ---- validation ----

void expect_refused(relation_spec const& spec, std::string const& fragment) {
  try {
    (void)joinery::gen::generate(spec);
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragment << "'";
  } catch (joinery::logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(GenValidation, RefusesBadSpecs) {
  expect_refused(primary(-1), "rows must not be negative");
  expect_refused(primary(10, type_id::int16), "key type");
  expect_refused(primary(10, type_id::float64), "key type");

  auto s = primary(10);
  s.match_ratio = 1.5;
  expect_refused(s, "match_ratio");
  s.match_ratio = -0.1;
  expect_refused(s, "match_ratio");
  s.match_ratio = std::nan("");
  expect_refused(s, "match_ratio");

  s = foreign(10, 10);
  s.hot_key_fraction = 1.01;
  expect_refused(s, "hot_key_fraction");
  s.hot_key_fraction = -1;
  expect_refused(s, "hot_key_fraction");

  s = foreign(10, 10, -0.5);
  expect_refused(s, "zipf");
  s.zipf = std::numeric_limits<double>::infinity();
  expect_refused(s, "zipf");
  s = primary(10);
  s.zipf = 1.0;
  expect_refused(s, "zipf applies to foreign");

  expect_refused(foreign(10, -1), "domain must not be negative");
  s = primary(10);
  s.domain = 20;
  expect_refused(s, "primary relation's domain");
  s = foreign(10, 10);
  s.match_ratio = 0.5;
  expect_refused(s, "match_ratio applies to primary");

  s = foreign(10, 10);
  s.payload_types = {type_id::int32, type_id::float32};
  expect_refused(s, "payload column 1");
  s.payload_types = {type_id::float64};
  expect_refused(s, "payload column 0");
}

TEST(GenValidation, RefusesKeysThatDoNotFit) {
  // int32: 2^31 - 10 + 11 rows overflows by one.
  auto s = primary(11, type_id::int32);
  s.key_offset = std::numeric_limits<std::int32_t>::max() - 9;
  expect_refused(s, "does not fit the key type int32");
  // Unmatched keys lie above offset + rows: m = 0 doubles the span.
  s = primary(size_type{1} << 30, type_id::int32);
  s.match_ratio = 0.0;
  expect_refused(s, "[1, 2147483648]");
  // Negative offsets do not fit unsigned types.
  s = primary(10, type_id::uint32);
  s.key_offset = -1;
  expect_refused(s, "key_offset -1 does not fit the key type uint32");
  s = foreign(0, 0, 0.0, type_id::uint64);
  s.key_offset = -1;
  expect_refused(s, "key_offset");
  // Foreign: the domain's top.
  s = foreign(1, size_type{1} << 32, 0.0, type_id::uint32);
  s.key_offset = 1;
  expect_refused(s, "[1, 4294967296]");
  s = foreign(1, std::numeric_limits<std::int64_t>::max(), 0.0, type_id::int64);
  s.key_offset = 2;
  expect_refused(s, "does not fit the key type int64");
  // ...while the largest domains that fit are accepted.
  s.key_offset = 1;
  EXPECT_EQ(joinery::gen::generate(s).num_rows(), 1);
  s = foreign(1, size_type{1} << 32, 0.0, type_id::uint32);
  s.key_offset = 0;
  EXPECT_EQ(joinery::gen::generate(s).num_rows(), 1);
}

}  // namespace
