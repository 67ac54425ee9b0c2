// The joins of host-resident data (streamed, triton) on every workload with inputs in pageable
// and pinned memory and chunks small enough that every workload crosses several chunk
// boundaries (triton also: 32 partitions, a third of them cached on the device, a device budget
// that splits the partition pairs into several groups): every kind and output form against the
// oracle, and the batches of join_batches against the same rows.
#include "support/oracle.hpp"
#include "support/workloads.hpp"

#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>

namespace joinery::test {
namespace {

/// About five chunks, a prime-ish size so chunk boundaries fall anywhere.
size_type chunk_rows_for(size_type probe_rows) { return std::max<size_type>(probe_rows / 5, 1) + 3; }

std::string space_name(memory_space s) { return std::string(to_string(s)); }

/// A triton budget that cuts the partition pairs into groups yet holds the largest build
/// partition and every group's output (the oracle's row count bounds it).
std::size_t triton_budget_for(table_view const& build, table_view const& probe,
                              std::uint64_t output_rows) {
  auto const tuple = std::size_t{16};
  auto const partitioned = static_cast<std::size_t>(build.num_rows() + probe.num_rows()) * tuple;
  return (std::size_t{1} << 20) + 2 * partitioned +
         100 * static_cast<std::size_t>(build.num_rows()) * tuple +
         3 * static_cast<std::size_t>(output_rows) * tuple;
}

class HostDataJoinConformance
    : public ::testing::TestWithParam<std::tuple<join_algorithm, memory_space, std::string>> {};

TEST_P(HostDataJoinConformance, AllKindsAndFormsMatchOracle) {
  auto const& [algo, space, workload] = GetParam();
  if (device_count() == 0) {
    GTEST_SKIP() << "no GPU present: GPU conformance runs on a lent GPU (scripts/device-check.sh)";
  }
  auto const& w = join_workload_named(workload);
  auto const build = place(w.build.view(), space);
  auto const probe = place(w.probe.view(), space);
  for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                    join_kind::left_outer}) {
    SCOPED_TRACE(std::string("kind ") + std::string(to_string(kind)));
    join_options o;
    o.algorithm = algo;
    o.backend = backend::gpu;
    o.kind = kind;
    o.build_payloads = payloads_of(w.build);
    o.probe_payloads = payloads_of(w.probe);
    o.tuning.streamed_chunk_rows = chunk_rows_for(w.probe.num_rows());
    auto const expected_table = oracle_join_table(w.build.view(), 0, w.probe.view(), 0, o);
    auto const expected_agg = aggregate_of(expected_table);
    if (algo == join_algorithm::triton) {
      o.tuning.triton_chunk_rows = chunk_rows_for(std::max(w.build.num_rows(), w.probe.num_rows()));
      o.tuning.triton_partition_bits = 5;
      o.tuning.triton_cached_share = 0.3;
      o.device_memory_budget = triton_budget_for(w.build.view(), w.probe.view(), expected_agg.count);
    }
    expect_every_form_matches_oracle(build.view(), probe.view(), w.build.view(), w.probe.view(),
                                     o, memory_space::host);
    o.output = output_form::table;

    // Batch by batch: the rows of all batches together are the table, the totals add up.
    rows batched;
    std::uint64_t batch_count = 0;
    std::uint64_t batch_checksum = 0;
    auto const totals = join_batches(build.view(), 0, probe.view(), 0, o, [&](join_result&& b) {
      EXPECT_EQ(b.form, output_form::table);
      EXPECT_EQ(b.columns.num_rows(), static_cast<size_type>(b.aggregate.count));
      auto const part = table_rows(b.columns.view());
      batched.insert(batched.end(), part.begin(), part.end());
      batch_count += b.aggregate.count;
      batch_checksum += b.aggregate.checksum;
    });
    std::sort(batched.begin(), batched.end());  // each batch's rows come sorted, not the union
    EXPECT_EQ(diff_rows(expected_table, batched), "");
    EXPECT_EQ(totals.aggregate.count, expected_agg.count);
    EXPECT_EQ(batch_count, expected_agg.count);
    EXPECT_EQ(batch_checksum, expected_agg.checksum);
    EXPECT_EQ(totals.columns.num_columns(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
  Families, HostDataJoinConformance,
  ::testing::Combine(::testing::Values(join_algorithm::streamed, join_algorithm::triton),
                     ::testing::Values(memory_space::host, memory_space::pinned_host),
                     ::testing::ValuesIn(join_workload_names())),
  [](auto const& info) {
    auto name = "gpu_" + std::string(to_string(std::get<0>(info.param))) + "_" +
                space_name(std::get<1>(info.param)) + "_" + std::get<2>(info.param);
    for (auto& ch : name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) { ch = '_'; }
    }
    return name;
  });

}  // namespace
}  // namespace joinery::test
