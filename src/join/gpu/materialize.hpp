#pragma once
// Internal, host-only: the GPU side of GFTR materialization (the payload transforms) and the
// bandwidths the cost model (join/materialize_model.hpp) is fed with, measured once per device.
#include "join/materialize_model.hpp"

#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace joinery::detail::gpu {

/// out[i] = values[order[i]] for i < n (`width`-byte values, 1/2/4/8): a gather through the
/// permutation a join's sort produced (random reads over n rows).
void permute_values(void const* values, std::uint32_t const* order, size_type n,
                    std::size_t width, void* out, stream_ref stream);

/// out: `values` in the order a stable LSD radix sort of `keys` (`key_width`-byte bit patterns,
/// 4 or 8) by bits [0, sort_bits) gives them, i.e. the order sort_with_row_ids produces with the
/// same arguments (ties keep input order): a sort of (key, value) pairs, sequential passes.
void sort_values_by_keys(void const* keys, std::size_t key_width, void const* values,
                         std::size_t width, size_type n, int sort_bits, void* out,
                         stream_ref stream, memory_resource* mr);

/// GFTR bundles (join/materialize_model.hpp, payload_bundles): packs up to 8 columns of
/// widths[c] bytes (1/2/4/8, total <= value_width) into n `value_width`-byte values (4 or 8),
/// column c at byte offset widths[0] + ... + widths[c - 1].
void pack_columns(std::vector<void const*> const& cols, std::vector<int> const& widths,
                  size_type n, int value_width, void* out, stream_ref stream);

/// outs[c][i] = column c of bundle[ids[i]] for i < m (ids: int64 positions, none negative): one
/// pass for the whole bundle.
void gather_bundle(void const* bundle, int value_width, size_type const* ids, size_type m,
                   std::vector<void*> const& outs, std::vector<int> const& widths,
                   stream_ref stream);

/// The current device's sequential-copy, gather and sort-pass bandwidths: about 15 ms of
/// micro-benchmarks on `stream` (H200) at the first call for a device, cached for the process.
/// (join_options::tuning.bandwidths, when given, replaces the call.)
device_bandwidths measured_bandwidths(stream_ref stream);

}  // namespace joinery::detail::gpu
