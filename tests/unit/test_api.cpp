// The public join/group-by API: names, refusals with clear messages, results in chosen spaces.
#include "support/oracle.hpp"

#include <joinery/groupby.hpp>
#include <joinery/join.hpp>
#include <joinery/primitives/checksum.hpp>

#include <gtest/gtest.h>

#include <cstring>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

/// Runs `f` and checks it throws E with `needle` in the message.
template <class E, class F>
void expect_refusal(F&& f, std::string const& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (E const& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
      << "message was: " << e.what();
  }
}

struct small_tables {
  std::vector<std::int32_t> bk{1, 2, 3, 3};
  std::vector<std::int32_t> bp{10, 20, 30, 31};
  std::vector<std::int32_t> pk{3, 1, 9, 3};
  std::vector<std::int64_t> pk64{3, 1, 9, 3};
  std::vector<double> pf{0.5, 1.5, 2.5, 3.5};
  table_view build{{column_view::of(bk), column_view::of(bp)}};
  table_view probe{{column_view::of(pk), column_view::of(pk64), column_view::of(pf)}};
};

/// f(backend, algorithm) for every join algorithm of the CPU backend and, with a GPU, the GPU's.
template <class F>
void for_each_join_algorithm(F&& f) {
  std::vector<backend> backends{backend::cpu};
  if (device_count() > 0) { backends.push_back(backend::gpu); }
  for (auto be : backends) {
    for (auto algo : join_algorithms_on(be)) {
      SCOPED_TRACE(std::string(to_string(be)) + " " + std::string(to_string(algo)));
      f(be, algo);
    }
  }
}

TEST(Api, NamesRoundTrip) {
  for (auto a : all_join_algorithms()) {
    EXPECT_EQ(join_algorithm_from_string(to_string(a)), a);
  }
  EXPECT_EQ(backend_from_string("auto"), backend::automatic);
  EXPECT_EQ(join_kind_from_string("left_outer"), join_kind::left_outer);
  EXPECT_EQ(groupby_algorithm_from_string("partition_transformed"),
            groupby_algorithm::partition_transformed);
  expect_refusal<logic_error>([] { (void)join_algorithm_from_string("bogus"); },
                              "known: automatic, nested_loop");
  expect_refusal<logic_error>([] { (void)aggregation_kind_from_string("median"); },
                              "unknown aggregation 'median'");
  for (auto w : {output_writer::direct, output_writer::three_phase}) {
    EXPECT_EQ(output_writer_from_string(to_string(w)), w);
  }
  expect_refusal<logic_error>([] { (void)output_writer_from_string("paged"); },
                              "unknown output writer 'paged'; known: direct, three_phase");
}

TEST(Api, SmallInnerJoinIndex) {
  small_tables t;
  auto const r = join(t.build, 0, t.probe, 0);
  // automatic: the GPU when present; host inputs give host results either way.
  EXPECT_EQ(r.stats.backend, device_count() > 0 ? backend::gpu : backend::cpu);
  EXPECT_EQ(r.stats.algorithm, join_algorithm::radix_hash);
  EXPECT_EQ(r.form, output_form::index);
  EXPECT_EQ(r.probe_rows.space(), memory_space::host);
  // probe 0 (3) -> build 2, 3; probe 1 (1) -> build 0; probe 3 (3) -> build 2, 3
  rows const expected{{0ULL, 1ULL}, {2ULL, 0ULL}, {2ULL, 3ULL}, {3ULL, 0ULL}, {3ULL, 3ULL}};
  EXPECT_EQ(diff_rows(expected, index_rows(r, join_kind::inner)), "");
  EXPECT_EQ(r.num_rows(), 5);
  EXPECT_EQ(r.aggregate.checksum, 0u);  // the index form reports the count only
}

