#pragma once
// Internal, host-only: the multi-GPU group-by (multi_gpu_groupby.cpp; built
// with the CUDA backend).
#include <joinery/groupby.hpp>

namespace joinery::detail::multi_gpu {

/// groupby_algorithm::multi_gpu over options.devices (empty: every GPU): each
/// rank aggregates a contiguous share of the rows on its GPU (partial
/// aggregates: counts, sums, minima, maxima; an average as a sum and a count,
/// 8-byte integers' sums in exact 32-bit halves), sends each partial group to
/// the rank of its key (by hash; by key range when sort_by_key, so that the
/// ranks' groups follow one another in key order), and aggregates what it
/// received; the ranks' groups are gathered into one result in `mr`'s space
/// (nullptr: the current device).
groupby_result multi_gpu_groupby(table_view const& input, size_type key_column,
                                 std::vector<aggregation> const& aggregations,
                                 groupby_options const& options, stream_ref stream,
                                 memory_resource* mr);

}  // namespace joinery::detail::multi_gpu
