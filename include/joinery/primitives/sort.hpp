#pragma once
// GPU radix sort of key columns, alone or with payload columns permuted along (CUB
// DeviceRadixSort, LSD, stable).
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

}  // namespace joinery