TEST(Api, IndexFormDependsOnTheKeysOnly) {
  // Payload columns asked for do not change the index result, nor make it compute a checksum.
  small_tables t;
  rows const inner{{0ULL, 1ULL}, {2ULL, 0ULL}, {2ULL, 3ULL}, {3ULL, 0ULL}, {3ULL, 3ULL}};
  for_each_join_algorithm([&](backend be, join_algorithm algo) {
    join_options o;
    o.backend = be;
    o.algorithm = algo;
    o.build_payloads = {1};
    o.probe_payloads = {1};
    for (auto ids : {type_id::int64, type_id::int32}) {
      o.index_type = ids;
      auto const r = join(t.build, 0, t.probe, 0, o);
      EXPECT_EQ(diff_rows(inner, index_rows(r, join_kind::inner)), "");
      EXPECT_EQ(r.aggregate.count, 5u);
      EXPECT_EQ(r.aggregate.checksum, 0u);
      EXPECT_EQ(r.columns.num_columns(), 0);
    }
  });
}

TEST(Api, GroupbyResultsLiveWhereTheKeysDo) {
  // Host keys and no memory resource: a host result on every backend (as the join does), so a
  // caller such as the CLI can read it.
  std::vector<std::int32_t> k{3, 1, 3, 2, 1, 3};
  std::vector<std::int64_t> v{1, 2, 3, 4, 5, 6};
  table_view const in({column_view::of(k), column_view::of(v)});
  std::vector<backend> backends{backend::cpu, backend::automatic};
  if (device_count() > 0) { backends.push_back(backend::gpu); }
  for (auto be : backends) {
    SCOPED_TRACE(std::string(to_string(be)));
    groupby_options o;
    o.backend = be;
    o.sort_by_key = true;
    auto const r = groupby(in, 0, {{aggregation_kind::sum, 1}, {aggregation_kind::count, -1}}, o);
    ASSERT_EQ(r.columns.num_columns(), 3);
    for (auto const& c : r.columns.view()) { EXPECT_TRUE(host_accessible(c.space())); }
    EXPECT_EQ(r.columns.column(0).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 2, 3}));
    EXPECT_EQ(r.columns.column(1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{7, 4, 10}));
    EXPECT_EQ(r.columns.column(2).to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 1, 3}));
  }
}

TEST(Api, Int32IndexOnEveryBackend) {
  small_tables t;
  rows const inner{{0ULL, 1ULL}, {2ULL, 0ULL}, {2ULL, 3ULL}, {3ULL, 0ULL}, {3ULL, 3ULL}};
  // probe 2 (key 9) has no match: build row -1 in a left outer join.
  rows const outer{{0ULL, 1ULL},          {2ULL, 0ULL}, {2ULL, 3ULL},
                   {3ULL, 0ULL},          {3ULL, 3ULL},
                   {static_cast<unsigned long long>(-1), 2ULL}};
  for_each_join_algorithm([&](backend be, join_algorithm algo) {
    join_options o;
    o.backend = be;
    o.algorithm = algo;
    o.index_type = type_id::int32;
    auto const r = join(t.build, 0, t.probe, 0, o);
    EXPECT_EQ(r.build_rows.type(), type_id::int32);
    EXPECT_EQ(r.probe_rows.type(), type_id::int32);
    EXPECT_EQ(diff_rows(inner, index_rows(r, join_kind::inner)), "");
    o.kind = join_kind::left_outer;
    auto const lo = join(t.build, 0, t.probe, 0, o);
    EXPECT_EQ(lo.build_rows.type(), type_id::int32);
    EXPECT_EQ(lo.build_rows.to_vector<std::int32_t>().size(), 6u);
    EXPECT_EQ(diff_rows(outer, index_rows(lo, join_kind::left_outer)), "");
    o.kind = join_kind::left_anti;
    auto const anti = join(t.build, 0, t.probe, 0, o);
    EXPECT_EQ(anti.probe_rows.to_vector<std::int32_t>(), std::vector<std::int32_t>{2});
  });
}

