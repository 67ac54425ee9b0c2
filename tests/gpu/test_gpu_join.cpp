// GPU joins beyond the conformance suite: inputs large enough to exercise the radix join's
// partitions, build partitions larger than a shared-memory chunk, hot keys and Zipf skew at
// scale, host-resident inputs, both CSS-tree node searches and both first partitionings of the
// radix join (join_tuning), given device bandwidths, the memory-budget refusal, and inputs past
// 2^31 rows. The CPU backend (itself checked against the oracle) is the reference
// where the oracle would be too slow.
#include "support/oracle.hpp"
#include "support/refusal.hpp"

#include <joinery/gen.hpp>
#include <joinery/join.hpp>
#include <joinery/primitives/checksum.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <numeric>
#include <vector>

namespace joinery::test {
namespace {

#if defined(JOINERY_HAS_CUDA)

class GpuJoin : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
};

std::vector<size_type> payload_columns(table const& t) {
  std::vector<size_type> v;
  for (size_type c = 1; c < t.num_columns(); ++c) { v.push_back(c); }
  return v;
}

/// Every GPU algorithm (except the quadratic one when `quadratic_too` is false), every kind and
/// output form, against the CPU backend's radix join.
void expect_gpu_matches_cpu(table const& build, table const& probe, bool quadratic_too) {
  auto const db = place(build.view(), memory_space::device);
  auto const dp = place(probe.view(), memory_space::device);
  for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                    join_kind::left_outer}) {
    // The reference once per kind (sorted rows), every algorithm against it.
    join_options o;
    o.kind = kind;
    o.build_payloads = payload_columns(build);
    o.probe_payloads = payload_columns(probe);
    o.backend = backend::cpu;
    o.algorithm = join_algorithm::radix_hash;
    o.output = output_form::index;
    auto const expected = join(build.view(), 0, probe.view(), 0, o);
    auto const expected_index = index_rows(expected, kind);
    o.output = output_form::table;
    auto const expected_table = join(build.view(), 0, probe.view(), 0, o);
    auto const expected_table_rows = table_rows(expected_table.columns.view());
    for (auto algo : join_algorithms_on(backend::gpu)) {
      if (algo == join_algorithm::nested_loop && !quadratic_too) { continue; }
      SCOPED_TRACE(std::string(to_string(algo)) + " " + std::string(to_string(kind)));
      o.backend = backend::gpu;
      o.algorithm = algo;
      o.output = output_form::index;
      auto const ri = join(db.view(), 0, dp.view(), 0, o);
      EXPECT_EQ(ri.stats.backend, backend::gpu);
      EXPECT_EQ(ri.aggregate.count, expected.aggregate.count);
      EXPECT_EQ(ri.aggregate.checksum, 0u);  // the index form reports the count only
      EXPECT_EQ(diff_rows(expected_index, index_rows(ri, kind)), "");

      // int32 row ids: written so by radix_hash, narrowed from int64 by the others.
      o.index_type = type_id::int32;
      auto const ri32 = join(db.view(), 0, dp.view(), 0, o);
      o.index_type = type_id::int64;
      EXPECT_EQ(ri32.probe_rows.type(), type_id::int32);
      if (kind == join_kind::inner || kind == join_kind::left_outer) {
        EXPECT_EQ(ri32.build_rows.type(), type_id::int32);
      }
      EXPECT_EQ(ri32.aggregate.count, expected.aggregate.count);
      EXPECT_EQ(diff_rows(expected_index, index_rows(ri32, kind)), "");

      o.output = output_form::table;
      auto const rt = join(db.view(), 0, dp.view(), 0, o);
      EXPECT_EQ(diff_rows(expected_table_rows, table_rows(rt.columns.view())), "");
      EXPECT_EQ(rt.aggregate.checksum, expected_table.aggregate.checksum);

      o.output = output_form::aggregate;
      auto const ra = join(db.view(), 0, dp.view(), 0, o);
      EXPECT_EQ(ra.aggregate.count, expected_table.aggregate.count);
      EXPECT_EQ(ra.aggregate.checksum, expected_table.aggregate.checksum);
    }
  }
}

