// swwc partitioning with generated row ids (src/primitives/partition_swwc.cu), the radix join's
// partitioning: one pass up to max_radix_bits, else two (the high half of the digit, then the
// low half within each of its partitions). Checked in full on the CPU: the offsets bound each
// partition's digit, every row id appears once, and each output key is its row's input key.
// Sizes around tiles and segments, one and two passes, skew (every key in one partition, one hot
// key), empty partitions, 4- and 8-byte keys. Also the radix join's partitioning that starts with
// swwc and ends with CUB's stable pass. And Hierarchical (swwc with staged chunks) with its
// outputs off a 16-byte boundary, which takes the unstaged path.
#include "core/cuda_try.hpp"
#include "join/gpu/join_sort.hpp"
#include "primitives/partition_dispatch.hpp"

#include <joinery/memory.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

template <class T>
struct device_array {
  T* p = nullptr;
  explicit device_array(std::size_t n) {
    JOINERY_CUDA_TRY(cudaMalloc(&p, sizeof(T) * (n == 0 ? 1 : n)));
  }
  ~device_array() { cudaFree(p); }
  device_array(device_array const&) = delete;
  device_array& operator=(device_array const&) = delete;
  void from_host(std::vector<T> const& h) {
    if (!h.empty()) {
      JOINERY_CUDA_TRY(cudaMemcpy(p, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice));
    }
  }
  std::vector<T> to_host(std::size_t n) const {
    std::vector<T> h(n);
    if (n != 0) { JOINERY_CUDA_TRY(cudaMemcpy(h.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost)); }
    return h;
  }
};

enum class shape { uniform, one_partition, hot_key, sparse };

template <class K>
std::vector<K> make_keys(std::size_t n, int bits, shape sh, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> keys(n);
  K const mask = static_cast<K>((K{1} << bits) - 1);
  for (std::size_t i = 0; i < n; ++i) {
    auto k = static_cast<K>(rng());
    switch (sh) {
      case shape::uniform: break;
      case shape::one_partition: k = static_cast<K>((k & ~mask) | (mask & static_cast<K>(0x5a5a5a5a))); break;
      case shape::hot_key: k = (rng() % 2 == 0) ? static_cast<K>(0x12345) : k; break;
      case shape::sparse: k = static_cast<K>((k & ~mask) | (static_cast<K>(rng() % 7) * 1021 & mask)); break;
    }
    keys[i] = k;
  }
  return keys;
}

enum class partitioner {
  swwc_two_level,
  join_swwc_then_cub,
  hierarchical_unaligned,  // the row ids passed as a payload, outputs 4 bytes past an alignment
};

/// "" when the partitioning of `keys` over [0, bits) is right, else the first problem.
template <class K>
std::string run_and_check(std::size_t n, int bits, shape sh, std::uint64_t seed,
                          partitioner how = partitioner::swwc_two_level) {
  auto const keys = make_keys<K>(n, bits, sh, seed);
  std::size_t const fanout = std::size_t{1} << bits;
  device_array<K> in(n), out(n + 1);
  device_array<std::uint32_t> rows(n + 1);
  device_array<std::int64_t> offsets(fanout + 1);
  in.from_host(keys);
  // Outputs one element past the allocation's start: 4 or 8 bytes off a 16-byte boundary.
  std::size_t const shift = how == partitioner::hierarchical_unaligned ? 1 : 0;
  if (how == partitioner::hierarchical_unaligned) {
    std::vector<std::uint32_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) { ids[i] = static_cast<std::uint32_t>(i); }
    device_array<std::uint32_t> ids_in(n);
    ids_in.from_host(ids);
    detail::gpu::hierarchical_partition<K, std::uint32_t>(
      in.p, ids_in.p, static_cast<size_type>(n), 0, bits, out.p + shift, rows.p + shift,
      offsets.p, default_stream(), device_resource());
    JOINERY_CUDA_TRY(cudaDeviceSynchronize());
  } else if (how == partitioner::swwc_two_level) {
    detail::gpu::swwc_partition_with_row_ids<K>(in.p, static_cast<size_type>(n), bits, out.p,
                                                rows.p, offsets.p, default_stream(),
                                                device_resource());
  } else {
    detail::gpu::partition_with_row_ids<K>(in.p, out.p, rows.p, static_cast<size_type>(n), bits,
                                           default_stream(), device_resource());
    detail::gpu::radix_partition_offsets<K>(out.p, static_cast<size_type>(n), bits, offsets.p,
                                            default_stream());
  }
  JOINERY_CUDA_TRY(cudaDeviceSynchronize());
  auto k_out = out.to_host(n + 1);
  auto r_out = rows.to_host(n + 1);
  k_out.erase(k_out.begin(), k_out.begin() + static_cast<std::ptrdiff_t>(shift));
  r_out.erase(r_out.begin(), r_out.begin() + static_cast<std::ptrdiff_t>(shift));
  auto const off = offsets.to_host(fanout + 1);
  std::string const where = "n = " + std::to_string(n) + ", bits = " + std::to_string(bits) + ": ";
  if (off[0] != 0 || off[fanout] != static_cast<std::int64_t>(n)) {
    return where + "offsets span [" + std::to_string(off[0]) + ", " + std::to_string(off[fanout]) + ")";
  }
  std::vector<char> seen(n, 0);
  K const mask = static_cast<K>((K{1} << bits) - 1);
  for (std::size_t d = 0; d < fanout; ++d) {
    if (off[d] > off[d + 1]) { return where + "offsets decrease at digit " + std::to_string(d); }
    for (auto i = off[d]; i < off[d + 1]; ++i) {
      auto const r = r_out[static_cast<std::size_t>(i)];
      if (r >= n || seen[r] != 0) {
        return where + "row id " + std::to_string(r) + " out of range or repeated at " + std::to_string(i);
      }
      seen[r] = 1;
      if (k_out[static_cast<std::size_t>(i)] != keys[r]) {
        return where + "output " + std::to_string(i) + " holds a key that is not row " + std::to_string(r) + "'s";
      }
      if ((keys[r] & mask) != d) {
        return where + "row " + std::to_string(r) + " in partition " + std::to_string(d) +
               " has digit " + std::to_string(keys[r] & mask);
      }
    }
  }
  return "";
}