// The three phases from the start (join_options::writer): the same rows as the direct output on
// every algorithm and backend, in the index and table forms.
TEST(Api, ThreePhaseWriterOnEveryBackend) {
  small_tables t;
  rows const inner{{0ULL, 1ULL}, {2ULL, 0ULL}, {2ULL, 3ULL}, {3ULL, 0ULL}, {3ULL, 3ULL}};
  for_each_join_algorithm([&](backend be, join_algorithm algo) {
    join_options o;
    o.backend = be;
    o.algorithm = algo;
    o.writer = output_writer::three_phase;
    auto const r = join(t.build, 0, t.probe, 0, o);
    EXPECT_EQ(diff_rows(inner, index_rows(r, join_kind::inner)), "");
    EXPECT_EQ(r.aggregate.count, 5u);
    o.output = output_form::table;
    o.build_payloads = {1};
    auto const tab = join(t.build, 0, t.probe, 0, o);
    o.writer = output_writer::direct;
    auto const tab_direct = join(t.build, 0, t.probe, 0, o);
    EXPECT_EQ(diff_rows(table_rows(tab_direct.columns.view()), table_rows(tab.columns.view())), "");
    EXPECT_EQ(tab.aggregate.checksum, tab_direct.aggregate.checksum);
  });
}

// no_partition_hash at other load factors: the same rows; outside (0, 1) refused.
TEST(Api, HashLoadFactor) {
  small_tables t;
  rows const inner{{0ULL, 1ULL}, {2ULL, 0ULL}, {2ULL, 3ULL}, {3ULL, 0ULL}, {3ULL, 3ULL}};
  for_each_join_algorithm([&](backend be, join_algorithm algo) {
    if (algo != join_algorithm::no_partition_hash) { return; }
    for (double lf : {0.05, 0.5, 0.99}) {
      join_options o;
      o.backend = be;
      o.algorithm = algo;
      o.hash_load_factor = lf;
      EXPECT_EQ(diff_rows(inner, index_rows(join(t.build, 0, t.probe, 0, o), join_kind::inner)), "");
    }
    for (double lf : {0.0, 1.0, -0.5, 2.0, std::nan("")}) {
      join_options o;
      o.backend = be;
      o.algorithm = algo;
      o.hash_load_factor = lf;
      expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 0, o); },
                                  "join hash_load_factor must be in (0, 1), got");
    }
    // So small that the table's size would overflow: refused, not wrapped to a tiny table.
    join_options o;
    o.backend = be;
    o.algorithm = algo;
    o.hash_load_factor = 1e-18;
    expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 0, o); }, "too large");
  });
}

// A negative streamed chunk size is refused on every backend, before anything runs.
TEST(Api, RefusesANegativeStreamedChunkSize) {
  small_tables t;
  for (auto be : {backend::cpu, backend::gpu}) {
    if (be == backend::gpu && device_count() == 0) { continue; }
    join_options o;
    o.backend = be;
    o.tuning.streamed_chunk_rows = -5;
    expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 0, o); },
                                "streamed_chunk_rows must not be negative");
  }
}

TEST(Api, RefusesIndexTypesOtherThanInt32AndInt64) {
  small_tables t;
  join_options o;
  o.backend = backend::cpu;
  o.index_type = type_id::int16;
  expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 0, o); },
                              "join index_type must be int64 or int32, not int16");
  o.index_type = type_id::uint32;
  expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 0, o); },
                              "not uint32");
  // The other forms have no row ids: the type is not looked at.
  o.output = output_form::aggregate;
  EXPECT_EQ(join(t.build, 0, t.probe, 0, o).aggregate.count, 5u);
  // Sides past 2^31 - 1 rows cannot be numbered in int32 (checked before anything runs).
  constexpr size_type most = 2147483647;
  EXPECT_NO_THROW(check_index_type(type_id::int32, most, most));
  EXPECT_NO_THROW(check_index_type(type_id::int64, most + 1, most + 1));
  expect_refusal<logic_error>([&] { check_index_type(type_id::int32, 5, most + 1); },
                              "an int32 join index numbers at most 2147483647 rows per side, but "
                              "the probe side has 2147483648; use index_type int64");
  expect_refusal<logic_error>([&] { check_index_type(type_id::int32, most + 1, 5); },
                              "the build side has 2147483648");
}

