#pragma once
// Internal: host-callable dispatch layer of the radix primitives (defined in partition.cu and
// partition_stable.cu, explicitly instantiated there). Arguments are already checked by the
// public functions (src/primitives/partition.cpp). Keys are passed as the unsigned integer of
// their width (digits are bits of the key's bit pattern); payloads as the unsigned integer of
// their width (moved bit for bit). Every pointer is device memory; work is ordered on `stream`,
// temporaries come from `mr`.
#include "primitives/detail/partition_policy.hpp"

#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace joinery::detail::gpu {

/// The payload type of a keys-only partitioning.
struct no_payload {};

/// out[0] = 0, out[i + 1] = in[0] + ... + in[i] (wrapping), n + 1 entries.
void prefix_scan(std::int64_t const* in, size_type n, std::int64_t* out, stream_ref stream,
                 memory_resource* mr);

/// counts[d] = rows whose digit is d, 2^bits entries. K: std::uint32_t or std::uint64_t.
template <class K>
void radix_histogram(K const* keys, size_type n, int bit_offset, int bits, std::int64_t* counts,
                     stream_ref stream, memory_resource* mr);

/// Rui & Tu Algorithms 1-2. P: no_payload, std::uint32_t or std::uint64_t. offsets: 2^bits + 1.
template <class K, class P>
void shared_atomic_partition(K const* keys, P const* payload, size_type n, int bit_offset,
                             int bits, K* keys_out, P* payload_out, std::int64_t* offsets,
                             stream_ref stream, memory_resource* mr);

/// Maltenberger et al. 3.1.2: block-local pre-scatter in shared memory, then coalesced runs.
/// Stable. P: no_payload, std::uint32_t or std::uint64_t. offsets: 2^bits + 1.
template <class K, class P>
void block_scatter_partition(K const* keys, P const* payload, size_type n, int bit_offset,
                             int bits, K* keys_out, P* payload_out, std::int64_t* offsets,
                             stream_ref stream, memory_resource* mr);

/// Lutz et al. 2022 section 4 (Shared SWWC): global histogram and scan, then one pass that
/// writes each digit's tuples through shared-memory buffers in whole runs. Not stable.
/// P: no_payload, std::uint32_t or std::uint64_t. offsets: 2^bits + 1. `tuning` overrides the
/// policy's choices (A/B runs; fields out of swwc_tuning's ranges are ignored here).
template <class K, class P>
void swwc_partition(K const* keys, P const* payload, size_type n, int bit_offset, int bits,
                    K* keys_out, P* payload_out, std::int64_t* offsets, stream_ref stream,
                    memory_resource* mr, swwc_tuning const& tuning = {});

/// Lutz et al. 2022 section 4.3 (Hierarchical SWWC): swwc_partition with a second buffer level in
/// device memory, output chunks of 256 rows assembled in per-digit L2-resident rings
/// and written out whole (swwc_stage.cuh). Not stable. Output pointers not 16-byte aligned get
/// swwc_partition instead. P: no_payload, std::uint32_t or std::uint64_t. offsets: 2^bits + 1.
/// `tuning` as for swwc_partition.
template <class K, class P>
void hierarchical_partition(K const* keys, P const* payload, size_type n, int bit_offset,
                            int bits, K* keys_out, P* payload_out, std::int64_t* offsets,
                            stream_ref stream, memory_resource* mr,
                            swwc_tuning const& tuning = {});

/// radix_partition_tuples: per-block histograms and their digit-major scan, then chunked
/// write-combining of (key, payload) pairs into `tuples_out` (n tuples of 2 x sizeof(K) bytes,
/// key first). Not stable. K = P: std::uint32_t or std::uint64_t. offsets: 2^bits + 1.
template <class K>
void tuple_partition(K const* keys, K const* payload, size_type n, int bit_offset, int bits,
                     void* tuples_out, std::int64_t* offsets, stream_ref stream,
                     memory_resource* mr);

/// Partitions keys with generated 32-bit row ids (row i gets id i; n < 2^32) over the digit
/// [0, bits) with swwc: one pass up to max_radix_bits, else two, the high half of the digit
/// first and then the low half within each of its partitions (each pass histogram + scan +
/// pass). Not stable. offsets: 2^bits + 1; bits <= 2 * max_radix_bits. `tuning` applies to the
/// swwc passes of the high digit (or the only pass).
template <class K>
void swwc_partition_with_row_ids(K const* keys, size_type n, int bits, K* keys_out,
                                 std::uint32_t* rows_out, std::int64_t* offsets,
                                 stream_ref stream, memory_resource* mr,
                                 swwc_tuning const& tuning = {});

/// He et al. 2008 split: rows_out (n entries) lists the rows 0..n-1 grouped by their id in
/// [0, fanout), in input order within a group; offsets (fanout + 1) bound the groups. Checks the
/// ids first (one synchronisation): returns how many lie outside [0, fanout), and then writes
/// nothing more. 1 <= fanout <= 2^max_radix_bits.
size_type split_rows(std::uint32_t const* ids, size_type n, int fanout, std::int64_t* rows_out,
                     std::int64_t* offsets, stream_ref stream, memory_resource* mr);

/// One payload column of a stable partitioning: `width` is 4 or 8 bytes.
struct payload_io {
  void const* in = nullptr;
  void* out = nullptr;
  std::size_t width = 0;
};

/// Stable partitioning by a CUB radix sort over the digit's bits. offsets: 2^bits + 1.
template <class K>
void stable_partition(K const* keys, size_type n, int bit_offset, int bits, K* keys_out,
                      std::vector<payload_io> const& payloads, std::int64_t* offsets,
                      stream_ref stream, memory_resource* mr);

/// split with every column 4 or 8 bytes wide: the ids checked as in split_rows (returns how many
/// lie outside [0, fanout), then writes nothing more), then a stable CUB partitioning of the ids
/// that moves the columns (columns[i].out: n entries each). offsets: fanout + 1.
size_type split_wide_columns(std::uint32_t const* ids, size_type n, int fanout,
                             std::vector<payload_io> const& columns, std::int64_t* offsets,
                             stream_ref stream, memory_resource* mr);

}  // namespace joinery::detail::gpu
