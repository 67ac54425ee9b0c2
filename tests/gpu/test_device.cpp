// GPU foundation: device facts, the stream-ordered pool, copies across spaces, the GPU checksum.
// Every test skips with a message when no GPU is present (CI); they run on a lent GPU.
#include "support/oracle.hpp"

#include <joinery/gen.hpp>
#include <joinery/join.hpp>
#include <joinery/primitives/checksum.hpp>

#include <gtest/gtest.h>

namespace joinery::test {
namespace {

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
};

TEST_F(Gpu, DeviceInfoIsSane) {
  auto const info = get_device_info(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GE(info.compute_capability_major, 9) << "the default build targets sm_90";
  EXPECT_GE(info.shared_memory_per_block_optin, info.shared_memory_per_block);
  EXPECT_GT(info.l2_cache_bytes, 0u);
  EXPECT_GT(info.total_memory, info.free_memory);
  EXPECT_GT(info.free_memory, 0u);
  EXPECT_THROW((void)get_device_info(device_count()), logic_error);
}

TEST_F(Gpu, PoolAllocatesOnStreamAndRefusesTooMuch) {
  cuda_stream s;
  auto* mr = device_resource();
  EXPECT_EQ(mr->space(), memory_space::device);
  {
    buffer b(std::size_t{1} << 30, mr, s);
    EXPECT_NE(b.data(), nullptr);
    EXPECT_EQ(b.space(), memory_space::device);
  }
  s.ref().synchronize();
  auto const total = get_device_info(0).total_memory;
  EXPECT_THROW(buffer(total * 4, mr, s), out_of_memory);
}

TEST_F(Gpu, ColumnsRoundTripThroughDeviceAndPinnedMemory) {
  gen::relation_spec spec;
  spec.rows = (1 << 20) + 7;  // not a multiple of any tile
  spec.kind = gen::key_kind::foreign;
  spec.key_type = type_id::int64;
  spec.domain = 1 << 30;
  spec.key_offset = -(1LL << 29);
  spec.payload_types = {type_id::int8, type_id::uint16, type_id::int32, type_id::uint64};
  auto const host = gen::generate(spec);
  cuda_stream s;
  for (auto const& c : host.view()) {
    auto const dev = column::copy_of(c, device_resource(), s);
    EXPECT_EQ(dev.space(), memory_space::device);
    auto const pinned = column::copy_of(dev.view(), pinned_host_resource(), s);
    auto const back = column::copy_of(pinned.view(), host_resource(), s);
    EXPECT_EQ(diff_rows(table_rows(table_view({c})), table_rows(table_view({back.view()}))), "");
    // GPU checksum (CUB) against the host one, over every integer width.
    EXPECT_EQ(checksum(dev.view(), s), checksum(c));
  }
}

TEST_F(Gpu, ChecksumOfEmptyAndTinyColumns) {
  std::vector<std::int32_t> v{-1, -2, 3};
  auto const d = column::copy_of(column_view::of(v), device_resource());
  EXPECT_EQ(checksum(d.view()), static_cast<std::uint64_t>(0));
  std::vector<std::int32_t> none;
  auto const e = column::copy_of(column_view::of(none), device_resource());
  EXPECT_EQ(checksum(e.view()), 0u);
}

TEST_F(Gpu, JoinOfDeviceInputsOnTheCpuBackendReturnsResultsWhereAsked) {
  gen::relation_spec b;
  b.rows = 5000;
  b.payload_types = {type_id::int32};
  gen::relation_spec p = b;
  p.kind = gen::key_kind::foreign;
  p.rows = 20000;
  p.domain = 5000;
  p.seed = 7;
  auto const hb = gen::generate(b);
  auto const hp = gen::generate(p);
  auto const db = place(hb.view(), memory_space::device);
  auto const dp = place(hp.view(), memory_space::device);
  join_options o;
  o.backend = backend::cpu;
  o.output = output_form::table;
  o.build_payloads = {1};
  o.probe_payloads = {1};
  auto const r = join(db.view(), 0, dp.view(), 0, o, default_stream(), device_resource());
  ASSERT_EQ(r.columns.num_columns(), 3);
  EXPECT_EQ(r.columns.column(0).space(), memory_space::device);
  EXPECT_EQ(diff_rows(oracle_join_table(hb.view(), 0, hp.view(), 0, o),
                      table_rows(r.columns.view())),
            "");
}

}  // namespace
}  // namespace joinery::test