TEST(Api, LeftOuterTableHasNullBuildPayloads) {
  small_tables t;
  join_options o;
  o.kind = join_kind::left_outer;
  o.output = output_form::table;
  o.build_payloads = {1};
  o.probe_payloads = {1};
  auto const r = join(t.build, 0, t.probe, 0, o);
  ASSERT_EQ(r.columns.num_columns(), 3);
  EXPECT_EQ(r.columns.column(1).view().null_count(), 1);
  EXPECT_EQ(diff_rows(oracle_join_table(t.build, 0, t.probe, 0, o), table_rows(r.columns.view())),
            "");
  // The unmatched probe row (key 9) contributes its key and probe payload, nothing for the null.
  auto const expected = aggregate_of(oracle_join_table(t.build, 0, t.probe, 0, o));
  EXPECT_EQ(r.aggregate.checksum, expected.checksum);
  EXPECT_EQ(checksum(r.columns.column(1).view()), 30u + 31 + 10 + 30 + 31);
}

TEST(Api, RefusesMismatchedKeyTypes) {
  small_tables t;
  expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 1); },
                              "mismatched key types: build key is int32, probe key is int64");
}

TEST(Api, RefusesBadColumns) {
  small_tables t;
  expect_refusal<logic_error>([&] { (void)join(t.build, 5, t.probe, 0); },
                              "build key column 5 does not exist");
  expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 2); },
                              "build key is int32, probe key is float64");
  join_options o;
  o.probe_payloads = {7};
  expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 0, o); },
                              "probe payload column 7 does not exist");
}

TEST(Api, RefusesUnsupportedCombinations) {
  small_tables t;
  join_options o;
  o.pred = predicate::band(2);
  o.algorithm = join_algorithm::no_partition_hash;
  expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 0, o); },
                              "the band predicate needs a nested-loop algorithm");
  o = {};
  o.algorithm = join_algorithm::triton;
  o.backend = backend::cpu;
  expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 0, o); },
                              "available there: nested_loop, no_partition_hash");
  if (device_count() == 0) {
    o = {};
    o.backend = backend::gpu;
    expect_refusal<logic_error>([&] { (void)join(t.build, 0, t.probe, 0, o); },
                                built_with_cuda() ? "no GPU is present" : "built without CUDA");
  }
}

TEST(Api, NullablePayloadsAndFloatPayloadsAreCarried) {
  small_tables t;
  auto c = column::copy_of(column_view::of(t.bp));
  c.make_nullable()[0] = 0xfd;  // build row 1 (key 2) is NULL
  c.set_null_count(1);
  table_view b({column_view::of(t.bk), c.view()});
  join_options o;
  o.backend = backend::cpu;
  o.output = output_form::table;
  o.kind = join_kind::full_outer;
  o.build_payloads = {1};
  o.probe_payloads = {2};
  auto const r = join(b, 0, t.probe, 0, o);
  // key, build payload, probe payload's bits: 3 x 2 matches, 1-1, then 9 alone, 2 alone.
  auto const bits = [](double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
  };
  rows const expected{{1ULL, 10ULL, bits(1.5)}, {2ULL, std::nullopt, std::nullopt},
                      {3ULL, 30ULL, bits(0.5)}, {3ULL, 30ULL, bits(3.5)},
                      {3ULL, 31ULL, bits(0.5)}, {3ULL, 31ULL, bits(3.5)},
                      {9ULL, std::nullopt, bits(2.5)}};
  EXPECT_EQ(diff_rows(expected, table_rows(r.columns)), "");
  EXPECT_EQ(r.columns.column(1).view().null_count(), 2);
}

