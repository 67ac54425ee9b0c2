#pragma once
// Internal (device): the thin __global__ kernels of the radix histogram and the shared-atomic
// partitioning. Each block owns the contiguous row range [blockIdx.x * items_per_block, ...)
// and hands it to a tile agent; the same ranges are used by the histogram and the reorder of
// one partitioning, so that each block writes exactly the slots its histogram counted.
#include "primitives/detail/agent_radix_histogram.cuh"
#include "primitives/detail/agent_shared_atomic_partition.cuh"
#include "primitives/detail/launch.cuh"
#include "primitives/partition_dispatch.hpp"

#include <cstdint>

namespace joinery::detail::gpu {

/// Dynamic shared memory of the radix kernels (one declaration, so that every instantiation
/// names the same array).
extern __shared__ __align__(16) unsigned char radix_dynamic_smem[];

__device__ __forceinline__ size_type block_range_end(size_type begin, size_type items_per_block,
                                                     size_type n) {
  return begin + items_per_block < n ? begin + items_per_block : n;
}

/// Rui & Tu Algorithm 1. PerBlock: out is the digit-major matrix out[digit * gridDim.x + block]
/// (every cell written); else out[digit] += count (out zeroed before). Shared memory: 2^bits
/// 32-bit counters.
template <class Policy, class K, bool PerBlock>
__global__ void __launch_bounds__(Policy::threads_per_block)
    radix_histogram_kernel(K const* __restrict__ keys, size_type n, size_type items_per_block,
                           int bit_offset, int bits, std::int64_t* __restrict__ out) {
  block_radix_histogram<Policy::threads_per_block> hist{
    reinterpret_cast<unsigned*>(radix_dynamic_smem), 1 << bits};
  hist.zero();
  __syncthreads();
  size_type const begin = static_cast<size_type>(blockIdx.x) * items_per_block;
  size_type const end = block_range_end(begin, items_per_block, n);
  agent_radix_histogram<Policy, K> agent{hist, radix_digit<K>(bit_offset, bits)};
  if (begin < end) { agent.consume_range(keys, begin, end); }
  __syncthreads();
  if constexpr (PerBlock) {
    hist.store_column(out, static_cast<size_type>(gridDim.x), static_cast<size_type>(blockIdx.x));
  } else {
    hist.merge_into(out);
  }
}

/// offsets[p] = scanned[p * stride] for p in [0, fanout]: the first slot of digit p is the first
/// slot of (block 0, digit p); scanned[fanout * stride] is the total (the scan's appended sum).
__global__ void partition_starts_kernel(std::int64_t const* __restrict__ scanned, int fanout,
                                        size_type stride, std::int64_t* __restrict__ offsets);

/// Rui & Tu Algorithm 2. `scanned`: exclusive scan of the PerBlock histogram of the same grid.
/// Shared memory: 2^bits x (64-bit base + 32-bit claimed count).
template <class Policy, class K, class P>
__global__ void __launch_bounds__(Policy::threads_per_block)
    shared_atomic_partition_kernel(K const* __restrict__ keys, P const* __restrict__ payload,
                                   size_type n, size_type items_per_block, int bit_offset,
                                   int bits, std::int64_t const* __restrict__ scanned,
                                   K* __restrict__ keys_out, P* __restrict__ payload_out) {
  int const fanout = 1 << bits;
  block_output_cursors<Policy::threads_per_block> cursors{
    reinterpret_cast<unsigned long long*>(radix_dynamic_smem),
    reinterpret_cast<unsigned*>(radix_dynamic_smem + sizeof(unsigned long long) * fanout),
    fanout};
  cursors.load(scanned, static_cast<size_type>(gridDim.x), static_cast<size_type>(blockIdx.x));
  __syncthreads();
  size_type const begin = static_cast<size_type>(blockIdx.x) * items_per_block;
  size_type const end = block_range_end(begin, items_per_block, n);
  agent_shared_atomic_partition<Policy, K, P> agent{
    cursors, radix_digit<K>(bit_offset, bits), keys, payload, keys_out, payload_out};
  if (begin < end) { agent.consume_range(begin, end); }
}

/// The per-block starts of a partitioning with block-private ranges (host side): the digit-major
/// histogram of the block ranges of `g` (cell (p, b): block b's rows of digit p), its exclusive
/// scan with the total appended, so that scanned cell (p, b) is the first output row of block b's
/// rows of digit p, and offsets[p] (fanout + 1 entries) the first row of digit p. Returns the
/// scan (cells + 1 entries). n > 0.
template <class HistPolicy, class K>
buffer block_range_starts(K const* keys, size_type n, range_grid const& g, int bit_offset, int bits,
                          std::int64_t* offsets, stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  int const fanout = 1 << bits;
  size_type const cells = static_cast<size_type>(fanout) * g.blocks;
  buffer hist(sizeof(std::int64_t) * cells, mr, stream);
  buffer scanned(sizeof(std::int64_t) * (cells + 1), mr, stream);
  auto* d_hist = static_cast<std::int64_t*>(hist.data());
  auto* d_scanned = static_cast<std::int64_t*>(scanned.data());
  radix_histogram_kernel<HistPolicy, K, true>
    <<<g.blocks, HistPolicy::threads_per_block, sizeof(unsigned) * fanout, s>>>(
      keys, n, g.items_per_block, bit_offset, bits, d_hist);
  JOINERY_CHECK_LAUNCH();
  prefix_scan(d_hist, cells, d_scanned, stream, mr);
  constexpr int starts_threads = 256;
  partition_starts_kernel<<<static_cast<int>(ceil_div(fanout + 1, starts_threads)), starts_threads,
                            0, s>>>(d_scanned, fanout, g.blocks, offsets);
  JOINERY_CHECK_LAUNCH();
  return scanned;
}

}  // namespace joinery::detail::gpu
