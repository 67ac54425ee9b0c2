#pragma once
// Internal: the tuning policies of the sort and merge-path primitives (one constexpr struct per
// primitive). Host-includable (no CUDA types), so that tests can size inputs around tiles.
#include <joinery/types.hpp>

namespace joinery::detail::gpu {

/// CUB DeviceRadixSort does its own tuning; this sizes the small kernels around it (row ids).
struct radix_sort_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int items_per_thread = 4;
  static constexpr int tile_items = threads_per_block * items_per_thread;
  /// Grid-stride grids: at most this many resident blocks per SM asked for.
  static constexpr int blocks_per_sm = 8;
};

/// Merge sort for any comparator (Rui & Tu 2017, 3.3.1): a block sorts one tile of
/// threads_per_block * items_per_thread keys in registers and shared memory
/// (cub::BlockMergeSort), then each merge pass gives every block one tile of output. The thread
/// count must be a power of two (BlockMergeSort); an odd item count keeps the serial merges'
/// shared-memory reads spread over the banks. Starting values, not yet tuned on a GPU.
struct merge_sort_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int items_per_thread = 11;
  static constexpr int tile_items = threads_per_block * items_per_thread;
};

/// One thread per diagonal, binary search on the cross-diagonal (also the merge sort's split
/// step between its passes).
struct merge_path_policy {
  static constexpr int threads_per_block = 128;
  static constexpr int blocks_per_sm = 16;
};

/// One thread per probe, plain binary search over the sorted column (its upper levels stay in
/// L1/L2 across the block's probes).
struct sorted_search_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int tile_items = threads_per_block;
  static constexpr int blocks_per_sm = 16;
};

}  // namespace joinery::detail::gpu
