#pragma once
// Internal: the sorting steps the GPU joins share (CUB radix sort of keys with 32-bit row ids),
// explicitly instantiated in join_sort.cu for uint32 and uint64 keys.
#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <cstdint>

namespace joinery::detail::gpu {

/// Largest input side of the algorithms that carry 32-bit row ids (sort-merge, radix, indexed).
inline constexpr size_type max_row_id_rows = (size_type{1} << 32) - 1;

/// keys_out / rows_out: the keys sorted by their bits [begin_bit, end_bit) (stable, LSD) with
/// the row id each key had. Unsigned keys: bit patterns.
template <class U>
void sort_with_row_ids(U const* keys_in, U* keys_out, std::uint32_t* rows_out, size_type n,
                       int begin_bit, int end_bit, stream_ref stream, memory_resource* mr);

/// keys_out / rows_out: the keys grouped by their bits [0, bits) in ascending digit order, with
/// the row id each key had; the order within a digit is unspecified (not stable). No row-id array
/// is written: swwc generates the ids while it partitions the low digit, and CUB's stable pass
/// sorts the rest (LSD).
template <class U>
void partition_with_row_ids(U const* keys_in, U* keys_out, std::uint32_t* rows_out, size_type n,
                            int bits, stream_ref stream, memory_resource* mr);

/// keys_out / values_out: (key, value) pairs sorted by the keys' bits [begin_bit, end_bit)
/// (stable, LSD). GFTR with carried payloads: the values are a side's packed payloads (uint32 or
/// uint64), moved with the keys in place of row ids.
template <class U, class V>
void sort_pairs_by_bits(U const* keys_in, U* keys_out, V const* values_in, V* values_out,
                        size_type n, int begin_bit, int end_bit, stream_ref stream,
                        memory_resource* mr);

/// out[i] = in[i] ^ sign bit: unsigned order becomes the signed order (a map primitive).
template <class U>
void flip_sign_bits(U const* in, U* out, size_type n, stream_ref stream);

/// offsets[d] = first row of `sorted` whose low `bits` bits are >= d, for d in [0, 2^bits]
/// (offsets[2^bits] = n); `sorted` is ordered by those bits.
template <class U>
void radix_partition_offsets(U const* sorted, size_type n, int bits, size_type* offsets,
                             stream_ref stream);

}  // namespace joinery::detail::gpu
