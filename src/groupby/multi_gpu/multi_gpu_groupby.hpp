#pragma once
// Internal, host-only: the multi-GPU group-by (multi_gpu_groupby.cpp; built
// with the CUDA backend).
#include "core/communicator.hpp"
#include "core/rank_plan.hpp"

#include <joinery/groupby.hpp>

namespace joinery::detail::multi_gpu {

/// groupby_algorithm::multi_gpu as rank `rank` of `comm` runs it on rows
/// `rows` of `part` (a collective: every rank calls it): it aggregates its rows
/// on its GPU (partial aggregates: counts, sums, minima, maxima; an average as a
/// sum and a count, 8-byte integers' sums in exact 32-bit halves), sends each
/// partial group to the rank of its key (by hash; by key range when
/// sort_by_key, so that the ranks' groups follow one another in key order), and
/// aggregates what it received: its piece of the groups, on its GPU, no key in
/// two ranks' pieces.
groupby_result groupby_on_rank(communicator const& comm, int rank, table_view const& part,
                               row_range rows, size_type key_column,
                               std::vector<aggregation> const& aggregations,
                               groupby_options const& options);

/// The same over options.devices (empty: every GPU), ranks of this process
/// taking contiguous shares of the rows; the pieces gathered into one result in
/// `mr`'s space (nullptr: the current device).
groupby_result multi_gpu_groupby(table_view const& input, size_type key_column,
                                 std::vector<aggregation> const& aggregations,
                                 groupby_options const& options, stream_ref stream,
                                 memory_resource* mr);

}  // namespace joinery::detail::multi_gpu
