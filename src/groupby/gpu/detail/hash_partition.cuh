#pragma once
// Internal: the partition passes of the partition group-bys (hash_partition.cu), used by
// partition_groupby.cu.
#include "groupby/gpu/detail/common.cuh"
#include "primitives/detail/hash.cuh"

#include <cstdint>
#include <vector>

namespace joinery::detail::gpu::gb {

/// The partition passes' tuning (hash_partition.cu).
struct hash_partition_policy {
  /// The histogram: blocks of `threads`, `histogram_items` rows a thread a tile, each scatter
  /// block's chunk counted by histogram_split blocks.
  static constexpr int threads = 512;
  static constexpr int histogram_items = 16;
  static constexpr int histogram_split = 4;
  /// The scatter: tiles of scatter_tile_rows (each partition's run a tile and column about 32
  /// rows at 2^8 partitions: the runs are what the writes' efficiency follows).
  static constexpr int scatter_threads = 1024;
  static constexpr int scatter_items = 8;
  static constexpr int scatter_blocks_per_sm = 1;
  static constexpr int scatter_tile_rows = scatter_threads * scatter_items;
  /// Partitions a pass makes at most (2^bits), and the most bits of all passes (two passes).
  static constexpr int max_pass_bits = 8;
  static constexpr int max_bits = 2 * max_pass_bits;
  static constexpr int max_moved_columns = 16;  ///< PGB-TR; more: PGB-UR
};

/// A column that moves with the keys: `bytes` (4 or 8) a row from `in`, or, where `in` is null,
/// the row's index in the input (a generated row id of `bytes` bytes).
struct moved_column {
  void const* in = nullptr;
  std::uint32_t bytes = 0;
};

/// Rows moved into 2^bits partitions: partition p is rows [offsets[p], offsets[p + 1]) of
/// `keys` and of each of `columns` (in the order asked for).
struct hash_partitions {
  int bits = 0;
  buffer keys;
  std::vector<buffer> columns;
  std::vector<size_type> offsets;  ///< host, 2^bits + 1 entries
};

/// The hash whose high bits name a key's partition: murmur applied twice, so that it says
/// nothing about the slot the key takes in a table indexed by murmur's low bits.
template <class K>
__host__ __device__ __forceinline__ auto partition_hash(K k) {
  return murmur_hash{}(murmur_hash{}(k));
}

/// Moves the keys and `columns` into partitions by the high `bits` bits of partition_hash
/// (1..hash_partition_policy::max_bits): one pass up to max_pass_bits, else two, the second
/// within each partition of the first. Not stable.
template <class K>
hash_partitions hash_partition_rows(K const* keys, size_type n,
                                    std::vector<moved_column> const& columns, int bits,
                                    stream_ref stream, memory_resource* mr);

}  // namespace joinery::detail::gpu::gb
