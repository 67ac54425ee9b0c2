// GPU merge path partitioning and sorted search, dispatch layer: one thread per diagonal (the
// binary search on the cross-diagonal is joinery::merge_path_search, shared with the host
// version) and one thread per probe (binary search). Launches on the caller's stream; no
// temporaries, no synchronisation. Explicitly instantiated over the four key types.
#include "primitives/detail/launch.cuh"
#include "primitives/detail/sort_policy.hpp"
#include "primitives/sort_dispatch.hpp"

#include <joinery/primitives/merge_path.hpp>

#include <cstdint>

namespace joinery::detail::gpu {

namespace {

template <class K>
__global__ void merge_path_kernel(K const* __restrict__ a, size_type na, K const* __restrict__ b,
                                  size_type nb, size_type parts, std::int64_t* __restrict__ a_splits,
                                  std::int64_t* __restrict__ b_splits) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i <= parts;
       i += stride) {
    size_type const d = merge_path_diagonal(na + nb, parts, i);
    size_type const split = merge_path_search(a, na, b, nb, d);
    a_splits[i] = split;
    b_splits[i] = d - split;
  }
}

/// First position p in sorted[0, n) with probe < sorted[p] (Upper) or !(sorted[p] < probe).
template <bool Upper, class K>
__device__ __forceinline__ size_type search_one(K const* __restrict__ sorted, size_type n,
                                                K probe) {
  size_type lo = 0;
  size_type hi = n;
  while (lo < hi) {
    size_type const mid = lo + (hi - lo) / 2;
    K const v = sorted[mid];
    bool const go_right = Upper ? !(probe < v) : (v < probe);
    if (go_right) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

template <bool Upper, class K>
__global__ void sorted_search_kernel(K const* __restrict__ sorted, size_type n,
                                     K const* __restrict__ probes, size_type m,
                                     std::int64_t* __restrict__ out) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += stride) {
    out[i] = search_one<Upper>(sorted, n, probes[i]);
  }
}

}  // namespace

template <class K>
void merge_path_partition(K const* a, size_type na, K const* b, size_type nb, size_type parts,
                          std::int64_t* a_splits, std::int64_t* b_splits, stream_ref stream) {
  using policy = merge_path_policy;
  int const blocks = grid_stride_blocks(parts + 1, policy::threads_per_block, current_sm_count(),
                                        policy::blocks_per_sm);
  merge_path_kernel<K><<<blocks, policy::threads_per_block, 0, to_cuda(stream)>>>(
    a, na, b, nb, parts, a_splits, b_splits);
  JOINERY_CHECK_LAUNCH();
}

template <class K>
void sorted_search(K const* sorted, size_type n, K const* probes, size_type m, bool upper,
                   std::int64_t* out, stream_ref stream) {
  using policy = sorted_search_policy;
  if (m == 0) { return; }
  int const blocks = grid_stride_blocks(m, policy::threads_per_block, current_sm_count(),
                                        policy::blocks_per_sm);
  auto const s = to_cuda(stream);
  if (upper) {
    sorted_search_kernel<true, K><<<blocks, policy::threads_per_block, 0, s>>>(sorted, n, probes,
                                                                               m, out);
  } else {
    sorted_search_kernel<false, K><<<blocks, policy::threads_per_block, 0, s>>>(sorted, n, probes,
                                                                                m, out);
  }
  JOINERY_CHECK_LAUNCH();
}

#define JOINERY_INSTANTIATE_MERGE_PATH(K)                                                       \
  template void merge_path_partition<K>(K const*, size_type, K const*, size_type, size_type,    \
                                        std::int64_t*, std::int64_t*, stream_ref);              \
  template void sorted_search<K>(K const*, size_type, K const*, size_type, bool, std::int64_t*, \
                                 stream_ref);
JOINERY_INSTANTIATE_MERGE_PATH(std::int32_t)
JOINERY_INSTANTIATE_MERGE_PATH(std::int64_t)
JOINERY_INSTANTIATE_MERGE_PATH(std::uint32_t)
JOINERY_INSTANTIATE_MERGE_PATH(std::uint64_t)
#undef JOINERY_INSTANTIATE_MERGE_PATH

}  // namespace joinery::detail::gpu
