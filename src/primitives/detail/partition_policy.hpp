#pragma once
// Internal: the tuning policies of the radix primitives (one constexpr struct per primitive), and
// swwc_tuning, the overrides of the swwc / Hierarchical choices for A/B runs (the benchmark's
// --swwc-* options, the tests), with the radix_partition that takes them.
// Host-includable (no CUDA types), so that tests and benchmarks can size inputs around tiles.
#include <joinery/primitives/partition.hpp>
#include <joinery/types.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace joinery::detail::gpu {

/// Rui & Tu Algorithm 1: each block counts a contiguous range of keys into a shared-memory
/// histogram with atomics, then writes or merges it.
struct radix_histogram_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int items_per_thread = 16;  // keys in flight per thread (loads before atomics)
  static constexpr int tile_items = threads_per_block * items_per_thread;
  static constexpr int max_radix_bits = joinery::max_radix_bits;  // 2^12 x 4 B counters = 16 KiB
  /// Shared counters are 32-bit: no block may count more rows than this.
  static constexpr size_type max_items_per_block = size_type{1} << 30;
};

/// Rui & Tu Algorithm 2: each thread holds VT tuples in registers and claims output slots with
/// shared-memory atomics on per-block cursors (64-bit base + 32-bit local count per digit).
/// Measured on an H200 (2^28 tuples, 8 bits, 4+4 B): 512 threads x VT 16 x 1 block/SM 11.9 ms,
/// 1024 x 8 x 1 the same, 256 x 8 x 8 blocks/SM 15.0 ms. Few large blocks (fewer write cursors)
/// win; the reorder stays bound by its one scattered store per tuple and column (4+4 B and
/// 8+8 B tuples take nearly the same time), which block-local pre-scatter would remove.
struct shared_atomic_partition_policy {
  static constexpr int threads_per_block = 512;
  static constexpr int items_per_thread = 16;  // VT
  static constexpr int tile_items = threads_per_block * items_per_thread;
  static constexpr int max_radix_bits = joinery::max_radix_bits;  // 2^12 x 12 B = 48 KiB shared
  static constexpr size_type max_items_per_block = size_type{1} << 30;
  /// Upper bound of resident blocks per SM asked of the occupancy calculator (the grid is
  /// SMs x resident blocks, each block a contiguous range of whole tiles).
  static constexpr int max_blocks_per_sm = 1;
};

/// Stable partitioning by CUB radix sort; the small kernels around it (row ids, gathers,
/// partition bounds by binary search in the sorted digits).
struct stable_partition_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int items_per_thread = 4;  // gather / iota
  static constexpr int tile_items = threads_per_block * items_per_thread;
  static constexpr int max_radix_bits = joinery::max_radix_bits;
};

/// Maltenberger et al. 3.1.2, block-local pre-scatter: each tile of Threads x VT tuples is ranked
/// by digit (warp match + per-warp counters, stable), written to shared memory in digit order,
/// then copied out so that tuples of one digit go to consecutive addresses. Shared memory per
/// block: max(tile x tuple bytes, 2^bits x warps x 2 B) + 2^bits x 10 B (64-bit write base,
/// 16-bit end of the previous tile's run). Two policies: up to 8 bits, and 9..12 bits.
template <int Threads, int VT, int MaxBlocksPerSm>
struct block_scatter_partition_policy_t {
  static constexpr int threads_per_block = Threads;
  static constexpr int items_per_thread = VT;
  static constexpr int tile_items = Threads * VT;
  static constexpr int warps = Threads / 32;
  static constexpr int max_radix_bits = joinery::max_radix_bits;
  static constexpr size_type max_items_per_block = size_type{1} << 30;
  static constexpr int max_blocks_per_sm = MaxBlocksPerSm;
};
using block_scatter_partition_policy = block_scatter_partition_policy_t<256, 16, 4>;
using block_scatter_partition_policy_high = block_scatter_partition_policy_t<256, 16, 4>;