TEST_F(GpuJoin, BuildPartitionLargerThanASharedMemoryChunk) {
  // 12000 build rows: a third key 7, a third key 39 (the same low radix bits, so one partition of
  // 8000 rows: two shared-memory chunks), the rest unique. Probe rows hit 7, 39, the unique keys
  // and nothing; few hit 7 and 39, so the m:n output (4000 rows a hit) stays about 10^5 rows.
  std::vector<std::int32_t> bk(12000);
  std::vector<std::int64_t> bp(12000);
  for (std::size_t i = 0; i < bk.size(); ++i) {
    bk[i] = i % 3 == 0 ? 7 : (i % 3 == 1 ? 39 : static_cast<std::int32_t>(1000 + i));
    bp[i] = static_cast<std::int64_t>(i * 2654435761ULL % 100003) - 50000;
  }
  std::vector<std::int32_t> pk(1500);
  std::vector<std::int16_t> pp(1500);
  for (std::size_t i = 0; i < pk.size(); ++i) {
    switch (i % 4) {
      case 0: pk[i] = i % 100 == 0 ? 7 : static_cast<std::int32_t>(1000 + 3 * i); break;
      case 1: pk[i] = i % 100 == 1 ? 39 : -3; break;
      case 2: pk[i] = static_cast<std::int32_t>(1000 + 5 * i); break;
      default: pk[i] = -3; break;
    }
    pp[i] = static_cast<std::int16_t>(i * 31 - 9000);
  }
  std::vector<column> b;
  b.push_back(column::from_host(bk));
  b.push_back(column::from_host(bp));
  std::vector<column> p;
  p.push_back(column::from_host(pk));
  p.push_back(column::from_host(pp));
  expect_gpu_matches_cpu(table(std::move(b)), table(std::move(p)), true);
}

gen::relation_spec spec(size_type rows, gen::key_kind kind, type_id key, size_type domain,
                        std::uint64_t seed) {
  gen::relation_spec s;
  s.rows = rows;
  s.kind = kind;
  s.key_type = key;
  s.domain = domain;
  s.payload_types = {type_id::int32};
  s.seed = seed;
  return s;
}

TEST_F(GpuJoin, ManyPartitionsUniformZipfAndHotKey) {
  // 2^17 build rows: 64 partitions of the radix join, each over one shared-memory chunk.
  auto const build = gen::generate(spec(1 << 17, gen::key_kind::primary, type_id::int32, 0, 1));
  for (double z : {0.0, 1.5}) {
    SCOPED_TRACE("zipf " + std::to_string(z));
    auto ps = spec(1 << 19, gen::key_kind::foreign, type_id::int32, 1 << 17, 2);
    ps.zipf = z;
    expect_gpu_matches_cpu(build, gen::generate(ps), false);
  }
  SCOPED_TRACE("hot key holding half the probe side");
  auto ps = spec(1 << 19, gen::key_kind::foreign, type_id::int32, 1 << 17, 3);
  ps.hot_key_fraction = 0.5;
  expect_gpu_matches_cpu(build, gen::generate(ps), false);
}

TEST_F(GpuJoin, ManyToManyWithEightByteKeys) {
  auto const build = gen::generate(spec(1 << 16, gen::key_kind::foreign, type_id::int64, 1 << 10, 4));
  auto const probe = gen::generate(spec(1 << 14, gen::key_kind::foreign, type_id::int64, 1 << 10, 5));
  expect_gpu_matches_cpu(build, probe, false);
}

/// The index form without payloads (the radix join's lean direct pass for inner joins, the
/// general kernels for the other kinds): every GPU algorithm, int64 and int32 ids, against the
/// CPU backend's rows, count and checksum.
void expect_keys_only_index_matches_cpu(table const& build, table const& probe,
                                        output_writer writer = output_writer::direct) {
  auto const db = place(build.view(), memory_space::device);
  auto const dp = place(probe.view(), memory_space::device);
  for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                    join_kind::left_outer}) {
    join_options o;
    o.kind = kind;
    o.output = output_form::index;
    o.backend = backend::cpu;
    o.algorithm = join_algorithm::radix_hash;
    auto const expected = join(build.view(), 0, probe.view(), 0, o);
    auto const expected_rows = index_rows(expected, kind);
    for (auto algo : join_algorithms_on(backend::gpu)) {
      if (algo == join_algorithm::nested_loop) { continue; }
      SCOPED_TRACE(std::string(to_string(algo)) + " " + std::string(to_string(kind)));
      o.backend = backend::gpu;
      o.algorithm = algo;
      o.writer = writer;
      for (auto ids : {type_id::int64, type_id::int32}) {
        o.index_type = ids;
        auto const r = join(db.view(), 0, dp.view(), 0, o);
        EXPECT_EQ(r.probe_rows.type(), ids);
        if (writer == output_writer::three_phase) {  // no direct pass ran
          for (auto const& ph : r.stats.phases) {
            EXPECT_EQ(ph.name.find("direct"), std::string::npos) << ph.name;
          }
        }
        EXPECT_EQ(r.aggregate.count, expected.aggregate.count);
        EXPECT_EQ(diff_rows(expected_rows, index_rows(r, kind)), "");
      }
    }
  }
}

