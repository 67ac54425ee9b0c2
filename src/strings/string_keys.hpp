#pragma once
// Internal: joins and group-bys over string columns. String keys become dictionary codes
// (uint32, one dictionary over both sides of a join, codes in the strings' byte order); string
// payloads ride through the join as row ordinals (or, in the aggregate form, as hashes); the
// integer request then runs on any backend and algorithm, and the result's codes and ordinals
// are turned back into strings on the host (DESIGN.md, "String columns").
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <vector>

namespace joinery::detail::strings {

/// Whether a key, or (outside the index form) a payload, is a string column.
bool join_has_strings(table_view const& build, std::vector<size_type> const& build_keys,
                      table_view const& probe, std::vector<size_type> const& probe_keys,
                      join_options const& options);

/// join() (sink null) or join_batches() over string columns.
join_result string_join(table_view const& build, std::vector<size_type> const& build_keys,
                        table_view const& probe, std::vector<size_type> const& probe_keys,
                        join_options const& options, join_batch_sink const* sink,
                        stream_ref stream, memory_resource_ref mr);

/// Whether a key or an aggregated column is a string column.
bool groupby_has_strings(table_view const& input, std::vector<size_type> const& keys,
                         std::vector<aggregation> const& aggregations);

/// groupby() over string keys (and COUNT / MIN / MAX of string columns).
groupby_result string_groupby(table_view const& input, std::vector<size_type> const& keys,
                              std::vector<aggregation> const& aggregations,
                              groupby_options const& options, stream_ref stream,
                              memory_resource_ref mr);

}  // namespace joinery::detail::strings
