#pragma once
// Internal (device): the small kernels around the CUB sort of the stable partitioning: row ids,
// gathering payloads by the sorted row ids, partition bounds by binary search in sorted digits.
// Grid-stride loops over 64-bit indices.
#include "primitives/detail/radix_digit.cuh"

#include <cstdint>

namespace joinery::detail::gpu {

__device__ __forceinline__ size_type grid_thread_index() {
  return static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ size_type grid_threads() {
  return static_cast<size_type>(gridDim.x) * blockDim.x;
}

/// ids[i] = i.
template <class I>
__global__ void iota_kernel(I* __restrict__ ids, size_type n) {
  for (size_type i = grid_thread_index(); i < n; i += grid_threads()) { ids[i] = static_cast<I>(i); }
}

/// out[i] = in[ids[i]] (T moved bit for bit).
template <class T, class I>
__global__ void gather_kernel(T const* __restrict__ in, I const* __restrict__ ids, size_type n,
                              T* __restrict__ out) {
  for (size_type i = grid_thread_index(); i < n; i += grid_threads()) {
    out[i] = in[static_cast<size_type>(ids[i])];
  }
}

/// offsets[p] = the first i with digit(sorted[i]) >= p, for p in [0, fanout] (so
/// offsets[fanout] = n): `sorted` is ordered by the digit.
template <class K>
__global__ void partition_bounds_kernel(K const* __restrict__ sorted, size_type n,
                                        radix_digit<K> digit, int fanout,
                                        std::int64_t* __restrict__ offsets) {
  size_type const p = grid_thread_index();
  if (p > fanout) { return; }
  size_type lo = 0, hi = n;
  while (lo < hi) {
    size_type const mid = lo + (hi - lo) / 2;
    if (static_cast<size_type>(digit(sorted[mid])) < p) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  offsets[p] = lo;
}

}  // namespace joinery::detail::gpu