TEST_F(GpuJoin, KeysOnlyIndexFormOnEveryShape) {
  auto keys_only = [](gen::relation_spec s) {
    s.payload_types = {};
    return gen::generate(s);
  };
  auto const build = keys_only(spec(1 << 17, gen::key_kind::primary, type_id::int32, 0, 11));
  {
    SCOPED_TRACE("uniform foreign keys, every probe row matching");
    expect_keys_only_index_matches_cpu(
      build, keys_only(spec(1 << 19, gen::key_kind::foreign, type_id::int32, 1 << 17, 12)));
  }
  {
    SCOPED_TRACE("zipf 1.5");
    auto ps = spec(1 << 19, gen::key_kind::foreign, type_id::int32, 1 << 17, 13);
    ps.zipf = 1.5;
    expect_keys_only_index_matches_cpu(build, keys_only(ps));
  }
  {
    SCOPED_TRACE("a hot build key: one partition of several chunks next to one-chunk ones");
    auto bs = spec(1 << 17, gen::key_kind::foreign, type_id::int32, 1 << 17, 14);
    bs.hot_key_fraction = 0.05;  // 6,554 rows: two chunks of 4,096
    auto ps = spec(1 << 16, gen::key_kind::foreign, type_id::int32, 1 << 19, 15);
    expect_keys_only_index_matches_cpu(keys_only(bs), keys_only(ps));
  }
  {
    // Build keys drawn from a domain of 3/4 of their count (a few matches per key) and probe
    // keys from 4x that domain: under one output row per probe row, so the direct pass runs
    // with probe rows of several matches.
    SCOPED_TRACE("a few matches per probe row, fewer rows than probe rows");
    auto bs = spec(3 << 16, gen::key_kind::foreign, type_id::int64, 1 << 16, 16);
    auto ps = spec(1 << 19, gen::key_kind::foreign, type_id::int64, 1 << 18, 17);
    expect_keys_only_index_matches_cpu(keys_only(bs), keys_only(ps));
  }
}

// 2^20 build rows: 9 radix bits, so the radix join partitions with swwc (8 bits) and then CUB
// (the ninth); the index form without payloads, both id widths, against the CPU backend.
TEST_F(GpuJoin, RadixJoinPartitionedBySwwcThenCub) {
  for (auto key : {type_id::int32, type_id::uint64}) {
    SCOPED_TRACE(std::string(to_string(key)));
    auto bs = spec(1 << 20, gen::key_kind::primary, key, 0, 22);
    auto ps = spec(1 << 21, gen::key_kind::foreign, key, 1 << 20, 23);
    bs.payload_types = {};
    ps.payload_types = {};
    auto const build = gen::generate(bs);
    auto const probe = gen::generate(ps);
    auto const db = place(build.view(), memory_space::device);
    auto const dp = place(probe.view(), memory_space::device);
    join_options o;
    o.algorithm = join_algorithm::radix_hash;
    o.backend = backend::cpu;
    auto const expected = join(build.view(), 0, probe.view(), 0, o);
    o.backend = backend::gpu;
    // automatic: swwc then CUB (the order within a partition is free); cub: CUB alone.
    for (auto first : {radix_join_partitioning::automatic, radix_join_partitioning::cub}) {
      o.tuning.radix_partition = first;
      for (auto ids : {type_id::int64, type_id::int32}) {
        SCOPED_TRACE(std::string(to_string(first)) + " " + std::string(to_string(ids)));
        o.index_type = ids;
        auto const r = join(db.view(), 0, dp.view(), 0, o);
        EXPECT_EQ(r.aggregate.count, expected.aggregate.count);
        EXPECT_EQ(r.aggregate.checksum, expected.aggregate.checksum);
        EXPECT_EQ(diff_rows(index_rows(expected, join_kind::inner), index_rows(r, join_kind::inner)), "");
      }
    }
  }
}

// Small enough for racecheck (3 radix bits, too few work items for the direct pass's sample):
// probe rows of 0..several matches, both key widths.
TEST_F(GpuJoin, KeysOnlyIndexFormWithSeveralMatchesPerProbeRow) {
  for (auto key : {type_id::int32, type_id::uint64}) {
    SCOPED_TRACE(std::string(to_string(key)));
    auto bs = spec(3 << 12, gen::key_kind::foreign, key, 1 << 12, 18);
    auto ps = spec(1 << 15, gen::key_kind::foreign, key, 1 << 14, 19);
    bs.payload_types = {};
    ps.payload_types = {};
    expect_keys_only_index_matches_cpu(gen::generate(bs), gen::generate(ps));
    expect_keys_only_index_matches_cpu(gen::generate(bs), gen::generate(ps),
                                       output_writer::three_phase);
  }
}

