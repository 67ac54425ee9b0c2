// The swwc partitioning's buffer choice (src/primitives/detail/partition_policy.hpp), host-side:
// the buffer sizes behind the H200 measurements in BENCHMARKS.md, the budgets they respect, and
// where buffers fall below a 32-byte sector of keys.
#include "primitives/detail/partition_policy.hpp"

#include <gtest/gtest.h>

#include <cstddef>

namespace joinery::test {
namespace {

using detail::gpu::swwc_buffer_log2;
using detail::gpu::swwc_partition_policy;
using detail::gpu::swwc_smem_bytes;

int buffer_tuples(int bits, std::size_t key, std::size_t payload) {
  return 1 << swwc_buffer_log2(1 << bits, key, payload);
}

TEST(SwwcPolicy, BufferSizesOfTheMeasuredConfigurations) {
  // 4+4 bytes at 8..11 bits and 8+8 bytes at 8..11 bits (BENCHMARKS.md, "primitives"):
  // two blocks an SM (the small budget) only for 4+4 at 8 and 9 bits, whose buffers hold 64 bytes
  // of keys or more there; one block an SM with the largest buffers otherwise.
  EXPECT_EQ(buffer_tuples(8, 4, 4), 32);
  EXPECT_EQ(buffer_tuples(9, 4, 4), 16);
  EXPECT_EQ(buffer_tuples(10, 4, 4), 16);
  EXPECT_EQ(buffer_tuples(11, 4, 4), 8);
  EXPECT_EQ(buffer_tuples(8, 8, 8), 32);
  EXPECT_EQ(buffer_tuples(9, 8, 8), 16);
  EXPECT_EQ(buffer_tuples(10, 8, 8), 8);
  EXPECT_EQ(buffer_tuples(11, 8, 8), 4);
  using policy = swwc_partition_policy;
  EXPECT_LE(swwc_smem_bytes(1 << 9, 16, 4, 4), policy::small_smem_bytes);
  EXPECT_GT(swwc_smem_bytes(1 << 10, 16, 4, 4), policy::small_smem_bytes);
  // Where the buffers fall below a sector of keys (documented in the agent).
  EXPECT_EQ(buffer_tuples(12, 4, 4), 4);
  EXPECT_EQ(buffer_tuples(12, 8, 8), 2);
  EXPECT_EQ(buffer_tuples(11, 4, 8), 4);
}

TEST(SwwcPolicy, ThreadsAndItemsOfTheMeasuredConfigurations) {
  // BENCHMARKS.md, "primitives": the fastest policy and flush alignment on the H200 per digit
  // width for 4+4 and 8+8 bytes.
  using detail::gpu::swwc_aligned_for;
  using detail::gpu::swwc_variant;
  using detail::gpu::swwc_variant_for;
  EXPECT_EQ(swwc_variant_for(8, 8), swwc_variant::wide_long);
  EXPECT_EQ(swwc_variant_for(9, 8), swwc_variant::base);
  EXPECT_EQ(swwc_variant_for(10, 8), swwc_variant::wide_long);
  EXPECT_EQ(swwc_variant_for(11, 8), swwc_variant::wide_long);
  for (int bits = 8; bits <= 11; ++bits) {
    EXPECT_EQ(swwc_variant_for(bits, 16), swwc_variant::wide) << bits;
    EXPECT_TRUE(swwc_aligned_for(bits, 16)) << bits;
    EXPECT_EQ(swwc_aligned_for(bits, 8), bits > 8) << bits;
  }
  // wide_long's buffers grow past 32 tuples: 64 at 8 bits (128 KiB of 4+4-byte tuples), while
  // 9 bits keeps 32.
  using wide_long = detail::gpu::swwc_partition_policy_wide_long;
  EXPECT_EQ(1 << swwc_buffer_log2<wide_long>(1 << 8, 4, 4), 64);
  EXPECT_EQ(1 << swwc_buffer_log2<wide_long>(1 << 9, 4, 4), 32);
  EXPECT_EQ(1 << swwc_buffer_log2<wide_long>(1 << 10, 4, 4), 16);
  using detail::gpu::hierarchical_variant_for;
  EXPECT_EQ(hierarchical_variant_for(9, 8), swwc_variant::base);
  EXPECT_EQ(hierarchical_variant_for(10, 8), swwc_variant::wide_long);
  EXPECT_EQ(hierarchical_variant_for(11, 8), swwc_variant::long_tile);
  EXPECT_EQ(hierarchical_variant_for(9, 16), swwc_variant::wide);
  EXPECT_EQ(hierarchical_variant_for(10, 16), swwc_variant::base);
  // One-block policies take the large budget: 4+4 B at 9 bits gets 32-tuple buffers there.
  EXPECT_EQ(1 << swwc_buffer_log2<detail::gpu::swwc_partition_policy_wide>(1 << 9, 4, 4), 32);
  EXPECT_EQ(detail::gpu::swwc_partition_policy_long::tile_items, 8192);
}

TEST(SwwcPolicy, EveryWidthAndFanoutFitsItsBudget) {
  using policy = swwc_partition_policy;
  for (std::size_t key : {4, 8}) {
    for (std::size_t payload : {0, 4, 8}) {
      for (int bits = 1; bits <= policy::max_radix_bits; ++bits) {
        int const fanout = 1 << bits;
        int const b = buffer_tuples(bits, key, payload);
        SCOPED_TRACE(std::to_string(key) + "+" + std::to_string(payload) + " B, " +
                     std::to_string(bits) + " bits, b = " + std::to_string(b));
        EXPECT_GE(b, 1);
        EXPECT_LE(b, policy::max_buffer_tuples);
        auto const smem = swwc_smem_bytes(fanout, b, key, payload);
        EXPECT_LE(smem, policy::large_smem_bytes);
        // A buffer below a sector only where even the large budget cannot give one.
        if (key * static_cast<std::size_t>(b) < static_cast<std::size_t>(policy::sector_bytes)) {
          EXPECT_GT(swwc_smem_bytes(fanout, 2 * b, key, payload), policy::large_smem_bytes);
        }
        // Up to the widest digit the small budget keeps two blocks an SM (227 KiB on Hopper).
        if (smem <= policy::small_smem_bytes) { EXPECT_LE(2 * smem, std::size_t{227} * 1024); }
      }
    }
  }
}

}  // namespace
}  // namespace joinery::test
