#pragma once
// Internal, host-only (no CUDA types): the GPU group-by backend. Defined in src/groupby/gpu/*.cu,
// present only when joinery is built with CUDA (JOINERY_HAS_CUDA); the public entry point
// (src/groupby/groupby.cpp) checks the request and calls run_groupby.
#include <joinery/groupby.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace joinery::detail::gpu {

/// Knobs of the GPU group-bys that tests and benchmarks may turn; 0 / -1 mean "derive it". The
/// library reads no other switch: benchmarks set these for A/B runs (`joinery bench gpu-groupby
/// --tuning KEY=VALUE,...`, whose keys are the field names without the `hgb_` prefix, all but
/// stop_beyond_first_table).
struct groupby_tuning {
  /// HGB tier 1: bytes of shared memory a block may use for its table of keys and accumulators
  /// (a power of two of slots, half of them groups). -1: all the device allows; 0: skip tier 1.
  std::int64_t hgb_shared_bytes = -1;
  /// HGB tier 1: every block runs the loop for one group (1) or the general one (0); -1: each
  /// block by its first rows (one key: the one-group loop).
  int hgb_one_group = -1;
  /// HGB: try the dense tier first (keys within a window of a block's slots, or of a team of
  /// blocks'; else the hashed tiers). false: straight to the hashed tier 1.
  bool hgb_dense_keys = true;
  /// HGB's dense tier: the most blocks of a team, which share a window of keys (each holds a
  /// slice of it in shared memory), at most hash_groupby_policy::max_dense_team. 0: that
  /// maximum; 1: one block's window.
  int hgb_dense_team = 0;
  /// HGB's dense tier: the most a team's layout may cost a row (team * (passes *
  /// hash_groupby_policy::dense_pass_cost + value bytes)); more and the hashed tiers run. 0:
  /// hash_groupby_policy::max_dense_row_cost.
  int hgb_dense_row_cost = 0;
  /// HGB's dense tier: accumulators a pass takes (1, or hash_groupby_policy::fused_accs), instead
  /// of the layout model's choice; 0: the model's.
  int hgb_dense_batch = 0;
  /// HGB's dense tier: load 16-byte aligned keys and 4-byte values with 16-byte loads, 4 rows a
  /// thread (the narrow form); false: always the general row-by-row loads.
  bool hgb_dense_narrow = true;
  /// HGB's dense tier: SUM of int32 values as 32-bit partials in shared memory whose overflows
  /// spill to device memory (1: wherever the plan has such a sum; 2: the same, the overflows
  /// counted in shared memory first where a counted layout fits; -1: never; 0: counted where
  /// that runs in one pass of at most hash_groupby_policy::dense_counts_max_team blocks doing
  /// less work than 8-byte sums, else spilled from dense_lo32_min_span sampled keys and below
  /// dense_lo32_max_hot_share of the rows on the hottest sampled key).
  int hgb_dense_lo32 = 0;
  /// HGB's dense tier: batches whose every accumulator is a 32-bit partial sum of int32 values
  /// (narrow form) run a kernel of their own (hgb_dense_kernel's Lo32Only); false: the narrow
  /// kernel of every operation.
  bool hgb_dense_lo32_kernel = true;
  /// HGB's dense tier: SUM of exactly two int32 columns first tries the wrapped sums
  /// (dense_wsum_groupby: four fire-and-forget shared atomics a row, 13 bytes a group), where
  /// their layout fits; false: the 32-bit partials and 8-byte sums only.
  bool hgb_dense_wsum = true;
  /// HGB tier 2: groups its first global table holds before the run restarts with a table for
  /// every row. 0: derived from the L2 cache size.
  std::int64_t hgb_initial_groups = 0;
  /// HGB: stop (group_parts::incomplete) instead of restarting when the first global table
  /// overflows, and before tier 2 under skew (skew_partition_share, skew_sort_groups);
  /// `automatic` then runs the sort group-by, which wins at so many groups, or PGB-TR. PGB:
  /// stop (incomplete) instead of failing when a partition overflows its table at the most
  /// partition bits.
  bool stop_beyond_first_table = false;
  /// With stop_beyond_first_table (automatic), past tier 1: stop (group_parts::partition_next)
  /// instead of running tier 2 when the hottest of an evenly spaced sample of keys holds at
  /// least this share of the rows; automatic then runs partition_transformed. Negative: the
  /// policy's (hash_groupby_policy::skew_partition_share, never); above 1: never.
  double skew_partition_share = -1;
  /// With stop_beyond_first_table, past tier 1, the hottest key's share below
  /// skew_partition_share but at least hash_groupby_policy::skew_sort_share: stop (incomplete)
  /// when the estimated groups are at least this many; automatic then runs PGB-TR (the sort
  /// group-by where PGB-TR does not take the plan). 0: the policy's
  /// (hash_groupby_policy::skew_sort_groups, skew_sort_groups_wide for 8-byte keys; automatic
  /// asks for one PGB-TR partition's groups when PGB-TR takes the plan); negative: never.
  std::int64_t skew_sort_groups = 0;
  /// PGB: partition bits (-1: from the estimated groups; 0..16, past 8 in two passes) and the
  /// slots of each block's table (0: as many as the shared memory holds; a power of two, at
  /// least 64). A partition with more groups than its table holds makes the run partition
  /// again, with more bits.
  int pgb_bits = -1;
  int pgb_slots = 0;
  /// sort_dictionary: groups its first dictionary table holds before it grows (by
  /// sort_groupby_policy::dictionary_growth each time it overflows). 0: the policy's default.
  std::int64_t dictionary_initial_groups = 0;
  /// automatic, where it sorts: sort_dictionary up to this many estimated groups,
  /// sort_transformed beyond. 0: sort_groupby_policy::dictionary_automatic_groups (8-byte keys)
  /// or dictionary_automatic_groups_narrow (4-byte keys, plans that do more than count).
  std::int64_t dictionary_automatic_groups = 0;
};

