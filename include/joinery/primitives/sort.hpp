#pragma once
// GPU sorts of key columns, alone or with payload columns permuted along: radix sort (CUB
// DeviceRadixSort, LSD, stable) and merge sort (merge path, Rui & Tu 2017, stable, either order).
//
// Host-only header (no CUDA types). Every function works on device columns, orders its work on
// `stream` and returns without waiting for it: the results are valid in stream order. Results and
// temporaries come from `mr` (null: joinery::device_resource()), which must be a device resource.
// Without the GPU backend (built with -DJOINERY_CUDA=OFF) every function throws
// joinery::logic_error.
//
// Keys are int32, int64, uint32 or uint64 and sort by value (signed keys: -1 before 0). The sort
// is stable: rows with equal keys keep their input order, so payloads of equal keys come out in
// the order they went in.
#include <joinery/column.hpp>
#include <joinery/memory.hpp>
#include <joinery/table.hpp>

#include <cstdint>
#include <vector>

namespace joinery {

/// The keys in ascending order: a device column of keys.size() rows of the keys' type.
/// `keys`: a device column of a key type, no nulls.
column sort_keys(column_view const& keys, stream_ref stream = default_stream(),
                 memory_resource_ref mr = nullptr);

/// Sorts rows by key, stably: a device table whose column 0 is the sorted keys and column i + 1
/// is payloads[i] permuted the same way (moved bit for bit). `keys`: a device column of a key
/// type; `payloads`: device columns of 1/2/4/8-byte types, as many as wanted (zero included),
/// each as long as the keys; no nulls anywhere. One 4- or 8-byte payload is sorted with the keys
/// directly; otherwise (key, row id) pairs are sorted and every payload gathered by the ids.
table sort_pairs(column_view const& keys, std::vector<column_view> const& payloads,
                 stream_ref stream = default_stream(), memory_resource_ref mr = nullptr);

/// The order of merge_sort_pairs: ascending (smallest key first) or descending.
enum class sort_order : std::uint8_t { ascending, descending };

/// Sorts rows by key in `order`, stably, by merge sort (Rui & Tu 2017, section 3.3.1): each
/// block sorts a tile in registers and shared memory, then log2(tiles) merge passes in which
/// merge path gives every block an equal share of each pair of runs. Comparison-based (it sorts
/// by any strict weak order inside the library; here by value in `order`). Same arguments and
/// result as sort_pairs; equal keys keep their input order in both orders. The sort carries
/// 32-bit row ids below 2^32 rows and 64-bit ones beyond, and gathers every payload by the
/// sorted row ids. Temporaries: about n * (key + 12) bytes.
table merge_sort_pairs(column_view const& keys, std::vector<column_view> const& payloads,
                       sort_order order, stream_ref stream = default_stream(),
                       memory_resource_ref mr = nullptr);

}  // namespace joinery