// The no-partitioning join's table at other load factors (keys with duplicates: the table, not
// the perfect-hash array), every kind, against the CPU backend at the same factor.
TEST_F(GpuJoin, NoPartitionHashAtOtherLoadFactors) {
  auto bs = spec(3 << 14, gen::key_kind::foreign, type_id::int64, 1 << 14, 20);
  auto ps = spec(1 << 17, gen::key_kind::foreign, type_id::int64, 1 << 16, 21);
  auto const build = gen::generate(bs);
  auto const probe = gen::generate(ps);
  auto const db = place(build.view(), memory_space::device);
  auto const dp = place(probe.view(), memory_space::device);
  for (double lf : {0.1, 0.9}) {
    for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                      join_kind::left_outer}) {
      SCOPED_TRACE(std::to_string(lf) + " " + std::string(to_string(kind)));
      join_options o;
      o.kind = kind;
      o.algorithm = join_algorithm::no_partition_hash;
      o.hash_load_factor = lf;
      o.backend = backend::cpu;
      auto const expected = join(build.view(), 0, probe.view(), 0, o);
      o.backend = backend::gpu;
      auto const r = join(db.view(), 0, dp.view(), 0, o);
      EXPECT_EQ(r.aggregate.count, expected.aggregate.count);
      EXPECT_EQ(r.aggregate.checksum, expected.aggregate.checksum);
      EXPECT_EQ(diff_rows(index_rows(expected, kind), index_rows(r, kind)), "");
    }
  }
}

TEST_F(GpuJoin, HostResidentInputsOnTheGpuBackend) {
  auto const build = gen::generate(spec(5000, gen::key_kind::primary, type_id::uint64, 0, 6));
  auto const probe = gen::generate(spec(9000, gen::key_kind::foreign, type_id::uint64, 5000, 7));
  join_options o;
  o.backend = backend::cpu;
  auto const expected = join(build.view(), 0, probe.view(), 0, o);
  o.backend = backend::gpu;
  for (auto algo : join_algorithms_on(backend::gpu)) {
    o.algorithm = algo;
    auto const r = join(build.view(), 0, probe.view(), 0, o);
    EXPECT_EQ(diff_rows(index_rows(expected, join_kind::inner), index_rows(r, join_kind::inner)),
              "")
      << to_string(algo);
  }
}

TEST_F(GpuJoin, CssTreeSequentialAndBinaryNodeSearch) {
  auto const build = gen::generate(spec(70000, gen::key_kind::foreign, type_id::int32, 50000, 8));
  auto const probe = gen::generate(spec(3000, gen::key_kind::foreign, type_id::int32, 60000, 9));
  auto const db = place(build.view(), memory_space::device);
  auto const dp = place(probe.view(), memory_space::device);
  for (auto search : {css_node_search::binary, css_node_search::sequential}) {
    for (std::uint64_t d : {0ULL, 3ULL}) {
      SCOPED_TRACE(std::string(to_string(search)) + " d=" + std::to_string(d));
      join_options o;
      o.algorithm = join_algorithm::indexed_nested_loop;
      o.backend = backend::gpu;
      o.tuning.css_search = search;
      o.pred = predicate::band(d);
      auto const r = join(db.view(), 0, dp.view(), 0, o);
      EXPECT_EQ(diff_rows(oracle_join_index(build.view(), 0, probe.view(), 0, join_kind::inner,
                                            o.pred),
                          index_rows(r, join_kind::inner)),
                "");
    }
  }
}

TEST_F(GpuJoin, ResultLargerThanTheBudgetIsRefused) {
  // 400 x 300 rows of one key: 120000 matches, 1.9 MB of row ids, against a 1 MB budget.
  std::vector<std::int32_t> bk(400, 5);
  std::vector<std::int32_t> pk(300, 5);
  std::vector<column> b;
  b.push_back(column::from_host(bk, device_resource()));
  std::vector<column> p;
  p.push_back(column::from_host(pk, device_resource()));
  table const build(std::move(b));
  table const probe(std::move(p));
  for (auto algo : join_algorithms_on(backend::gpu)) {
    join_options o;
    o.algorithm = algo;
    o.backend = backend::gpu;
    o.device_memory_budget = 1 << 20;
    try {
      (void)join(build.view(), 0, probe.view(), 0, o);
      ADD_FAILURE() << to_string(algo) << " accepted a result over its budget";
    } catch (out_of_memory const& e) {
      EXPECT_NE(std::string(e.what()).find("120000 rows and needs 1920000 bytes"),
                std::string::npos)
        << e.what();
    }
    o.output = output_form::aggregate;  // writes nothing: fits any budget
    EXPECT_EQ(join(build.view(), 0, probe.view(), 0, o).aggregate.count, 120000u) << to_string(algo);
  }
  // An int32 index written directly (radix_hash) needs half: 960000 bytes fit 1 MB, not 900 kB.
  join_options o;
  o.algorithm = join_algorithm::radix_hash;
  o.backend = backend::gpu;
  o.index_type = type_id::int32;
  o.device_memory_budget = 1 << 20;
  auto const r = join(build.view(), 0, probe.view(), 0, o);
  ASSERT_EQ(r.num_rows(), 120000);
  rows expected;
  for (unsigned long long b = 0; b < 400; ++b) {
    for (unsigned long long p = 0; p < 300; ++p) { expected.push_back({b, p}); }
  }
  EXPECT_EQ(diff_rows(expected, index_rows(r, join_kind::inner)), "");
  o.device_memory_budget = 900000;
  try {
    (void)join(build.view(), 0, probe.view(), 0, o);
    ADD_FAILURE() << "radix_hash accepted an int32 index over its budget";
  } catch (out_of_memory const& e) {
    EXPECT_NE(std::string(e.what()).find("120000 rows and needs 960000 bytes"), std::string::npos)
      << e.what();
  }
}

