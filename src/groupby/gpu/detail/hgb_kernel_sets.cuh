#pragma once
// Internal: the kernels of HGB's tiers (hash_groupby.cu) as sets of kernel pointers, so that the
// host code of the tiers (hgb_tiers.cu) launches kernels that other translation units compile:
// each unit under hgb_kernels/ instantiates one set for one key width. The kernels see a key as
// the unsigned integer of its width (they only hash it, compare it and take offsets modulo
// 2^bits), so signed and unsigned keys of one width share one compiled set.
#include "groupby/gpu/detail/common.cuh"
#include "groupby/gpu/detail/group_table.cuh"
#include "groupby/gpu/detail/shared_group_table.cuh"

#include <cstdint>

namespace joinery::detail::gpu::gb::hgb {

/// The dense tier's window: `team` * `slots` keys from the bits `base`. The blocks form teams of
/// `team` consecutive blocks that walk the same tiles; member m owns the keys base + m * slots ..
/// + slots and skips the others. A team's rows come from DRAM about once and to its other
/// members from L2, but every member loads every row: a team of T costs about T passes
/// (dense_layout_for).
template <class K>
struct dense_window {
  using bits_type = typename shared_group_table<K>::bits_type;
  bits_type base;
  int team;
};


/// hgb_shared_kernel's signature (tier 1, and the dense tier's one-group blocks).
template <class B>
using shared_kernel_fn = void (*)(B const*, size_type, acc_batch, int, int, std::uint32_t,
                                  group_table_ref<B>, insert_counters*, int, dense_window<B>);
/// hgb_dense_kernel's signature.
template <class B>
using dense_kernel_fn = void (*)(B const*, size_type, acc_batch, int, std::uint32_t,
                                 group_table_ref<B>, insert_counters*, int, dense_window<B>);
/// lo32_fixup_kernel's signature.
template <class B>
using lo32_fixup_fn = void (*)(acc_batch, dense_window<B>, size_type, group_table_ref<B>,
                               insert_counters*);
/// hgb_global_kernel's signature (tier 2).
template <class B>
using global_kernel_fn = void (*)(group_table_ref<B>, B const*, size_type, acc_batch,
                                  unsigned long long, insert_counters*);
/// global_hash_kernel's signature (the global_hash baseline).
template <class B>
using global_hash_kernel_fn = void (*)(group_table_ref<B>, B const*, size_type, acc_batch,
                                       insert_counters*);

/// The hashed tiers' kernels: tier 1's two variants (general, one-group), tier 2, global_hash.
template <class B>
struct hashed_kernel_set {
  shared_kernel_fn<B> shared_general;
  shared_kernel_fn<B> shared_one_group;
  global_kernel_fn<B> global;
  global_hash_kernel_fn<B> global_hash;
};

/// The dense tier's kernels for one block a window or for teams (dense_tier in hgb_tiers.cu says
/// which runs when): the one-group blocks' kernel, the general and narrow tile loops, the loop
/// for batches of int32 sums only (the narrow kernel itself where it has none of its own), and
/// the fix-up of spilled 32-bit sums.
template <class B>
struct dense_kernel_set {
  shared_kernel_fn<B> one_group;
  dense_kernel_fn<B> general;
  dense_kernel_fn<B> narrow;
  dense_kernel_fn<B> narrow_lo32;
  lo32_fixup_fn<B> lo32_fixup;
};

/// Defined in hgb_shared_agent.cuh, instantiated in hgb_kernels/hashed_*.cu.
template <class B>
hashed_kernel_set<B> hashed_kernels();
/// Defined in hgb_dense_agent.cuh, instantiated in hgb_kernels/dense_*.cu.
template <class B, bool Team>
dense_kernel_set<B> dense_kernels();

}  // namespace joinery::detail::gpu::gb::hgb
