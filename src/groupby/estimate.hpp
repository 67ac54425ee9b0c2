#pragma once
// Internal, host-only: the number of groups estimated from a sample, for the GPU group-bys that
// size partitions and tables before they see every key (PGB's fanout, sort_dictionary's table).
#include <joinery/types.hpp>

namespace joinery::detail {

/// The g whose expected number of distinct keys among `samples` uniform draws from g equally
/// likely keys, g (1 - e^(-samples / g)), is `distinct`; at most `rows`. Exact when every row was
/// sampled (samples == rows); `rows` when (nearly) every sample was distinct, which bounds g by
/// nothing smaller. Skewed keys make it low.
size_type groups_from_sample(size_type distinct, size_type samples, size_type rows);

}  // namespace joinery::detail