/// Lutz et al. section 4, Shared software write-combining: per block and digit a shared-memory
/// buffer of b tuples (b a power of two up to `max_buffer_tuples`), written out whole at a range
/// taken with one global atomic. b is the largest that fits `small_smem_bytes` (two blocks per
/// SM) for tuples under `small_max_tuple_bytes` whose buffer keys fill `small_min_key_bytes`
/// there, else the largest that fits `large_smem_bytes` (one block per SM). Blocks loop over
/// tiles grid-stride.
template <int Threads, int VT, int MinBlocksPerSm = 2, int MaxBufferTuples = 32>
struct swwc_partition_policy_t {
  static constexpr int threads_per_block = Threads;
  static constexpr int items_per_thread = VT;
  static constexpr int tile_items = Threads * VT;
  static constexpr int max_radix_bits = joinery::max_radix_bits;
  static constexpr int max_buffer_tuples = MaxBufferTuples;
  /// Longest buffer swwc_tuning (log2_buffer, buffer_tuples) may force.
  static constexpr int max_forced_buffer_tuples = 128;
  /// Measured on an H200, 2^28 tuples (GB/s, small -> large): 4+4 B at 9 bits 1761 -> 1695 but
  /// at 10 bits 1295 -> 1421; 8+8 B at 8 / 9 / 10 bits 2223 -> 2302, 1853 -> 1982, 1537 -> 1788.
  /// Two blocks an SM pay off only for small tuples whose buffers already write whole sectors.
  static constexpr int sector_bytes = 32;
  static constexpr int small_min_key_bytes = 64;
  static constexpr std::size_t small_max_tuple_bytes = 16;
  static constexpr std::size_t small_smem_bytes = 96 * 1024;
  static constexpr std::size_t large_smem_bytes = 200 * 1024;
  /// 2: caps registers so two blocks fit an SM; 1: one block an SM, always the large budget.
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
};
using swwc_partition_policy = swwc_partition_policy_t<512, 8>;
/// One block an SM of 1024 threads x 4 items, 512 x 16, 1024 x 8 (the large buffer budget).
using swwc_partition_policy_wide = swwc_partition_policy_t<1024, 4, 1>;
using swwc_partition_policy_long = swwc_partition_policy_t<512, 16, 1>;
/// wide_long's buffers may grow to 128 tuples: at 8 bits with 4+4-byte tuples they take 64
/// (128 KiB; 256-byte runs per array), 1.94-1.95 ms against 2.42 with 32 and 2.23-2.27 for base
/// (H200, 2^28 tuples; BENCHMARKS.md, "primitives").
using swwc_partition_policy_wide_long = swwc_partition_policy_t<1024, 8, 1, 128>;

/// Which swwc policy a pass takes.
enum class swwc_variant : int { base = 0, wide = 1, long_tile = 2, wide_long = 3 };

/// The name of a variant, as the benchmark's --swwc-policy takes it ("unknown" past wide_long).
constexpr std::string_view swwc_variant_name(swwc_variant v) {
  switch (v) {
    case swwc_variant::base: return "base";
    case swwc_variant::wide: return "wide";
    case swwc_variant::long_tile: return "long_tile";
    case swwc_variant::wide_long: return "wide_long";
  }
  return "unknown";
}

