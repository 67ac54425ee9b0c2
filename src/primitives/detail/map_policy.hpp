#pragma once
// Internal: the tuning policy of the map primitive. Host-includable (no CUDA types), so that
// tests can size inputs around its tile.
namespace joinery::detail::gpu {

/// Striped tiles of threads x items: enough independent loads in flight per thread to cover DRAM
/// latency (82-88% of copy on the H200 at 2^28 keys); blocks_per_sm caps the grid-stride grid.
struct map_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int items_per_thread = 8;
  static constexpr int tile_items = threads_per_block * items_per_thread;
  static constexpr int blocks_per_sm = 8;
};

}  // namespace joinery::detail::gpu
