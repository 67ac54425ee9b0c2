// GPU map primitive (He et al. 2008), dispatch layer and kernel: each thread transforms
// items_per_thread rows of a tile, striped so that every load and store of a warp is coalesced;
// blocks loop over tiles grid-stride. Explicitly instantiated over the key widths.
#include "primitives/detail/hash.cuh"
#include "primitives/detail/launch.cuh"
#include "primitives/detail/map_policy.hpp"
#include "primitives/detail/radix_digit.cuh"
#include "primitives/map_dispatch.hpp"

#include <cstdint>

namespace joinery::detail::gpu {

template <class Policy, class K, class F>
__global__ void __launch_bounds__(Policy::threads_per_block)
    map_kernel(K const* __restrict__ in, size_type n, F f, K* __restrict__ out) {
  constexpr int threads = Policy::threads_per_block;
  constexpr int vt = Policy::items_per_thread;
  size_type const tiles = ceil_div(n, size_type{Policy::tile_items});
  for (size_type t = blockIdx.x; t < tiles; t += gridDim.x) {
    size_type const base = t * Policy::tile_items;
    int const valid = n - base < Policy::tile_items ? static_cast<int>(n - base) : Policy::tile_items;
    K items[vt];
    if (valid == Policy::tile_items) {
      load_striped<threads, vt, true>(in, base, valid, items);
#pragma unroll
      for (int j = 0; j < vt; ++j) { out[base + j * threads + threadIdx.x] = static_cast<K>(f(items[j])); }
    } else {
      load_striped<threads, vt, false>(in, base, valid, items);
#pragma unroll
      for (int j = 0; j < vt; ++j) {
        int const idx = j * threads + static_cast<int>(threadIdx.x);
        if (idx < valid) { out[base + idx] = static_cast<K>(f(items[j])); }
      }
    }
  }
}

namespace {
template <class K, class F>
void launch_map(K const* keys, size_type n, F f, K* out, stream_ref stream) {
  using policy = map_policy;
  auto const blocks = grid_stride_blocks(ceil_div(n, size_type{policy::items_per_thread}),
                                         policy::threads_per_block, current_sm_count(),
                                         policy::blocks_per_sm);
  map_kernel<policy, K, F><<<blocks, policy::threads_per_block, 0, to_cuda(stream)>>>(keys, n, f,
                                                                                     out);
  JOINERY_CHECK_LAUNCH();
}
}  // namespace

template <class K>
void hash_map(K const* keys, size_type n, hash_function fn, K* out, stream_ref stream) {
  if (n == 0) { return; }
  if (fn == hash_function::multiply_shift) {
    launch_map(keys, n, multiply_shift_hash{}, out, stream);
  } else {
    launch_map(keys, n, murmur_hash{}, out, stream);
  }
}

template void hash_map<std::uint32_t>(std::uint32_t const*, size_type, hash_function,
                                      std::uint32_t*, stream_ref);
template void hash_map<std::uint64_t>(std::uint64_t const*, size_type, hash_function,
                                      std::uint64_t*, stream_ref);

}  // namespace joinery::detail::gpu
