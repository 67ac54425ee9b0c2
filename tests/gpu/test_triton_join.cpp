// The Triton join beyond the conformance suite: build sides several times the device memory
// budget, skewed sides (Zipf 1.5, a hot key holding half of the probe side) under a small budget,
// a result larger than the budget delivered batch by batch, every share of partitions cached,
// device-resident inputs, a sink failing mid-stream, bad tuning refused, and automatic's choice
// of triton. The CPU backend (itself checked against the oracle) is the reference.
#include "support/oracle.hpp"

#include <joinery/gen.hpp>
#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

#if defined(JOINERY_HAS_CUDA)

class GpuTriton : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
};

gen::relation_spec spec_of(size_type rows, gen::key_kind kind, size_type domain,
                           std::uint64_t seed, type_id key = type_id::int64) {
  gen::relation_spec s;
  s.rows = rows;
  s.kind = kind;
  s.key_type = key;
  s.domain = domain;
  s.payload_types = {type_id::int64, type_id::int32};
  s.seed = seed;
  return s;
}

join_options triton_options(join_kind kind, std::size_t budget) {
  join_options o;
  o.algorithm = join_algorithm::triton;
  o.backend = backend::gpu;
  o.kind = kind;
  o.device_memory_budget = budget;
  o.build_payloads = {1, 2};
  o.probe_payloads = {2, 1};
  return o;
}

/// Every output form of `o`'s join against the CPU backend's radix join.
void expect_matches_cpu(table_view const& build, table_view const& probe, join_options o) {
  auto ref = o;
  ref.backend = backend::cpu;
  ref.algorithm = join_algorithm::radix_hash;
  for (auto form : {output_form::index, output_form::table, output_form::aggregate}) {
    SCOPED_TRACE(std::string(to_string(form)));
    o.output = form;
    ref.output = form;
    auto const got = join(build, 0, probe, 0, o);
    auto const want = join(build, 0, probe, 0, ref);
    EXPECT_EQ(got.stats.algorithm, join_algorithm::triton);
    EXPECT_EQ(got.aggregate.count, want.aggregate.count);
    EXPECT_EQ(got.aggregate.checksum, want.aggregate.checksum);
    if (form == output_form::index) {
      EXPECT_EQ(diff_rows(index_rows(want, o.kind), index_rows(got, o.kind)), "");
    } else if (form == output_form::table) {
      EXPECT_EQ(diff_rows(table_rows(want.columns.view()), table_rows(got.columns.view())), "");
    }
  }
}

// 2^20 build rows of 8-byte keys and 12 bytes of payloads (20 MiB, 2^20 x 16 bytes partitioned)
// under a 4 MiB budget: many partition groups, most partitions in host memory.
TEST_F(GpuTriton, BuildSideSeveralTimesTheBudgetMatchesTheCpu) {
  auto const build = gen::generate(spec_of(size_type{1} << 20, gen::key_kind::primary, 0, 21));
  auto const probe =
    gen::generate(spec_of(size_type{3} << 19, gen::key_kind::foreign, size_type{1} << 21, 22));
  for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                    join_kind::left_outer}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    auto o = triton_options(kind, std::size_t{4} << 20);
    expect_matches_cpu(build.view(), probe.view(), o);
    auto const r = join(build.view(), 0, probe.view(), 0, o);
    EXPECT_LT(r.stats.cached_share, 0.5);
  }
}

// A hot key holding half of the probe side, and Zipf 1.5, under a small budget: the hot
// partition's probe rows are joined in slices against the same build partition.
TEST_F(GpuTriton, SkewedProbeSidesUnderASmallBudgetMatchTheCpu) {
  auto const build = gen::generate(spec_of(size_type{1} << 16, gen::key_kind::primary, 0, 23));
  auto hot = spec_of(size_type{1} << 20, gen::key_kind::foreign, size_type{1} << 17, 24);
  hot.hot_key_fraction = 0.5;
  auto zipf = spec_of(size_type{1} << 20, gen::key_kind::foreign, size_type{1} << 16, 25);
  zipf.zipf = 1.5;
  for (auto const& spec : {hot, zipf}) {
    auto const probe = gen::generate(spec);
    for (auto kind : {join_kind::inner, join_kind::left_anti, join_kind::left_outer}) {
      SCOPED_TRACE(std::string(to_string(kind)) + (spec.zipf > 0 ? " zipf" : " hot key"));
      expect_matches_cpu(build.view(), probe.view(), triton_options(kind, std::size_t{3} << 20));
    }
  }
}

// Zipf 1.5 on the build side too (many equal build keys in one partition) with the whole device.
TEST_F(GpuTriton, SkewedBuildSidesMatchTheCpu) {
  auto b = spec_of(size_type{1} << 16, gen::key_kind::foreign, size_type{1} << 12, 26);
  b.zipf = 1.5;
  auto const build = gen::generate(b);
  auto const probe =
    gen::generate(spec_of(size_type{1} << 14, gen::key_kind::foreign, size_type{1} << 12, 27));
  auto o = triton_options(join_kind::inner, 0);
  o.tuning.triton_partition_bits = 8;
  o.tuning.triton_chunk_rows = 5000;
  expect_matches_cpu(build.view(), probe.view(), o);
}