class SwwcRowIds : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
};

// 4096 = one swwc tile; 13+ bits take two passes.
TEST_F(SwwcRowIds, OneAndTwoPassesAroundTiles) {
  for (int bits : {8, 12, 13, 16, 20}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{4095}, std::size_t{4096}, std::size_t{4097},
                          std::size_t{100'003}}) {
      EXPECT_EQ(run_and_check<std::uint32_t>(n, bits, shape::uniform, n + bits), "");
      EXPECT_EQ(run_and_check<std::uint64_t>(n, bits, shape::uniform, 7 * n + bits), "");
    }
  }
}

// Many tiles per block, segments of many tiles (the sizes above stay small for the sanitizers).
TEST_F(SwwcRowIds, ManyTilesPerBlock) {
  for (int bits : {12, 16}) {
    EXPECT_EQ(run_and_check<std::uint32_t>(std::size_t{1} << 21, bits, shape::uniform, 5 + bits), "");
    EXPECT_EQ(run_and_check<std::uint64_t>((std::size_t{1} << 21) + 17, bits, shape::uniform, 9 + bits), "");
  }
}

TEST_F(SwwcRowIds, SkewedAndSparsePartitions) {
  for (int bits : {8, 16}) {
    for (auto sh : {shape::one_partition, shape::hot_key, shape::sparse}) {
      EXPECT_EQ(run_and_check<std::uint32_t>(std::size_t{1} << 17, bits, sh, 11 + bits), "");
      EXPECT_EQ(run_and_check<std::uint64_t>(70'001, bits, sh, 13 + bits), "");
    }
  }
}

// The radix join's partitioning when the order within a partition is free
// (join/gpu/join_sort.hpp): swwc alone up to 8 bits, swwc over 8 (9, 10 at 17, 18 bits) and
// CUB's stable pass over the rest beyond.
TEST_F(SwwcRowIds, JoinPartitioningSwwcThenCub) {
  auto const how = partitioner::join_swwc_then_cub;
  for (int bits : {0, 5, 8, 9, 16, 17, 18, 20}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{100'003}}) {
      EXPECT_EQ(run_and_check<std::uint32_t>(n, bits, shape::uniform, 3 * n + bits, how), "");
      EXPECT_EQ(run_and_check<std::uint64_t>(n, bits, shape::uniform, 5 * n + bits, how), "");
    }
  }
  for (int bits : {8, 17}) {
    for (auto sh : {shape::one_partition, shape::hot_key, shape::sparse}) {
      EXPECT_EQ(run_and_check<std::uint32_t>(std::size_t{1} << 17, bits, sh, 17 + bits, how), "");
      EXPECT_EQ(run_and_check<std::uint64_t>(70'001, bits, sh, 19 + bits, how), "");
    }
  }
  EXPECT_EQ(run_and_check<std::uint32_t>(0, 16, shape::uniform, 1, how), "");
}

// Hierarchical writes staged chunks out in 16-byte moves; outputs off that alignment take swwc's
// direct writes instead (a caller of the detail layer can pass any pointers).
TEST_F(SwwcRowIds, HierarchicalWithUnalignedOutputs) {
  auto const how = partitioner::hierarchical_unaligned;
  for (int bits : {6, 9, 11}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{100'003}, (std::size_t{1} << 20) + 5}) {
      EXPECT_EQ(run_and_check<std::uint32_t>(n, bits, shape::uniform, 23 * n + bits, how), "");
      EXPECT_EQ(run_and_check<std::uint64_t>(n, bits, shape::uniform, 29 * n + bits, how), "");
    }
  }
}

TEST_F(SwwcRowIds, NoRows) {
  EXPECT_EQ(run_and_check<std::uint32_t>(0, 16, shape::uniform, 1), "");
}

}  // namespace
}  // namespace joinery::test