// The multi-GPU join's ranks each hold part of the result within the budget, but the whole
// result meets on one GPU: 100000 unique keys on two ranks of GPU 0, about 800000 bytes of row
// ids a rank, 1600000 gathered, against a budget of 1200000 bytes.
TEST_F(GpuJoin, MultiGpuResultGatheredOverTheBudgetIsRefused) {
  std::vector<std::int32_t> keys(100000);
  std::iota(keys.begin(), keys.end(), 1);
  std::vector<column> b;
  b.push_back(column::from_host(keys, device_resource()));
  std::vector<column> p;
  p.push_back(column::from_host(keys, device_resource()));
  table const build(std::move(b));
  table const probe(std::move(p));
  join_options o;
  o.algorithm = join_algorithm::multi_gpu_hash;
  o.backend = backend::gpu;
  o.devices = {0, 0};
  o.output = output_form::index;
  auto const whole = join(build.view(), 0, probe.view(), 0, o);
  EXPECT_EQ(whole.num_rows(), 100000);
  o.device_memory_budget = 1200000;
  try {
    (void)join(build.view(), 0, probe.view(), 0, o);
    ADD_FAILURE() << "a gathered result over the budget was accepted";
  } catch (out_of_memory const& e) {
    EXPECT_NE(std::string(e.what()).find("100000 rows needs 1600000 bytes of device memory on one "
                                         "GPU"),
              std::string::npos)
      << e.what();
  }
  // In host memory the same result is no concern of the device budget.
  auto const on_host = join(build.view(), 0, probe.view(), 0, o, default_stream(), host_resource());
  EXPECT_EQ(on_host.num_rows(), 100000);
  EXPECT_EQ(on_host.probe_rows.space(), memory_space::host);
}

TEST_F(GpuJoin, TableLargerThanTheBudgetIsRefusedWithEachStrategy) {
  // 400 x 300 rows of one key: 120000 output rows of 16 bytes of row ids plus a 4-byte key, an
  // 8-byte build payload and a 2-byte probe payload: 3600000 bytes. The ids alone (1920000 bytes)
  // fit the 3 MiB budget, the table does not. (A fused radix GFTR join needs no ids.)
  std::vector<std::int32_t> bk(400, 5);
  std::vector<std::int64_t> bv(400, -7);
  std::vector<std::int32_t> pk(300, 5);
  std::vector<std::uint16_t> pv(300, 9);
  std::vector<column> b;
  b.push_back(column::from_host(bk, device_resource()));
  b.push_back(column::from_host(bv, device_resource()));
  std::vector<column> p;
  p.push_back(column::from_host(pk, device_resource()));
  p.push_back(column::from_host(pv, device_resource()));
  table const build(std::move(b));
  table const probe(std::move(p));
  for (auto algo : join_algorithms_on(backend::gpu)) {
    for (auto strategy :
         {materialization::gfur, materialization::gftr, materialization::automatic}) {
      SCOPED_TRACE(std::string(to_string(algo)) + " " + std::string(to_string(strategy)));
      join_options o;
      o.algorithm = algo;
      o.backend = backend::gpu;
      o.output = output_form::table;
      o.strategy = strategy;
      o.build_payloads = {1};
      o.probe_payloads = {1};
      o.device_memory_budget = 3 << 20;
      // The radix join's inner GFTR writes the table itself (fused), no row ids: 1680000 bytes,
      // within 3 MiB; refused under 1 MiB, counting the table columns only. multi_gpu_hash joins
      // each GPU's rows with the radix join (one key: all on one GPU).
      bool const may_fuse = (algo == join_algorithm::radix_hash ||
                             algo == join_algorithm::multi_gpu_hash) &&
                            strategy != materialization::gfur;
      try {
        auto const r = join(build.view(), 0, probe.view(), 0, o);
        if (may_fuse && r.stats.strategy == materialization::gftr) {
          EXPECT_EQ(r.num_rows(), 120000);
          o.device_memory_budget = 1 << 20;
          try {
            (void)join(build.view(), 0, probe.view(), 0, o);
            ADD_FAILURE() << "the fused table over its budget was accepted";
          } catch (out_of_memory const& e) {
            EXPECT_NE(std::string(e.what()).find("120000 rows and needs 1680000 bytes of device "
                                                 "memory (table columns)"),
                      std::string::npos)
              << e.what();
          }
        } else {
          ADD_FAILURE() << to_string(algo) << " accepted a table over its budget";
        }
      } catch (out_of_memory const& e) {
        EXPECT_FALSE(may_fuse && strategy == materialization::gftr) << e.what();
        EXPECT_NE(std::string(e.what()).find("120000 rows and needs 3600000 bytes of device memory "
                                             "(row ids and table columns)"),
                  std::string::npos)
          << e.what();
      }
      o.device_memory_budget = 4 << 20;  // fits
      auto const r = join(build.view(), 0, probe.view(), 0, o);
      EXPECT_EQ(r.num_rows(), 120000);
      EXPECT_EQ(r.aggregate.checksum, 120000ull * 5 + 120000ull * static_cast<std::uint64_t>(-7) +
                                          120000ull * 9);
    }
  }
}