/// The GPU group-by algorithms of this build, in the order benchmarks list them.
/// groupby_algorithm::streamed (streamed_groupby.cu): the input's key and aggregated columns
/// streamed through the GPU in chunks, partial groups merged on the device.
groupby_result streamed_groupby(table_view const& input, size_type key_column,
                                std::vector<aggregation> const& aggregations,
                                groupby_options const& options, stream_ref stream,
                                memory_resource* mr);

std::vector<groupby_algorithm> groupby_algorithms();

/// Runs `algo` on device-resident `input` (checked by the caller: the key column
/// is of a key type, aggregated columns are 4- or 8-byte, no nulls). The result (key column, then
/// one column per aggregation, types as aggregation_result_type) is allocated from `mr` (a device
/// resource), ordered on `stream`; groups come out sorted by key when `sort_by_key` is set (the
/// sort-based algorithms always sort). Phase times go to `phases` when given; they synchronize
/// the stream between phases. `automatic` runs HGB and, when the groups overflow its first
/// global table (more than the L2 cache holds), the sort group-by with transformed values (Wu et
/// al. Figure 21: hash while the groups fit on chip, sort beyond), dictionary-encoded up to an
/// estimated 2^22 groups for 8-byte keys, 2^16 for 4-byte keys. HGB stops early for
/// partition_transformed past tier 1 with many estimated groups, many accumulators or counts
/// alone, or skewed keys over many estimated groups (groupby_tuning::skew_sort_groups), and for
/// the sort group-by where float sums meet a hot key (hash_groupby_policy::float_sum_sort_share);
/// `used` gets the algorithm run.
table run_groupby(groupby_algorithm algo, table_view const& input, size_type key_column,
                  std::vector<aggregation> const& aggregations, bool sort_by_key,
                  groupby_tuning const& tuning, std::vector<phase_time>* phases,
                  groupby_algorithm* used, stream_ref stream, memory_resource* mr);

namespace gb {
/// The number of groups estimated from evenly spaced samples of `keys` (hash_groupby.cu; also
/// declared in detail/common.cuh for the device code): PGB's fanout and first tables follow it.
template <class K>
size_type estimate_groups(K const* keys, size_type n, int sms, stream_ref stream,
                          memory_resource* mr);
}  // namespace gb

}  // namespace joinery::detail::gpu
