// Every join algorithm x backend x workload family against the oracle, complete results compared
// as multisets. Later issues add their algorithms by implementing them: the parameter list is
// read from the library (join_algorithms_on), so nothing here needs to change.
#include "support/oracle.hpp"
#include "support/workloads.hpp"

#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <tuple>

namespace joinery::test {
namespace {

struct algo_case {
  backend be;
  join_algorithm algo;
};

std::vector<algo_case> all_cases() {
  std::vector<algo_case> v;
  for (auto be : {backend::cpu, backend::gpu}) {
    for (auto a : join_algorithms_on(be)) { v.push_back({be, a}); }
  }
  return v;
}

std::string case_name(algo_case const& c) {
  return std::string(to_string(c.be)) + "_" + std::string(to_string(c.algo));
}

/// A parameterised test's name: anything but letters and digits becomes '_'.
std::string gtest_name(std::string name) {
  for (auto& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) { ch = '_'; }
  }
  return name;
}

bool quadratic(join_algorithm a) { return a == join_algorithm::nested_loop; }

memory_space input_space(backend be) {
  return be == backend::gpu ? memory_space::device : memory_space::host;
}

void skip_without_gpu(backend be) {
  if (be == backend::gpu && device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
}

class JoinConformance
    : public ::testing::TestWithParam<std::tuple<algo_case, std::string>> {};

TEST_P(JoinConformance, AllKindsAndFormsMatchOracle) {
  auto const& [c, workload] = GetParam();
  skip_without_gpu(c.be);
  if (::testing::Test::IsSkipped()) { return; }
  auto const& w = join_workload_named(workload);
  if (w.large && quadratic(c.algo)) {
    GTEST_SKIP() << "quadratic algorithm: the large workload is covered by the others";
  }
  auto const space = input_space(c.be);
  auto const build = place(w.build.view(), space);
  auto const probe = place(w.probe.view(), space);

  for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                    join_kind::left_outer}) {
    if (!join_supported(c.be, c.algo, kind, predicate::kind_type::equal)) { continue; }
    SCOPED_TRACE(std::string("kind ") + std::string(to_string(kind)));
    join_options o;
    o.algorithm = c.algo;
    o.backend = c.be;
    o.kind = kind;
    o.build_payloads = payloads_of(w.build);
    o.probe_payloads = payloads_of(w.probe);

    expect_every_form_matches_oracle(build.view(), probe.view(), w.build.view(), w.probe.view(),
                                     o);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, JoinConformance,
                         ::testing::Combine(::testing::ValuesIn(all_cases()),
                                            ::testing::ValuesIn(join_workload_names())),
                         [](auto const& info) {
                           return gtest_name(case_name(std::get<0>(info.param)) + "_" +
                                             std::get<1>(info.param));
                         });

// Wide joins: the table form of the GPU joins that sort or partition both sides, with each
// materialization strategy forced (gfur, gftr) and chosen by the model (automatic), on every
// workload (0, 1, 2 and 8 payload columns of 1/2/4/8 bytes, partitioned builds, m:n, skew).
// Every output row and the table form's checksum against the oracle.
struct wide_case {
  join_algorithm algo;
  materialization strategy;
};

std::vector<wide_case> wide_cases() {
  std::vector<wide_case> v;
  for (auto a : {join_algorithm::radix_hash, join_algorithm::sort_merge}) {
    for (auto m : {materialization::gfur, materialization::gftr, materialization::automatic}) {
      v.push_back({a, m});
    }
  }
  return v;
}

class WideJoinConformance
    : public ::testing::TestWithParam<std::tuple<wide_case, std::string>> {};

TEST_P(WideJoinConformance, TableMatchesOracleWithEachStrategy) {
  auto const& [c, workload] = GetParam();
  skip_without_gpu(backend::gpu);
  if (::testing::Test::IsSkipped()) { return; }
  auto const& w = join_workload_named(workload);
  auto const build = place(w.build.view(), memory_space::device);
  auto const probe = place(w.probe.view(), memory_space::device);
  for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                    join_kind::left_outer}) {
    SCOPED_TRACE(std::string("kind ") + std::string(to_string(kind)));
    join_options o;
    o.algorithm = c.algo;
    o.backend = backend::gpu;
    o.kind = kind;
    o.output = output_form::table;
    o.strategy = c.strategy;
    o.build_payloads = payloads_of(w.build);
    o.probe_payloads = payloads_of(w.probe);
    auto const expected = oracle_join_table(w.build.view(), 0, w.probe.view(), 0, o);
    auto const expected_agg = aggregate_of(expected);
    auto const r = join(build.view(), 0, probe.view(), 0, o);
    EXPECT_EQ(diff_rows(expected, table_rows(r.columns.view())), "");
    EXPECT_EQ(r.aggregate.count, expected_agg.count);
    EXPECT_EQ(r.aggregate.checksum, expected_agg.checksum);
    if (c.strategy == materialization::automatic) {
      EXPECT_NE(r.stats.strategy, materialization::automatic);
    } else {
      EXPECT_EQ(r.stats.strategy, c.strategy);
    }
    // The strategy concerns tables only: the index form keeps returning input row ids.
    o.output = output_form::index;
    auto const ri = join(build.view(), 0, probe.view(), 0, o);
    EXPECT_EQ(diff_rows(oracle_join_index(w.build.view(), 0, w.probe.view(), 0, kind,
                                          predicate::equal()),
                        index_rows(ri, kind)),
              "");
  }
}