/// GFUR and GFTR (and the model's choice) of the sorting joins against the CPU backend's table,
/// at sizes where the radix join partitions on several bits, with payloads of every width.
void expect_strategies_match_cpu(table const& build, table const& probe) {
  auto const db = place(build.view(), memory_space::device);
  auto const dp = place(probe.view(), memory_space::device);
  for (auto kind : {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                    join_kind::left_outer}) {
    join_options o;
    o.kind = kind;
    o.output = output_form::table;
    o.build_payloads = payload_columns(build);
    o.probe_payloads = payload_columns(probe);
    o.backend = backend::cpu;
    o.algorithm = join_algorithm::radix_hash;
    auto const expected = join(build.view(), 0, probe.view(), 0, o);
    auto const expected_rows = table_rows(expected.columns.view());
    o.backend = backend::gpu;
    for (auto algo : {join_algorithm::radix_hash, join_algorithm::sort_merge}) {
      for (auto strategy :
           {materialization::gfur, materialization::gftr, materialization::automatic}) {
        SCOPED_TRACE(std::string(to_string(algo)) + " " + std::string(to_string(kind)) + " " +
                     std::string(to_string(strategy)));
        o.algorithm = algo;
        o.strategy = strategy;
        auto const r = join(db.view(), 0, dp.view(), 0, o);
        EXPECT_EQ(r.aggregate.count, expected.aggregate.count);
        EXPECT_EQ(r.aggregate.checksum, expected.aggregate.checksum);
        EXPECT_EQ(diff_rows(expected_rows, table_rows(r.columns.view())), "");
        if (strategy != materialization::automatic) { EXPECT_EQ(r.stats.strategy, strategy); }
        if (r.aggregate.count > 0) {  // the model ran once the output size was known
          EXPECT_GT(r.stats.predicted_gfur_seconds, 0.0);
          EXPECT_GT(r.stats.predicted_gftr_seconds, 0.0);
        }
      }
    }
  }
}

std::vector<type_id> all_payload_widths() {
  return {type_id::int8, type_id::uint16, type_id::int32, type_id::uint64,
          type_id::uint8, type_id::int16, type_id::uint32, type_id::int64};
}

TEST_F(GpuJoin, WideJoinsGfurAndGftrMatchCpu) {
  gen::relation_spec b;
  b.rows = 1 << 18;  // radix join: 7 partition bits
  b.kind = gen::key_kind::primary;
  b.payload_types = all_payload_widths();
  b.seed = 101;
  gen::relation_spec p;
  p.rows = 1 << 19;
  p.kind = gen::key_kind::foreign;
  p.domain = b.rows;
  p.payload_types = all_payload_widths();
  p.seed = 102;
  expect_strategies_match_cpu(gen::generate(b), gen::generate(p));

  b.key_type = p.key_type = type_id::int64;  // 8-byte keys, Zipf, half the build keys matching
  b.match_ratio = 0.5;
  b.payload_types = p.payload_types = {type_id::int16, type_id::int64};
  p.zipf = 1.0;
  expect_strategies_match_cpu(gen::generate(b), gen::generate(p));
}

