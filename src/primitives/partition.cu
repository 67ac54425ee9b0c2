// GPU radix primitives, dispatch layer: prefix scan (CUB), radix histogram and the shared-atomic
// radix partitioning of Rui & Tu (2017, Algorithms 1-2). Sizes temporaries, plans the grid from
// the device (SMs x resident blocks), launches on the caller's stream; no synchronisation.
// Explicitly instantiated over the key widths (uint32/uint64: every key type, by bit pattern)
// and payload widths (none/uint32/uint64).
#include "primitives/detail/launch.cuh"
#include "primitives/detail/partition_kernels.cuh"
#include "primitives/detail/partition_policy.hpp"
#include "primitives/partition_dispatch.hpp"

#include <cub/device/device_scan.cuh>

#include <cstdint>

namespace joinery::detail::gpu {

__global__ void partition_starts_kernel(std::int64_t const* __restrict__ scanned, int fanout,
                                        size_type stride, std::int64_t* __restrict__ offsets) {
  size_type const p = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p <= fanout) { offsets[p] = scanned[p * stride]; }
}

void prefix_scan(std::int64_t const* in, size_type n, std::int64_t* out, stream_ref stream,
                 memory_resource* mr) {
  auto const s = to_cuda(stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(out, 0, sizeof(std::int64_t), s));
  if (n == 0) { return; }
  // Unsigned, so that overflow wraps as documented.
  auto const* uin = reinterpret_cast<std::uint64_t const*>(in);
  auto* uout = reinterpret_cast<std::uint64_t*>(out) + 1;
  std::size_t temp = 0;
  JOINERY_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, temp, uin, uout, n, s));
  buffer scratch(scratch_bytes(temp), mr, stream);
  JOINERY_CUDA_TRY(cub::DeviceScan::InclusiveSum(scratch.data(), temp, uin, uout, n, s));
}

template <class K>
void radix_histogram(K const* keys, size_type n, int bit_offset, int bits, std::int64_t* counts,
                     stream_ref stream, memory_resource* /*mr: no temporaries*/) {
  using policy = radix_histogram_policy;
  auto const s = to_cuda(stream);
  int const fanout = 1 << bits;
  JOINERY_CUDA_TRY(cudaMemsetAsync(counts, 0, sizeof(std::int64_t) * fanout, s));
  if (n == 0) { return; }
  auto const kernel = radix_histogram_kernel<policy, K, false>;
  std::size_t const smem = sizeof(unsigned) * fanout;
  int const max_blocks =
    current_sm_count() * resident_blocks_per_sm(kernel, policy::threads_per_block, smem);
  auto const g = plan_range_grid(n, policy::tile_items, policy::max_items_per_block, max_blocks);
  kernel<<<g.blocks, policy::threads_per_block, smem, s>>>(keys, n, g.items_per_block, bit_offset,
                                                           bits, counts);
  JOINERY_CHECK_LAUNCH();
}

namespace {
template <class Policy, class K, class P>
void shared_atomic_partition_impl(K const* keys, P const* payload, size_type n,
                                  int bit_offset, int bits, K* keys_out, P* payload_out,
                                  std::int64_t* offsets, stream_ref stream, memory_resource* mr) {
  using policy = Policy;
  using hist_policy = radix_histogram_policy;
  static_assert(hist_policy::max_items_per_block >= policy::max_items_per_block,
                "the histogram's 32-bit counters must cover a reorder block's range");
  static_assert((sizeof(unsigned long long) + sizeof(unsigned)) << policy::max_radix_bits <= 48 * 1024,
                "the reorder's cursors must fit in the default 48 KiB of dynamic shared memory");
  static_assert(sizeof(unsigned) << hist_policy::max_radix_bits <= 48 * 1024);
  auto const s = to_cuda(stream);
  int const fanout = 1 << bits;
  if (n == 0) {
    JOINERY_CUDA_TRY(cudaMemsetAsync(offsets, 0, sizeof(std::int64_t) * (fanout + 1), s));
    return;
  }
  auto const reorder = shared_atomic_partition_kernel<policy, K, P>;
  std::size_t const reorder_smem = (sizeof(unsigned long long) + sizeof(unsigned)) * fanout;
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
void shared_atomic_partition(K const* keys, P const* payload, size_type n, int bit_offset,
                             int bits, K* keys_out, P* payload_out, std::int64_t* offsets,
                             stream_ref stream, memory_resource* mr) {
  shared_atomic_partition_impl<shared_atomic_partition_policy>(
    keys, payload, n, bit_offset, bits, keys_out, payload_out, offsets, stream, mr);
}

// Explicit instantiations over the closed lists (key and payload widths).
#define JOINERY_INSTANTIATE_HISTOGRAM(K)                                                      \
  template void radix_histogram<K>(K const*, size_type, int, int, std::int64_t*, stream_ref, \
                                   memory_resource*);
JOINERY_INSTANTIATE_HISTOGRAM(std::uint32_t)
JOINERY_INSTANTIATE_HISTOGRAM(std::uint64_t)
#undef JOINERY_INSTANTIATE_HISTOGRAM

#define JOINERY_INSTANTIATE_SHARED_ATOMIC(K, P)                                            \
  template void shared_atomic_partition<K, P>(K const*, P const*, size_type, int, int, K*, \
                                              P*, std::int64_t*, stream_ref,               \
                                              memory_resource*);
JOINERY_INSTANTIATE_SHARED_ATOMIC(std::uint32_t, no_payload)
JOINERY_INSTANTIATE_SHARED_ATOMIC(std::uint32_t, std::uint32_t)
JOINERY_INSTANTIATE_SHARED_ATOMIC(std::uint32_t, std::uint64_t)
JOINERY_INSTANTIATE_SHARED_ATOMIC(std::uint64_t, no_payload)
JOINERY_INSTANTIATE_SHARED_ATOMIC(std::uint64_t, std::uint32_t)
JOINERY_INSTANTIATE_SHARED_ATOMIC(std::uint64_t, std::uint64_t)
#undef JOINERY_INSTANTIATE_SHARED_ATOMIC

}  // namespace joinery::detail::gpu
