#pragma once
// GPU radix primitives: exclusive prefix scan, radix histogram, radix partitioning.
//
// Host-only header (no CUDA types). Every function works on device columns, orders its work on
// `stream` and returns without waiting for it: the results are valid in stream order. Results
// and temporaries come from `mr` (null: joinery::device_resource()), which must be a device
// resource. Without the GPU backend (built with -DJOINERY_CUDA=OFF) every function throws
// joinery::logic_error.
//
// Radix digits are bits of the key itself: digit(k) = (k >> bit_offset) & (2^bits - 1), taken on
// the key's two's-complement bit pattern (an int32 key -1 has digit 2^bits - 1 at any offset).
// Nothing is hashed here: callers that want hash partitioning pass hashed keys.
#include <joinery/column.hpp>
#include <joinery/memory.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace joinery {

/// Largest number of radix bits of one pass (fanout 2^12): the per-block histogram and the
/// per-block write cursors must fit in shared memory. Partition by more bits in several passes
/// (e.g. the high bits first, then each partition, a view of the output, by the low bits).
inline constexpr int max_radix_bits = 12;

/// Exclusive scan with the total appended: for int64 `counts` of n entries (device, no nulls),
/// returns an int64 device column `out` of n + 1 entries, out[0] = 0, out[i] = counts[0] + ... +
/// counts[i-1] (wrapping on overflow); so out[n] is the total and `out` can serve as offsets.
column prefix_scan(column_view const& counts, stream_ref stream = default_stream(),
                   memory_resource_ref mr = nullptr);

/// Histogram of the radix digit [bit_offset, bit_offset + bits) of `keys` (a device column of a
/// key type: int32, int64, uint32, uint64; no nulls), 1 <= bits <= max_radix_bits and
/// bit_offset + bits <= the key's width in bits. Returns an int64 device column of 2^bits
/// counts. Per-block shared-memory histograms built with atomics, merged into the global one
/// (Rui & Tu 2017, Algorithm 1).
column radix_histogram(column_view const& keys, int bit_offset, int bits,
                       stream_ref stream = default_stream(), memory_resource_ref mr = nullptr);

enum class partition_algorithm : std::uint8_t {
  /// Stable contiguous partitioning (Wu et al. 2025, RADIX-PARTITION): a CUB radix sort over the
  /// digit's bits only, then each payload gathered by the permutation. Within a partition rows
  /// keep their input order, so payload columns partitioned in separate calls line up. Any
  /// number of 4- and 8-byte payload columns.
  stable_cub,
  /// Rui & Tu 2017 Algorithms 1-2: per-block shared-memory histograms, one global scan, then a
  /// reorder in which each thread holds VT tuples in registers and claims output slots with
  /// shared-memory atomics. One read of the keys more, but no sort; NOT stable (the order within
  /// a partition varies between runs). The key and at most one 4- or 8-byte payload column.
  shared_atomic,
  /// Maltenberger et al. 2022, 3.1.2: the per-block histograms and scan of shared_atomic, then a
  /// reorder that ranks each tile by digit in shared memory (warp match + per-warp counters) and
  /// copies it out in runs of one digit, so that global writes are coalesced. STABLE, like
  /// stable_cub. The key and at most one 4- or 8-byte payload column.
  block_scatter,
  /// Lutz et al. 2022 section 4, Shared software write-combining: a global histogram and scan,
  /// then one pass in which each block gathers every digit's tuples in a shared-memory buffer
  /// and writes full buffers (up to 32 tuples) at ranges taken with one global atomic. Writes
  /// are whole runs however short a digit's run in one tile is; NOT stable. The key and at most
  /// one 4- or 8-byte payload column.
  swwc,
  /// Lutz et al. 2022 section 4.3, Hierarchical software write-combining: swwc with a second
  /// buffer level in device memory. The output is cut into chunks of 256 rows; a chunk
  /// inside one partition is assembled in a per-digit ring of staging slots small enough to stay
  /// in L2, and written out in one burst by the warp that completes it (the slot then passes to a
  /// later chunk: the paper's double-buffering, with more than two buffers). Chunks at partition
  /// ends, and chunks whose slot is still busy when their first row arrives, are written
  /// directly. Longer DRAM write runs than swwc, for one more round trip through L2. Device to
  /// device it runs at a third to a half of swwc's speed on an H200 (each chunk's write-out
  /// costs a few L2 round trips on its block's critical path): prefer swwc there; this one is
  /// for destinations where long writes matter more (host memory). NOT stable. The key and at
  /// most one 4- or 8-byte payload column.
  hierarchical,
};
std::string_view to_string(partition_algorithm a) noexcept;
/// Parses "stable_cub", "shared_atomic", "block_scatter", "swwc" or "hierarchical"; throws
/// logic_error otherwise.
partition_algorithm partition_algorithm_from_string(std::string_view name);