TEST_F(GpuJoin, GivenDeviceBandwidthsFeedTheMaterializationModel) {
  // join_options::tuning.bandwidths replace the measured ones: with random reads 3000 times
  // slower than clustered ones GFUR's predicted cost grows by about that much and GFTR is chosen;
  // the rows stay those of the CPU backend. Bandwidths the model cannot use are refused.
  gen::relation_spec b;
  b.rows = 1 << 16;
  b.kind = gen::key_kind::primary;
  b.payload_types = {type_id::int32, type_id::int32};
  b.seed = 131;
  gen::relation_spec p = b;
  p.rows = 1 << 17;
  p.kind = gen::key_kind::foreign;
  p.domain = b.rows;
  p.seed = 132;
  auto const build = gen::generate(b);
  auto const probe = gen::generate(p);
  auto const db = place(build.view(), memory_space::device);
  auto const dp = place(probe.view(), memory_space::device);
  device_bandwidths fast;
  fast.sequential = fast.clustered_gather = fast.unclustered_gather = 3e12;
  auto slow = fast;
  slow.unclustered_gather = 1e9;
  for (auto [algo, kind] : {std::pair{join_algorithm::sort_merge, join_kind::inner},
                            std::pair{join_algorithm::radix_hash, join_kind::left_outer}}) {
    SCOPED_TRACE(std::string(to_string(algo)) + " " + std::string(to_string(kind)));
    join_options o;
    o.kind = kind;
    o.output = output_form::table;
    o.build_payloads = payload_columns(build);
    o.probe_payloads = payload_columns(probe);
    o.algorithm = algo;
    o.backend = backend::cpu;
    auto const expected = join(build.view(), 0, probe.view(), 0, o);
    o.backend = backend::gpu;
    o.tuning.bandwidths = fast;
    auto const with_fast = join(db.view(), 0, dp.view(), 0, o);
    o.tuning.bandwidths = slow;
    auto const with_slow = join(db.view(), 0, dp.view(), 0, o);
    for (auto const* r : {&with_fast, &with_slow}) {
      EXPECT_EQ(r->aggregate.checksum, expected.aggregate.checksum);
      EXPECT_EQ(diff_rows(table_rows(expected.columns.view()), table_rows(r->columns.view())), "");
    }
    EXPECT_GT(with_slow.stats.predicted_gfur_seconds, 100 * with_fast.stats.predicted_gfur_seconds);
    EXPECT_GT(with_slow.stats.predicted_gfur_seconds, with_slow.stats.predicted_gftr_seconds);
    EXPECT_EQ(with_slow.stats.strategy, materialization::gftr);

    o.tuning.bandwidths = device_bandwidths{};
    expect_refusal([&] { (void)join(db.view(), 0, dp.view(), 0, o); },
                   "join_options::tuning.bandwidths: sequential is 0");
    o.tuning.bandwidths = fast;
    o.tuning.bandwidths->sort_pass_4_8 = -1;
    expect_refusal([&] { (void)join(db.view(), 0, dp.view(), 0, o); },
                   "sort_pass_4_8 is -1");
  }
}

TEST_F(GpuJoin, CarriedPayloadBundlesOfEveryShapeMatchCpu) {
  // The radix join's inner GFTR carries each side's first bundle through its partitioning: one
  // 4- or 8-byte column as it is, narrower or several packed, the rest transformed afterwards;
  // a side without payloads carries row ids. Also a build side small enough for 0 radix bits.
  std::vector<std::pair<std::vector<type_id>, std::vector<type_id>>> const shapes = {
    {{type_id::int32}, {type_id::uint32}},
    {{type_id::int64}, {type_id::int32, type_id::int32}},
    {{type_id::int8, type_id::int16}, {type_id::uint64, type_id::int32}},
    {{type_id::int32, type_id::uint32, type_id::int16}, {}},
    {{}, {type_id::uint8}},
    {{type_id::uint16, type_id::uint16, type_id::int32, type_id::int64, type_id::int8},
     {type_id::int16, type_id::uint8, type_id::int64}},
  };
  std::uint64_t seed = 300;
  for (size_type build_rows : {size_type{1} << 17, size_type{1000}}) {
    for (auto const& [bt, pt] : shapes) {
      SCOPED_TRACE(std::to_string(build_rows) + " rows, " + std::to_string(bt.size()) + " + " +
                   std::to_string(pt.size()) + " payloads");
      gen::relation_spec b;
      b.rows = build_rows;
      b.kind = gen::key_kind::primary;
      b.payload_types = bt;
      b.match_ratio = 0.75;
      b.seed = ++seed;
      gen::relation_spec p;
      p.rows = 2 * build_rows + 17;
      p.kind = gen::key_kind::foreign;
      p.domain = build_rows;
      p.payload_types = pt;
      p.seed = ++seed;
      expect_strategies_match_cpu(gen::generate(b), gen::generate(p));
    }
  }
}