/// The swwc policy of a digit width and tuple size (key + payload bytes), with
/// swwc_aligned_for. Measured on an H200 (2^28 tuples, ms at 8 / 9 / 10 / 11 bits, each with
/// unaligned / aligned flushes; BENCHMARKS.md, "primitives"): 4+4 B base 2.22 / 2.43 /
/// 3.01 / 3.35 and 2.15 / **2.18** / 3.11 / 3.52, wide 2.37 / 2.34 / 2.66 / 3.33 and 2.45 / 2.44
/// / 2.52 / 2.66, long 2.61 / 2.44 / 2.72 / 3.13 and 2.73 / 2.36 / 2.41 / 2.79, wide_long (64
/// tuples a buffer at 8 bits) **1.92-1.96** / 2.37 / 2.59 / 3.34 and 2.02 / 2.23 / **2.29** /
/// **2.58**; 8+8 B base 3.55 / 3.82 / 4.66 / 5.95 and 4.24 / 4.41 / 5.31 / 6.22, wide 3.27 / 3.81
/// / 4.58 / 6.24 and **3.19 / 3.36 / 3.82 / 4.52**, long 3.49 / 3.89 / 4.31 / 5.52 and 3.94 /
/// 4.10 / 4.20 / 5.30, wide_long 3.45 / 3.91 / 4.65 / 5.71 and 3.97 / 4.09 / 4.38 / 5.46. Other
/// tuple sizes take the rule of the nearer measured one.
constexpr swwc_variant swwc_variant_for(int bits, std::size_t tuple_bytes) {
  if (tuple_bytes < 16) { return bits == 9 ? swwc_variant::base : swwc_variant::wide_long; }
  return swwc_variant::wide;
}

/// Whether swwc's full buffers land on aligned rows (the agent's aligned flushes): everywhere
/// but 8-bit digits of tuples under 16 bytes, whose 64-tuple buffers already write 256-byte
/// runs (measured with swwc_variant_for above).
constexpr bool swwc_aligned_for(int bits, std::size_t tuple_bytes) {
  return !(bits <= 8 && tuple_bytes < 16);
}

/// The swwc policy of the Hierarchical pass (its staged kernel). Measured on an H200 (2^28 tuples,
/// ms at 8 / 9 / 10 / 11 bits; BENCHMARKS.md, "primitives"), base against the one
/// swwc_variant_for picks: 4+4 B 4.79 / 5.11 / 9.47 / 10.03 against 4.79 (base) / 6.56 (wide) /
/// 5.95 (wide_long) / 9.07 (long_tile); 8+8 B 10.2 / 11.7 / 12.8 / 20.6 against 8.18 (wide) /
/// 9.20 (wide) / 14.0 (long_tile) / 21.8 (long_tile). The better of the two per width.
constexpr swwc_variant hierarchical_variant_for(int bits, std::size_t tuple_bytes) {
  if (tuple_bytes < 16) {
    if (bits <= 9) { return swwc_variant::base; }
    return bits == 10 ? swwc_variant::wide_long : swwc_variant::long_tile;
  }
  return bits <= 9 ? swwc_variant::wide : swwc_variant::base;
}

/// Lutz et al. section 4.3, Hierarchical: swwc's shared buffers (swwc_partition_policy) plus a
/// second level in device memory: output chunks of 2^log2_chunk rows staged in a ring of
/// 2^log2_ring slots per digit (at most 2^12 x 2 x 256 x 16 B = 32 MiB, in L2 at the usual
/// fanouts). Chunks of at least 512 bytes of keys are the run length at which the H200's DRAM
/// writes reach ~91% of copy (~56% for 128 B); longer ones mean fewer write-outs, whose latency
/// is what the pass waits on. Measured on an H200, 2^28 tuples, ms at 8 / 9 / 10 / 11 bits, 4+4
/// B (BENCHMARKS.md, "primitives"): chunks of 64 rows 7.63 / 8.40 / 14.6 / 14.7, 128
/// rows 6.37 / 6.71 / 11.6 / 11.3, 256 rows 5.83 / 5.92 / 9.98 / 9.93, 512 rows 5.56 / 5.40 /
/// 9.00 / 9.75 but 8+8 B 5-17% slower than 256, 1024 rows slower still at 8+8 B; with 256-row
/// chunks, rings of 2 slots 4.76 / 5.14 / 9.39 / 9.99 (8+8 B 10.2 / 11.6 / 12.8 / 20.8) against
/// 2^20 tuples of rings (16 .. 2 slots) 5.83 / 5.92 / 9.98 / 9.93 (12.7 / 13.6 / 14.1 / 20.7).
struct hierarchical_partition_policy {
  static constexpr int log2_chunk = 8;
  static constexpr int log2_ring = 1;
  static constexpr int min_log2_chunk = 5;  // a buffer (<= 32 tuples) spans at most two chunks
};

