// Probe for issue 7 at g = 2^14..2^16: can a group table spread over the shared memory of a
// thread-block cluster (distributed shared memory, Hopper) aggregate faster than HGB's tier 2,
// whose L2 atomics cap it at about 34 G rows/s on the H200?
//
// Each row reads a key and two values, hashes the key to an entry of a table of g entries split
// evenly over the C blocks of a cluster, loads the entry's key word from its owner block (the
// probe of a real table) and adds the two values with atomicMax into the owner's accumulators.
// C = 1 is one SM's own shared memory; "global" is the same access pattern on arrays in device
// memory (L2-resident at these sizes). Not a group-by (no claiming, no merge): an upper bound of
// what the table accesses allow, to decide whether a cluster tier is worth building.
//
//   joinery_exp_dsmem [rows_log2 = 28]   prints one line per (g, C): median ms, G rows/s
#include "core/hash.hpp"
#include "exp_timing.cuh"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

namespace {

constexpr int threads = 1024;

using joinery::detail::fmix32;

/// Keys drawn from g distinct values, values random (never zeros).
__global__ void fill(std::uint32_t* keys, std::uint32_t* v0, std::uint32_t* v1, std::int64_t n,
                     std::uint32_t g) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    auto const r = fmix32(static_cast<std::uint32_t>(i) * 2654435761U + 12345U);
    keys[i] = fmix32(r % g + 1U);
    v0[i] = fmix32(r ^ 0x9e3779b9U);
    v1[i] = fmix32(r ^ 0x85ebca6bU);
  }
}

/// Per block: `per_block` entries of key word, acc0, acc1 (3 x 4 bytes) in dynamic shared memory.
__global__ void __launch_bounds__(threads, 1)
    cluster_table(std::uint32_t const* __restrict__ keys, std::uint32_t const* __restrict__ v0,
                  std::uint32_t const* __restrict__ v1, std::int64_t n, std::uint32_t per_block,
                  std::uint32_t* sink) {
  extern __shared__ std::uint32_t smem[];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned const c = cluster.num_blocks();
  for (std::uint32_t i = threadIdx.x; i < 3 * per_block; i += blockDim.x) { smem[i] = i; }
  cluster.sync();
  std::uint32_t seen = 0;
  std::uint32_t const entries = per_block * c;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t const k = __ldg(keys + i);
    std::uint32_t const a = __ldg(v0 + i);
    std::uint32_t const b = __ldg(v1 + i);
    std::uint32_t const e = fmix32(k) % entries;
    std::uint32_t* owner = cluster.map_shared_rank(smem, e / per_block);
    std::uint32_t const slot = e % per_block;
    seen += owner[slot];  // the probe's key word
    atomicMax(owner + per_block + slot, a);
    atomicMax(owner + 2 * per_block + slot, b);
  }
  cluster.sync();  // no block leaves while others still use its shared memory
  if (seen == 0x12345678U) { *sink = seen; }
}

__global__ void __launch_bounds__(threads)
    global_table(std::uint32_t const* __restrict__ keys, std::uint32_t const* __restrict__ v0,
                 std::uint32_t const* __restrict__ v1, std::int64_t n, std::uint32_t entries,
                 std::uint32_t* table, std::uint32_t* sink) {
  std::uint32_t seen = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t const k = __ldg(keys + i);
    std::uint32_t const e = fmix32(k) % entries;
    seen += table[e];
    atomicMax(table + entries + e, __ldg(v0 + i));
    atomicMax(table + 2 * entries + e, __ldg(v1 + i));
  }
  if (seen == 0x12345678U) { *sink = seen; }
}

}  // namespace

int main(int argc, char** argv) {
  int const rows_log2 = argc > 1 ? std::atoi(argv[1]) : 28;
  if (rows_log2 < 10 || rows_log2 > 30) {
    std::fprintf(stderr, "rows_log2 must be in 10..30, got %d\n", rows_log2);
    return 2;
  }
  std::int64_t const n = std::int64_t{1} << rows_log2;
  int dev = 0;
  EXP_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  EXP_CHECK(cudaGetDeviceProperties(&prop, dev));
  std::size_t const smem_limit = prop.sharedMemPerBlockOptin - 1024;
  std::uint32_t *keys, *v0, *v1, *table, *sink;
  EXP_CHECK(cudaMalloc(&keys, n * 4));
  EXP_CHECK(cudaMalloc(&v0, n * 4));
  EXP_CHECK(cudaMalloc(&v1, n * 4));
  EXP_CHECK(cudaMalloc(&table, std::size_t{3} << 22));  // up to 2^20 entries of 3 words
  EXP_CHECK(cudaMalloc(&sink, 4));
  EXP_CHECK(cudaFuncSetAttribute(cluster_table, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  std::printf("%s, %d SMs, %lld rows\n", prop.name, prop.multiProcessorCount,
              static_cast<long long>(n));
  for (std::uint32_t g : {1U << 12, 1U << 14, 1U << 15, 1U << 16, 1U << 17}) {
    EXP_CHECK(cudaMemset(table, 0, std::size_t{3} << 22));
    fill<<<prop.multiProcessorCount * 8, 256>>>(keys, v0, v1, n, g);
    EXP_CHECK(cudaGetLastError());
    EXP_CHECK(cudaDeviceSynchronize());
    float const gms = median_ms([&] {
      global_table<<<prop.multiProcessorCount * 2, threads>>>(keys, v0, v1, n, g, table, sink);
    });
    std::printf("g = 2^%-2d global      %8.3f ms %7.1f G rows/s\n", __builtin_ctz(g), gms,
                n / (gms * 1e6));
    for (unsigned c : {1U, 2U, 4U, 8U, 16U}) {
      std::uint32_t const per_block = (g + c - 1) / c;
      std::size_t const bytes = std::size_t{12} * per_block;
      if (bytes > smem_limit) { continue; }
      EXP_CHECK(cudaFuncSetAttribute(cluster_table, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)));
      cudaLaunchConfig_t cfg{};
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = c;
      attr.val.clusterDim.y = 1;
      attr.val.clusterDim.z = 1;
      cfg.blockDim = dim3(threads);
      cfg.dynamicSmemBytes = bytes;
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
      cfg.gridDim = dim3(c);
      int clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&clusters, cluster_table, &cfg) != cudaSuccess ||
          clusters == 0) {
        (void)cudaGetLastError();
        std::printf("g = 2^%-2d cluster %2u  not resident\n", __builtin_ctz(g), c);
        continue;
      }
      cfg.gridDim = dim3(static_cast<unsigned>(clusters) * c);
      float const ms = median_ms([&] {
        EXP_CHECK(cudaLaunchKernelEx(&cfg, cluster_table, static_cast<std::uint32_t const*>(keys),
                                     static_cast<std::uint32_t const*>(v0),
                                     static_cast<std::uint32_t const*>(v1), n, per_block, sink));
      });
      std::printf("g = 2^%-2d cluster %2u  %8.3f ms %7.1f G rows/s (%d clusters, %zu B/block)\n",
                  __builtin_ctz(g), c, ms, n / (ms * 1e6), clusters, bytes);
    }
  }
  EXP_CHECK(cudaFree(keys));
  EXP_CHECK(cudaFree(v0));
  EXP_CHECK(cudaFree(v1));
  EXP_CHECK(cudaFree(table));
  EXP_CHECK(cudaFree(sink));
  return 0;
}
