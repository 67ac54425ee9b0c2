// GPU block-local pre-scatter radix partitioning (Maltenberger et al. 2022, section 3.1.2),
// dispatch layer and kernel: the per-block histogram and digit-major scan of the shared-atomic
// partitioning (partition.cu: same kernels, same layout), then a reorder in which each block
// ranks a tile by digit in shared memory and copies it out in runs of one digit. Stable.
// Explicitly instantiated over the key widths (uint32/uint64) and payload widths
// (none/uint32/uint64).
#include "primitives/detail/agent_block_scatter_partition.cuh"
#include "primitives/detail/launch.cuh"
#include "primitives/detail/partition_kernels.cuh"
#include "primitives/detail/partition_policy.hpp"
#include "primitives/partition_dispatch.hpp"

#include <algorithm>
#include <cstdint>

namespace joinery::detail::gpu {

/// The reorder of the block-scatter partitioning. `scanned`: exclusive scan of the PerBlock
/// histogram of the same grid (block b owns rows [b * items_per_block, ...)).
template <class Policy, class K, class P>
__global__ void __launch_bounds__(Policy::threads_per_block, 2)
    block_scatter_partition_kernel(K const* __restrict__ keys, P const* __restrict__ payload,
                                   size_type n, size_type items_per_block, int bit_offset,
                                   int bits, std::int64_t const* __restrict__ scanned,
                                   K* __restrict__ keys_out, P* __restrict__ payload_out) {
  using agent_t = agent_block_scatter_partition<Policy, K, P>;
  __shared__ typename agent_t::block_scan::TempStorage scan_storage;
  agent_t agent{radix_dynamic_smem, scan_storage, 1 << bits, radix_digit<K>(bit_offset, bits),
                keys,               payload,      keys_out,  payload_out};
  agent.load_cursors(scanned, static_cast<size_type>(gridDim.x),
                     static_cast<size_type>(blockIdx.x));
  __syncthreads();
  size_type const begin = static_cast<size_type>(blockIdx.x) * items_per_block;
  size_type const end = block_range_end(begin, items_per_block, n);
  if (begin < end) { agent.consume_range(begin, end); }
}

namespace {

template <class Policy, class K, class P>
void block_scatter_partition_impl(K const* keys, P const* payload, size_type n, int bit_offset,
                                  int bits, K* keys_out, P* payload_out, std::int64_t* offsets,
                                  stream_ref stream, memory_resource* mr) {
  using policy = Policy;
  using hist_policy = radix_histogram_policy;
  using agent_t = agent_block_scatter_partition<policy, K, P>;
  static_assert(hist_policy::max_items_per_block >= policy::max_items_per_block,
                "the histogram's 32-bit counters must cover a reorder block's range");
  static_assert(agent_t::smem_bytes(1 << policy::max_radix_bits) <= 200 * 1024,
                "the reorder's shared memory at the widest digit must leave room on an SM "
                "(227 KiB on H100/H200)");
  auto const s = to_cuda(stream);
  int const fanout = 1 << bits;
  if (n == 0) {
    JOINERY_CUDA_TRY(cudaMemsetAsync(offsets, 0, sizeof(std::int64_t) * (fanout + 1), s));
    return;
  }
  auto const reorder = block_scatter_partition_kernel<policy, K, P>;
  std::size_t const reorder_smem = agent_t::smem_bytes(fanout);
  allow_dynamic_smem(reorder, reorder_smem);
  int const resident = std::min(policy::max_blocks_per_sm,
                                resident_blocks_per_sm(reorder, policy::threads_per_block,
                                                       reorder_smem));
  auto const g = plan_range_grid(n, policy::tile_items, policy::max_items_per_block,
                                 current_sm_count() * resident);
  // Cell (p, b) of the scan: the first output slot of block b's rows of digit p.
  buffer const scanned = block_range_starts<hist_policy>(keys, n, g, bit_offset, bits, offsets,
                                                         stream, mr);
  auto const* d_scanned = static_cast<std::int64_t const*>(scanned.data());
  reorder<<<g.blocks, policy::threads_per_block, reorder_smem, s>>>(
    keys, payload, n, g.items_per_block, bit_offset, bits, d_scanned, keys_out, payload_out);
  JOINERY_CHECK_LAUNCH();
}

}  // namespace

template <class K, class P>
void block_scatter_partition(K const* keys, P const* payload, size_type n, int bit_offset,
                             int bits, K* keys_out, P* payload_out, std::int64_t* offsets,
                             stream_ref stream, memory_resource* mr) {
  if (bits <= 8) {
    block_scatter_partition_impl<block_scatter_partition_policy>(
      keys, payload, n, bit_offset, bits, keys_out, payload_out, offsets, stream, mr);
  } else {
    block_scatter_partition_impl<block_scatter_partition_policy_high>(
      keys, payload, n, bit_offset, bits, keys_out, payload_out, offsets, stream, mr);
  }
}

#define JOINERY_INSTANTIATE_BLOCK_SCATTER(K, P)                                            \
  template void block_scatter_partition<K, P>(K const*, P const*, size_type, int, int, K*, \
                                              P*, std::int64_t*, stream_ref,               \
                                              memory_resource*);
JOINERY_INSTANTIATE_BLOCK_SCATTER(std::uint32_t, no_payload)
JOINERY_INSTANTIATE_BLOCK_SCATTER(std::uint32_t, std::uint32_t)
JOINERY_INSTANTIATE_BLOCK_SCATTER(std::uint32_t, std::uint64_t)
JOINERY_INSTANTIATE_BLOCK_SCATTER(std::uint64_t, no_payload)
JOINERY_INSTANTIATE_BLOCK_SCATTER(std::uint64_t, std::uint32_t)
JOINERY_INSTANTIATE_BLOCK_SCATTER(std::uint64_t, std::uint64_t)
#undef JOINERY_INSTANTIATE_BLOCK_SCATTER

}  // namespace joinery::detail::gpu