TEST(Api, BandJoinSmall) {
  std::vector<std::int32_t> bk{0, 10, 20};
  std::vector<std::int32_t> pk{5, 10, 25, 31};
  table_view b({column_view::of(bk)});
  table_view p({column_view::of(pk)});
  join_options o;
  o.pred = predicate::band(5);
  auto const r = join(b, 0, p, 0, o);
  EXPECT_EQ(r.stats.algorithm, join_algorithm::indexed_nested_loop);
  // 0<=5<=5, 10<=10<=15, 20<=25<=25
  rows const expected{{0ULL, 0ULL}, {1ULL, 1ULL}, {2ULL, 2ULL}};
  EXPECT_EQ(diff_rows(expected, index_rows(r, join_kind::inner)), "");
}

TEST(Api, GroupbyFloatAggregatesAndRefusals) {
  std::vector<std::int64_t> k{5, -1, 5, 5, -1};
  std::vector<double> v{1.5, -2.0, 2.5, 4.0, 8.0};
  std::vector<std::int16_t> small{1, 2, 3, 4, 5};
  table_view in({column_view::of(k), column_view::of(v), column_view::of(small)});
  std::vector<aggregation> aggs{{aggregation_kind::sum, 1}, {aggregation_kind::min, 1},
                                {aggregation_kind::max, 1}, {aggregation_kind::avg, 1},
                                {aggregation_kind::count, -1}};
  groupby_options o;
  o.sort_by_key = true;
  auto const r = groupby(in, 0, aggs, o);
  ASSERT_EQ(r.num_groups(), 2);
  EXPECT_EQ(r.columns.column(0).to_vector<std::int64_t>(), (std::vector<std::int64_t>{-1, 5}));
  EXPECT_EQ(r.columns.column(1).to_vector<double>(), (std::vector<double>{6.0, 8.0}));
  EXPECT_EQ(r.columns.column(2).to_vector<double>(), (std::vector<double>{-2.0, 1.5}));
  EXPECT_EQ(r.columns.column(3).to_vector<double>(), (std::vector<double>{8.0, 4.0}));
  EXPECT_EQ(r.columns.column(4).to_vector<double>(), (std::vector<double>{3.0, 8.0 / 3}));
  EXPECT_EQ(r.columns.column(5).to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 3}));
  // A float key and a 2-byte value take the general key path.
  auto const by_float = groupby(in, 1, {{aggregation_kind::count, -1}}, o);
  EXPECT_EQ(by_float.columns.column(0).to_vector<double>(),
            (std::vector<double>{-2.0, 1.5, 2.5, 4.0, 8.0}));
  auto const small_sum = groupby(in, 0, {{aggregation_kind::sum, 2}, {aggregation_kind::max, 2}}, o);
  EXPECT_EQ(small_sum.columns.column(1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{7, 8}));
  EXPECT_EQ(small_sum.columns.column(2).to_vector<std::int16_t>(), (std::vector<std::int16_t>{5, 4}));
  expect_refusal<logic_error>([&] { (void)groupby(in, 0, {{aggregation_kind::max, 9}}); },
                              "does not exist");
  groupby_options bad;
  bad.algorithm = groupby_algorithm::partition;
  bad.backend = backend::cpu;
  expect_refusal<logic_error>([&] { (void)groupby(in, 0, aggs, bad); }, "available there: hash");
}

TEST(Api, GroupbySumWrapsLikeUint64) {
  std::vector<std::int32_t> k{1, 1, 1};
  std::vector<std::uint64_t> v{~0ULL, 2, ~0ULL};
  std::vector<std::int64_t> s{INT64_MAX, 1, 0};
  table_view in({column_view::of(k), column_view::of(v), column_view::of(s)});
  auto const r = groupby(in, 0, {{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2},
                                 {aggregation_kind::avg, 2}});
  EXPECT_EQ(r.columns.column(1).to_vector<std::uint64_t>()[0], 0ULL);  // 2^65 wraps to 0
  EXPECT_EQ(r.columns.column(2).to_vector<std::int64_t>()[0], INT64_MIN);
  // avg is exact even though the sum wrapped
  EXPECT_DOUBLE_EQ(r.columns.column(3).to_vector<double>()[0],
                   (static_cast<double>(INT64_MAX) + 1.0) / 3.0);
}

}  // namespace
}  // namespace joinery::test