TEST_F(GpuJoin, SixteenPayloadsPerSideGfurAndGftrMatchCpu) {
  auto widths = all_payload_widths();
  auto const more = all_payload_widths();
  widths.insert(widths.end(), more.rbegin(), more.rend());  // 16 columns, every width 4 times
  gen::relation_spec b;
  b.rows = 1 << 15;  // radix join: 4 partition bits
  b.kind = gen::key_kind::primary;
  b.key_type = type_id::uint32;
  b.payload_types = widths;
  b.seed = 105;
  gen::relation_spec p = b;
  p.rows = 1 << 16;
  p.kind = gen::key_kind::foreign;
  p.domain = b.rows;
  p.seed = 106;
  expect_strategies_match_cpu(gen::generate(b), gen::generate(p));
}

TEST_F(GpuJoin, WideManyToManyGfurAndGftrMatchCpu) {
  gen::relation_spec s;
  s.rows = 1 << 16;
  s.kind = gen::key_kind::foreign;
  s.domain = 1 << 13;  // 8 matches per probe row: output 8x the probe side
  s.payload_types = {type_id::uint8, type_id::int32};
  s.seed = 103;
  auto const build = gen::generate(s);
  s.seed = 104;
  expect_strategies_match_cpu(build, gen::generate(s));
}

TEST_F(GpuJoin, RadixAndSortMergePastTwoToThe31ProbeRows) {
  // Build: keys 0 .. nb-1 once each (row i holds key i). Probe row j holds (j mod (nb + 2)) - 1,
  // so keys -1 and nb miss. Counts and row-id sums have closed forms checked on the host.
  size_type const nb = (size_type{1} << 20) + 3;
  size_type const np = (size_type{1} << 31) + (size_type{1} << 16) + 5;
  std::size_t const device_need = std::size_t{80} << 30;
  std::size_t const host_need = std::size_t{12} << 30;
  auto const host_bytes = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  if (get_device_info(0).free_memory < device_need || host_bytes < host_need) {
    GTEST_SKIP() << "needs 80 GiB free device memory and 12 GiB host memory";
  }
  std::vector<std::int32_t> bk(static_cast<std::size_t>(nb));
  for (size_type i = 0; i < nb; ++i) { bk[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i); }
  column probe_keys(type_id::int32, np, device_resource());
  {
    std::vector<std::int32_t> pk(static_cast<std::size_t>(np));
#pragma omp parallel for schedule(static)
    for (size_type j = 0; j < np; ++j) {
      pk[static_cast<std::size_t>(j)] = static_cast<std::int32_t>(j % (nb + 2)) - 1;
    }
    copy_bytes(probe_keys.data(), memory_space::device, pk.data(), memory_space::host,
               pk.size() * sizeof(std::int32_t), default_stream());
  }
  std::uint64_t matches = 0;
  std::uint64_t build_row_sum = 0;
  std::uint64_t probe_row_sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : matches, build_row_sum, probe_row_sum)
  for (size_type j = 0; j < np; ++j) {
    auto const k = (j % (nb + 2)) - 1;
    if (k >= 0 && k < nb) {
      ++matches;
      build_row_sum += static_cast<std::uint64_t>(k);
      probe_row_sum += static_cast<std::uint64_t>(j);
    }
  }
  std::vector<column> bcols;
  bcols.push_back(column::from_host(bk, device_resource()));
  table const build(std::move(bcols));
  std::vector<column> pcols;
  pcols.push_back(std::move(probe_keys));
  table const probe(std::move(pcols));
  for (auto algo : {join_algorithm::radix_hash, join_algorithm::sort_merge}) {
    SCOPED_TRACE(std::string(to_string(algo)));
    join_options o;
    o.algorithm = algo;
    o.backend = backend::gpu;
    {
      auto const r = join(build.view(), 0, probe.view(), 0, o);
      ASSERT_EQ(r.aggregate.count, matches);
      EXPECT_EQ(checksum(r.build_rows.view()), build_row_sum);
      EXPECT_EQ(checksum(r.probe_rows.view()), probe_row_sum);
    }
    o.kind = join_kind::left_anti;
    auto const anti = join(build.view(), 0, probe.view(), 0, o);
    EXPECT_EQ(anti.aggregate.count, static_cast<std::uint64_t>(np) - matches);
  }
}

#else

TEST(GpuJoinWithoutCuda, GpuBackendIsRefused) {
  std::vector<std::int32_t> k{1, 2, 3};
  std::vector<column> b;
  b.push_back(column::from_host(k));
  table const t(std::move(b));
  join_options o;
  o.backend = backend::gpu;
  EXPECT_TRUE(join_algorithms_on(backend::gpu).empty());
  EXPECT_THROW((void)join(t.view(), 0, t.view(), 0, o), logic_error);
}

#endif

}  // namespace
}  // namespace joinery::test
