#pragma once
// Internal, host-only (no CUDA types): the GPU group-by backend. Defined in src/groupby/gpu/*.cu,
// present only when joinery is built with CUDA (JOINERY_HAS_CUDA); the public entry point
// (src/groupby/groupby.cpp) checks the request and calls run_groupby.
#include <joinery/groupby.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace joinery::detail::gpu {

/// Knobs of the GPU group-bys that tests and benchmarks may turn; 0 / -1 mean "derive it".
struct groupby_tuning {
  /// HGB: bytes of shared memory a block may use for its dense accumulators; the groups are
  /// aggregated in shared memory when g * (accumulator bytes per group) fits. -1: derived from
  /// the device (hash_groupby_policy); 0: always aggregate in global memory.
  std::int64_t hgb_shared_bytes = -1;
  /// HGB: groups the first, small hash table holds before the run restarts with a table sized
  /// for every row (a table for all rows costs a memset and a scan of 16-32 bytes per row, which
  /// is most of the run when the groups are few). 0: derived (hash_groupby_policy).
  std::int64_t hgb_initial_groups = 0;
};

/// The GPU group-by algorithms of this build, in the order benchmarks list them.
std::vector<groupby_algorithm> groupby_algorithms();

/// Runs `algo` (not automatic) on device-resident `input` (checked by the caller: the key column
/// is of a key type, aggregated columns are 4- or 8-byte, no nulls). The result (key column, then
/// one column per aggregation, types as aggregation_result_type) is allocated from `mr` (a device
/// resource), ordered on `stream`; groups come out sorted by key when `sort_by_key` is set (the
/// sort-based algorithms always sort). Phase times go to `phases` when given; they synchronize
/// the stream between phases.
table run_groupby(groupby_algorithm algo, table_view const& input, size_type key_column,
                  std::vector<aggregation> const& aggregations, bool sort_by_key,
                  groupby_tuning const& tuning, std::vector<phase_time>* phases,
                  stream_ref stream, memory_resource* mr);

}  // namespace joinery::detail::gpu
