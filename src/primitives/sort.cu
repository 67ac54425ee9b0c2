// GPU sort, dispatch layer: CUB DeviceRadixSort of keys, of (key, 4/8-byte payload) pairs (over
// all the key bits or a range of them), and of (key, int64 row id) pairs for the multi-payload
// path (the payloads are then gathered by the public layer). Sizes temporaries from `mr`,
// launches on the caller's stream; no synchronisation. Explicitly instantiated over the four key
// types and payload widths 4/8.
#include "primitives/detail/launch.cuh"
#include "primitives/detail/sort_policy.hpp"
#include "primitives/sort_dispatch.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

namespace joinery::detail::gpu {

namespace {

/// ids[i] = i, grid-stride.
__global__ void sort_row_ids_kernel(std::int64_t* __restrict__ ids, size_type n) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    ids[i] = i;
  }
}

}  // namespace

template <class K>
void radix_sort_keys(K const* keys_in, K* keys_out, size_type n, stream_ref stream,
                     memory_resource* mr, int begin_bit, int end_bit) {
  if (n == 0) { return; }
  auto const s = to_cuda(stream);
  std::size_t temp = 0;
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, temp, keys_in, keys_out, n, begin_bit,
                                                  end_bit, s));
  buffer scratch(scratch_bytes(temp), mr, stream);
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortKeys(scratch.data(), temp, keys_in, keys_out, n,
                                                  begin_bit, end_bit, s));
}

template <class K, class V>
void radix_sort_pairs(K const* keys_in, K* keys_out, V const* values_in, V* values_out,
                      size_type n, stream_ref stream, memory_resource* mr, int begin_bit,
                      int end_bit) {
  if (n == 0) { return; }
  auto const s = to_cuda(stream);
  std::size_t temp = 0;
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp, keys_in, keys_out, values_in,
                                                   values_out, n, begin_bit, end_bit, s));
  buffer scratch(scratch_bytes(temp), mr, stream);
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch.data(), temp, keys_in, keys_out,
                                                   values_in, values_out, n, begin_bit, end_bit,
                                                   s));
}

template <class K>
void radix_sort_row_ids(K const* keys_in, K* keys_out, std::int64_t* row_ids_out, size_type n,
                        stream_ref stream, memory_resource* mr) {
  using policy = radix_sort_policy;
  if (n == 0) { return; }
  auto const s = to_cuda(stream);
  buffer ids(sizeof(std::int64_t) * static_cast<std::size_t>(n), mr, stream);
  auto* d_ids = static_cast<std::int64_t*>(ids.data());
  int const blocks = grid_stride_blocks(n, policy::threads_per_block, current_sm_count(),
                                        policy::blocks_per_sm);
  sort_row_ids_kernel<<<blocks, policy::threads_per_block, 0, s>>>(d_ids, n);
  JOINERY_CHECK_LAUNCH();
  radix_sort_pairs<K, std::int64_t>(keys_in, keys_out, d_ids, row_ids_out, n, stream, mr);
}

#define JOINERY_INSTANTIATE_SORT(K)                                                            \
  template void radix_sort_keys<K>(K const*, K*, size_type, stream_ref, memory_resource*, int, \
                                   int);                                                       \
  template void radix_sort_pairs<K, std::uint32_t>(K const*, K*, std::uint32_t const*,         \
                                                   std::uint32_t*, size_type, stream_ref,      \
                                                   memory_resource*, int, int);                \
  template void radix_sort_pairs<K, std::uint64_t>(K const*, K*, std::uint64_t const*,         \
                                                   std::uint64_t*, size_type, stream_ref,      \
                                                   memory_resource*, int, int);                \
  template void radix_sort_row_ids<K>(K const*, K*, std::int64_t*, size_type, stream_ref,      \
                                      memory_resource*);
JOINERY_INSTANTIATE_SORT(std::int32_t)
JOINERY_INSTANTIATE_SORT(std::int64_t)
JOINERY_INSTANTIATE_SORT(std::uint32_t)
JOINERY_INSTANTIATE_SORT(std::uint64_t)
#undef JOINERY_INSTANTIATE_SORT

}  // namespace joinery::detail::gpu
