#pragma once
// Internal: the host side of HGB's tiers and of global_hash (hgb_tiers.cu), which hash_groupby.cu
// runs in turn. Each tier takes the keys as the unsigned integers of their width
// (hgb_kernel_sets.cuh) and returns the groups, or nullopt when they did not fit it.
#include "groupby/gpu/detail/common.cuh"

#include <joinery/types.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace joinery::detail::gpu::gb::hgb {

/// What every tier reads: the keys as bits, the input and its plan, the type the groups' key
/// column gets (the caller's key type), the device's SM count, the stream and memory resource.
template <class B>
struct tier_input {
  B const* keys;
  size_type n;
  table_view const& input;
  agg_plan const& plan;
  type_id key_type;
  int sms;
  stream_ref stream;
  memory_resource* mr;
};

/// The dense tier's choices (groupby_tuning's hgb_dense_* fields; benchmarks set them for A/B
/// runs) and its shared memory.
struct dense_tier_options {
  std::size_t shared_limit = 0;  ///< dynamic shared memory a block may take
  int one_group = -1;            ///< >= 0 forces the one-group kernel's choice (tests)
  int max_team = 0;              ///< largest team of blocks (0: policy::max_dense_team)
  int max_row_cost = 0;          ///< dense_layout_for's bound (0: policy::max_dense_row_cost)
  int forced_batch = 0;          ///< accumulators a pass (0: the cheapest layout's)
  bool allow_narrow = true;      ///< 16-byte loads where dense_narrow_batch accepts the batch
  bool lo32_kernel = true;       ///< batches of int32 sums only run their own kernel
  int lo32 = 0;                  ///< int32 sums as 32-bit partials: -1 never, 0 chosen, 1 always,
                                 ///< 2 counted always
};

/// What the dense tier ran, for its phase's name.
struct dense_tier_report {
  int team = 1;               ///< blocks of a team (1: one block a window)
  bool narrow = false;        ///< every batch ran the narrow kernel
  bool lo32 = false;          ///< int32 sums were 32-bit partials
  bool counted = false;       ///< ... whose overflows were counted in shared memory
  bool own_lo32 = false;      ///< a batch ran the kernel of int32 sums only
};

/// Dynamic shared memory a block of the fused kernels may take on this device.
std::size_t device_shared_limit();
/// Tier 2's first capacity: the groups whose table and accumulators fit the device's L2.
size_type l2_groups(agg_plan const& plan, std::size_t key_bytes);
/// Whether the dense tier can lay out the plan's accumulators at all within `limit` bytes.
bool dense_tier_fits(agg_plan const& plan, std::size_t limit);

/// The share of the rows the hottest key holds, estimated from evenly spaced samples.
template <class B>
double hot_key_share(B const* keys, size_type n, stream_ref stream, memory_resource* mr);

/// The dense tier for keys whose sample spans [low, low + span] (bits, modulo 2^bits); nullopt
/// when a team of blocks cannot hold that window or a key falls outside it.
template <class B>
std::optional<group_parts> dense_tier(tier_input<B> const& in, B low, B span,
                                      dense_tier_options const& options,
                                      dense_tier_report& report);
/// Tier 1; nullopt when a block meets more groups than its shared table holds.
template <class B>
std::optional<group_parts> shared_tier(tier_input<B> const& in, std::size_t limit,
                                       int one_group);
/// Tier 2 with a table for `capacity` groups; nullopt when more groups come.
template <class B>
std::optional<group_parts> global_tier(tier_input<B> const& in, size_type capacity);
/// The global_hash baseline.
template <class B>
group_parts global_hash(tier_input<B> const& in, phase_clock& clock);

}  // namespace joinery::detail::gpu::gb::hgb
