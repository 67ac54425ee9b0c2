#pragma once
// Internal: the CPU radix-partitioned hash join with its tuning numbers exposed, so that tests can
// force pass counts and tiny partitions. `radix_hash_join(in, sinks)` runs it with the defaults.
#include "cpu/cpu_join.hpp"

#include <cstddef>

namespace joinery::detail::cpu {

/// Tuning numbers of the radix join. Bits left `automatic` are chosen from the L2 size of the
/// machine it runs on, so that one build partition and its hash table fit in L2.
struct radix_join_policy {
  static constexpr int automatic = -1;
  int bits_pass1 = automatic;  ///< radix bits of pass 1 (0: a single partition)
  int bits_pass2 = automatic;  ///< radix bits of pass 2 (0: one pass); automatic with a forced
                               ///< bits_pass1 means 0
  /// Fanout cap of one pass: past ~2^10 open write-combining lines the TLB and L1 thrash.
  int max_bits_per_pass = 10;
  /// Share of L2 that a build partition plus its table may fill (the probe stream needs the rest).
  double l2_fill = 0.5;
  std::size_t fallback_l2_bytes = std::size_t{512} << 10;  ///< when the cache size is unknown
  std::size_t fallback_llc_bytes = std::size_t{8} << 20;
  /// A partition whose rows exceed 1 / (threads * split_share) of its relation (and
  /// split_min_rows) is worked on by all threads: partitioned together in pass 2, or its table
  /// built once and probed in chunks of probe_chunk_rows by different threads.
  double split_share = 4.0;
  size_type split_min_rows = size_type{1} << 16;
  size_type probe_chunk_rows = size_type{1} << 14;
  /// Streaming (non-temporal) stores of full lines: 1 on, 0 off, automatic when a relation's
  /// tuples exceed the last-level cache (smaller outputs are read back from the cache).
  int non_temporal = automatic;
  /// Carry 64-bit row ids even below 2^32 rows (lets tests reach the wide path on small inputs).
  bool wide_row_ids = false;
};

/// What a run decided, for tests and benchmarks.
struct radix_join_stats {
  int bits_pass1 = 0;
  int bits_pass2 = 0;
  bool non_temporal = false;
  std::size_t tuple_bytes = 0;
  std::size_t split_pass2_partitions = 0;  ///< pass-1 partitions partitioned by all threads
  std::size_t split_join_partitions = 0;   ///< partitions built once and probed in chunks
  std::size_t probe_chunks = 0;            ///< chunk tasks of those
};

/// L2 and last-level cache bytes of cpu0 (sysfs, then sysconf), or 0 when unknown.
std::size_t l2_cache_bytes();
std::size_t llc_cache_bytes();

/// Radix bits {pass 1, pass 2} for `build_rows` build tuples costing `bytes_per_build_tuple`
/// (tuple plus table) under `policy` and an L2 of `l2_bytes`.
struct radix_bits {
  int pass1 = 0;
  int pass2 = 0;
};
radix_bits choose_radix_bits(size_type build_rows, std::size_t bytes_per_build_tuple,
                             std::size_t l2_bytes, radix_join_policy const& policy);

template <class Key, class Sink>
void radix_hash_join_with(join_input<Key> const& in, std::vector<Sink>& sinks,
                          radix_join_policy const& policy, radix_join_stats* stats = nullptr);

}  // namespace joinery::detail::cpu
