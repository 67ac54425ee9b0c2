#pragma once
// Internal: the tile agent of the lookup primitives (hash tables, perfect hash): a grid-stride
// loop over tiles of keys, each thread holding its keys of a tile in registers.
#include "primitives/detail/grid_size.cuh"

#include <joinery/types.hpp>

namespace joinery::detail::gpu {

/// Grid-stride over tiles of Policy::tile_items keys; per tile, each thread loads its
/// items_per_thread keys (striped: coalesced) into registers, then calls op(i, key) for each.
template <class Policy>
struct lookup_agent {
  template <class Key, class Op>
  __device__ static void for_each_key(Key const* __restrict__ keys, size_type n, Op&& op) {
    size_type const tiles = ceil_div(n, Policy::tile_items);
    for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      size_type const base = tile * Policy::tile_items + threadIdx.x;
      Key k[Policy::items_per_thread];
#pragma unroll
      for (int j = 0; j < Policy::items_per_thread; ++j) {
        size_type const i = base + static_cast<size_type>(j) * Policy::threads_per_block;
        if (i < n) { k[j] = keys[i]; }
      }
#pragma unroll
      for (int j = 0; j < Policy::items_per_thread; ++j) {
        size_type const i = base + static_cast<size_type>(j) * Policy::threads_per_block;
        if (i < n) { op(i, k[j]); }
      }
    }
  }
};

}  // namespace joinery::detail::gpu
