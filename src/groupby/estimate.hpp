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

/// The larger of groups_from_sample and Chao1's estimate, distinct + once^2 / (2 twice) (keys
/// drawn once and twice; distinct + once (once - 1) / 2 when none was drawn twice); at most
/// `rows`, exact when every row was sampled. Under skew (Zipf 1: about 3x the uniform model's
/// at g = 2^16 from 2^14 samples) the many keys drawn once tell of the tail that the uniform
/// model misses; on uniform keys the two agree.
size_type groups_from_profile(size_type distinct, size_type once, size_type twice,
                              size_type samples, size_type rows);

}  // namespace joinery::detail
