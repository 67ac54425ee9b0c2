// GPU radix partitioning into interleaved (key, payload) tuples (radix_partition_tuples),
// dispatch layer and kernel: per-block histograms of whole-tile block ranges scanned digit-major,
// so that every block owns a sub-range of every partition, then one pass of chunked
// write-combining (agent_tuple_partition.cuh). Explicitly instantiated for 4+4 and 8+8 bytes.
#include "primitives/detail/agent_tuple_partition.cuh"
#include "primitives/detail/launch.cuh"
#include "primitives/detail/partition_kernels.cuh"
#include "primitives/detail/partition_policy.hpp"
#include "primitives/partition_dispatch.hpp"

#include <algorithm>
#include <cstdint>

namespace joinery::detail::gpu {

/// One block an SM; block b owns rows [b * items_per_block, ...) and, in digit d, the rows from
/// scanned[d * gridDim.x + b] on.
template <class Policy, class K, bool Tma, int FixedBits>
__global__ void __launch_bounds__(Policy::threads_per_block, 1)
    tuple_partition_kernel(K const* __restrict__ keys, K const* __restrict__ vals, size_type n,
                           size_type items_per_block, int bit_offset, int bits,
                           std::size_t ring_bytes, std::uint32_t ring_slots, std::uint32_t phase,
                           std::int64_t const* __restrict__ scanned,
                           typename tuple_storage<K>::type* __restrict__ out) {
  using agent_t = agent_tuple_partition<Policy, K, FixedBits>;
  agent_t agent{radix_dynamic_smem, ring_bytes, 1 << bits, ring_slots,
                radix_digit<K>(bit_offset, bits), keys, vals, out};
  agent.load_starts(scanned, static_cast<long long>(gridDim.x),
                    static_cast<long long>(blockIdx.x), phase);
  if (Tma && threadIdx.x == 0) {
    cuda::ptx::mbarrier_init(agent.bar, 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();
  size_type const begin = static_cast<size_type>(blockIdx.x) * items_per_block;
  size_type const end = block_range_end(begin, items_per_block, n);
  if (begin < end) { agent.template consume_range<Tma>(begin, end); }
}

template <class K>
void tuple_partition(K const* keys, K const* payload, size_type n, int bit_offset, int bits,
                     void* tuples_out, std::int64_t* offsets, stream_ref stream,
                     memory_resource* mr) {
  using policy = tuple_partition_policy;
  using hist_policy = tuple_histogram_policy;
  using agent_t = agent_tuple_partition<policy, K>;
  using tuple_t = typename tuple_storage<K>::type;
  static_assert(hist_policy::max_items_per_block >= policy::max_items_per_block,
                "the histogram's 32-bit counters must cover a partition block's range");
  auto const s = to_cuda(stream);
  int const fanout = 1 << bits;
  if (n == 0) {
    JOINERY_CUDA_TRY(cudaMemsetAsync(offsets, 0, sizeof(std::int64_t) * (fanout + 1), s));
    return;
  }
  // The ring: the largest power of two of bytes that fits beside the stage and the counters.
  std::size_t const room = current_max_block_smem();
  std::size_t ring_bytes = policy::max_ring_bytes;
  while (ring_bytes > sizeof(tuple_t) * fanout && agent_t::smem_bytes(fanout, ring_bytes) > room) {
    ring_bytes /= 2;
  }
  JOINERY_EXPECTS(agent_t::smem_bytes(fanout, ring_bytes) <= room,
                  "radix_partition_tuples: " + std::to_string(fanout) +
                    " partitions do not fit a block's shared memory on this device");
  auto const ring_slots = static_cast<std::uint32_t>(ring_bytes / (sizeof(tuple_t) * fanout));
  std::size_t const smem = agent_t::smem_bytes(fanout, ring_bytes);
  bool const aligned = reinterpret_cast<std::uintptr_t>(keys) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(payload) % 16 == 0;
  // 8-10 bits with the largest ring: kernels with their sizes as constants.
  bool const fixed = ring_bytes == std::size_t{policy::max_ring_bytes};
  auto const kernel = !aligned              ? tuple_partition_kernel<policy, K, false, 0>
                      : fixed && bits == 8  ? tuple_partition_kernel<policy, K, true, 8>
                      : fixed && bits == 9  ? tuple_partition_kernel<policy, K, true, 9>
                      : fixed && bits == 10 ? tuple_partition_kernel<policy, K, true, 10>
                                            : tuple_partition_kernel<policy, K, true, 0>;
  allow_dynamic_smem(kernel, smem);
  auto const g = plan_range_grid(n, policy::tile_items<K>, policy::max_items_per_block,
                                 current_sm_count());
  buffer const scanned = block_range_starts<hist_policy>(keys, n, g, bit_offset, bits, offsets,
                                                         stream, mr);
  auto const* d_scanned = static_cast<std::int64_t const*>(scanned.data());
  auto* out = static_cast<tuple_t*>(tuples_out);
  auto const phase = static_cast<std::uint32_t>(
    (reinterpret_cast<std::uintptr_t>(out) / sizeof(tuple_t)) & (ring_slots - 1));
  kernel<<<g.blocks, policy::threads_per_block, smem, s>>>(keys, payload, n, g.items_per_block,
                                                            bit_offset, bits, ring_bytes,
                                                            ring_slots, phase, d_scanned, out);
  JOINERY_CHECK_LAUNCH();
}

template void tuple_partition<std::uint32_t>(std::uint32_t const*, std::uint32_t const*,
                                             size_type, int, int, void*, std::int64_t*,
                                             stream_ref, memory_resource*);
template void tuple_partition<std::uint64_t>(std::uint64_t const*, std::uint64_t const*,
                                             size_type, int, int, void*, std::int64_t*,
                                             stream_ref, memory_resource*);

}  // namespace joinery::detail::gpu
