// The multi-GPU joins and group-by on every workload with several ranks: three
// ranks on one GPU (the exchange and its boundaries without a second GPU), and,
// where present, every GPU with each exchange method and two ranks per GPU.
// Every kind and output form against the oracle; inputs in device memory and in
// pageable host memory.
#include "support/oracle.hpp"
#include "support/workloads.hpp"

#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>

namespace joinery::test {
namespace {

/// Which ranks a case runs on.
enum class layout : std::uint8_t {
  three_on_one,       ///< devices {0, 0, 0}, peer copies, inputs in device memory
  three_on_one_host,  ///< the same with inputs in host memory
  every_gpu_nccl,     ///< one rank per GPU, NCCL (needs two GPUs)
  two_per_gpu,        ///< {0, 1, ..., 0, 1, ...}, peer copies (needs two GPUs)
};

std::string layout_name(layout l) {
  switch (l) {
    case layout::three_on_one:
      return "three_ranks_on_gpu0";
    case layout::three_on_one_host:
      return "three_ranks_on_gpu0_host_inputs";
    case layout::every_gpu_nccl:
      return "every_gpu_nccl";
    case layout::two_per_gpu:
      return "two_ranks_per_gpu";
  }
  return "unknown";
}

std::vector<int> devices_of(layout l) {
  std::vector<int> v;
  switch (l) {
    case layout::three_on_one:
    case layout::three_on_one_host:
      return {0, 0, 0};
    case layout::every_gpu_nccl:
      for (int d = 0; d < device_count(); ++d) { v.push_back(d); }
      return v;
    case layout::two_per_gpu:
      for (int d = 0; d < 2 * device_count(); ++d) { v.push_back(d % device_count()); }
      return v;
  }
  return v;
}

exchange_method exchange_of(layout l) {
  return l == layout::every_gpu_nccl ? exchange_method::nccl : exchange_method::peer_copy;
}

/// Why this machine cannot run a layout, or "" when it can.
std::string skip_reason(layout where) {
  if (device_count() == 0) {
    return "no GPU present: GPU conformance runs on a lent GPU "
           "(scripts/device-check.sh)";
  }
  bool const several = where == layout::every_gpu_nccl || where == layout::two_per_gpu;
  if (several && device_count() < 2) {
    return "needs two GPUs (runs on a lent nvidia-h200-x2 or larger)";
  }
  return "";
}

class MultiGpuJoinConformance
    : public ::testing::TestWithParam<std::tuple<join_algorithm, layout, std::string>> {};

TEST_P(MultiGpuJoinConformance, AllKindsAndFormsMatchOracle) {
  auto const& [algo, where, workload] = GetParam();
  if (auto const why = skip_reason(where); !why.empty()) { GTEST_SKIP() << why; }
  join_options o;
  o.algorithm = algo;
  o.backend = backend::gpu;
  o.devices = devices_of(where);
  o.tuning.exchange = exchange_of(where);
  auto const& w = join_workload_named(workload);
  auto const space = where == layout::three_on_one_host ? memory_space::host : memory_space::device;
  auto const build = place(w.build.view(), space);
  auto const probe = place(w.probe.view(), space);
  for (auto kind :
       {join_kind::inner, join_kind::left_semi, join_kind::left_anti, join_kind::left_outer}) {
    SCOPED_TRACE(std::string("kind ") + std::string(to_string(kind)));
    o.kind = kind;
    o.build_payloads = payloads_of(w.build);
    o.probe_payloads = payloads_of(w.probe);
    expect_every_form_matches_oracle(build.view(), probe.view(), w.build.view(), w.probe.view(), o,
                                     space);
  }
}

INSTANTIATE_TEST_SUITE_P(
  Families, MultiGpuJoinConformance,
  ::testing::Combine(::testing::Values(join_algorithm::multi_gpu_hash,
                                       join_algorithm::multi_gpu_sort_merge),
                     ::testing::Values(layout::three_on_one, layout::three_on_one_host,
                                       layout::every_gpu_nccl, layout::two_per_gpu),
                     ::testing::ValuesIn(join_workload_names())),
  [](auto const& info) {
    auto name = "gpu_" + std::string(to_string(std::get<0>(info.param))) + "_" +
                layout_name(std::get<1>(info.param)) + "_" + std::get<2>(info.param);
    for (auto& ch : name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) { ch = '_'; }
    }
    return name;
  });

// The multi-GPU group-by: every aggregate over every value column,
// hash-partitioned and (sorted by key) range-partitioned, against the oracle.
class MultiGpuGroupbyConformance
    : public ::testing::TestWithParam<std::tuple<layout, std::string>> {};

TEST_P(MultiGpuGroupbyConformance, AllAggregatesMatchOracle) {
  auto const& [where, workload] = GetParam();
  if (auto const why = skip_reason(where); !why.empty()) { GTEST_SKIP() << why; }
  auto const& w = groupby_workload_named(workload);
  auto const space = where == layout::three_on_one_host ? memory_space::host : memory_space::device;
  auto const input = place(w.input.view(), space);
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}};
  for (size_type col = 1; col < w.input.num_columns(); ++col) {
    for (auto k : {aggregation_kind::sum, aggregation_kind::min, aggregation_kind::max,
                   aggregation_kind::avg}) {
      aggs.push_back({k, col});
    }
  }
  aggs.push_back({aggregation_kind::count, -1});  // twice: shares one partial count
  for (bool sorted : {false, true}) {
    SCOPED_TRACE(sorted ? "sort_by_key" : "unsorted");
    groupby_options o;
    o.algorithm = groupby_algorithm::multi_gpu;
    o.backend = backend::gpu;
    o.sort_by_key = sorted;
    o.devices = devices_of(where);
    o.exchange = exchange_of(where);
    auto const r = groupby(input.view(), 0, aggs, o);
    EXPECT_EQ(r.stats.algorithm, groupby_algorithm::multi_gpu);
    EXPECT_EQ(r.columns.column(0).space(), space);
    expect_groups_match_oracle(r, w.input.view(), aggs, sorted);
  }
}

INSTANTIATE_TEST_SUITE_P(
  Families, MultiGpuGroupbyConformance,
  ::testing::Combine(::testing::Values(layout::three_on_one, layout::three_on_one_host,
                                       layout::every_gpu_nccl, layout::two_per_gpu),
                     ::testing::ValuesIn(groupby_workload_names())),
  [](auto const& info) {
    auto name = "gpu_groupby_multi_gpu_" + layout_name(std::get<0>(info.param)) + "_" +
                std::get<1>(info.param);
    for (auto& ch : name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) { ch = '_'; }
    }
    return name;
  });

}  // namespace
}  // namespace joinery::test
