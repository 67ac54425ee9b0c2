// Host-resident data on the GPU: staged copies at every size around the staging chunk, and the
// streamed join beyond the conformance suite: results larger than the device memory budget
// delivered batch by batch, skewed probe sides under a small budget, a build side larger than
// the budget refused, a sink that fails mid-stream, and automatic's choice of streamed. The CPU
// backend (itself checked against the oracle) is the reference where the oracle would be slow.
#include "support/oracle.hpp"

#include <joinery/gen.hpp>
#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

#if defined(JOINERY_HAS_CUDA)

class GpuStreamed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
};

TEST_F(GpuStreamed, HostDeviceCopiesRoundTripAtEverySize) {
  constexpr std::size_t mib = std::size_t{1} << 20;
  for (std::size_t bytes : {std::size_t{1}, 4 * mib - 1, 4 * mib, 16 * mib, 16 * mib + 1,
                            3 * 16 * mib + 12345, 5 * 16 * mib + 7}) {
    for (auto space : {memory_space::host, memory_space::pinned_host}) {
      SCOPED_TRACE(std::to_string(bytes) + " bytes from " + std::string(to_string(space)));
      buffer src(bytes, resource_for(space), default_stream());
      auto* s = static_cast<unsigned char*>(src.data());
      for (std::size_t i = 0; i < bytes; ++i) { s[i] = static_cast<unsigned char>(i * 131 + (i >> 12) + 1); }
      buffer dev(bytes, device_resource(), default_stream());
      copy_bytes(dev.data(), memory_space::device, src.data(), space, bytes, default_stream());
      buffer back(bytes, resource_for(space), default_stream());
      std::memset(back.data(), 0, bytes);
      copy_bytes(back.data(), space, dev.data(), memory_space::device, bytes, default_stream());
      EXPECT_EQ(std::memcmp(back.data(), src.data(), bytes), 0);
    }
  }
}

gen::relation_spec spec_of(size_type rows, gen::key_kind kind, size_type domain,
                           std::uint64_t seed) {
  gen::relation_spec s;
  s.rows = rows;
  s.kind = kind;
  s.domain = domain;
  s.payload_types = {type_id::int32};
  s.seed = seed;
  return s;
}

/// The CPU backend's result of the same join, sorted rows.
rows cpu_index(table const& build, table const& probe, join_options o) {
  o.backend = backend::cpu;
  o.algorithm = join_algorithm::radix_hash;
  o.output = output_form::index;
  return index_rows(join(build.view(), 0, probe.view(), 0, o), o.kind);
}

// 2^22 probe rows each matching one build row: 64 MiB of int64 row ids, delivered in batches
// under a 24 MiB budget, and as one host result of the same rows.
TEST_F(GpuStreamed, ResultLargerThanTheBudgetArrivesInBatches) {
  auto const build = gen::generate(spec_of(size_type{1} << 16, gen::key_kind::primary, 0, 7));
  auto const probe =
    gen::generate(spec_of(size_type{1} << 22, gen::key_kind::foreign, size_type{1} << 16, 8));
  join_options o;
  o.algorithm = join_algorithm::streamed;
  o.backend = backend::gpu;
  o.output = output_form::index;
  o.device_memory_budget = std::size_t{24} << 20;
  auto const expected = cpu_index(build, probe, o);
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
  std::sort(batched.begin(), batched.end());  // each batch's rows come sorted, not the union
  EXPECT_EQ(diff_rows(expected, batched), "");

  auto const whole = join(build.view(), 0, probe.view(), 0, o);
  EXPECT_EQ(whole.stats.algorithm, join_algorithm::streamed);
  EXPECT_EQ(diff_rows(expected, index_rows(whole, o.kind)), "");
}

