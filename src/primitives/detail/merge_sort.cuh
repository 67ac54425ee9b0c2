#pragma once
// Internal: the merge sort's kernels and dispatch (Rui & Tu 2017, section 3.3.1), the definition
// of detail::gpu::merge_sort_pairs declared in sort_dispatch.hpp. Included only by .cu files
// that instantiate it explicitly (merge_sort.cu for the library's comparators).
//
// One block-sort launch makes sorted runs of one tile each; then log2(tiles) merge passes double
// the run length. Before each pass one thread per tile finds, by merge path search, where the
// tile's first output row splits its pair of runs, so every block merges exactly one tile of
// output however the keys fall.
#include "primitives/detail/agent_merge_sort.cuh"
#include "primitives/detail/launch.cuh"
#include "primitives/detail/sort_policy.hpp"
#include "primitives/sort_dispatch.hpp"

#include <climits>
#include <cstdint>
#include <string>

namespace joinery::detail::gpu {

namespace merge_sort_kernels {

template <class Policy, class K, class IdOut, class Compare>
__global__ void __launch_bounds__(Policy::threads_per_block)
  block_sort(K const* __restrict__ keys_in, K* __restrict__ keys_out, IdOut* __restrict__ ids_out,
             size_type n, Compare comp) {
  using agent = agent_block_sort<Policy, K, IdOut, Compare>;
  __shared__ typename agent::temp_storage tmp;
  agent{tmp, comp}.process(keys_in, keys_out, ids_out, n,
                           static_cast<size_type>(blockIdx.x) * Policy::tile_items);
}

/// splits[t] = the A-side split of tile t's first output row in its pair's merge, grid-stride.
template <class K, class Compare>
__global__ void split(K const* __restrict__ keys, size_type n, size_type run, int tile,
                      size_type tiles, size_type* __restrict__ splits, Compare comp) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type t = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; t < tiles;
       t += stride) {
    merge_pair const p = merge_pair::at(t * tile, n, run);
    splits[t] = merge_path_search(keys + p.a_begin, p.a_len, keys + p.b_begin(), p.b_len,
                                  p.diagonal, comp);
  }
}

template <class Policy, class K, class IdIn, class IdOut, class Compare>
__global__ void __launch_bounds__(Policy::threads_per_block)
  merge(K const* __restrict__ keys_in, IdIn const* __restrict__ ids_in, K* __restrict__ keys_out,
        IdOut* __restrict__ ids_out, size_type n, size_type run,
        size_type const* __restrict__ splits, Compare comp) {
  using agent = agent_merge<Policy, K, IdIn, IdOut, Compare>;
  __shared__ typename agent::temp_storage tmp;
  agent{tmp, comp}.process(keys_in, ids_in, keys_out, ids_out, n, run, splits, blockIdx.x);
}

}  // namespace merge_sort_kernels

/// The sort with Id row ids through the passes (32- or 64-bit); the last step writes int64 ids.
template <class K, class Id, class Compare>
void merge_sort_pairs_with(K const* keys_in, K* keys_out, std::int64_t* row_ids_out, size_type n,
                           Compare comp, stream_ref stream, memory_resource* mr) {
  using policy = merge_sort_policy;
  namespace kernels = merge_sort_kernels;
  constexpr int tile = policy::tile_items;
  constexpr int threads = policy::threads_per_block;
  auto const s = to_cuda(stream);
  size_type const tiles = ceil_div(n, tile);
  JOINERY_EXPECTS(tiles <= INT_MAX, "merge_sort_pairs: too many rows for one grid: " +
                                      std::to_string(n));
  auto const blocks = static_cast<unsigned>(tiles);
  int passes = 0;
  for (size_type run = tile; run < n; run *= 2) { ++passes; }
  if (passes == 0) {
    kernels::block_sort<policy, K, std::int64_t, Compare>
      <<<blocks, threads, 0, s>>>(keys_in, keys_out, row_ids_out, n, comp);
    JOINERY_CHECK_LAUNCH();
    return;
  }
  // Ping-pong buffers; side 0 is the output. The block sort starts on the side that makes the
  // last pass read side 1 and write side 0. The ids of side 0 live in row_ids_out (it holds n
  // Ids of either width), which the last pass writes but does not read.
  buffer keys_tmp(sizeof(K) * static_cast<std::size_t>(n), mr, stream);
  buffer ids_tmp(sizeof(Id) * static_cast<std::size_t>(n), mr, stream);
  buffer splits(sizeof(size_type) * static_cast<std::size_t>(tiles), mr, stream);
  K* const keys[2] = {keys_out, static_cast<K*>(keys_tmp.data())};
  Id* const ids[2] = {reinterpret_cast<Id*>(row_ids_out), static_cast<Id*>(ids_tmp.data())};
  auto* const d_splits = static_cast<size_type*>(splits.data());

  int side = passes % 2;
  kernels::block_sort<policy, K, Id, Compare>
    <<<blocks, threads, 0, s>>>(keys_in, keys[side], ids[side], n, comp);
  JOINERY_CHECK_LAUNCH();
  int const split_blocks =
    grid_stride_blocks(tiles, merge_path_policy::threads_per_block, current_sm_count(),
                       merge_path_policy::blocks_per_sm);
  size_type run = tile;
  for (int p = 0; p < passes; ++p, run *= 2) {
    kernels::split<K, Compare><<<split_blocks, merge_path_policy::threads_per_block, 0, s>>>(
      keys[side], n, run, tile, tiles, d_splits, comp);
    JOINERY_CHECK_LAUNCH();
    if (p + 1 < passes) {
      kernels::merge<policy, K, Id, Id, Compare><<<blocks, threads, 0, s>>>(
        keys[side], ids[side], keys[1 - side], ids[1 - side], n, run, d_splits, comp);
    } else {
      kernels::merge<policy, K, Id, std::int64_t, Compare><<<blocks, threads, 0, s>>>(
        keys[side], ids[side], keys_out, row_ids_out, n, run, d_splits, comp);
    }
    JOINERY_CHECK_LAUNCH();
    side = 1 - side;
  }
}

template <class K, class Compare>
void merge_sort_pairs(K const* keys_in, K* keys_out, std::int64_t* row_ids_out, size_type n,
                      Compare comp, merge_sort_ids ids, stream_ref stream, memory_resource* mr) {
  if (n == 0) { return; }
  if (ids == merge_sort_ids::wide || n > size_type{UINT32_MAX}) {
    merge_sort_pairs_with<K, std::int64_t>(keys_in, keys_out, row_ids_out, n, comp, stream, mr);
  } else {
    merge_sort_pairs_with<K, std::uint32_t>(keys_in, keys_out, row_ids_out, n, comp, stream, mr);
  }
}

}  // namespace joinery::detail::gpu
