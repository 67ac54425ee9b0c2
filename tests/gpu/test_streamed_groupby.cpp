// The streamed group-by beyond the conformance suite: many groups merged chunk after chunk under
// a small budget, averages of 8-byte integers through their exact halves, several key columns
// with NULLs (the general key path feeding it), groups that outgrow the budget refused, and
// automatic's choice of streaming. The CPU backend (itself checked against the oracle) is the
// reference.
#include "support/columns.hpp"
#include "support/oracle.hpp"

#include <joinery/gen.hpp>
#include <joinery/groupby.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace joinery::test {
namespace {

#if defined(JOINERY_HAS_CUDA)

class GpuStreamedGroupby : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
};

table rows_of(size_type rows, size_type groups, double zipf, std::uint64_t seed,
              type_id key = type_id::int32) {
  gen::relation_spec s;
  s.rows = rows;
  s.kind = gen::key_kind::foreign;
  s.key_type = key;
  s.domain = groups;
  s.zipf = zipf;
  s.payload_types = {type_id::int32, type_id::int64};
  s.seed = seed;
  return gen::generate(s);
}

std::vector<aggregation> every_aggregate() {
  return {{aggregation_kind::count, -1}, {aggregation_kind::sum, 1}, {aggregation_kind::min, 1},
          {aggregation_kind::max, 2},    {aggregation_kind::avg, 1}, {aggregation_kind::avg, 2},
          {aggregation_kind::sum, 2},    {aggregation_kind::count_valid, 2}};
}

/// The groups of `o`'s group-by against the CPU backend's, as sorted rows.
void expect_matches_cpu(table_view const& input, std::vector<size_type> const& keys,
                        std::vector<aggregation> const& aggs, groupby_options o) {
  auto ref = o;
  ref.backend = backend::cpu;
  ref.algorithm = groupby_algorithm::automatic;
  ref.streamed_chunk_rows = 0;
  ref.device_memory_budget = 0;
  o.sort_by_key = true;
  ref.sort_by_key = true;
  auto const got = groupby(input, keys, aggs, o);
  auto const want = groupby(input, keys, aggs, ref);
  EXPECT_EQ(got.stats.algorithm, groupby_algorithm::streamed);
  EXPECT_EQ(diff_rows(table_rows(want.columns.view()), table_rows(got.columns.view())), "");
}

// 2^22 rows over 2^20 groups (Zipf 0 and 1) in chunks of 2^18 rows under a 512 MiB budget: the
// partial groups outgrow 8% of it and are merged on the device again and again.
TEST_F(GpuStreamedGroupby, ManyGroupsMergedChunkAfterChunkMatchTheCpu) {
  for (double zipf : {0.0, 1.0}) {
    SCOPED_TRACE("zipf " + std::to_string(zipf));
    auto const t = rows_of(size_type{1} << 22, size_type{1} << 20, zipf, 41);
    for (auto space : {memory_space::host, memory_space::pinned_host}) {
      auto const input = place(t.view(), space);
      groupby_options o;
      o.algorithm = groupby_algorithm::streamed;
      o.backend = backend::gpu;
      o.streamed_chunk_rows = size_type{1} << 18;
      o.device_memory_budget = std::size_t{512} << 20;
      expect_matches_cpu(input.view(), {0}, every_aggregate(), o);
    }
  }
}

// 8-byte keys, a handful of groups, a chunk size that is not a power of two.
TEST_F(GpuStreamedGroupby, FewGroupsOfEightByteKeysMatchTheCpu) {
  auto const t = rows_of(1000003, 7, 0.0, 42, type_id::int64);
  groupby_options o;
  o.algorithm = groupby_algorithm::streamed;
  o.backend = backend::gpu;
  o.streamed_chunk_rows = 99991;
  expect_matches_cpu(t.view(), {0}, every_aggregate(), o);
}

// Two key columns with NULLs and NULL values: the general key path encodes the keys and hands
// the streamed group-by one packed key.
TEST_F(GpuStreamedGroupby, SeveralKeyColumnsWithNullsMatchTheCpu) {
  size_type const n = 300000;
  std::vector<column> cols;
  cols.push_back(make_column<std::int32_t>(
    n, [](size_type i) { return static_cast<std::int32_t>((i * 7919) % 1000); },
    [](size_type i) { return i % 11 == 0; }));
  cols.push_back(make_column<std::int16_t>(
    n, [](size_type i) { return static_cast<std::int16_t>((i * 104729) % 13 - 6); }));
  cols.push_back(make_column<std::int64_t>(
    n, [](size_type i) { return static_cast<std::int64_t>((i * 31) % 100003 - 50000); },
    [](size_type i) { return i % 7 == 0; }));
  table const t(std::move(cols));
  groupby_options o;
  o.algorithm = groupby_algorithm::streamed;
  o.backend = backend::gpu;
  o.streamed_chunk_rows = 40000;
  expect_matches_cpu(t.view(), {0, 1},
                     {{aggregation_kind::count, -1},
                      {aggregation_kind::count_valid, 2},
                      {aggregation_kind::sum, 2},
                      {aggregation_kind::min, 2},
                      {aggregation_kind::avg, 2}},
                     o);
}

TEST_F(GpuStreamedGroupby, GroupsPastTheBudgetAreRefusedClearly) {
  auto const t = rows_of(size_type{1} << 20, size_type{1} << 20, 0.0, 43);
  groupby_options o;
  o.algorithm = groupby_algorithm::streamed;
  o.backend = backend::gpu;
  o.device_memory_budget = std::size_t{4} << 20;
  try {
    (void)groupby(t.view(), 0, every_aggregate(), o);
    ADD_FAILURE() << "no exception";
  } catch (out_of_memory const& e) {
    EXPECT_NE(std::string(e.what()).find("device memory budget"), std::string::npos) << e.what();
  }
}

// (COUNT(column) takes the general key path, which aggregates on the device; the rest streams.)
TEST_F(GpuStreamedGroupby, AutomaticStreamsHostInputsThatDoNotFitTheBudget) {
  auto const t = rows_of(size_type{1} << 21, 1000, 0.0, 44);
  std::vector<aggregation> const aggs{{aggregation_kind::count, -1}, {aggregation_kind::sum, 1},
                                      {aggregation_kind::max, 2}, {aggregation_kind::avg, 2}};
  groupby_options o;
  o.backend = backend::gpu;
  o.device_memory_budget = std::size_t{16} << 20;  // 24 MiB of columns read, copied whole: 72 MiB
  auto const r = groupby(t.view(), 0, aggs, o);
  EXPECT_EQ(r.stats.algorithm, groupby_algorithm::streamed);
  o.device_memory_budget = 0;
  auto const whole = groupby(t.view(), 0, aggs, o);
  EXPECT_NE(whole.stats.algorithm, groupby_algorithm::streamed);
  o.backend = backend::cpu;
  auto const cpu = groupby(t.view(), 0, aggs, o);
  EXPECT_EQ(diff_rows(table_rows(cpu.columns.view()), table_rows(r.columns.view())), "");
}

#endif

}  // namespace
}  // namespace joinery::test