INSTANTIATE_TEST_SUITE_P(Families, WideJoinConformance,
                         ::testing::Combine(::testing::ValuesIn(wide_cases()),
                                            ::testing::ValuesIn(join_workload_names())),
                         [](auto const& info) {
                           auto const& c = std::get<0>(info.param);
                           // "gpu_" so that the sanitizer's '*gpu*' filter takes them too.
                           return gtest_name("gpu_" + std::string(to_string(c.algo)) + "_" +
                                             std::string(to_string(c.strategy)) + "_" +
                                             std::get<1>(info.param));
                         });

// The band predicate build.key <= probe.key <= build.key + d, for the nested-loop families.
class BandConformance : public ::testing::TestWithParam<algo_case> {};

TEST_P(BandConformance, BandJoinMatchesOracle) {
  auto const c = GetParam();
  skip_without_gpu(c.be);
  if (::testing::Test::IsSkipped()) { return; }
  // Widths chosen so that outputs stay small enough for the oracle: the full key range (~0)
  // only on the tiny workloads, where it turns the band into "build.key <= probe.key".
  struct band_case {
    char const* workload;
    std::uint64_t width;
  };
  for (auto const [workload, d] :
       {band_case{"pk_fk_uniform", 0}, band_case{"pk_fk_uniform", 3}, band_case{"pk_fk_uniform", 100},
        band_case{"many_to_many", 0}, band_case{"many_to_many", 2}, band_case{"negative_keys", 7},
        band_case{"extremes_int32", 1}, band_case{"extremes_int32", ~0ULL},
        band_case{"extremes_int64", ~0ULL}, band_case{"extremes_uint64", 2},
        band_case{"extremes_uint64", ~0ULL}, band_case{"empty_build", 5}, band_case{"one_row", 0}}) {
    auto const& w = join_workload_named(workload);
    auto const build = place(w.build.view(), input_space(c.be));
    auto const probe = place(w.probe.view(), input_space(c.be));
    {
      for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                        join_kind::left_outer}) {
        if (!join_supported(c.be, c.algo, kind, predicate::kind_type::band)) { continue; }
        SCOPED_TRACE(std::string(workload) + " d=" + std::to_string(d) + " " +
                     std::string(to_string(kind)));
        join_options o;
        o.algorithm = c.algo;
        o.backend = c.be;
        o.kind = kind;
        o.pred = predicate::band(d);
        o.output = output_form::table;
        o.build_payloads = {0, 1};  // the build key too: the two keys differ in a band join
        o.probe_payloads = {1};
        auto const r = join(build.view(), 0, probe.view(), 0, o);
        auto const expected = oracle_join_table(w.build.view(), 0, w.probe.view(), 0, o);
        EXPECT_EQ(diff_rows(expected, table_rows(r.columns.view())), "");
        EXPECT_EQ(r.aggregate.checksum, aggregate_of(expected).checksum);
      }
    }
  }
}

std::vector<algo_case> band_cases() {
  std::vector<algo_case> v;
  for (auto const& c : all_cases()) {
    if (join_supported(c.be, c.algo, join_kind::inner, predicate::kind_type::band)) {
      v.push_back(c);
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(NestedLoop, BandConformance, ::testing::ValuesIn(band_cases()),
                         [](auto const& info) { return case_name(info.param); });

}  // namespace
}  // namespace joinery::test
