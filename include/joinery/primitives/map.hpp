#pragma once
// The map primitive of He et al. (2008): out[i] = f(in[i]) over a device column, one coalesced
// read and one coalesced write per row. Host-only header. The functions are the hash functions of
// the GPU hash tables, so a caller can hash keys once and partition or probe by the hashes.
// Without the GPU backend every function throws joinery::logic_error.
#include <joinery/column.hpp>
#include <joinery/memory.hpp>
#include <joinery/primitives/hash_table.hpp>

namespace joinery {

/// Hashes every key of `keys` (a device column of int32, int64, uint32 or uint64, no nulls) with
/// `fn`, applied to the key's bit pattern: murmur is MurmurHash3's fmix32 for 4-byte keys and
/// fmix64 for 8-byte keys; multiply_shift is the full product a * key mod 2^w (its high bits are
/// the multiply-shift hash). Returns a uint32 column for 4-byte keys, uint64 for 8-byte keys, of
/// keys.size() rows, from `mr` (null: the device resource; must allocate device memory). Ordered
/// on `stream`; returns without waiting.
column hash_keys(column_view const& keys, hash_function fn = hash_function::murmur,
                 stream_ref stream = default_stream(), memory_resource_ref mr = nullptr);

}  // namespace joinery
