#pragma once
// Internal: group-bys over keys the algorithms do not take directly (several columns, NULLs, any
// integer width, floats) and over values with NULLs or of 1-/2-byte integers. The keys are
// packed into one integer column, NULL values are replaced by each aggregate's identity with a
// count of the valid ones beside, the group-by algorithm runs on those, and the result is
// decoded back into the key columns and SQL's aggregates.
#include <joinery/groupby.hpp>

#include <vector>

namespace joinery::detail {

/// Whether groupby() must take the general key path for this request.
bool needs_general_groupby(table_view const& input, std::vector<size_type> const& key_columns,
                           std::vector<aggregation> const& aggregations);

groupby_result general_groupby(table_view const& input, std::vector<size_type> const& key_columns,
                               std::vector<aggregation> const& aggregations,
                               groupby_options const& options, stream_ref stream,
                               memory_resource_ref mr);

}  // namespace joinery::detail
