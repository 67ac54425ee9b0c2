#pragma once
// Internal: the CPU backend's group-by algorithms.
#include <joinery/groupby.hpp>

namespace joinery::detail::cpu {

/// Dense group ids from a hash table of the keys, then one pass per aggregate. Groups appear in
/// order of first occurrence.
table hash_groupby(table_view const& input, size_type key_column,
                   std::vector<aggregation> const& aggregations);

}  // namespace joinery::detail::cpu
