#pragma once
// Internal: joins over keys the algorithms do not take directly (several columns, NULLs, any
// integer width, floats), and the right and full join kinds. The keys are encoded into one
// integer column a side, the join algorithm runs on those, and the result is assembled from the
// row ids it returns.
#include <joinery/join.hpp>

#include <vector>

namespace joinery::detail {

/// Whether join() must take the general key path for this request.
bool needs_general_path(table_view const& build, std::vector<size_type> const& build_keys,
                        table_view const& probe, std::vector<size_type> const& probe_keys,
                        join_options const& options);

join_result general_join(table_view const& build, std::vector<size_type> const& build_keys,
                         table_view const& probe, std::vector<size_type> const& probe_keys,
                         join_options const& options, stream_ref stream, memory_resource_ref mr);

}  // namespace joinery::detail