// 2^22 probe rows each matching one build row: 64 MiB of int64 row ids, delivered in batches
// under a 16 MiB budget, the batches' rows together the CPU's.
TEST_F(GpuTriton, ResultLargerThanTheBudgetArrivesInBatches) {
  auto const build = gen::generate(spec_of(size_type{1} << 18, gen::key_kind::primary, 0, 28));
  auto const probe =
    gen::generate(spec_of(size_type{1} << 22, gen::key_kind::foreign, size_type{1} << 18, 29));
  auto o = triton_options(join_kind::inner, std::size_t{16} << 20);
  o.output = output_form::index;
  auto ref = o;
  ref.backend = backend::cpu;
  ref.algorithm = join_algorithm::radix_hash;
  auto const expected = index_rows(join(build.view(), 0, probe.view(), 0, ref), o.kind);
  ASSERT_EQ(expected.size(), std::size_t{1} << 22);
  rows batched;
  int batches = 0;
  auto const totals = join_batches(build.view(), 0, probe.view(), 0, o, [&](join_result&& b) {
    ++batches;
    EXPECT_EQ(b.probe_rows.space(), memory_space::host);
    EXPECT_LE(b.probe_rows.size() * 16, static_cast<size_type>(o.device_memory_budget));
    auto const part = index_rows(b, o.kind);
    batched.insert(batched.end(), part.begin(), part.end());
  });
  EXPECT_GT(batches, 2);
  EXPECT_EQ(totals.aggregate.count, expected.size());
  std::sort(batched.begin(), batched.end());
  EXPECT_EQ(diff_rows(expected, batched), "");
}

// Every cached share from none to all, with inputs in pageable, pinned and device memory and
// 4-byte keys: the same rows whichever partitions stay on the device.
TEST_F(GpuTriton, EveryCachedShareAndInputSpaceMatchesTheCpu) {
  auto const build = gen::generate(
    spec_of(size_type{1} << 17, gen::key_kind::primary, 0, 30, type_id::int32));
  auto const probe = gen::generate(
    spec_of(size_type{1} << 19, gen::key_kind::foreign, size_type{3} << 16, 31, type_id::int32));
  for (auto space : {memory_space::host, memory_space::pinned_host, memory_space::device}) {
    auto const b = place(build.view(), space);
    auto const p = place(probe.view(), space);
    for (double share : {0.0, 0.3, 1.0}) {
      SCOPED_TRACE(std::string(to_string(space)) + " cached " + std::to_string(share));
      auto o = triton_options(join_kind::left_outer, 0);
      o.tuning.triton_cached_share = share;
      o.tuning.triton_partition_bits = 6;
      o.tuning.triton_chunk_rows = 30001;
      expect_matches_cpu(b.view(), p.view(), o);
      auto const r = join(b.view(), 0, p.view(), 0, o);
      EXPECT_NEAR(r.stats.cached_share, share, 0.1);
    }
  }
}

TEST_F(GpuTriton, ASinkFailingMidStreamLeavesNothingBehind) {
  auto const build = gen::generate(spec_of(size_type{1} << 16, gen::key_kind::primary, 0, 32));
  auto const probe =
    gen::generate(spec_of(size_type{1} << 20, gen::key_kind::foreign, size_type{1} << 16, 33));
  auto o = triton_options(join_kind::inner, std::size_t{2} << 20);
  o.output = output_form::table;
  int seen = 0;
  EXPECT_THROW(join_batches(build.view(), 0, probe.view(), 0, o,
                            [&](join_result&&) {
                              if (++seen == 2) { throw std::runtime_error("sink full"); }
                            }),
               std::runtime_error);
  EXPECT_EQ(seen, 2);
  expect_matches_cpu(build.view(), probe.view(), o);
}

TEST_F(GpuTriton, BadTuningAndImpossibleBudgetsAreRefusedClearly) {
  auto const build = gen::generate(spec_of(1000, gen::key_kind::primary, 0, 34));
  auto const probe = gen::generate(spec_of(1000, gen::key_kind::foreign, 1000, 35));
  auto o = triton_options(join_kind::inner, 0);
  o.tuning.triton_partition_bits = 13;
  EXPECT_THROW((void)join(build.view(), 0, probe.view(), 0, o), logic_error);
  o.tuning.triton_partition_bits = 0;
  o.tuning.triton_cached_share = 1.5;
  EXPECT_THROW((void)join(build.view(), 0, probe.view(), 0, o), logic_error);
  o.tuning.triton_cached_share.reset();
  o.device_memory_budget = 4096;
  try {
    (void)join(build.view(), 0, probe.view(), 0, o);
    ADD_FAILURE() << "no exception";
  } catch (out_of_memory const& e) {
    EXPECT_NE(std::string(e.what()).find("device memory budget"), std::string::npos) << e.what();
  }
}

// Host data whose build side the streamed join could not keep beside its chunks goes to triton.
TEST_F(GpuTriton, AutomaticTakesTritonForBuildSidesPastHalfTheBudget) {
  auto const build = gen::generate(spec_of(size_type{1} << 19, gen::key_kind::primary, 0, 36));
  auto const probe =
    gen::generate(spec_of(size_type{1} << 20, gen::key_kind::foreign, size_type{1} << 19, 37));
  join_options o;
  o.backend = backend::gpu;
  o.output = output_form::aggregate;
  o.build_payloads = {1};
  o.probe_payloads = {1};
  o.device_memory_budget = std::size_t{12} << 20;  // build 6 MiB + its table 8 MiB > 6 MiB
  auto const r = join(build.view(), 0, probe.view(), 0, o);
  EXPECT_EQ(r.stats.algorithm, join_algorithm::triton);
  o.device_memory_budget = 0;
  auto const whole = join(build.view(), 0, probe.view(), 0, o);
  EXPECT_NE(whole.stats.algorithm, join_algorithm::triton);
  EXPECT_EQ(r.aggregate.count, whole.aggregate.count);
  EXPECT_EQ(r.aggregate.checksum, whole.aggregate.checksum);
}

#endif

}  // namespace
}  // namespace joinery::test
