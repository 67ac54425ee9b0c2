#pragma once
// Internal: the CPU backend's group-by algorithms.
#include <joinery/groupby.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace joinery::detail::cpu {

/// Tuning numbers of the hash group-by.
struct hash_groupby_policy {
  std::size_t chunk_rows = 1024;  ///< rows hashed, then aggregated per accumulator, at a time
  /// Groups a thread-local pre-aggregation table may hold before the run switches to radix
  /// partitioning: -1 derives it from the L2 size, 0 always partitions, a huge value never does.
  std::int64_t max_local_groups = -1;
  /// Bytes of cache a table may use (for the derived limit and partition counts); 0: L2 size.
  std::size_t cache_bytes = 0;
  /// The derived limit lets a thread table outgrow L2 up to this many times its size (or the
  /// thread's share of L3, if smaller): its misses then hit L3 and overlap, which costs less than
  /// the partitioning pass (2 threads, 1 MiB L2: g = 2^16, 3.4 MiB tables, 20% faster
  /// unpartitioned; g = 2^17 slower).
  double l2_overflow = 4.0;
  int max_partition_bits = 10;  ///< one pass; beyond ~2^10 output streams the TLB thrashes
  /// Inputs below this many rows run on one thread (the parallel region costs more).
  std::size_t serial_rows = std::size_t{1} << 14;
  /// A partition with more rows than this many times its fair share is aggregated by several
  /// threads and merged, so that one hot key does not serialise the run.
  double split_factor = 4.0;
};

/// Which path a hash group-by took (for tests and phase reporting).
enum class hash_groupby_path : std::uint8_t { pre_aggregate, partition };

/// Parallel hash group-by: per-thread pre-aggregation into cache-sized tables merged by hash
/// partition when the groups are few; radix partitioning of the rows by hash, then one table per
/// partition, when they are many. Groups come out in no particular order.
table hash_groupby(table_view const& input, size_type key_column,
                   std::vector<aggregation> const& aggregations,
                   hash_groupby_policy const& policy = {},
                   std::vector<phase_time>* phases = nullptr, hash_groupby_path* path = nullptr);

/// Tuning numbers of the sort group-by.
struct sort_groupby_policy {
  int radix_bits = 8;  ///< LSD digit width
  std::size_t chunk_rows = 1024;
  std::size_t serial_rows = std::size_t{1} << 14;
};

/// Parallel sort group-by: LSD radix sort of the keys carrying the aggregated columns, then
/// segmented aggregation over runs of equal keys (a run may span threads). Groups come out sorted by key.
table sort_groupby(table_view const& input, size_type key_column,
                   std::vector<aggregation> const& aggregations,
                   sort_groupby_policy const& policy = {},
                   std::vector<phase_time>* phases = nullptr);

}  // namespace joinery::detail::cpu