/// Output of radix_partition: the columns reordered so that partition p occupies rows
/// [offsets[p], offsets[p + 1]) of every column, in the order of the digit value.
struct partitioned_columns {
  column keys;
  std::vector<column> payloads;  // in the order they were given
  column offsets;                // int64, 2^bits + 1 entries, on the device; offsets[2^bits] = rows
  int bit_offset = 0;
  int bits = 0;
  [[nodiscard]] size_type fanout() const noexcept { return size_type{1} << bits; }
};

/// Partitions `keys` and `payloads` (device columns of equal length, no nulls; payloads of any
/// 4- or 8-byte type, moved bit for bit) by the radix digit [bit_offset, bit_offset + bits) of
/// the keys, 1 <= bits <= max_radix_bits, bit_offset + bits <= the key's width in bits.
partitioned_columns radix_partition(column_view const& keys,
                                    std::vector<column_view> const& payloads, int bit_offset,
                                    int bits,
                                    partition_algorithm algorithm = partition_algorithm::stable_cub,
                                    stream_ref stream = default_stream(),
                                    memory_resource_ref mr = nullptr);

/// Output of radix_partition_tuples: row r's key and payload side by side, bit for bit as given,
/// at byte r * tuple_bytes() of `tuples` (the key first); partition p at rows
/// [offsets[p], offsets[p + 1]), in the order of the digit value.
struct partitioned_tuples {
  buffer tuples;  // on the device, rows * tuple_bytes() bytes
  column offsets; // int64, 2^bits + 1 entries, on the device; offsets[2^bits] = rows
  type_id key_type = type_id::uint32;
  type_id payload_type = type_id::uint32;
  size_type rows = 0;
  int bit_offset = 0;
  int bits = 0;
  [[nodiscard]] size_type fanout() const noexcept { return size_type{1} << bits; }
  [[nodiscard]] std::size_t tuple_bytes() const noexcept {
    return size_of(key_type) + size_of(payload_type);
  }
};

/// Partitions (key, payload) pairs into one array of interleaved tuples, the layout the radix
/// joins of Rui & Tu and Lutz et al. partition into, by the radix digit [bit_offset, bit_offset +
/// bits) of the keys: `keys` and `payload` device columns of equal length, no nulls, both 4 or
/// both 8 bytes wide (8- or 16-byte tuples; the payload any such type, moved bit for bit),
/// 1 <= bits <= max_radix_bits. Chunked software write-combining (Lutz et al. 2022's chunked
/// partitioning with their shared buffers): per-block histograms of contiguous block ranges,
/// scanned digit-major, give every block its own sub-range of every partition; each block
/// gathers its tuples in a shared-memory ring per digit and writes each complete chunk as one
/// aligned run (512 bytes at 8 bits), its next tile arriving by bulk copy meanwhile. Built for
/// low fanouts: the rings shrink as the fanout grows (at 11-12 bits swwc's columns are faster).
/// NOT stable. Columns that start off a 16-byte boundary take a slower path.
partitioned_tuples radix_partition_tuples(column_view const& keys, column_view const& payload,
                                          int bit_offset, int bits,
                                          stream_ref stream = default_stream(),
                                          memory_resource_ref mr = nullptr);

/// Output of split: the columns with their rows grouped by partition id, group p at rows
/// [offsets[p], offsets[p + 1]) of every column, rows of one group in input order.
struct split_columns {
  std::vector<column> columns;  // in the order they were given
  column offsets;               // int64, fanout + 1 entries, on the device; offsets[fanout] = rows
};

/// He et al. 2008 split: groups the rows of `columns` (device columns of any 1/2/4/8-byte type,
/// no nulls, each as long as the ids) by `partition_ids` (an int32 or uint32 device column, no
/// nulls, every id in [0, fanout)), 1 <= fanout <= 2^max_radix_bits; stable. When every column
/// is 4 or 8 bytes wide, the stable_cub partitioning of the ids moves the columns themselves;
/// else a histogram, a scan and a deterministic scatter (block_scatter of (id, row id) pairs),
/// then one gather per column. Unlike radix_partition the ids are any values below fanout, not digits of
/// a key. Checks the ids on the device (one synchronisation) and throws logic_error naming how
/// many lie outside [0, fanout), writing nothing.
split_columns split(column_view const& partition_ids, int fanout,
                    std::vector<column_view> const& columns, stream_ref stream = default_stream(),
                    memory_resource_ref mr = nullptr);

}  // namespace joinery
