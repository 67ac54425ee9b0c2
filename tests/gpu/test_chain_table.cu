// The shared-memory bucket-chaining table (src/primitives/detail/block_chain_table.cuh) in its
// own test kernel: blocks build tables of build segments (rebuilding as they loop over more
// segments than blocks) and count, per probe key, the matching entries and the sum of their
// indices; checked against a CPU count. Duplicate keys (m:n), one chain holding every key (two
// buckets, or one key value), empty and full tables, 4- and 8-byte keys.
#include "core/cuda_try.hpp"
#include "core/hash.hpp"
#include "primitives/detail/block_chain_table.cuh"
#include "primitives/detail/launch.cuh"

#include <joinery/memory.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

constexpr int threads = 256;
constexpr int capacity = 4096;

template <class U, int Buckets>
__global__ void __launch_bounds__(threads)
    chain_table_probe_kernel(U const* build, int const* build_rows, U const* probe, int probe_rows,
                             int segments, unsigned* counts, unsigned long long* index_sums) {
  using table_t = detail::gpu::block_chain_table<U, threads, Buckets, capacity>;
  extern __shared__ __align__(16) unsigned char smem[];
  table_t table(smem);
  for (int s = blockIdx.x; s < segments; s += gridDim.x) {
    table.build(build + static_cast<std::size_t>(s) * capacity, build_rows[s]);
    for (int i = threadIdx.x; i < probe_rows; i += threads) {
      auto const at = static_cast<std::size_t>(s) * probe_rows + i;
      unsigned c = 0;
      unsigned long long sum = 0;
      table.for_each_match(probe[at], [&](int t) {
        ++c;
        sum += static_cast<unsigned long long>(t) + 1;
      });
      counts[at] = c;
      index_sums[at] = sum;
    }
  }
}

template <class T>
struct device_array {
  T* p = nullptr;
  explicit device_array(std::vector<T> const& h) {
    JOINERY_CUDA_TRY(cudaMalloc(&p, sizeof(T) * (h.empty() ? 1 : h.size())));
    if (!h.empty()) {
      JOINERY_CUDA_TRY(cudaMemcpy(p, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice));
    }
  }
  ~device_array() { cudaFree(p); }
  device_array(device_array const&) = delete;
  device_array& operator=(device_array const&) = delete;
  std::vector<T> to_host(std::size_t n) const {
    std::vector<T> h(n);
    JOINERY_CUDA_TRY(cudaMemcpy(h.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost));
    return h;
  }
};

/// Segment shapes: rows of the build segment and the key domain (0: every key the same).
struct segment_shape {
  int rows;
  std::uint64_t domain;
};

template <class U, int Buckets>
std::string run_and_check(std::vector<segment_shape> const& shapes, int probe_rows, int blocks,
                          std::uint64_t seed) {
  int const segments = static_cast<int>(shapes.size());
  std::vector<U> build(static_cast<std::size_t>(segments) * capacity, U{0});
  std::vector<int> build_rows(segments);
  std::vector<U> probe(static_cast<std::size_t>(segments) * probe_rows);
  // Keys spread over the whole width (high bits too), from `domain` distinct values per segment.
  auto key_of = [&](int s, std::uint64_t v) {
    return static_cast<U>(detail::fmix64((static_cast<std::uint64_t>(s) << 40) + v + seed) | 1U);
  };
  for (int s = 0; s < segments; ++s) {
    build_rows[s] = shapes[s].rows;
    auto const dom = shapes[s].domain == 0 ? 1 : shapes[s].domain;
    for (int t = 0; t < shapes[s].rows; ++t) {
      auto const r = detail::fmix64(seed * 31 + static_cast<std::uint64_t>(s) * capacity + t);
      build[static_cast<std::size_t>(s) * capacity + t] = key_of(s, r % dom);
    }
    for (int i = 0; i < probe_rows; ++i) {
      auto const r = detail::fmix64(seed * 77 + static_cast<std::uint64_t>(s) * probe_rows + i);
      // Half the probes from the build domain, half (mostly) misses.
      probe[static_cast<std::size_t>(s) * probe_rows + i] =
        key_of(s, (r & 1) != 0 ? (r >> 1) % dom : dom + (r >> 1) % 1000);
    }
  }
  device_array<U> d_build(build), d_probe(probe);
  device_array<int> d_rows(build_rows);
  device_array<unsigned> d_counts(std::vector<unsigned>(probe.size(), 0xdeadbeefU));
  device_array<unsigned long long> d_sums(std::vector<unsigned long long>(probe.size(), 0));
  using table_t = detail::gpu::block_chain_table<U, threads, Buckets, capacity>;
  auto const kernel = chain_table_probe_kernel<U, Buckets>;
  detail::gpu::allow_dynamic_smem(kernel, table_t::smem_bytes);
  kernel<<<blocks, threads, table_t::smem_bytes>>>(d_build.p, d_rows.p, d_probe.p, probe_rows,
                                                  segments, d_counts.p, d_sums.p);
  JOINERY_CUDA_TRY(cudaGetLastError());
  JOINERY_CUDA_TRY(cudaDeviceSynchronize());
  auto const counts = d_counts.to_host(probe.size());
  auto const sums = d_sums.to_host(probe.size());
  for (int s = 0; s < segments; ++s) {
    for (int i = 0; i < probe_rows; ++i) {
      auto const at = static_cast<std::size_t>(s) * probe_rows + i;
      unsigned c = 0;
      unsigned long long sum = 0;
      for (int t = 0; t < build_rows[s]; ++t) {
        if (build[static_cast<std::size_t>(s) * capacity + t] == probe[at]) {
          ++c;
          sum += static_cast<unsigned long long>(t) + 1;
        }
      }
      if (counts[at] != c || sums[at] != sum) {
        return "segment " + std::to_string(s) + " probe " + std::to_string(i) + ": " +
               std::to_string(counts[at]) + " matches (index sum " + std::to_string(sums[at]) +
               "), expected " + std::to_string(c) + " (" + std::to_string(sum) + ")";
      }
    }
  }
  return "";
}

class BlockChainTable : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
};

std::vector<segment_shape> const shapes{
  {capacity, 1u << 20},  // full table, nearly all keys distinct
  {capacity, 300},       // full table, ~14 copies of each key (m:n)
  {0, 10},               // empty table
  {1, 1},                // one key
  {4095, 0},             // every key the same: one chain of 4095
  {2500, 2500},          // partial table
  {capacity, 64},        // long duplicate chains
  {777, 1u << 30},
};

TEST_F(BlockChainTable, FourByteKeysMatchTheCpuCount) {
  EXPECT_EQ((run_and_check<std::uint32_t, 1024>(shapes, 3000, 3, 1)), "");
}

TEST_F(BlockChainTable, EightByteKeysMatchTheCpuCount) {
  EXPECT_EQ((run_and_check<std::uint64_t, 1024>(shapes, 3000, 3, 2)), "");
}

TEST_F(BlockChainTable, TwoBucketsMakeEveryChainLong) {
  EXPECT_EQ((run_and_check<std::uint32_t, 2>(shapes, 500, 8, 3)), "");
  EXPECT_EQ((run_and_check<std::uint64_t, 2>(shapes, 500, 2, 4)), "");
}

}  // namespace
}  // namespace joinery::test
