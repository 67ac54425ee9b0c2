#pragma once
// Internal: aggregates a group-by composes from other group-bys, on either backend.
//   count_distinct: a group-by on the keys and the counted column (one row per distinct pair,
//     NULL values included as their own pair), then one on the keys counting the pairs' non-NULL
//     values; its groups are aligned with the other aggregates' by ordering both by key.
//   SUM with overflow_policy::error over a 64-bit integer column: the sums of the values' 32-bit
//     halves (neither can wrap below 2^32 rows), combined exactly and checked against the
//     result type's range; the narrower integer types cannot leave int64 / uint64 there.
#include <joinery/groupby.hpp>

#include <vector>

namespace joinery::detail {

/// Whether the request holds an aggregate composed here.
bool needs_composed_groupby(table_view const& input, std::vector<aggregation> const& aggregations,
                            groupby_options const& options);

/// groupby() of a request needs_composed_groupby() accepts.
groupby_result composed_groupby(table_view const& input, std::vector<size_type> const& keys,
                                std::vector<aggregation> const& aggregations,
                                groupby_options const& options, stream_ref stream,
                                memory_resource_ref mr);

}  // namespace joinery::detail
