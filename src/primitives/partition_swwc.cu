// GPU radix partitioning with shared-memory software write-combining (Lutz et al. 2022,
// section 4, "Shared"), dispatch layer and kernel: the global digit histogram and its scan give
// each digit's first output row, which seeds one global write cursor per digit; then one pass in
// which every block buffers tuples per digit in shared memory and writes full buffers at ranges
// taken from the cursors. Explicitly instantiated over the key widths (uint32/uint64) and payload
// widths (none/uint32/uint64).
#include "primitives/detail/agent_swwc_partition.cuh"
#include "primitives/detail/launch.cuh"
#include "primitives/detail/partition_kernels.cuh"
#include "primitives/detail/partition_policy.hpp"
#include "primitives/partition_dispatch.hpp"

#include <algorithm>
#include <cstdint>

namespace joinery::detail::gpu {

template <class Policy, class K, class P>
__global__ void __launch_bounds__(Policy::threads_per_block, Policy::min_blocks_per_sm)
    swwc_partition_kernel(K const* __restrict__ keys, P const* __restrict__ payload, size_type n,
                          int bit_offset, int bits, int log2_b,
                          unsigned long long* __restrict__ cursors, K* __restrict__ keys_out,
                          P* __restrict__ payload_out) {
  using agent_t = agent_swwc_partition<Policy, K, P>;
  agent_t agent(radix_dynamic_smem, 1 << bits, log2_b, radix_digit<K>(bit_offset, bits), keys,
                payload, keys_out, payload_out, cursors);
  agent.init();
  __syncthreads();
  size_type const tiles = ceil_div(n, Policy::tile_items);
  for (size_type t = blockIdx.x; t < tiles; t += gridDim.x) {
    size_type const base = t * Policy::tile_items;
    if (base + Policy::tile_items <= n) {
      agent.template consume_tile<true>(base, Policy::tile_items);
    } else {
      agent.template consume_tile<false>(base, static_cast<int>(n - base));
    }
  }
  __syncthreads();
  agent.template flush<true>();
}


template <class K, class P>
void swwc_partition(K const* keys, P const* payload, size_type n, int bit_offset, int bits,
                    K* keys_out, P* payload_out, std::int64_t* offsets, stream_ref stream,
                    memory_resource* mr) {
  using policy = swwc_partition_policy;
  using agent_t = agent_swwc_partition<policy, K, P>;
  static_assert(agent_t::smem_bytes(1 << policy::max_radix_bits, 1) <= policy::large_smem_bytes,
                "one tuple per digit at the widest digit must fit the large budget");
  auto const s = to_cuda(stream);
  int const fanout = 1 << bits;
  if (n == 0) {
    JOINERY_CUDA_TRY(cudaMemsetAsync(offsets, 0, sizeof(std::int64_t) * (fanout + 1), s));
    return;
  }
  buffer counts(sizeof(std::int64_t) * fanout, mr, stream);
  radix_histogram(keys, n, bit_offset, bits, static_cast<std::int64_t*>(counts.data()), stream, mr);
  prefix_scan(static_cast<std::int64_t const*>(counts.data()), fanout, offsets, stream, mr);
  buffer cursors(sizeof(unsigned long long) * fanout, mr, stream);
  JOINERY_CUDA_TRY(cudaMemcpyAsync(cursors.data(), offsets, sizeof(std::int64_t) * fanout,
                                   cudaMemcpyDeviceToDevice, s));

  int const log2_b =
    swwc_buffer_log2<policy>(fanout, sizeof(K), agent_t::has_payload ? sizeof(P) : 0);
  auto const kernel = swwc_partition_kernel<policy, K, P>;
  std::size_t const smem = agent_t::smem_bytes(fanout, 1 << log2_b);
  JOINERY_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  int const resident = resident_blocks_per_sm(kernel, policy::threads_per_block, smem);
  size_type const tiles = ceil_div(n, policy::tile_items);
  int const blocks = static_cast<int>(
    std::min<size_type>(tiles, static_cast<size_type>(current_sm_count()) * resident));
  kernel<<<blocks, policy::threads_per_block, smem, s>>>(
    keys, payload, n, bit_offset, bits, log2_b,
    static_cast<unsigned long long*>(cursors.data()), keys_out, payload_out);
  JOINERY_CHECK_LAUNCH();
}

#define JOINERY_INSTANTIATE_SWWC(K, P)                                                       \
  template void swwc_partition<K, P>(K const*, P const*, size_type, int, int, K*, P*,         \
                                     std::int64_t*, stream_ref, memory_resource*);
JOINERY_INSTANTIATE_SWWC(std::uint32_t, no_payload)
JOINERY_INSTANTIATE_SWWC(std::uint32_t, std::uint32_t)
JOINERY_INSTANTIATE_SWWC(std::uint32_t, std::uint64_t)
JOINERY_INSTANTIATE_SWWC(std::uint64_t, no_payload)
JOINERY_INSTANTIATE_SWWC(std::uint64_t, std::uint32_t)
JOINERY_INSTANTIATE_SWWC(std::uint64_t, std::uint64_t)
#undef JOINERY_INSTANTIATE_SWWC

}  // namespace joinery::detail::gpu
