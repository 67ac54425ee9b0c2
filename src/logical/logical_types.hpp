#pragma once
// Internal: joins and group-bys over the types stored as integers (bool8, date32, the
// timestamps, decimal64 and decimal128). The algorithms see their storage: bool8 as uint8,
// date32 as int32, timestamps and decimal64 as int64, a decimal128 column as two columns (its
// high int64 half, then its low uint64 half, so that the pair orders as the value does); the
// result's columns get their types back (DESIGN.md 7.1c).
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <vector>

namespace joinery::detail::logical {

/// Whether a key, or (outside the index form) a payload, has a logical type.
bool join_has_logical(table_view const& build, std::vector<size_type> const& build_keys,
                      table_view const& probe, std::vector<size_type> const& probe_keys,
                      join_options const& options);

/// join() (sink null) or join_batches() over logical-typed columns.
join_result logical_join(table_view const& build, std::vector<size_type> const& build_keys,
                         table_view const& probe, std::vector<size_type> const& probe_keys,
                         join_options const& options, join_batch_sink const* sink,
                         stream_ref stream, memory_resource_ref mr);

/// Whether a key or an aggregated column has a logical type.
bool groupby_has_logical(table_view const& input, std::vector<size_type> const& keys,
                         std::vector<aggregation> const& aggregations);

/// The result type of an aggregate of a logical-typed column (throws for one it does not take).
type_id logical_result_type(aggregation_kind k, type_id input);

/// groupby() over logical-typed keys and values: COUNT of any; MIN / MAX of bool8, dates,
/// timestamps and decimal64 (of their type); SUM of bool8 (int64) and of decimal64 (decimal128,
/// its scale kept; exact below 2^32 rows a group); AVG of bool8 and decimal64 (float64).
groupby_result logical_groupby(table_view const& input, std::vector<size_type> const& keys,
                               std::vector<aggregation> const& aggregations,
                               groupby_options const& options, stream_ref stream,
                               memory_resource_ref mr);

}  // namespace joinery::detail::logical