/// Overrides of the swwc and Hierarchical partitionings' choices, for A/B runs (`joinery bench
/// primitives --swwc-*`, the tests). An empty field takes the policy's choice for the device,
/// the digit width and the tuple size; radix_partition checks the ranges below (logic_error).
/// Forced buffer sizes apply only where the buffers fit (see each field); elsewhere the policy's
/// own size stands, so one setting can serve a sweep over digit widths.
struct swwc_tuning {
  /// The block shape of every pass (swwc_variant_for, hierarchical_variant_for otherwise; the
  /// radix join's generated row ids take base).
  std::optional<swwc_variant> variant;
  /// swwc: full buffers flushed on aligned rows or not (swwc_aligned_for otherwise; generated
  /// row ids: not). Hierarchical, which stages whole chunks, ignores it.
  std::optional<bool> aligned_flushes;
  /// log2 of the buffer's tuples a digit, in [0, max_log2_buffer], where 2^(it) tuples a digit fit
  /// the policy's large_smem_bytes at the pass's fanout. Hierarchical caps it at 5 (its chunks
  /// must hold a buffer within two of them).
  std::optional<int> log2_buffer;
  /// swwc: tuples a digit, a multiple of 16 in [min_buffer_tuples, max_buffer_tuples] (need not
  /// be a power of two), where the buffers fit the device's shared memory a block; takes
  /// precedence over log2_buffer. Hierarchical ignores it.
  std::optional<int> buffer_tuples;
  /// Hierarchical: log2 of the rows of a staged chunk, in [min_log2_chunk, max_log2_chunk], and of
  /// the ring slots a digit, in [0, max_log2_ring] (hierarchical_partition_policy otherwise).
  /// Lowered, the ring first, while bits + log2_ring + log2_chunk > 26 (at most 2^26 staged
  /// tuples).
  std::optional<int> log2_chunk;
  std::optional<int> log2_ring;

  static constexpr int max_log2_buffer = 7;  // 2^7 = max_forced_buffer_tuples
  static constexpr int min_buffer_tuples = 48;
  static constexpr int max_buffer_tuples = 128;
  static constexpr int min_log2_chunk = hierarchical_partition_policy::min_log2_chunk;
  static constexpr int max_log2_chunk = 12;
  static constexpr int max_log2_ring = 8;
};
static_assert(1 << swwc_tuning::max_log2_buffer == swwc_partition_policy::max_forced_buffer_tuples);
static_assert(swwc_tuning::max_buffer_tuples == swwc_partition_policy::max_forced_buffer_tuples);

/// Why `t` is out of range ("" when it is not): the first field outside its range, named.
std::string swwc_tuning_problem(swwc_tuning const& t);

/// Dynamic shared memory of one swwc block (the agent's layout): each flushed digit's range
/// (64-bit), key buffers, payload buffers, fill counts, the flush list and its count.
/// payload_bytes = 0 without a payload.
template <class Policy = swwc_partition_policy>
constexpr std::size_t swwc_smem_bytes(int fanout, int b, std::size_t key_bytes,
                                      std::size_t payload_bytes) {
  auto const slots = static_cast<std::size_t>(fanout) * static_cast<std::size_t>(b);
  return sizeof(unsigned long long) * static_cast<std::size_t>(fanout) +
         slots * (key_bytes + payload_bytes) +
         (sizeof(unsigned) + sizeof(int)) * static_cast<std::size_t>(fanout) + sizeof(unsigned);
}

