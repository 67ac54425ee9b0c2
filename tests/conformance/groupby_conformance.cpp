// Every group-by algorithm x backend x workload against the oracle.
#include "support/oracle.hpp"
#include "support/workloads.hpp"

#include <joinery/groupby.hpp>

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace joinery::test {
namespace {

struct algo_case {
  backend be;
  groupby_algorithm algo;
};

std::vector<algo_case> all_cases() {
  std::vector<algo_case> v;
  for (auto be : {backend::cpu, backend::gpu}) {
    for (auto a : groupby_algorithms_on(be)) { v.push_back({be, a}); }
  }
  return v;
}

class GroupbyConformance
    : public ::testing::TestWithParam<std::tuple<algo_case, std::string>> {};

TEST_P(GroupbyConformance, AllAggregatesMatchOracle) {
  auto const& [c, workload] = GetParam();
  if (c.be == backend::gpu && device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU";
  }
  auto const& w = groupby_workload_named(workload);
  auto const input = place(w.input.view(), c.be == backend::gpu ? memory_space::device
                                                                 : memory_space::host);
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}};
  for (size_type col = 1; col < w.input.num_columns(); ++col) {
    for (auto k : {aggregation_kind::sum, aggregation_kind::min, aggregation_kind::max,
                   aggregation_kind::avg}) {
      aggs.push_back({k, col});
    }
  }
  for (bool sorted : {false, true}) {
    groupby_options o;
    o.algorithm = c.algo;
    o.backend = c.be;
    o.sort_by_key = sorted;
    auto const r = groupby(input.view(), 0, aggs, o);
    EXPECT_EQ(r.stats.algorithm, c.algo);
    expect_groups_match_oracle(r, w.input.view(), aggs, sorted);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, GroupbyConformance,
                         ::testing::Combine(::testing::ValuesIn(all_cases()),
                                            ::testing::ValuesIn(groupby_workload_names())),
                         [](auto const& info) {
                           auto name = std::string(to_string(std::get<0>(info.param).be)) + "_" +
                                       std::string(to_string(std::get<0>(info.param).algo)) +
                                       "_" + std::get<1>(info.param);
                           for (auto& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) { ch = '_'; }
                           }
                           return name;
                         });

// The streamed group-by on host-resident input (pageable and pinned), chunks of about a fifth
// of the rows so that every workload crosses chunk boundaries and its partial groups are merged
// on the way: every aggregate (COUNT(column) too), sorted and not, against the oracle.
class StreamedGroupbyConformance
    : public ::testing::TestWithParam<std::tuple<memory_space, std::string>> {};

TEST_P(StreamedGroupbyConformance, AllAggregatesMatchOracle) {
  auto const& [space, workload] = GetParam();
  if (device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU";
  }
  auto const& w = groupby_workload_named(workload);
  auto const input = place(w.input.view(), space);
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}};
  for (size_type col = 1; col < w.input.num_columns(); ++col) {
    for (auto k : {aggregation_kind::sum, aggregation_kind::min, aggregation_kind::max,
                   aggregation_kind::avg, aggregation_kind::count_valid}) {
      aggs.push_back({k, col});
    }
  }
  for (bool sorted : {false, true}) {
    groupby_options o;
    o.algorithm = groupby_algorithm::streamed;
    o.backend = backend::gpu;
    o.sort_by_key = sorted;
    o.streamed_chunk_rows = w.input.num_rows() / 5 + 3;
    auto const r = groupby(input.view(), 0, aggs, o);
    EXPECT_EQ(r.stats.algorithm, groupby_algorithm::streamed);
    EXPECT_EQ(r.columns.column(0).space(), memory_space::host);
    expect_groups_match_oracle(r, w.input.view(), aggs, sorted);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, StreamedGroupbyConformance,
                         ::testing::Combine(::testing::Values(memory_space::host,
                                                              memory_space::pinned_host),
                                            ::testing::ValuesIn(groupby_workload_names())),
                         [](auto const& info) {
                           auto name = "gpu_streamed_" +
                                       std::string(to_string(std::get<0>(info.param))) + "_" +
                                       std::get<1>(info.param);
                           for (auto& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) { ch = '_'; }
                           }
                           return name;
                         });

}  // namespace
}  // namespace joinery::test