// A hot key holding half of the probe side, and Zipf 1.5, under a small budget: every kind.
TEST_F(GpuStreamed, SkewedProbeSidesUnderASmallBudgetMatchTheCpu) {
  auto const build = gen::generate(spec_of(size_type{1} << 15, gen::key_kind::primary, 0, 11));
  auto hot_spec = spec_of(size_type{1} << 20, gen::key_kind::foreign, size_type{1} << 16, 12);
  hot_spec.hot_key_fraction = 0.5;
  auto zipf_spec = spec_of(size_type{1} << 20, gen::key_kind::foreign, size_type{1} << 16, 13);
  zipf_spec.zipf = 1.5;
  for (auto const& spec : {hot_spec, zipf_spec}) {
    auto const probe = gen::generate(spec);
    for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                      join_kind::left_outer}) {
      SCOPED_TRACE(std::string(to_string(kind)) + (spec.zipf > 0 ? " zipf" : " hot key"));
      join_options o;
      o.algorithm = join_algorithm::streamed;
      o.backend = backend::gpu;
      o.kind = kind;
      o.device_memory_budget = std::size_t{8} << 20;
      o.build_payloads = {1};
      o.probe_payloads = {1};
      auto const r = join(build.view(), 0, probe.view(), 0, o);
      EXPECT_EQ(diff_rows(cpu_index(build, probe, o), index_rows(r, kind)), "");
      o.output = output_form::aggregate;
      auto const ra = join(build.view(), 0, probe.view(), 0, o);
      o.backend = backend::cpu;
      o.algorithm = join_algorithm::radix_hash;
      auto const ca = join(build.view(), 0, probe.view(), 0, o);
      EXPECT_EQ(ra.aggregate.count, ca.aggregate.count);
      EXPECT_EQ(ra.aggregate.checksum, ca.aggregate.checksum);
    }
  }
}

TEST_F(GpuStreamed, BuildSideLargerThanTheBudgetIsRefusedClearly) {
  auto const build = gen::generate(spec_of(size_type{1} << 20, gen::key_kind::primary, 0, 3));
  auto const probe = gen::generate(spec_of(1000, gen::key_kind::foreign, size_type{1} << 20, 4));
  join_options o;
  o.algorithm = join_algorithm::streamed;
  o.backend = backend::gpu;
  o.device_memory_budget = std::size_t{1} << 20;
  try {
    (void)join(build.view(), 0, probe.view(), 0, o);
    ADD_FAILURE() << "no exception";
  } catch (out_of_memory const& e) {
    EXPECT_NE(std::string(e.what()).find("device memory budget"), std::string::npos) << e.what();
  }
}

// A sink that fails mid-stream: its exception reaches the caller, and the next join (reusing
// the staging buffers and the device pool) is whole.
TEST_F(GpuStreamed, ASinkFailingMidStreamLeavesNothingBehind) {
  auto const build = gen::generate(spec_of(size_type{1} << 12, gen::key_kind::primary, 0, 5));
  auto const probe =
    gen::generate(spec_of(size_type{1} << 18, gen::key_kind::foreign, size_type{1} << 12, 6));
  join_options o;
  o.algorithm = join_algorithm::streamed;
  o.backend = backend::gpu;
  o.output = output_form::table;
  o.build_payloads = {1};
  o.probe_payloads = {1};
  o.tuning.streamed_chunk_rows = 10000;
  int seen = 0;
  EXPECT_THROW(join_batches(build.view(), 0, probe.view(), 0, o,
                            [&](join_result&&) {
                              if (++seen == 3) { throw std::runtime_error("sink full"); }
                            }),
               std::runtime_error);
  EXPECT_EQ(seen, 3);
  auto const r = join(build.view(), 0, probe.view(), 0, o);
  auto ref = o;
  ref.backend = backend::cpu;
  ref.algorithm = join_algorithm::radix_hash;
  auto const c = join(build.view(), 0, probe.view(), 0, ref);
  EXPECT_EQ(diff_rows(table_rows(c.columns.view()), table_rows(r.columns.view())), "");
}

TEST_F(GpuStreamed, AutomaticStreamsHostInputsThatDoNotFitTheBudget) {
  auto const build = gen::generate(spec_of(size_type{1} << 14, gen::key_kind::primary, 0, 9));
  auto const probe =
    gen::generate(spec_of(size_type{1} << 21, gen::key_kind::foreign, size_type{1} << 14, 10));
  join_options o;
  o.output = output_form::aggregate;
  o.backend = backend::gpu;
  o.device_memory_budget = std::size_t{16} << 20;  // the in-GPU join is taken to need 24 MiB
  auto const r = join(build.view(), 0, probe.view(), 0, o);
  EXPECT_EQ(r.stats.algorithm, join_algorithm::streamed);
  o.device_memory_budget = 0;
  auto const whole = join(build.view(), 0, probe.view(), 0, o);
  EXPECT_NE(whole.stats.algorithm, join_algorithm::streamed);
  EXPECT_EQ(r.aggregate.count, whole.aggregate.count);
  EXPECT_EQ(r.aggregate.checksum, whole.aggregate.checksum);
}

#endif

}  // namespace
}  // namespace joinery::test