/// log2 of the swwc buffer size in tuples: the largest power of two up to the policy's cap whose
/// buffers fit `small_smem_bytes`, for tuples under the policy's small_max_tuple_bytes whose
/// buffer keys reach small_min_key_bytes there; else the largest that fits `large_smem_bytes` (at
/// least one tuple).
template <class Policy = swwc_partition_policy>
constexpr int swwc_buffer_log2(int fanout, std::size_t key_bytes, std::size_t payload_bytes) {
  auto largest = [&](std::size_t budget) {
    int log2_b = 0;
    while ((2 << log2_b) <= Policy::max_buffer_tuples &&
           swwc_smem_bytes<Policy>(fanout, 2 << log2_b, key_bytes, payload_bytes) <= budget) {
      ++log2_b;
    }
    return log2_b;
  };
  int const small = largest(Policy::small_smem_bytes);
  if (Policy::min_blocks_per_sm > 1 && key_bytes + payload_bytes < Policy::small_max_tuple_bytes &&
      (key_bytes << small) >= static_cast<std::size_t>(Policy::small_min_key_bytes)) {
    return small;
  }
  return largest(Policy::large_smem_bytes);
}

/// radix_partition_tuples: chunked write-combining into interleaved (key, payload) tuples. Each
/// block partitions its own range of whole tiles into its own sub-range of every partition (the
/// per-block histograms scanned digit-major), through a shared-memory ring of R tuples a digit;
/// a warp writes each complete chunk of R positions (aligned in the output) as one run, and the
/// block's next tile comes into a shared stage by two bulk copies while it claims and flushes the
/// current one. Measured on an H200 (2^28 tuples of 4+4 B, 8 bits, rings of 64 = 512-byte
/// runs): 1024 threads x 8 with the bulk-copied
/// stage 1.136 ms a pass; the same with 16-byte loads into registers 1.38-1.57 (the tile's loads
/// exposed at every barrier; prefetching them into registers spilled or lost occupancy); 512 x
/// 16 with the stage 1.42; tuples past the ring's chunk stored straight to their rows instead
/// of waiting for the flush 2.10 (8-byte scattered stores).
struct tuple_partition_policy {
  static constexpr int threads_per_block = 1024;
  static constexpr int stage_bytes = 64 * 1024;       // one tile of keys and payloads
  static constexpr int max_ring_bytes = 128 * 1024;   // at 8 bits 64 tuples of 8 bytes a digit
  static constexpr int max_radix_bits = joinery::max_radix_bits;
  /// Positions within a block's range of a digit are 32-bit.
  static constexpr size_type max_items_per_block = size_type{1} << 30;
  /// Tuples a thread a tile: two 16-byte loads of keys and two of payloads.
  template <class K>
  static constexpr int items_per_thread = 2 * 16 / static_cast<int>(sizeof(K));
  template <class K>
  static constexpr int tile_items = threads_per_block * items_per_thread<K>;
};

/// The per-block histograms of radix_partition_tuples' block ranges (radix_histogram_kernel on
/// the partition's grid, one block an SM, so as many threads as the partition's blocks).
struct tuple_histogram_policy {
  static constexpr int threads_per_block = 1024;
  static constexpr int items_per_thread = 8;
  static constexpr int tile_items = threads_per_block * items_per_thread;
  static constexpr int max_radix_bits = joinery::max_radix_bits;
  static constexpr size_type max_items_per_block = size_type{1} << 30;
};

}  // namespace joinery::detail::gpu

namespace joinery::detail {

/// radix_partition (primitives/partition.hpp) with the swwc and hierarchical algorithms'
/// choices overridden by `tuning` (the other algorithms ignore it); throws logic_error where
/// swwc_tuning_problem names a field. The public function passes an empty tuning.
partitioned_columns radix_partition(column_view const& keys,
                                    std::vector<column_view> const& payloads, int bit_offset,
                                    int bits, partition_algorithm algorithm,
                                    gpu::swwc_tuning const& tuning,
                                    stream_ref stream = default_stream(),
                                    memory_resource_ref mr = nullptr);

}  // namespace joinery::detail
