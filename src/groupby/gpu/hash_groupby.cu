// GPU hash group-bys.
//
// global_hash (the libcudf-style baseline): a set of (key -> first row) sized for every row; one
// kernel inserts each row's key and updates, with one global atomic per row and aggregate, sparse
// accumulator arrays of |R| entries indexed by the key's first row; the occupied slots then give
// the groups, whose entries are read by index at finalisation.
//
// hash (Wu et al. HGB, Algorithm 1: dense group ids, aggregation in shared memory while the groups
// fit, else in global memory). Wu et al. number the groups in a first pass over the keys and
// aggregate in a second; reading the input twice is most of the run when the groups are few, so
// the first tiers fuse the numbering into the aggregation and read every row once:
//   0. dense: when an evenly spaced sample of the keys spans fewer keys than a block has slots
//      for, a key's offset in that window is its slot (perfect hashing: no hash, no key table,
//      no claiming; a byte per slot marks the groups met): tier 1's one-group loop for blocks
//      whose first rows hold one key, a lean loop (hgb_dense_kernel) for the others. A key
//      outside the window stops the launch like an overflow, and the run goes on with tier 1.
//      A window wider than a block's shared memory is split over a team of blocks that walk the
//      same tiles, each aggregating its slice (a member still loads and tests every row: a team
//      of T costs about T passes), while the bytes every row costs stay few enough to beat tier 2.
//   1. shared: each block (one per SM, as large as it can be) numbers the keys it meets in a
//      shared-memory hash table and aggregates into shared accumulators indexed by the table
//      slot; at the end it merges its groups into a global table and global accumulators with
//      one atomic per group and aggregate. A block that meets more groups than its table holds
//      stops the launch (the flag is checked every tile), and the run goes on with tier 2.
//   2. global: one pass with a global table of (key -> slot) and accumulators indexed by the
//      slot, sized to stay in L2 (capacity: hash_groupby_policy / groupby_tuning); more groups
//      than that stop it, and the run goes on with tier 3 (or, for `automatic`, with the sort
//      group-by, which wins beyond that many groups: Wu et al. Figure 21).
//   3. Wu et al.'s two passes with a table for every row: stage 1 inserts the keys into a set and
//      numbers the occupied slots 0..g-1; stage 2 re-probes each row's key for its id and
//      aggregates with global atomics (or shared ones when the groups fit).
// In tier 1 a warp whose 32 rows are all of one group adds them to a per-lane carry, reduced with
// shuffles and added with one atomic when the group changes (two tile loops: one for a block whose
// first rows hold one key, one general; hgb_shared_kernel); in the other tiers such a warp reduces
// them with shuffles first and issues one atomic. Tiers 1 and 2 leave accumulators indexed by
// global slot; the occupied slots are then numbered into the dense output (group_parts::index maps
// a group to its slot).
//
// Layers: host dispatch (this file's hash_groupby) -> kernels -> per-tile agent code ->
// accumulate.cuh / group_table.cuh device helpers. Instantiated over the four key types.
#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/common.cuh"
#include "groupby/gpu/detail/dense_wsum.cuh"
#include "groupby/estimate.hpp"
#include "groupby/gpu/detail/group_table.cuh"
#include "groupby/gpu/detail/lo32_sum.cuh"
#include "groupby/gpu/detail/shared_group_table.cuh"

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cooperative_groups.h>
#include <cuda/functional>
#include <cuda/std/limits>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>

namespace joinery::detail::gpu::gb {

namespace cg = cooperative_groups;

namespace {

using policy = hash_groupby_policy;

/// Which of a warp's items are all of one group (then reduced with shuffles, one atomic).
template <int N>
__device__ __forceinline__ void warp_uniform(size_type const (&gid)[N], bool const (&valid)[N],
                                             bool combine_warp, bool (&uniform)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    auto const leader = __shfl_sync(full_warp, gid[j], 0);
    uniform[j] = combine_warp && __all_sync(full_warp, valid[j] && gid[j] == leader);
  }
}

/// The accumulator pointers of the dense tier's kernels (`acc_ptr(a)`), whose sum_lo32 partials
/// spill to `spill(a)`: the batch's spill array from this block's first slot of the window;
/// counted ones count in `counts(a)` first (else nullptr), `flag` stopping the run.
template <class Bits>
struct dense_accs {
  acc_batch const& batch;
  unsigned char* smem;
  Bits first;
  insert_counters* flag;
  __device__ __forceinline__ void* operator()(int a) const { return smem + batch.smem_offset[a]; }
  __device__ __forceinline__ unsigned* spill(int a) const {
    return batch.spill[a] + first;
  }
  __device__ __forceinline__ unsigned char* counts(int a) const {
    return batch.count_offset[a] != 0 ? smem + batch.count_offset[a] : nullptr;
  }
};

/// Accumulator pointers that can hold sum_lo32 partials (dense_accs).
template <class P>
concept spills_lo32 = requires(P const& p) { p.spill(0); };

/// A shared-memory update of accumulator a, its operation a compile-time constant.
template <class Op, class In, class AccPtr>
__device__ __forceinline__ void shared_update(Op op, In in, AccPtr const& acc_ptr, int a,
                                              size_type gid, acc_value v) {
  if constexpr (Op::value == acc_op::sum_lo32) {
    lo32_add(acc_ptr(a), gid, v, acc_ptr.spill(a), acc_ptr.counts(a), acc_ptr.flag);
  } else {
    shared_atomic_update(op, in, acc_ptr(a), gid, v);
  }
}

/// acc[gid] op= v for one item of every lane; a uniform item is reduced first. Warp-wide.
template <bool Shared = false>
__device__ __forceinline__ void update_value(acc_op op, value_kind in, void* acc, size_type gid,
                                             acc_value v, bool uniform, bool valid) {
  auto const update = [&](acc_value x) {
    if constexpr (Shared) {
      shared_atomic_update(op, in, acc, gid, x);
    } else {
      atomic_update(op, in, acc, gid, x);
    }
  };
  if (uniform) {
    auto const r = warp_reduce(op, v);
    if ((threadIdx.x & 31) == 0) { update(r); }
  } else if (valid) {
    update(v);
  }
}

/// One row's update of every accumulator of the batch, values loaded per accumulator (any
/// batch length). The whole warp calls it.
template <class AccPtr>
__device__ __forceinline__ void update_rows(acc_batch const& batch, AccPtr acc_ptr,
                                            size_type const (&gid)[policy::items_per_thread],
                                            size_type const (&row)[policy::items_per_thread],
                                            bool const (&valid)[policy::items_per_thread],
                                            bool combine_warp) {
  bool uniform[policy::items_per_thread];
  warp_uniform(gid, valid, combine_warp, uniform);
  for (int a = 0; a < batch.count; ++a) {
    acc_value v[policy::items_per_thread];
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      v[j] = valid[j] ? load_row(batch, a, row[j]) : identity(batch.op[a], batch.in[a]);
    }
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      update_value(batch.op[a], batch.in[a], acc_ptr(a), gid[j], v[j], uniform[j], valid[j]);
    }
  }
}

/// The fused tiers' values of a tile: every accumulator's raw bits loaded before the first
/// atomic, so the tile's loads are in flight together. NA bounds the batch length.
template <int NA, int Threads, bool Full, int Items = policy::items_per_thread>
__device__ __forceinline__ void load_values(acc_batch const& batch,
                                            size_type const (&row)[Items],
                                            bool const (&valid)[Items],
                                            unsigned long long (&raw)[NA][Items]) {
  constexpr int ipt = Items;
  for_each_acc<NA>([&](auto a_constant) {
    constexpr int a = decltype(a_constant)::value;
    bool const load = a < batch.count && batch.op[a] != acc_op::count;
    auto const stride = static_cast<std::uint64_t>(batch.src[a].stride);
    // Item j + 1 is Threads rows after item j: one pointer, stepped.
    auto const* p = static_cast<unsigned char const*>(batch.src[a].base) + batch.src[a].offset +
                    static_cast<std::uint64_t>(row[0]) * stride;
    auto const step = stride * Threads;
    // The width is tested once per accumulator, not per item (same on every thread).
    if (load && value_bytes(batch.in[a]) == 4) {
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        raw[a][j] = Full || valid[j] ? __ldg(reinterpret_cast<unsigned const*>(p + j * step)) : 0;
      }
    } else if (load) {
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        raw[a][j] =
          Full || valid[j] ? __ldg(reinterpret_cast<unsigned long long const*>(p + j * step)) : 0;
      }
    } else {
#pragma unroll
      for (int j = 0; j < ipt; ++j) { raw[a][j] = 0; }
    }
  });
}

/// This thread's rows of the tile at `first` (striped: first + threadIdx.x + j * Threads), their
/// keys and their values, all loads issued before any is used.
template <int Threads, int NA, bool Full = false, int Items = policy::items_per_thread,
          class K>
__device__ __forceinline__ void load_tile(K const* __restrict__ keys, size_type n, size_type first,
                                          acc_batch const& batch, K (&k)[Items],
                                          size_type (&row)[Items], bool (&valid)[Items],
                                          unsigned long long (&raw)[NA][Items]) {
#pragma unroll
  for (int j = 0; j < Items; ++j) {
    row[j] = first + threadIdx.x + static_cast<size_type>(j) * Threads;
    valid[j] = Full || row[j] < n;
    if (valid[j]) { k[j] = __ldg(keys + row[j]); }
  }
  load_values<NA, Threads, Full, Items>(batch, row, valid, raw);
}

/// A warp's running aggregate of its last uniform group (the same gid on every lane, each lane
/// its own partial): consecutive uniform items of one group (few groups, g = 1 above all) cost
/// one register combine each, and shuffles and an atomic only when the group changes. Reducing
/// every uniform item with shuffles had made g = 1 (all items uniform) the slowest case of tier 1
/// (90 G rows/s at 2^28 rows on the H200; 108 with a per-lane carry, 144-150 with OneGroup).
template <int NA>
struct warp_carry {
  size_type gid = -1;
  acc_value v[NA];

  /// Reduces the lanes' partials and lane 0 adds them into the shared acc_ptr(a)[gid]; the carry
  /// then holds group `next` with identities. The whole warp calls it, with the same `next`.
  template <class AccPtr>
  __device__ void restart(acc_batch const& batch, AccPtr acc_ptr, size_type next) {
    for_each_acc<NA>([&](auto a_constant) {
      constexpr int a = decltype(a_constant)::value;
      if (a >= batch.count) { return; }
      with_static_acc<spills_lo32<AccPtr>>(batch.op[a], batch.in[a], [&](auto op, auto in) {
        if (gid >= 0) {  // the same on every lane
          auto const r = warp_reduce(op, in, v[a]);
          if ((threadIdx.x & 31) == 0) { shared_update(op, in, acc_ptr, a, gid, r); }
        }
        v[a] = identity(op, in);
      });
    });
    gid = next;
  }

  /// Reduces and adds the lanes' partials; the carry empties. The whole warp calls it.
  template <class AccPtr>
  __device__ void flush(acc_batch const& batch, AccPtr acc_ptr) {
    if (gid >= 0) {  // the same on every lane
      for_each_acc<NA>([&](auto a_constant) {
        constexpr int a = decltype(a_constant)::value;
        if (a >= batch.count) { return; }
        with_static_acc<spills_lo32<AccPtr>>(batch.op[a], batch.in[a], [&](auto op, auto in) {
          auto const r = warp_reduce(op, in, v[a]);
          if ((threadIdx.x & 31) == 0) { shared_update(op, in, acc_ptr, a, gid, r); }
        });
      });
    }
    gid = -1;
  }
};

/// The update of every accumulator of the batch from values loaded up front (NA bounds the
/// batch length). The whole warp calls it. Tier 2 (no carry): uniform items are reduced with
/// shuffles, then one atomic. Tier 1: uniform items join the carry, the others take one shared
/// atomic each. OneGroup (tier 1 when the sample saw one group): the carry follows the tile's
/// first uniform group and takes its items in the accumulators' loop, one dispatch per tile;
/// otherwise per uniform item, which costs less where few warps are uniform (the merged loop's
/// registers cost tier 1 3-6% at g = 2^2..2^12).
template <int NA, bool OneGroup = false, class AccPtr>
__device__ __forceinline__ void update_loaded(acc_batch const& batch, AccPtr acc_ptr,
                                              size_type const (&gid)[policy::items_per_thread],
                                              unsigned long long const (&raw)[NA][policy::items_per_thread],
                                              bool const (&valid)[policy::items_per_thread],
                                              warp_carry<NA>* carry, bool reduce_peers = false) {
  constexpr int ipt = policy::items_per_thread;
  bool uniform[ipt];
  warp_uniform(gid, valid, true, uniform);
  bool any_uniform = false;
#pragma unroll
  for (int j = 0; j < ipt; ++j) { any_uniform = any_uniform || uniform[j]; }
  if constexpr (OneGroup) {
    // The same on every lane: uniform[j] comes from __all_sync.
    if (any_uniform) {
      size_type first = -1;
#pragma unroll
      for (int j = ipt - 1; j >= 0; --j) { first = uniform[j] ? gid[j] : first; }
      if (first != carry->gid) { carry->restart(batch, acc_ptr, first); }
    }
    for_each_acc<NA>([&](auto a_constant) {
      constexpr int a = decltype(a_constant)::value;
      if (a >= batch.count) { return; }
      with_static_acc<spills_lo32<AccPtr>>(batch.op[a], batch.in[a], [&](auto op, auto in) {
        if (!any_uniform) {
#pragma unroll
          for (int j = 0; j < ipt; ++j) {
            if (valid[j]) {
              shared_update(op, in, acc_ptr, a, gid[j], to_acc(op, in, raw[a][j]));
            }
          }
          return;
        }
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          acc_value const v = valid[j] ? to_acc(op, in, raw[a][j]) : identity(op, in);
          if (uniform[j] && gid[j] == carry->gid) {
            carry->v[a] = combine(op, carry->v[a], v);
          } else if (valid[j]) {  // a second uniform group in the tile (rare) too
            shared_update(op, in, acc_ptr, a, gid[j], v);
          }
        }
      });
    });
    return;
  }
  if (carry != nullptr && any_uniform) {  // same on every lane: uniform[j] comes from __all_sync
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      if (!uniform[j]) { continue; }
      if (carry->gid != gid[j]) { carry->flush(batch, acc_ptr); }
      for_each_acc<NA>([&](auto a_constant) {
        constexpr int a = decltype(a_constant)::value;
        if (a >= batch.count) { return; }
        with_static_acc(batch.op[a], batch.in[a], [&](auto op, auto in) {
          auto const x = to_acc(op, in, raw[a][j]);
          carry->v[a] = carry->gid < 0 ? x : combine(op, carry->v[a], x);
        });
      });
      carry->gid = gid[j];
    }
  }
  if (carry == nullptr) {  // tier 2, bound by its global atomics: the generic loop
    unsigned const lane = threadIdx.x & 31;
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      // Under skew (reduce_peers: the warp's probe found lanes sharing a slot), the lanes of
      // one slot are reduced to the lowest of them first, so a hot entry takes one global
      // atomic per warp, not one per row.
      unsigned peers = 0;
      bool dup_warp = false;
      if (reduce_peers && !uniform[j]) {  // the same on every lane
        auto const key = valid[j] ? static_cast<unsigned long long>(gid[j]) : ~0ULL - lane;
        peers = __match_any_sync(full_warp, key);
        dup_warp = __any_sync(full_warp, __popc(peers) > 1);
      }
#pragma unroll
      for (int a = 0; a < NA; ++a) {
        if (a < batch.count) {
          acc_op const op = batch.op[a];
          value_kind const in = batch.in[a];
          acc_value const v = valid[j] ? to_acc(op, in, raw[a][j]) : identity(op, in);
          if (dup_warp) {
            acc_value const r = peer_reduce(op, v, peers);
            if (valid[j] && (peers & ((1U << lane) - 1U)) == 0) {
              atomic_update(op, in, acc_ptr(a), gid[j], r);
            }
          } else {
            update_value(op, in, acc_ptr(a), gid[j], v, uniform[j], valid[j]);
          }
        }
      }
    }
    return;
  }
  // Tier 1, bound by instructions: the other items one accumulator at a time, its operation
  // resolved once per tile (the accumulator index a compile-time constant, so that raw[a] stays
  // in registers).
  for_each_acc<NA>([&](auto a_constant) {
    constexpr int a = decltype(a_constant)::value;
    if (a >= batch.count) { return; }
    with_static_acc(batch.op[a], batch.in[a], [&](auto op, auto in) {
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        if (uniform[j]) { continue; }  // in the carry
        acc_value const v = valid[j] ? to_acc(op, in, raw[a][j]) : identity(op, in);
        update_value<true>(op, in, acc_ptr(a), gid[j], v, false, valid[j]);
      }
    });
  });
}

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

/// insert()'s answer for a key of the window that another member of the team owns.
inline constexpr int dense_other_member = -2;

/// The dense tier's per-block table: no keys, key k sits in slot k - base - first (bits, modulo
/// 2^bits: a bijection, so signed keys and windows that wrap need no care), and a byte per slot
/// says whether a row of the block fell there. A key outside the window returns -1 (the run goes
/// on with the hashed table); with Team, one of another member's slice dense_other_member.
/// Without Team the block holds the whole window (first 0, window_slots == slots: the checks
/// fold away; the run-time ones cost one block a window 8-12% at g <= 2^14 on the H200). Same
/// interface as shared_group_table; there is no marker key.
template <class K, bool Team>
struct dense_group_table {
  using bits_type = typename shared_group_table<K>::bits_type;
  bits_type base;   ///< the window's first key
  bits_type first;  ///< this block's first slot in the window
  bits_type window_slots;
  int slots;
  unsigned char* seen;

  template <bool Capped = false, int Slack = 0>
  __device__ __forceinline__ int insert(K key) const {
    auto const d = static_cast<bits_type>(static_cast<bits_type>(key_bits(key)) - base);
    if constexpr (Team) {
      if (d >= window_slots) { return -1; }
      auto const local = static_cast<bits_type>(d - first);
      if (local >= static_cast<bits_type>(slots)) { return dense_other_member; }
      seen[local] = 1;
      return static_cast<int>(local);
    } else {
      if (d >= static_cast<bits_type>(slots)) { return -1; }
      seen[d] = 1;
      return static_cast<int>(d);
    }
  }
  /// insert() without marking the slot (mark() it when the row is aggregated): the dense
  /// tier's lean loop folds the mark into its update branch.
  __device__ __forceinline__ int slot_of(K key) const {
    auto const kb = static_cast<bits_type>(key_bits(key));
    if constexpr (Team) {
      auto const local = static_cast<bits_type>(kb - static_cast<bits_type>(base + first));
      if (local < static_cast<bits_type>(slots)) { return static_cast<int>(local); }
      return static_cast<bits_type>(kb - base) < window_slots ? dense_other_member : -1;
    } else {
      auto const d = static_cast<bits_type>(kb - base);
      return d < static_cast<bits_type>(slots) ? static_cast<int>(d) : -1;
    }
  }
  /// `key`'s offset in the window (bits, modulo 2^bits): in the window below window_slots, in
  /// this block's slice when offset - first is below slots (slot_of's test in parts, for
  /// 8-byte keys).
  __device__ __forceinline__ bits_type offset_of(K key) const {
    return static_cast<bits_type>(static_cast<bits_type>(key_bits(key)) - base);
  }
  __device__ __forceinline__ void mark(int i) const { seen[i] = 1; }
  __device__ void clear(int i) const { seen[i] = 0; }
  __device__ bool occupied(int i, int) const { return i < slots && seen[i] != 0; }
  __device__ K key_at(int i) const {
    return static_cast<K>(static_cast<bits_type>(base + (Team ? first : 0) +
                                                 static_cast<bits_type>(i)));
  }
};

/// `key`'s slot in the global table, inserted if new; -1, with the overflow flag raised, when the
/// table is full or would hold more than `capacity` groups.
template <class K>
__device__ __forceinline__ size_type insert_global_group(group_table_ref<K> const& table, K key,
                                                         unsigned long long capacity,
                                                         insert_counters* counters) {
  bool placed = false;
  typename group_table_ref<K>::value_type stored{};
  auto const slot = table.insert_or_find(key, 0, placed, stored);
  bool fits = slot >= 0;
  if (placed) {
    // One count per set of threads that placed a key together, not one atomic per group on one
    // address (the merges of tier 1 and the dense tier; tier 2's kernel counts per warp
    // already).
    auto const with = cg::coalesced_threads();
    unsigned long long before = 0;
    if (with.thread_rank() == 0) { before = atomicAdd(&counters->placed, with.num_threads()); }
    before = with.shfl(before, 0);
    fits = before + with.thread_rank() < capacity;
  }
  if (!fits) {
    if (!overflow_raised(counters)) { atomicExch(&counters->overflow, 1ULL); }
    return -1;
  }
  return slot;
}

/// Tier 1, one tile of the rows [first, first + tile) below `end`: number the keys in the
/// block's table, then update the shared accumulators. Full: every row of the tile exists (no
/// bounds checks). A row whose group no longer fits the table raises the overflow flag (the run
/// goes on with tier 2).
template <bool Full, int NA, bool OneGroup = false, class K, class Table, class AccPtr>
__device__ __forceinline__ void hgb_shared_tile(K const* __restrict__ keys, size_type end,
                                                size_type first, acc_batch const& batch,
                                                Table const& t, AccPtr acc_ptr,
                                                warp_carry<NA>& carry, insert_counters* counters,
                                                int& has_marker) {
  constexpr int ipt = policy::items_per_thread;
  K k[ipt];
  size_type row[ipt];
  bool valid[ipt];
  unsigned long long raw[NA][ipt];
  load_tile<policy::shared_threads, NA, Full>(keys, end, first, batch, k, row, valid, raw);
  size_type gid[ipt];
  bool over = false;
  if constexpr (requires { t.find_home(k[0]); }) {
    // Home slots first, then the home buckets of the keys that missed, then the claims of the
    // keys still not found in one loop: with many groups nearly every warp has a lane whose
    // key is off its home slot (g = 2^10 in 2^14 slots: 4.7% of keys), and a whole probe
    // there had left warps running at half their lanes (spread int32 keys: 77 G rows/s at
    // g = 2^10 against 180 at 2^6). A warp claims as often as its unluckiest lane must, not
    // once for every key a lane claims.
    unsigned missed = 0;
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      gid[j] = valid[j] ? t.find_home(k[j]) : 0;
      if (gid[j] < 0) { missed |= 1U << j; }
    }
    if (__any_sync(full_warp, missed != 0)) {
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        if ((missed >> j & 1U) != 0) {
          gid[j] = t.find_in_bucket(k[j]);
          if (gid[j] >= 0) { missed &= ~(1U << j); }
        }
      }
    }
    while (missed != 0) {
      int const m = __ffs(static_cast<int>(missed)) - 1;
      missed &= missed - 1;
      K key = k[0];
#pragma unroll
      for (int j = 1; j < ipt; ++j) { key = j == m ? k[j] : key; }
      // Capped in tier 1 too: a full table would make every later new key probe all its
      // slots (int64 keys at 2^22 groups: 1.1-1.5 ms before the flag stopped the launch).
      int const slot = t.template insert<true, 1>(key);
#pragma unroll
      for (int j = 0; j < ipt; ++j) { gid[j] = j == m ? slot : gid[j]; }
    }
    // The lanes left the walk after different numbers of misses: run on together, or every
    // later instruction of the tile issues once per branch (the partition group-by's lesson).
    __syncwarp();
  } else {
#pragma unroll
    for (int j = 0; j < ipt; ++j) { gid[j] = valid[j] ? t.template insert<true, 1>(k[j]) : 0; }
  }
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    if (valid[j] && gid[j] < 0) {
      if (gid[j] == dense_other_member) {
        // the dense tier: a team mate aggregates it
      } else {
        over = true;
      }
      valid[j] = false;
    }
    if (valid[j] && gid[j] == t.slots) { has_marker = 1; }
  }
  // One exchange a thread, not a row: with many groups most rows of a tile overflow, and their
  // exchanges all queue on one L2 address.
  if (over && !overflow_raised(counters)) { atomicExch(&counters->overflow, 1ULL); }
  update_loaded<NA, OneGroup>(batch, acc_ptr, gid, raw, valid, &carry);
}

/// Empties the block's table and sets its accumulators (slots + 1 entries) to their identities.
/// Block-wide; the caller synchronises before use.
template <class Table>
__device__ void reset_shared_groups(Table const& t, acc_batch const& batch,
                                    unsigned char* smem, int& groups, int& has_marker) {
  for (int i = threadIdx.x; i < t.slots; i += blockDim.x) { t.clear(i); }
  for (int a = 0; a < batch.count; ++a) {
    for (int i = threadIdx.x; i <= t.slots; i += blockDim.x) {
      store_identity(batch.op[a], batch.in[a], smem + batch.smem_offset[a], i);
    }
    if (batch.count_offset[a] != 0) {  // both counters of a word at their bias
      for (int i = threadIdx.x; i < (t.slots + 2) / 2; i += blockDim.x) {
        reinterpret_cast<unsigned*>(smem + batch.count_offset[a])[i] =
            policy::lo32_count_bias * 0x10001U;
      }
    }
  }
  if (threadIdx.x == 0) {
    groups = 0;
    has_marker = 0;
  }
}

/// Merges the block's groups into the global table and its slot-indexed accumulators: one insert
/// per group, one atomic per group and accumulator. More than `capacity` groups in the global
/// table raise the overflow flag. Block-wide, after a barrier.
template <class K, class Table>
__device__ void merge_shared_groups(Table const& t, acc_batch const& batch,
                                    unsigned char const* smem, int has_marker,
                                    group_table_ref<K> const& table, unsigned long long capacity,
                                    insert_counters* counters) {
  for (int i = threadIdx.x; i <= t.slots; i += blockDim.x) {
    if (!t.occupied(i, has_marker)) { continue; }
    K const key = t.key_at(i);
    auto const slot = insert_global_group(table, key, capacity, counters);
    if (slot < 0) { continue; }
    for (int a = 0; a < batch.count; ++a) {
      auto v = load_acc(batch.op[a], batch.in[a], smem + batch.smem_offset[a], i);
      if (batch.count_offset[a] != 0) {  // a counted partial's overflows not yet spilled
        int const c = static_cast<int>(
                          reinterpret_cast<unsigned short const*>(smem + batch.count_offset[a])[i]) -
                      static_cast<int>(policy::lo32_count_bias);
        v.lo += static_cast<unsigned long long>(static_cast<long long>(c)) << 32;
      }
      if (!is_identity(batch.op[a], batch.in[a], v)) {
        atomic_update(batch.op[a], batch.in[a], batch.data[a], slot, v);
      }
    }
  }
}

/// Tier 1's tiles of one block (forced inline: a call would pass the carry through the stack):
/// those of its team (consecutive blocks of `team`, all walking the same tiles; 1 but in the
/// dense tier).
template <bool OneGroup, int NA, class K, class Table, class AccPtr>
__device__ __forceinline__ void hgb_shared_loop(K const* __restrict__ keys, size_type n,
                                                acc_batch const& batch,
                                                Table const& t, AccPtr acc_ptr,
                                                warp_carry<NA>& carry,
                                                insert_counters* counters, int& has_marker,
                                                int team) {
  constexpr int tile_rows = policy::shared_threads * policy::items_per_thread;
  size_type const tiles = ceil_div(n, static_cast<size_type>(tile_rows));
  // No barrier per tile: with one block per SM the warps must drift apart, so that some load
  // while others probe. Each warp stops on its own when any block overflowed.
  for (size_type tile = blockIdx.x / team; tile < tiles; tile += gridDim.x / team) {
    if (warp_sees_overflow(counters)) { break; }
    // Every tile but the last is full: its loads and updates need no bounds checks.
    size_type const first = tile * tile_rows;
    if (first + tile_rows <= n) {
      hgb_shared_tile<true, NA, OneGroup>(keys, n, first, batch, t, acc_ptr, carry, counters,
                                          has_marker);
    } else {
      hgb_shared_tile<false, NA, OneGroup>(keys, n, first, batch, t, acc_ptr, carry, counters,
                                           has_marker);
    }
  }
}

/// Tier 1: one pass, per-block shared tables and accumulators, merged into the global table
/// and slot-indexed global accumulators at the end; stops on a block with too many groups.
/// A block whose first rows all hold one key runs the one-group loop (update_loaded's OneGroup),
/// the others the general one: the host launches both variants, and each block of a variant
/// that is not its own returns at once. One kernel with both loops spilled 10x more; a host-side
/// sample and synchronisation to pick one cost 2-3% of a run at g = 2^2..2^8. one_group >= 0
/// forces the choice (tests). Dense (the dense tier's one-group blocks, whose others run
/// hgb_dense_kernel; 1: one block a window, 2: teams): the table is dense_group_table over the
/// block's slice of `window` (`keys_offset` is then where the seen bytes start); the grid is a
/// whole number of teams.
template <class K, int NA, bool OneGroup, int Dense = 0>
__global__ void __launch_bounds__(policy::shared_threads, 1)
    hgb_shared_kernel(K const* __restrict__ keys, size_type n, acc_batch batch, int slots,
                      int max_groups, std::uint32_t keys_offset, group_table_ref<K> table,
                      insert_counters* counters, int one_group, dense_window<K> window) {
  constexpr int ipt = policy::items_per_thread;
  constexpr int tile_rows = policy::shared_threads * ipt;
  int const team = Dense == 2 ? window.team : 1;
  // The team's first tile: its members agree on the variant.
  size_type const probe = std::min<size_type>(static_cast<size_type>(blockIdx.x / team) *
                                                tile_rows + threadIdx.x, n - 1);
  bool const one = __syncthreads_and(one_group >= 0 ? one_group != 0
                                                    : key_bits(__ldg(keys + probe)) ==
                                                        key_bits(__ldg(keys)));
  if (one != OneGroup) { return; }  // the other variant's block
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int groups;
  __shared__ int has_marker;
  auto const t = [&] {
    if constexpr (Dense != 0) {
      using bits_type = typename dense_group_table<K, (Dense == 2)>::bits_type;
      return dense_group_table<K, (Dense == 2)>{
          window.base, static_cast<bits_type>(static_cast<bits_type>(blockIdx.x % team) * slots),
          static_cast<bits_type>(static_cast<bits_type>(team) * slots), slots, smem + keys_offset};
    } else {
      using table_t = shared_group_table<K>;
      return table_t{reinterpret_cast<typename table_t::bits_type*>(smem + keys_offset), slots,
                     max_groups, &groups};
    }
  }();
  reset_shared_groups(t, batch, smem, groups, has_marker);
  __syncthreads();
  auto const acc_ptr = [&] {
    if constexpr (Dense != 0) {
      return dense_accs<decltype(t.first)>{batch, smem, t.first, counters};
    } else {
      return [&](int a) -> void* { return smem + batch.smem_offset[a]; };
    }
  }();
  warp_carry<NA> carry;
  hgb_shared_loop<OneGroup>(keys, n, batch, t, acc_ptr, carry, counters, has_marker, team);
  carry.flush(batch, acc_ptr);
  if (__syncthreads_or(threadIdx.x == 0 && overflow_raised(counters))) { return; }
  // Every block's groups fit the global table (its capacity is sized for them).
  merge_shared_groups(t, batch, smem, has_marker, table, ~0ULL, counters);
}

/// The dense tier's rows of two of hgb_shared_kernel's tiles, at `first` and `second` (a block
/// owns the tiles of that kernel, whose one-group variant takes the one-group blocks), loaded
/// together: 2 x items_per_thread rows a thread in flight. Full: every row of both exists.
/// Narrow (dense_narrow_batch): the keys and every loaded value column are 16-byte aligned and
/// the values 4 bytes wide; a thread takes runs of `Run` consecutive rows, whose keys are
/// Run * sizeof(K) / 16 loads of 16 bytes and whose values one load of 4 * Run bytes a column,
/// into 32-bit registers (dense_run). The general form loads row by row, a tile's rows threads
/// apart, into 64-bit registers for any value width: at g = 2^16 (teams of 3, int32 keys, MAX)
/// the tier took 1.92 ms with it and 1.58 with the narrow form (H200, 2^28 rows).
/// A row's loaded value bits in load_dense_tiles: 32 bits in the narrow form (4-byte values
/// only), so that no high word is zeroed and moved for every row.
template <bool Narrow>
using dense_raw = cuda::std::conditional_t<Narrow, unsigned, unsigned long long>;

template <bool Full, bool Narrow, int Run, int NA, class K>
__device__ __forceinline__ void load_dense_tiles(
    K const* __restrict__ keys, size_type end, size_type first, size_type second,
    acc_batch const& batch, K (&k)[policy::dense_items_per_thread],
    bool (&valid)[policy::dense_items_per_thread],
    dense_raw<Narrow> (&raw)[NA][policy::dense_items_per_thread]) {
  constexpr int half = policy::items_per_thread;
  constexpr int threads = policy::shared_threads;
  constexpr int run = Narrow ? Run : 1;
  static_assert(half % run == 0 && (!Narrow || run * sizeof(K) >= 16),
                "a tile's rows of a thread are whole runs of whole 16-byte key loads");
  // Row i of a thread's half of a tile: run i / run of the tile's runs, threads * run rows
  // apart, at run * thread (the general form: runs of one row).
  auto const row_of = [&](int j) {
    int const i = j % half;
    return (j < half ? first : second) +
           static_cast<size_type>(i / run) * (threads * run) +
           static_cast<size_type>(threadIdx.x) * run + i % run;
  };
#pragma unroll
  for (int j = 0; j < 2 * half; ++j) { valid[j] = Full || row_of(j) < end; }
  if constexpr (Narrow && Full) {
#pragma unroll
    for (int j = 0; j < 2 * half; j += run) {
      if constexpr (sizeof(K) == 4) {
        uint4 const v = __ldg(reinterpret_cast<uint4 const*>(keys + row_of(j)));
        k[j] = static_cast<K>(v.x);
        k[j + 1] = static_cast<K>(v.y);
        k[j + 2] = static_cast<K>(v.z);
        k[j + 3] = static_cast<K>(v.w);
      } else {
#pragma unroll
        for (int q = 0; q < run; q += 2) {
          ulonglong2 const v = __ldg(reinterpret_cast<ulonglong2 const*>(keys + row_of(j) + q));
          k[j + q] = static_cast<K>(v.x);
          k[j + q + 1] = static_cast<K>(v.y);
        }
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < 2 * half; ++j) {
      if (valid[j]) { k[j] = __ldg(keys + row_of(j)); }
    }
  }
  for_each_acc<NA>([&](auto a_constant) {
    constexpr int a = decltype(a_constant)::value;
    bool const load = a < batch.count && batch.op[a] != acc_op::count;
    auto const* col = static_cast<unsigned char const*>(batch.src[a].base) + batch.src[a].offset;
    if constexpr (Narrow) {
      auto const* p = reinterpret_cast<unsigned const*>(col);
      if (!load) {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) { raw[a][j] = 0; }
      } else if constexpr (Full) {
#pragma unroll
        for (int j = 0; j < 2 * half; j += run) {
          if constexpr (run == 4) {
            uint4 const v = __ldg(reinterpret_cast<uint4 const*>(p + row_of(j)));
            raw[a][j] = v.x;
            raw[a][j + 1] = v.y;
            raw[a][j + 2] = v.z;
            raw[a][j + 3] = v.w;
          } else {
            uint2 const v = __ldg(reinterpret_cast<uint2 const*>(p + row_of(j)));
            raw[a][j] = v.x;
            raw[a][j + 1] = v.y;
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) { raw[a][j] = valid[j] ? __ldg(p + row_of(j)) : 0U; }
      }
    } else {  // the general form: any width, 64-bit registers
      auto const stride = static_cast<std::uint64_t>(batch.src[a].stride);
      unsigned char const* p[2] = {col + static_cast<std::uint64_t>(row_of(0)) * stride,
                                   col + static_cast<std::uint64_t>(row_of(half)) * stride};
      auto const step = stride * threads;
      if (load && value_bytes(batch.in[a]) == 4) {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) {
          raw[a][j] = Full || valid[j]
                        ? __ldg(reinterpret_cast<unsigned const*>(p[j / half] + (j % half) * step))
                        : 0;
        }
      } else if (load) {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) {
          raw[a][j] = Full || valid[j] ? __ldg(reinterpret_cast<unsigned long long const*>(
                                             p[j / half] + (j % half) * step))
                                       : 0;
        }
      } else {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) { raw[a][j] = 0; }
      }
    }
  });
}

/// The Lo32Only dense kernel's row updates in PTX on 32-bit shared-window addresses: with
/// generic pointers ptxas rebuilt the window's base (S2R + MOV + LEA) for every row, and a
/// predicated atomic became a branch of its own (BSSY / BSYNC) anyway.
__device__ __forceinline__ unsigned shared_address(void const* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
/// `*address += v` in shared memory, returning the old value.
__device__ __forceinline__ int shared_atomic_add(unsigned address, int v) {
  int old = 0;
  asm volatile("atom.shared.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(address), "r"(v) : "memory");
  return old;
}
/// One byte 1 at `address` in shared memory.
__device__ __forceinline__ void shared_mark(unsigned address) {
  asm volatile("st.shared.u8 [%0], %1;" : : "r"(address), "h"(static_cast<unsigned short>(1))
               : "memory");
}
/// `*p += v` in device memory, no value returned.
__device__ __forceinline__ void global_reduce_add(unsigned* p, unsigned v) {
  asm volatile("red.global.add.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

/// The narrow form's rows a run: 4 (16-byte key and value loads) but for 8-byte keys without a
/// team, 2 (one 16-byte key load, 8-byte value loads). With 8-byte keys on the H200, runs of 4
/// cost one block a window 5% at g <= 2^12, and runs of 2 cost teams of 3 7% at g = 2^16 (MAX,
/// against the general form; runs of 4 gained it 3%).
template <class K, bool Team>
inline constexpr int dense_run = sizeof(K) == 8 && !Team ? 2 : 4;

/// The dense tier's update of two tiles (load_dense_tiles): each row's slot is its key's offset
/// in the block's slice, and each accumulator is updated with one shared atomic per row. A key
/// outside the window raises the overflow flag (the run goes on with the hashed tiers); one of
/// another member's slice is skipped.
///
/// The loop is written for the instructions a row costs, because the tier is bound by issue,
/// not by DRAM: a team member pays for the rows it skips, and a row of one block cost about
/// 300 instructions a thread's 8 rows in the first version against 180 for a stand-alone probe
/// of one shape (a probe program, since removed). So:
/// - a warp tests its rows one by one for a warp-uniform slot (then reduced with shuffles before
///   one atomic) only when its first rows all hold one key (a window dominated by one key);
/// - when every accumulator of the batch has the same operation and input (MAX of two columns,
///   SUM of two), one branch per row marks the slot and updates them all, as the probe does;
///   otherwise each accumulator's operation is resolved once per call and its rows follow.
template <bool Full, bool Narrow, int NA, bool Lo32Only, bool Team, class K>
__device__ __forceinline__ void dense_tiles(K const* __restrict__ keys, size_type end,
                                            size_type first, size_type second,
                                            acc_batch const& batch,
                                            dense_group_table<K, Team> const& t,
                                            unsigned char* smem, insert_counters* counters) {
  constexpr int ipt = policy::dense_items_per_thread;
  K k[ipt];
  bool valid[ipt];
  dense_raw<Narrow> raw[NA][ipt];
  load_dense_tiles<Full, Narrow, dense_run<K, Team>, NA>(keys, end, first, second, batch, k,
                                                         valid, raw);
  int slot[ipt];
  if constexpr (sizeof(K) == 8) {
    // 8-byte keys: a row's slot is its offset less the slice's first, and a row past the window
    // (the largest offset at or beyond window_slots) raises the overflow flag once for all
    // rows, in place of slot_of's two 64-bit range tests and two selects a row. On the H200 it
    // took g = 2^16 (teams of 3) MAX from 101.8 to 107.4 G rows/s and SUM from 54.3 to 59.6;
    // with 4-byte keys it cost MAX at 2^16 4% (158 against 165), so they keep slot_of.
    using bits_type = typename dense_group_table<K, Team>::bits_type;
    bits_type far = 0;
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      bits_type const d = Full || valid[j] ? t.offset_of(k[j]) : bits_type{0};
      far = d > far ? d : far;
      bits_type const local = Team ? static_cast<bits_type>(d - t.first) : d;
      slot[j] = (Full || valid[j]) && local < static_cast<bits_type>(t.slots)
                  ? static_cast<int>(local)
                  : dense_other_member;
    }
    if (far >= t.window_slots) { atomicExch(&counters->overflow, 1ULL); }
  } else {
    bool outside = false;
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      slot[j] = Full || valid[j] ? t.slot_of(k[j]) : dense_other_member;
      outside = outside || slot[j] == -1;
    }
    if (outside) { atomicExch(&counters->overflow, 1ULL); }
  }
  int const leader = __shfl_sync(full_warp, slot[0], 0);
  bool const hot = __all_sync(full_warp, slot[0] >= 0 && slot[0] == leader);
  bool same = Lo32Only || batch.count == NA;
#pragma unroll
  for (int a = 1; a < NA && !Lo32Only; ++a) {
    same = same && batch.op[a] == batch.op[0] && batch.in[a] == batch.in[0];
  }
  // Lo32Only: every accumulator is a sum_lo32 of int32 values (the host checked), so the
  // operation is a compile-time constant and no other operation's code shares the kernel.
  auto const with_acc = [&](acc_op op, value_kind in, auto&& f) {
    if constexpr (Lo32Only) {
      f(static_op<acc_op::sum_lo32>{}, static_kind<value_kind::i32>{});
    } else {
      with_static_acc<true>(op, in, f);
    }
  };
  dense_accs<typename dense_group_table<K, Team>::bits_type> const accs{batch, smem, t.first,
                                                                        counters};
  if (!hot && same) {
    with_acc(batch.op[0], batch.in[0], [&](auto op, auto in) {
      if constexpr (Lo32Only && decltype(op)::value == acc_op::sum_lo32) {
        if (batch.count_offset[0] == 0) {
          // Spilled partials: one branch a row, both adds issued before their tests, each lost
          // 2^32 one device-memory add at a 32-bit index. The empty asm makes the addresses
          // opaque, so that ptxas keeps them in registers instead of rebuilding them every row.
          unsigned seen = shared_address(t.seen);
          unsigned base[NA];
          unsigned* spill[NA];
#pragma unroll
          for (int a = 0; a < NA; ++a) {
            base[a] = shared_address(smem + batch.smem_offset[a]);
            spill[a] = accs.spill(a);
            asm volatile("" : "+r"(base[a]), "+l"(spill[a]));
          }
          asm volatile("" : "+r"(seen));
#pragma unroll
          for (int j = 0; j < ipt; ++j) {
            if (slot[j] < 0) { continue; }
            auto const s = static_cast<unsigned>(slot[j]);
            shared_mark(seen + s);
            int old[NA];
#pragma unroll
            for (int a = 0; a < NA; ++a) {
              old[a] = shared_atomic_add(base[a] + 4 * s, static_cast<int>(raw[a][j]));
            }
#pragma unroll
            for (int a = 0; a < NA; ++a) {
              int const v = static_cast<int>(raw[a][j]);
              int const now =
                static_cast<int>(static_cast<unsigned>(old[a]) + static_cast<unsigned>(v));
              if (((old[a] ^ now) & (v ^ now)) < 0) {
                global_reduce_add(spill[a] + s, static_cast<unsigned>((v >> 31) | 1));
              }
            }
          }
          return;
        }
      }
      if constexpr (decltype(op)::value == acc_op::sum_lo32) {
        // The overflow test in 32 bits (the sign of the partial changed against both the old
        // partial's and the value's), counted in 32 bits: on the H200 (g = 2^16, two sums,
        // teams of 3) lo32_add's 64-bit difference took 2.62 ms a pass and the tier ran 93 G
        // rows/s, this 102; 64-bit spills of +-2^32 cost 2-3%. Issuing every row's adds before
        // the tests spilled registers (61 G rows/s).
        // Each row's adds to the partials; `overflow(a, slot, v, lost)` takes each add's
        // overflow test.
        auto const add_rows = [&](auto&& overflow) {
#pragma unroll
          for (int j = 0; j < ipt; ++j) {
            if (slot[j] < 0) { continue; }
            t.mark(slot[j]);
            for_each_acc<NA>([&](auto a_constant) {
              constexpr int a = decltype(a_constant)::value;
              int const v = static_cast<int>(raw[a][j]);
              int const old =
                atomicAdd(reinterpret_cast<int*>(smem + batch.smem_offset[a]) + slot[j], v);
              int const now =
                static_cast<int>(static_cast<unsigned>(old) + static_cast<unsigned>(v));
              overflow(a, slot[j], v, ((old ^ now) & (v ^ now)) < 0);
            });
          }
        };
        if (batch.count_offset[0] != 0) {
          // Counted: the counter's add is made for every row, 0 without an overflow, so that
          // no branch stands around it (a probe's team of 2 at g = 2^15: 1.30 ms a pass against
          // 1.59 with the branch, H200).
          add_rows([&](int a, int s, int v, bool lost) {
            lo32_count<false>(smem + batch.count_offset[a], s, lost ? (v < 0 ? -1 : 1) : 0,
                              accs.spill(a), counters);
          });
        } else {
          add_rows([&](int a, int s, int v, bool lost) {
            if (lost) { atomicAdd(accs.spill(a) + s, v < 0 ? ~0U : 1U); }
          });
        }
      } else {
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          if (slot[j] >= 0) {
            t.mark(slot[j]);
            for_each_acc<NA>([&](auto a_constant) {
              constexpr int a = decltype(a_constant)::value;
              shared_update(op, in, accs, a, slot[j], to_acc(op, in, raw[a][j]));
            });
          }
        }
      }
    });
    return;
  }
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    if (slot[j] >= 0) { t.mark(slot[j]); }
  }
  auto const update = [&](auto hot_constant) {
    constexpr bool Hot = decltype(hot_constant)::value;
    bool uniform[ipt] = {};
    if constexpr (Hot) {
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        int const l = __shfl_sync(full_warp, slot[j], 0);  // every lane, before the test
        uniform[j] = __all_sync(full_warp, slot[j] >= 0 && slot[j] == l);
      }
    }
    for_each_acc<NA>([&](auto a_constant) {
      constexpr int a = decltype(a_constant)::value;
      if (a >= batch.count) { return; }
      with_acc(batch.op[a], batch.in[a], [&](auto op, auto in) {
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          acc_value const v = to_acc(op, in, raw[a][j]);
          if (Hot && uniform[j]) {  // the same on every lane
            acc_value const r = warp_reduce(op, in, v);
            if ((threadIdx.x & 31) == 0) { shared_update(op, in, accs, a, slot[j], r); }
          } else if (slot[j] >= 0) {
            shared_update(op, in, accs, a, slot[j], v);
          }
        }
      });
    });
  };
  if (hot) {
    update(cuda::std::true_type{});
  } else {
    update(cuda::std::false_type{});
  }
}

/// The dense tier's general blocks (those of hgb_shared_kernel's one-group variant return at
/// once): hgb_shared_kernel<K, NA, false, Dense> with a lean tile loop. That kernel's per-row
/// carry and 64-bit group ids cost it about 3 warp instructions a row and half the read-once
/// roofline at g <= 2^14; this loop costs a few per row. Team: the blocks
/// form teams over the window (dense_window). Narrow: the batch loads as load_dense_tiles'
/// narrow form (dense_narrow_batch).
template <class K, int NA, bool Team, bool Narrow, bool Lo32Only = false>
__global__ void __launch_bounds__(policy::shared_threads, 1)
    hgb_dense_kernel(K const* __restrict__ keys, size_type n, acc_batch batch, int slots,
                     std::uint32_t seen_offset, group_table_ref<K> table,
                     insert_counters* counters, int one_group, dense_window<K> window) {
  constexpr int tile_rows = policy::shared_threads * policy::items_per_thread;
  static_assert(policy::dense_items_per_thread == 2 * policy::items_per_thread);
  int const team = Team ? window.team : 1;
  // hgb_shared_kernel's test: the one-group blocks are that kernel's.
  size_type const probe = std::min<size_type>(
      static_cast<size_type>(blockIdx.x / team) * tile_rows + threadIdx.x, n - 1);
  bool const one = __syncthreads_and(one_group >= 0 ? one_group != 0
                                                    : key_bits(__ldg(keys + probe)) ==
                                                        key_bits(__ldg(keys)));
  if (one) { return; }  // the one-group variant's block
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int has_marker;  // merge_shared_groups' argument; the dense table has no marker
  using bits_type = typename dense_group_table<K, Team>::bits_type;
  dense_group_table<K, Team> const t{
      window.base, static_cast<bits_type>(static_cast<bits_type>(blockIdx.x % team) * slots),
      static_cast<bits_type>(static_cast<bits_type>(team) * slots), slots, smem + seen_offset};
  int groups = 0;
  reset_shared_groups(t, batch, smem, groups, has_marker);
  __syncthreads();
  // The block's tiles of hgb_shared_kernel, two at a time.
  size_type const tiles = ceil_div(n, static_cast<size_type>(tile_rows));
  size_type const stride = gridDim.x / team;
  // The overflow flag is read as a tile starts and tested after it: tested at once, its L2
  // round trip stood before every tile's loads. A warp stops a tile later, which only costs time
  // (the run starts over with the hashed tiers).
  bool stop = false;
  for (size_type tile = blockIdx.x / team; tile < tiles && !stop; tile += 2 * stride) {
    bool const flag = (threadIdx.x & 31) == 0 && overflow_raised(counters);
    size_type const first = tile * tile_rows;
    size_type const second = (tile + stride) * tile_rows;
    if (second + tile_rows <= n) {
      dense_tiles<true, Narrow, NA, Lo32Only>(keys, n, first, second, batch, t, smem, counters);
    } else {
      dense_tiles<false, Narrow, NA, Lo32Only>(keys, n, first, second, batch, t, smem, counters);
    }
    stop = __shfl_sync(full_warp, flag ? 1 : 0, 0) != 0;
  }
  if (__syncthreads_or(threadIdx.x == 0 && overflow_raised(counters))) { return; }
  merge_shared_groups(t, batch, smem, 0, table, ~0ULL, counters);
}

/// The dense tier's sum_lo32 fix-up, after a batch's kernels: the +-2^32s each slot of the
/// window spilled go into its group's sum in the global table, one thread a slot (plain adds).
/// A key that spilled was marked by its block, which merged it; one not found (none should be)
/// raises the overflow flag, and the run goes on with the hashed tiers rather than lose the sum.
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    lo32_fixup_kernel(acc_batch batch, dense_window<K> window, size_type window_slots,
                      group_table_ref<K> table, insert_counters* counters) {
  using bits_type = typename dense_window<K>::bits_type;
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type o = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
       o < window_slots; o += stride) {
    size_type slot = -2;  // not looked up yet
    for (int a = 0; a < batch.count; ++a) {
      if (batch.op[a] != acc_op::sum_lo32) { continue; }
      auto const lost = static_cast<unsigned long long>(batch.spill[a][o]) << 32;
      if (lost == 0) { continue; }
      if (slot == -2) {
        slot = table.find_slot(
            static_cast<K>(static_cast<bits_type>(window.base + static_cast<bits_type>(o))));
      }
      if (slot < 0) {
        atomicExch(&counters->overflow, 1ULL);
        return;
      }
      static_cast<unsigned long long*>(batch.data[a])[slot] += lost;
    }
  }
}

/// Whether the dense tier may load `batch` in load_dense_tiles' narrow form: the keys and every
/// loaded column 16-byte aligned, every loaded value 4 bytes, packed.
template <class K>
bool dense_narrow_batch(K const* keys, acc_batch const& batch) {
  auto const aligned = [](void const* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (!aligned(keys)) { return false; }
  for (int a = 0; a < batch.count; ++a) {
    if (batch.op[a] == acc_op::count) { continue; }
    auto const& src = batch.src[a];
    if (value_bytes(batch.in[a]) != 4 || src.stride != 4 ||
        !aligned(static_cast<unsigned char const*>(src.base) + src.offset)) {
      return false;
    }
  }
  return true;
}

/// Tier 2: one pass over a global table of (key -> slot) with accumulators indexed by slot;
/// stops when the table holds more than max_groups keys.
constexpr int global_min_blocks = 4;

/// At least global_min_blocks blocks per SM: the skew reduction took the kernel from 54-60 to
/// 64-74 registers, 3 blocks an SM instead of 4, and cost 10-16% at g = 2^20 (latency-bound).
template <class K, int NA>
__global__ void __launch_bounds__(policy::threads_per_block, global_min_blocks)
    hgb_global_kernel(group_table_ref<K> table, K const* __restrict__ keys, size_type n,
                      acc_batch batch, unsigned long long max_groups, insert_counters* counters) {
  constexpr int ipt = policy::items_per_thread;
  size_type const tiles = ceil_div(n, policy::tile_items);
  bool reduce_peers = false;
  int probe = 0;
  for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    if (warp_sees_overflow(counters)) { return; }
    K k[ipt];
    size_type row[ipt];
    bool valid[ipt];
    unsigned long long raw[NA][ipt];
    load_tile<policy::threads_per_block, NA>(keys, n, tile * policy::tile_items, batch, k, row,
                                             valid, raw);
    size_type gid[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      bool placed = false;
      gid[j] = 0;
      if (valid[j]) {
        typename group_table_ref<K>::value_type stored{};
        gid[j] = table.insert_or_find(k[j], 0, placed, stored);
      }
      bool const failed = valid[j] && gid[j] < 0;
      count_placed(counters, placed, failed, max_groups);
      valid[j] = valid[j] && !failed;
    }
    // Every policy::peer_probe_tiles tiles the warp looks for lanes of one slot in its first
    // item and reduces them first until the next look when it finds any (skew). The match on
    // every item cost uniform keys 9-26% at g = 2^14..2^20; one look in so many tiles costs
    // little, and under skew nearly every warp holds such lanes.
    if (probe-- == 0) {
      probe = policy::peer_probe_tiles - 1;
      auto const key = valid[0] ? static_cast<unsigned long long>(gid[0]) : ~0ULL - (threadIdx.x & 31);
      reduce_peers = __any_sync(full_warp, __popc(__match_any_sync(full_warp, key)) > 1);
    }
    update_loaded<NA>(batch, [&](int a) { return batch.data[a]; }, gid, raw, valid,
                      static_cast<warp_carry<NA>*>(nullptr), reduce_peers);
  }
}

/// global_hash: insert (key, row) and update the sparse accumulators at the key's first row,
/// one atomic per row and aggregate (libcudf's scheme). `counters` counts groups (first batch).
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    global_hash_kernel(group_table_ref<K> table, K const* __restrict__ keys, size_type n,
                       acc_batch batch, insert_counters* counters) {
  size_type const tiles = ceil_div(n, policy::tile_items);
  for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    size_type const base = tile * policy::tile_items + threadIdx.x;
    K k[policy::items_per_thread];
    size_type row[policy::items_per_thread];
    bool valid[policy::items_per_thread];
    size_type first[policy::items_per_thread];
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      row[j] = base + static_cast<size_type>(j) * policy::threads_per_block;
      valid[j] = row[j] < n;
      if (valid[j]) { k[j] = keys[row[j]]; }
    }
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      bool placed = false;
      bool failed = false;
      first[j] = -1;
      if (valid[j]) {
        typename group_table_ref<K>::value_type stored{};
        failed = table.insert_or_find(
                     k[j], static_cast<typename group_table_ref<K>::value_type>(row[j]), placed,
                     stored) < 0;
        first[j] = static_cast<size_type>(stored);
      }
      if (counters != nullptr) { count_placed(counters, placed, failed, ~0ULL); }
    }
    update_rows(batch, [&](int a) { return batch.data[a]; }, first, row, valid, false);
  }
}

int grid_for(size_type n, int sms) {
  return static_cast<int>(std::max<size_type>(
      1, std::min<size_type>(ceil_div(n, policy::tile_items),
                             static_cast<size_type>(sms) * policy::max_blocks_per_sm)));
}

acc_source column_source(table_view const& input, agg_plan const& plan, int a) {
  auto const& c = input.column(plan.accs[static_cast<std::size_t>(a)].column);
  return {c.data(), static_cast<std::uint32_t>(size_of(c.type())), 0};
}

/// The groups of a set whose accumulators are indexed by slot (HGB's tiers) or by first row
/// (global_hash, whose set holds first rows).
template <class K>
group_parts compact_groups(group_table<K>& t, size_type groups, std::vector<buffer>&& accs,
                           bool slot_index, int sms, stream_ref stream, memory_resource* mr) {
  group_parts parts;
  parts.groups = groups;
  parts.keys = column(type_to_id_v<K>, groups, mr, stream);
  parts.index = buffer(static_cast<std::size_t>(groups) * sizeof(size_type), mr, stream);
  assign_ids(t, parts.keys, static_cast<size_type*>(parts.index.data()), slot_index, sms, stream,
             mr);
  parts.accs = std::move(accs);
  return parts;
}

template <class K>
group_parts run_global_hash(K const* keys, size_type n, table_view const& input,
                            agg_plan const& plan, int sms, phase_clock& clock, stream_ref stream,
                            memory_resource* mr) {
  auto const s = to_cuda(stream);
  group_table<K> table(n, stream, mr);
  // Sparse accumulators: one entry per input row, as libcudf.
  auto sparse = make_accumulators(plan, n, stream, mr);
  auto batches = make_batches(plan, sparse, 0, [&](int a) { return column_source(input, plan, a); });
  buffer counters(sizeof(insert_counters), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(counters.data(), 0, sizeof(insert_counters), s));
  auto* c = static_cast<insert_counters*>(counters.data());
  for (std::size_t b = 0; b < std::max<std::size_t>(batches.size(), 1); ++b) {
    acc_batch const batch = batches.empty() ? acc_batch{} : batches[b];
    global_hash_kernel<K><<<grid_for(n, sms), policy::threads_per_block, 0, s>>>(
        table.ref, keys, n, batch, b == 0 ? c : nullptr);
    JOINERY_CHECK_LAUNCH();
  }
  auto const h = read_counters(counters, stream);
  JOINERY_EXPECTS(h.overflow == 0, "global_hash group-by: the hash table overflowed");
  clock.lap("insert and aggregate");
  auto parts = compact_groups(table, static_cast<size_type>(h.placed), std::move(sparse), false,
                              sms, stream, mr);
  clock.lap("compact groups");
  return parts;
}

/// Tier 1's table size: the largest power of two of slots whose keys and accumulators (for the
/// longest batch) fit `limit` bytes, or 0 when not even the smallest does.
struct shared_shape {
  int slots = 0;
  std::uint32_t bytes = 0;  // keys after the accumulators
  std::uint32_t keys_offset = 0;
};

/// The shared memory of a table of `slots` slots: accumulators for the longest batch, then keys.
template <class K>
shared_shape shared_shape_of(agg_plan const& plan, int slots) {
  std::size_t accs = 0;
  for (std::size_t first = 0; first < plan.accs.size(); first += policy::fused_accs) {
    auto const count = std::min<std::size_t>(policy::fused_accs, plan.accs.size() - first);
    accs = std::max(accs, batch_shared_bytes(plan, first, count, slots + 1));
  }
  accs = (accs + 15) & ~std::size_t{15};  // the keys are read 16 bytes at a time
  std::size_t const keys = (static_cast<std::size_t>(slots + 1) * sizeof(K) + 15) & ~std::size_t{15};
  return {slots, static_cast<std::uint32_t>(accs + keys), static_cast<std::uint32_t>(accs)};
}

template <class K>
shared_shape shared_shape_for(agg_plan const& plan, std::size_t limit) {
  shared_shape best;
  for (int slots = policy::min_shared_slots; slots <= policy::max_shared_slots; slots *= 2) {
    auto const shape = shared_shape_of<K>(plan, slots);
    if (shape.bytes > limit) { break; }
    best = shape;
  }
  return best;
}

/// Launches one fused-tier kernel per batch (keys only: one launch with an empty batch).
template <class K, class Launch>
void for_each_batch(std::vector<acc_batch> const& batches, Launch&& launch) {
  if (batches.empty()) {  // the groups still have to be found
    launch(acc_batch{});
    return;
  }
  for (auto const& batch : batches) { launch(batch); }
}

/// The frame of both fused tiers: a global table for `capacity` groups with accumulators indexed
/// by its slots (shared-memory offsets laid out for `shared_entries`), one launch per batch of at
/// most `batch_accs` accumulators (`launch(batch, table_ref, counters)`), then the groups
/// numbered; nullopt on overflow.
template <class K, class Source, class Launch>
std::optional<group_parts> run_fused_tier(agg_plan const& plan, Source&& source,
                                          size_type capacity, size_type shared_entries, int sms,
                                          stream_ref stream, memory_resource* mr,
                                          Launch&& launch, int batch_accs = policy::fused_accs,
                                          agg_plan const* shared_plan = nullptr) {
  group_table<K> table(capacity, stream, mr);
  auto accs = make_accumulators(plan, table.ref.num_slots, stream, mr);
  // shared_plan: the same accumulators, some in another shared-memory form (sum_lo32).
  auto const batches = make_batches(shared_plan != nullptr ? *shared_plan : plan, accs,
                                    shared_entries, source, batch_accs);
  buffer counters(sizeof(insert_counters), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(counters.data(), 0, sizeof(insert_counters), to_cuda(stream)));
  for_each_batch<K>(batches, [&](acc_batch const& batch) {
    launch(batch, table.ref, static_cast<insert_counters*>(counters.data()));
    JOINERY_CHECK_LAUNCH();
  });
  auto const h = read_counters(counters, stream);
  if (h.overflow != 0) { return std::nullopt; }
  return compact_groups(table, static_cast<size_type>(h.placed), std::move(accs), true, sms,
                        stream, mr);
}

/// The dense tier's sample of the keys, a partial a block (dense_sample_block).
template <class K>
__global__ void __launch_bounds__(dense_sample_threads)
    dense_sample_kernel(K const* __restrict__ keys, size_type n, size_type samples,
                        dense_sample_bits<K>* __restrict__ partials) {
  dense_sample_block<K>(keys, n, samples, partials);
}

/// The dense tier's sample of `keys`, read back and merged on the host.
template <class K>
dense_sample_bits<K> read_dense_sample(K const* keys, size_type n, stream_ref stream,
                                       memory_resource* mr) {
  using sample_type = dense_sample_bits<K>;
  buffer d_partials(dense_sample_blocks * sizeof(sample_type), mr, stream);
  auto* const partials = static_cast<sample_type*>(d_partials.data());
  dense_sample_kernel<K><<<dense_sample_blocks, dense_sample_threads, 0, to_cuda(stream)>>>(
      keys, n, std::min(n, dense_samples), partials);
  JOINERY_CHECK_LAUNCH();
  std::vector<sample_type> h(static_cast<std::size_t>(dense_sample_blocks));
  JOINERY_CUDA_TRY(cudaMemcpyAsync(h.data(), partials, d_partials.size(),
                                   cudaMemcpyDeviceToHost, to_cuda(stream)));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  sample_type merged;
  for (auto const& p : h) { merged.merge(p); }
  return merged;
}

/// The most frequent of `samples` (<= policy::skew_samples) evenly spaced keys: how many of the
/// samples hold it. One block: the samples sorted in registers, then each run's length found by
/// a binary search for its end.
template <class K>
__global__ void __launch_bounds__(policy::skew_threads)
    hot_key_kernel(K const* __restrict__ keys, size_type n, int samples,
                   unsigned int* __restrict__ hottest) {
  constexpr int ipt = policy::skew_items_per_thread;
  using sort = cub::BlockRadixSort<K, policy::skew_threads, ipt>;
  using reduce = cub::BlockReduce<unsigned int, policy::skew_threads>;
  // One after the other: the sort, the sorted samples, the reduction (48 KB of static shared
  // memory would not hold them side by side for 8-byte keys).
  __shared__ union {
    typename sort::TempStorage sort;
    K sorted[policy::skew_samples];
    typename reduce::TempStorage reduce;
  } storage;
  K* const sorted = storage.sorted;
  K k[ipt];
  bool valid[ipt];
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    int const i = static_cast<int>(threadIdx.x) * ipt + j;
    valid[j] = i < samples;
    // Missing samples sort last as the largest key and are not counted (valid, below).
    k[j] = valid[j] ? __ldg(keys + static_cast<size_type>(i) * n / samples)
                    : cuda::std::numeric_limits<K>::max();
  }
  sort(storage.sort).Sort(k);  // blocked: thread t holds sorted positions t * ipt + j
  __syncthreads();             // the sort's storage becomes the sorted samples
#pragma unroll
  for (int j = 0; j < ipt; ++j) { sorted[threadIdx.x * ipt + j] = k[j]; }
  __syncthreads();
  unsigned int longest = 0;
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    int const i = static_cast<int>(threadIdx.x) * ipt + j;
    if (i < samples && (i == 0 || sorted[i - 1] != sorted[i])) {  // a run starts at i
      int lo = i + 1;  // first position past the run, in [i + 1, samples]
      int hi = samples;
      while (lo < hi) {
        int const mid = (lo + hi) / 2;
        if (sorted[mid] == sorted[i]) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      longest = max(longest, static_cast<unsigned int>(lo - i));
    }
  }
  __syncthreads();  // the reduction reuses the samples' storage
  auto const most = reduce(storage.reduce).Reduce(longest, cuda::maximum<>{});
  if (threadIdx.x == 0) { *hottest = most; }
}

/// The share of the rows the hottest key holds, estimated from evenly spaced samples.
template <class K>
double hot_key_share(K const* keys, size_type n, stream_ref stream, memory_resource* mr) {
  if (n == 0) { return 0; }
  int const samples = static_cast<int>(std::min<size_type>(n, policy::skew_samples));
  buffer hottest(sizeof(unsigned int), mr, stream);
  hot_key_kernel<K><<<1, policy::skew_threads, 0, to_cuda(stream)>>>(
      keys, n, samples, static_cast<unsigned int*>(hottest.data()));
  JOINERY_CHECK_LAUNCH();
  unsigned int h = 0;
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, hottest.data(), sizeof(h), cudaMemcpyDeviceToHost,
                                   to_cuda(stream)));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return static_cast<double>(h) / static_cast<double>(samples);
}

/// The dense tier's shared memory: the most slots (at most policy::max_dense_slots) whose
/// accumulators for the longest batch of at most `batch_accs`, then one seen byte each, fit
/// `limit`; slots 0 when none.
shared_shape dense_shape_for(agg_plan const& plan, std::size_t limit, int batch_accs) {
  auto const per_batch = static_cast<std::size_t>(batch_accs);
  auto const shape_of = [&](int slots) {
    std::size_t accs = 0;
    for (std::size_t first = 0; first < plan.accs.size(); first += per_batch) {
      auto const count = std::min<std::size_t>(per_batch, plan.accs.size() - first);
      accs = std::max(accs, batch_shared_bytes(plan, first, count, slots + 1));
    }
    accs = (accs + 15) & ~std::size_t{15};
    std::size_t const seen = (static_cast<std::size_t>(slots) + 1 + 15) & ~std::size_t{15};
    return shared_shape{slots, static_cast<std::uint32_t>(std::min<std::size_t>(accs + seen, 0xffffffffU)),
                        static_cast<std::uint32_t>(accs)};
  };
  int lo = 0;  // fits (or 0)
  int hi = policy::max_dense_slots + 1;  // does not fit
  while (hi - lo > 1) {
    int const mid = lo + (hi - lo) / 2;
    (shape_of(mid).bytes <= limit ? lo : hi) = mid;
  }
  return lo == 0 ? shared_shape{} : shape_of(lo);
}

/// The dense tier's launch: how many accumulators a pass takes, the shared memory of a block,
/// and the blocks of a team (the window holds team * shape.slots keys).
struct dense_layout {
  int batch_accs = 0;
  shared_shape shape{};
  int team = 0;
};

/// The dense layout for sampled keys `span` keys apart; nullopt when none fits. One block a
/// window when it can, with batches of policy::fused_accs accumulators, else of one (SUM of two
/// columns at g = 2^14: 8-byte accumulators, 256 KB for both). Else teams of at most `max_team`
/// blocks. The tier is bound by issue: every member loads and tests every row of its team's
/// tiles in every pass, so a layout costs a row team * (passes * policy::dense_pass_cost +
/// value bytes), in value bytes' worth of instructions; the cheapest wins (at equal cost the
/// smaller team), if at most `max_row_cost`: beyond that tier 2 is faster.
std::optional<dense_layout> dense_layout_for(agg_plan const& plan, std::size_t limit,
                                             std::uint64_t span, int max_team,
                                             std::size_t max_row_cost, int forced_batch) {
  auto const accs = static_cast<int>(plan.accs.size());
  std::size_t values = 0;
  for (auto const& a : plan.accs) {
    values += a.op == acc_op::count ? 0 : static_cast<std::size_t>(value_bytes(a.in));
  }
  std::optional<dense_layout> best;
  std::size_t best_cost = 0;
  for (int const batch_accs : {policy::fused_accs, 1}) {
    if (batch_accs == 1 && accs < 2) { continue; }
    if (forced_batch > 0 && batch_accs != forced_batch) { continue; }
    auto const shape = dense_shape_for(plan, limit, batch_accs);
    if (shape.slots == 0) { continue; }
    auto const slots = static_cast<std::uint64_t>(shape.slots);
    if (span / slots >= static_cast<std::uint64_t>(max_team)) { continue; }
    int const team = static_cast<int>(span / slots) + 1;  // team * slots > span
    if (team == 1) { return dense_layout{batch_accs, shape, 1}; }
    auto const passes = static_cast<std::size_t>(std::max(1, (accs + batch_accs - 1) / batch_accs));
    std::size_t const cost =
      static_cast<std::size_t>(team) * (passes * policy::dense_pass_cost + values);
    // At equal cost the smaller team: under skew a hot key's member works for the whole team
    // (g = 2^16 SUM at Zipf 1.5: one pass of 5 ran 40.5 G rows/s, two of 3 51.3).
    if (cost <= max_row_cost && (!best || cost < best_cost ||
                                 (cost == best_cost && team < best->team))) {
      best = dense_layout{batch_accs, shape, team};
      best_cost = cost;
    }
  }
  return best;
}

/// The dense tier (ahead of tier 1): when a sample of the keys spans fewer keys than the
/// shared memory of a team of blocks has slots for, each key's slot is its offset in that window
/// (perfect hashing, as DuckDB's perfect-hash aggregate does from min/max statistics): no
/// hashing, no key comparisons, no claiming. nullopt when the sample spans too many keys or a
/// key falls outside the window (the run goes on with the hashed tiers); the sample spans too
/// many keys when even `max_team` blocks (at most policy::max_dense_team) hold too few slots or
/// a team would cost a row more than `max_row_cost` (dense_layout_for). `team` gets the blocks
/// of a team. allow_narrow: batches that dense_narrow_batch accepts run the narrow kernel;
/// `narrow_ran` says whether every batch did; lo32_kernel: those whose every accumulator is a
/// sum_lo32 of int32 values run hgb_dense_kernel's Lo32Only instantiation (narrow_lo32). lo32
/// (groupby_tuning::hgb_dense_lo32): sums of int32 values as sum_lo32 partials; `lo32_ran` says
/// whether they were, `counted_ran` whether counted (acc_spec::counted); `own_lo32_ran` whether
/// a batch ran the Lo32Only instantiation (narrow_lo32 where it is not the narrow kernel).
/// wsum (groupby_tuning::hgb_dense_wsum): SUM of exactly two int32 columns tries the wrapped
/// sums first (dense_wsum_groupby); `wsum_ran` says whether they gave the result.
template <class K>
std::optional<group_parts> hgb_dense_tier(K const* keys, size_type n, table_view const& input,
                                          agg_plan const& plan, std::size_t limit,
                                          int one_group, int max_team, int max_row_cost,
                                          int forced_batch, bool allow_narrow,
                                          bool lo32_kernel, int lo32, bool wsum, int sms,
                                          int& team, bool& narrow_ran, bool& lo32_ran,
                                          bool& counted_ran, bool& own_lo32_ran, bool& wsum_ran,
                                          stream_ref stream, memory_resource* mr) {
  using bits_type = typename dense_window<K>::bits_type;
  // One accumulator a pass leaves a block the most slots: none, and no layout fits.
  if (n == 0 || dense_shape_for(plan, limit, 1).slots == 0) { return std::nullopt; }
  // Declining costs one small copy and a synchronisation, not the tier's allocations and
  // launches (sparse keys: about 0.07 ms of a 1.7-2.3 ms run at 2^28 rows when it did). The
  // wrapped sums sample the keys themselves, and the host reads the sample after their pass.
  dense_sample_bits<K> sample;
  bool sampled = false;
  wsum_ran = false;
  if (wsum && plan.accs.size() == 2 &&
      std::all_of(plan.accs.begin(), plan.accs.end(), [](acc_spec const& a) {
        return a.op == acc_op::sum_int && a.in == value_kind::i32;
      })) {
    auto const values = [&](int a) {
      return static_cast<std::int32_t const*>(input.column(plan.accs[static_cast<std::size_t>(a)].column).data());
    };
    if (auto parts = dense_wsum_groupby<K>(keys, n, values(0), values(1), sample, sampled, limit,
                                           sms, team, stream, mr)) {
      wsum_ran = true;
      return parts;
    }
  }
  if (!sampled) { sample = read_dense_sample<K>(keys, n, stream, mr); }
  auto const layout_of = [&](agg_plan const& p) {
    return dense_layout_for(
        p, limit, static_cast<std::uint64_t>(sample.span()),
        max_team > 0 ? std::min(max_team, policy::max_dense_team) : policy::max_dense_team,
        max_row_cost > 0 ? static_cast<std::size_t>(max_row_cost) : policy::max_dense_row_cost,
        forced_batch);
  };
  // Sums of int32 values as 32-bit partials: half the shared memory a group, so fewer members
  // (g = 2^16, two sums: one pass of 3 instead of two).
  agg_plan lo32_plan = plan;
  bool has_lo32 = false;
  for (auto& a : lo32_plan.accs) {
    if (a.op == acc_op::sum_int && a.in == value_kind::i32) {
      a.op = acc_op::sum_lo32;
      has_lo32 = true;
    }
  }
  // Counted (2 more bytes a group, no spill per overflow): in one pass of a small team
  // (policy::dense_counts_max_team) that does less work than 8-byte sums. No hot-key gate: a
  // hot key's overflows count in shared memory like its adds. Not over several passes: at
  // g = 2^16 two passes of a team of 2 ran SUM in 4.1 ms against 2.6 for spills in one pass of
  // 3 (H200), each pass updating one sum through the general loop.
  agg_plan counted_plan = lo32_plan;
  for (auto& a : counted_plan.accs) { a.counted = a.op == acc_op::sum_lo32; }
  lo32_ran = false;
  counted_ran = false;
  if (has_lo32 && lo32 >= 0 && lo32 != 1) {
    if (auto const counted = layout_of(counted_plan)) {
      auto const accs = static_cast<int>(plan.accs.size());
      auto const work = [&](dense_layout const& l) {
        return l.team * ((accs + l.batch_accs - 1) / l.batch_accs);
      };
      auto const wide = layout_of(plan);
      counted_ran = lo32 == 2 || (counted->team <= policy::dense_counts_max_team &&
                                  work(*counted) == counted->team &&
                                  (!wide || work(*counted) < work(*wide)));
      lo32_ran = counted_ran;
    }
  }
  if (has_lo32 && lo32 >= 0 && !counted_ran && layout_of(lo32_plan)) {
    lo32_ran = lo32 > 0 || (static_cast<std::uint64_t>(sample.span()) >=
                              static_cast<std::uint64_t>(policy::dense_lo32_min_span) &&
                            hot_key_share<K>(keys, n, stream, mr) <
                              policy::dense_lo32_max_hot_share);
  }
  agg_plan const& shared_plan = counted_ran ? counted_plan : lo32_ran ? lo32_plan : plan;
  auto const layout = layout_of(shared_plan);
  if (!layout) { return std::nullopt; }
  auto const& shape = layout->shape;
  team = layout->team;
  // The window centred on the sampled keys, so that keys a little beyond them still fit
  // (modulo 2^bits, like the keys' offsets).
  auto const window_slots = static_cast<bits_type>(static_cast<bits_type>(layout->team) *
                                                   static_cast<bits_type>(shape.slots));
  dense_window<K> const window{
      static_cast<bits_type>(sample.low() - (window_slots - 1 - sample.span()) / 2), layout->team};
  bool const in_teams = layout->team > 1;
  narrow_ran = true;
  own_lo32_ran = false;
  auto const general = in_teams ? hgb_dense_kernel<K, policy::fused_accs, true, false>
                             : hgb_dense_kernel<K, policy::fused_accs, false, false>;
  auto const narrow = in_teams ? hgb_dense_kernel<K, policy::fused_accs, true, true>
                            : hgb_dense_kernel<K, policy::fused_accs, false, true>;
  // Every accumulator a sum_lo32 (SUM of int32 columns): a kernel of its own, whose lean update
  // loop no other operation's registers constrain. Not for teams over 4-byte keys: there it ran
  // 6% slower than the narrow kernel on the H200 (g = 2^16, two machine starts), while teams over
  // 8-byte keys gained 6-15% and one block a window 7-10% (H200; BENCHMARKS.md, gpu-groupby).
  auto const narrow_lo32 = [&] {
    if constexpr (sizeof(K) == 4) {
      return in_teams ? narrow : hgb_dense_kernel<K, policy::fused_accs, false, true, true>;
    } else {
      return in_teams ? hgb_dense_kernel<K, policy::fused_accs, true, true, true>
                      : hgb_dense_kernel<K, policy::fused_accs, false, true, true>;
    }
  }();
  auto const one = in_teams ? hgb_shared_kernel<K, policy::fused_accs, true, 2>
                         : hgb_shared_kernel<K, policy::fused_accs, true, 1>;
  int per_sm = std::numeric_limits<int>::max();
  auto const prepare = [&](auto kernel) {
    allow_dynamic_smem(kernel, shape.bytes);
    per_sm = std::min(per_sm, resident_blocks_per_sm(kernel, policy::shared_threads, shape.bytes));
  };
  prepare(general);
  prepare(narrow);
  prepare(narrow_lo32);
  prepare(one);
  JOINERY_EXPECTS(per_sm > 0, "hash group-by: the dense shared-memory kernel cannot be resident");
  // Whole teams, all resident at once (a member that waited for a free SM would read its
  // team's tiles long after the others, from DRAM again), unless the device holds fewer blocks
  // than one team: then one team, its members in turn (correct, only slower).
  size_type const teams = std::max<size_type>(
      1, std::min<size_type>(ceil_div(n, static_cast<size_type>(policy::shared_threads) *
                                           policy::items_per_thread),
                             static_cast<size_type>(sms) * per_sm / layout->team));
  int const blocks = static_cast<int>(teams * layout->team);
  // Every key of a completed run lies in the window: at most team * slots groups in all.
  auto const capacity =
      std::min<size_type>(n, static_cast<size_type>(layout->team) * shape.slots);
  // sum_lo32's spills: a 32-bit count per slot of the window and accumulator of a batch, zeroed before
  // each batch and added to the global sums after it.
  auto const spill_slots = static_cast<size_type>(window_slots);
  buffer spill;
  if (lo32_ran) {
    spill = buffer(static_cast<std::size_t>(layout->batch_accs) * static_cast<std::size_t>(spill_slots) *
                     sizeof(unsigned),
                   mr, stream);
  }
  return run_fused_tier<K>(
      plan, [&](int a) { return column_source(input, plan, a); }, capacity, shape.slots + 1, sms,
      stream, mr,
      [&](acc_batch const& shared_batch, group_table_ref<K> table, insert_counters* counters) {
        acc_batch batch = shared_batch;
        bool spills = false;
        for (int a = 0; a < batch.count; ++a) {
          if (batch.op[a] != acc_op::sum_lo32) { continue; }
          batch.spill[a] = static_cast<unsigned*>(spill.data()) + a * spill_slots;
          spills = true;
        }
        if (spills) {
          JOINERY_CUDA_TRY(cudaMemsetAsync(spill.data(), 0, spill.size(), to_cuda(stream)));
        }
        one<<<blocks, policy::shared_threads, shape.bytes, to_cuda(stream)>>>(
            keys, n, batch, shape.slots, 0, shape.keys_offset, table, counters, one_group,
            window);
        JOINERY_CHECK_LAUNCH();
        bool const narrow_batch = allow_narrow && dense_narrow_batch(keys, batch);
        narrow_ran = narrow_ran && narrow_batch;
        bool lo32_only = lo32_kernel && batch.count == policy::fused_accs;
        for (int a = 0; a < batch.count; ++a) {
          lo32_only = lo32_only && batch.op[a] == acc_op::sum_lo32 && batch.in[a] == value_kind::i32;
        }
        auto const dense = !narrow_batch ? general : lo32_only ? narrow_lo32 : narrow;
        own_lo32_ran = own_lo32_ran || (dense == narrow_lo32 && narrow_lo32 != narrow);
        dense<<<blocks, policy::shared_threads, shape.bytes, to_cuda(stream)>>>(
            keys, n, batch, shape.slots, shape.keys_offset, table, counters, one_group, window);
        if (spills) {
          JOINERY_CHECK_LAUNCH();
          lo32_fixup_kernel<K><<<grid_stride_blocks(spill_slots, policy::threads_per_block, sms),
                                 policy::threads_per_block, 0, to_cuda(stream)>>>(
              batch, window, spill_slots, table, counters);
        }
      },
      layout->batch_accs, lo32_ran ? &shared_plan : nullptr);
}

template <class K>
std::optional<group_parts> hgb_shared_tier(K const* keys, size_type n, table_view const& input,
                                           agg_plan const& plan, std::size_t limit,
                                           int one_group, int sms, stream_ref stream,
                                           memory_resource* mr) {
  auto const shape = shared_shape_for<K>(plan, limit);
  if (shape.slots == 0) { return std::nullopt; }
  int const max_groups = shape.slots / 2;
  auto const general = hgb_shared_kernel<K, policy::fused_accs, false>;
  auto const one = hgb_shared_kernel<K, policy::fused_accs, true>;
  int per_sm = 0;
  for (auto kernel : {general, one}) {
    allow_dynamic_smem(kernel, shape.bytes);
    int const resident = resident_blocks_per_sm(kernel, policy::shared_threads, shape.bytes);
    per_sm = kernel == general ? resident : std::min(per_sm, resident);
  }
  JOINERY_EXPECTS(per_sm > 0, "hash group-by: the shared-memory kernel cannot be resident");
  int const blocks = static_cast<int>(std::max<size_type>(
      1, std::min<size_type>(ceil_div(n, static_cast<size_type>(policy::shared_threads) *
                                           policy::items_per_thread),
                             static_cast<size_type>(sms) * per_sm)));
  // Every block's groups fit the global table, so merging cannot overflow it.
  auto const capacity = std::min<size_type>(n, static_cast<size_type>(blocks) * (max_groups + 1));
  return run_fused_tier<K>(
      plan, [&](int a) { return column_source(input, plan, a); }, capacity, shape.slots + 1, sms,
      stream, mr,
      [&](acc_batch const& batch, group_table_ref<K> table, insert_counters* counters) {
        // The one-group blocks first: with g = 1 the general launch is the one that returns.
        for (auto kernel : {one, general}) {
          kernel<<<blocks, policy::shared_threads, shape.bytes, to_cuda(stream)>>>(
              keys, n, batch, shape.slots, max_groups, shape.keys_offset, table, counters,
              one_group, dense_window<K>{0, 1});
          JOINERY_CHECK_LAUNCH();
        }
      });
}

template <class K>
std::optional<group_parts> hgb_global_tier(K const* keys, size_type n, table_view const& input,
                                           agg_plan const& plan, size_type capacity, int sms,
                                           stream_ref stream, memory_resource* mr) {
  return run_fused_tier<K>(
      plan, [&](int a) { return column_source(input, plan, a); }, capacity, 0, sms, stream, mr,
      [&](acc_batch const& batch, group_table_ref<K> table, insert_counters* counters) {
        hgb_global_kernel<K, policy::fused_accs>
            <<<grid_for(n, sms), policy::threads_per_block, 0, to_cuda(stream)>>>(
                table, keys, n, batch, static_cast<unsigned long long>(capacity), counters);
      });
}

/// Tier 2's first capacity: the groups whose table and accumulators (2 slots per group) fit the
/// device's L2 cache, so the atomics stay on chip.
size_type l2_groups(agg_plan const& plan, std::size_t key_bytes) {
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  int l2 = 0;
  JOINERY_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  std::size_t const per_group =
      static_cast<std::size_t>(policy::slots_per_group) *
      (2 * key_bytes + plan.bytes_per_group());  // a slot holds the key and a key-wide value
  size_type groups = policy::min_l2_groups;
  while (static_cast<std::size_t>(2 * groups) * per_group <= static_cast<std::size_t>(l2)) {
    groups *= 2;
  }
  return groups;
}

/// Dynamic shared memory a block of the fused kernels may take on this device, with room for the
/// kernels' own static shared variables.
std::size_t device_shared_limit() {
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  int optin = 0;
  JOINERY_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return static_cast<std::size_t>(optin) - policy::static_shared_reserve;
}

template <class K>
group_parts run_hgb(K const* keys, size_type n, table_view const& input, agg_plan const& plan,
                    groupby_tuning const& tuning, int sms, phase_clock& clock, stream_ref stream,
                    memory_resource* mr) {
  std::size_t const device_limit = device_shared_limit();
  std::size_t const shared_limit =
      tuning.hgb_shared_bytes >= 0
        ? std::min<std::size_t>(static_cast<std::size_t>(tuning.hgb_shared_bytes), device_limit)
        : device_limit;
  if (tuning.hgb_dense_keys) {
    int team = 0;
    // Benchmarks set these (groupby_tuning, `bench gpu-groupby --tuning`) for A/B runs.
    int const batch = tuning.hgb_dense_batch;
    bool const narrow = tuning.hgb_dense_narrow;
    bool narrow_ran = false;
    int const lo32 = tuning.hgb_dense_lo32;
    bool const lo32_kernel = tuning.hgb_dense_lo32_kernel;
    bool const wsum = tuning.hgb_dense_wsum;
    bool lo32_ran = false;
    bool counted_ran = false;
    bool own_lo32_ran = false;
    bool wsum_ran = false;
    if (auto parts = hgb_dense_tier<K>(keys, n, input, plan, shared_limit, tuning.hgb_one_group,
                                       tuning.hgb_dense_team, tuning.hgb_dense_row_cost, batch,
                                       narrow, lo32_kernel, lo32, wsum, sms, team, narrow_ran,
                                       lo32_ran, counted_ran, own_lo32_ran, wsum_ran, stream, mr)) {
      std::string name = team > 1 ? "aggregate in shared memory, dense keys, teams of " +
                                        std::to_string(team)
                                  : std::string("aggregate in shared memory, dense keys");
      if (wsum_ran) { name += ", wrapped 32-bit sums"; }
      if (lo32_ran) { name += counted_ran ? ", 32-bit sums counted in shared memory" : ", 32-bit sums"; }
      if (own_lo32_ran) { name += ", own 32-bit sum kernel"; }
      if (narrow_ran) { name += ", 16-byte loads"; }
      clock.lap(name.c_str());
      return std::move(*parts);
    }
    clock.lap("dense keys: the keys span more than a team of blocks holds");
  }
  // automatic stops HGB where another algorithm serves better: incomplete, with
  // partition_next for PGB-TR (when it takes the plan), else the sort group-by.
  group_parts none;
  none.incomplete = true;
  double hot_share = -1;  // the hottest key's share of the rows, sampled once
  auto const hottest = [&] {
    if (hot_share < 0) { hot_share = hot_key_share<K>(keys, n, stream, mr); }
    return hot_share;
  };
  std::size_t float_sums = 0;
  for (auto const& a : plan.accs) { float_sums += a.op == acc_op::sum_float ? 1 : 0; }
  if (tuning.stop_beyond_first_table && float_sums > 0 &&
      static_cast<double>(float_sums) >=
        policy::float_sum_sort_weight * static_cast<double>(plan.accs.size()) &&
      hottest() >= policy::float_sum_sort_share) {
    clock.lap("a hot key on float sums: sort instead");
    return none;
  }
  if (auto parts = hgb_shared_tier<K>(keys, n, input, plan, shared_limit, tuning.hgb_one_group,
                                      sms, stream, mr)) {
    clock.lap("aggregate in shared memory");
    return std::move(*parts);
  }
  clock.lap("shared memory: too many groups");
  if (tuning.stop_beyond_first_table) {
    // automatic: under skew tier 2's atomics pile up on the hot slots. Skew over many groups:
    // PGB-TR (the caller's skew_sort_groups) or the sort group-by; from skew_partition_share,
    // PGB-TR at once.
    double const limit = tuning.skew_partition_share >= 0 ? tuning.skew_partition_share
                                                          : policy::skew_partition_share;
    auto const sort_groups = tuning.skew_sort_groups != 0 ? tuning.skew_sort_groups
                             : sizeof(K) == 8             ? policy::skew_sort_groups_wide
                                                          : policy::skew_sort_groups;
    bool const look = limit <= 1 || sort_groups > 0 || float_sums > 0;
    double const share = look ? hottest() : 0.0;
    if (limit <= 1 && share >= limit) {
      clock.lap("skewed keys: partition instead of the global table");
      none.partition_next = true;
      return none;
    }
    bool const skewed = share >= policy::skew_sort_share;
    if (skewed && float_sums > 0) {
      clock.lap("skewed keys, float sums: sort instead of the global table");
      return none;
    }
    bool const counts_only = std::all_of(plan.accs.begin(), plan.accs.end(),
                                         [](acc_spec const& a) { return a.op == acc_op::count; });
    if (!skewed && (plan.accs.size() >= policy::partition_accumulators || counts_only)) {
      clock.lap("many accumulators or counts only: partition instead of the global table");
      none.partition_next = true;
      return none;
    }
    size_type const estimate = estimate_groups<K>(keys, n, sms, stream, mr);
    if (sort_groups > 0 && skewed && estimate >= sort_groups) {
      clock.lap("skewed keys, many groups: stop before the global table");
      none.partition_next = true;
      return none;
    }
    if (!skewed && estimate >= policy::partition_groups) {
      clock.lap("many groups: partition instead of the global table");
      none.partition_next = true;
      return none;
    }
  }
  size_type capacity = std::min<size_type>(
      n, tuning.hgb_initial_groups > 0 ? tuning.hgb_initial_groups : l2_groups(plan, sizeof(K)));
  for (;;) {
    if (auto parts = hgb_global_tier<K>(keys, n, input, plan, capacity, sms, stream, mr)) {
      clock.lap("aggregate in global memory");
      return std::move(*parts);
    }
    JOINERY_EXPECTS(capacity < n, "hash group-by: the hash table for every row overflowed");
    if (tuning.stop_beyond_first_table) {
      clock.lap("global table: too many groups");
      none.partition_next = true;  // PGB-TR beats the sort there (partition_groups)
      return none;
    }
    capacity = n;
  }
}

/// Evenly spaced samples (one per n / samples rows) of `keys` into `table`, with how often each
/// slot's key was drawn.
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    sample_keys_kernel(K const* __restrict__ keys, size_type n, size_type samples,
                       group_table_ref<K> table, unsigned int* __restrict__ draws) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < samples;
       i += stride) {
    // i * n < 2^14 * 2^48: no overflow.
    K const k = keys[i * n / samples];
    bool placed = false;
    typename group_table_ref<K>::value_type stored{};
    auto const slot = table.insert_or_find(k, 0, placed, stored);
    if (slot >= 0) { atomicAdd(draws + slot, 1U); }
  }
}

/// The sample's frequency profile: keys drawn at all, once, and twice (profile[0..2]).
__global__ void __launch_bounds__(policy::threads_per_block)
    sample_profile_kernel(unsigned int const* __restrict__ draws, size_type slots,
                          unsigned long long* __restrict__ profile) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < slots;
       i += stride) {
    unsigned const c = draws[i];
    if (c > 0) { atomicAdd(profile, 1ULL); }
    if (c == 1) { atomicAdd(profile + 1, 1ULL); }
    if (c == 2) { atomicAdd(profile + 2, 1ULL); }
  }
}

}  // namespace

/// The number of groups, estimated from evenly spaced samples (groups_from_profile: the larger of
/// the uniform model's and Chao1's estimate; Chao1 follows skew's tail of rarely drawn keys,
/// which the uniform model takes for a few groups). Still low under strong skew: the partition
/// group-by then finds partitions too full for their tables and partitions again, finer.
template <class K>
size_type estimate_groups(K const* keys, size_type n, int sms, stream_ref stream,
                          memory_resource* mr) {
  using ppolicy = partition_groupby_policy;
  size_type const samples = std::min(n, ppolicy::sample_rows);
  if (samples == 0) { return 0; }
  auto const s = to_cuda(stream);
  group_table<K> t(samples, stream, mr);
  auto const slots = t.ref.num_slots;
  buffer draws(static_cast<std::size_t>(slots) * sizeof(unsigned int), mr, stream);
  buffer profile(3 * sizeof(unsigned long long), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(draws.data(), 0, draws.size(), s));
  JOINERY_CUDA_TRY(cudaMemsetAsync(profile.data(), 0, profile.size(), s));
  sample_keys_kernel<K>
      <<<grid_stride_blocks(samples, policy::threads_per_block, sms), policy::threads_per_block, 0,
         s>>>(keys, n, samples, t.ref, static_cast<unsigned int*>(draws.data()));
  JOINERY_CHECK_LAUNCH();
  sample_profile_kernel<<<grid_stride_blocks(slots, policy::threads_per_block, sms),
                          policy::threads_per_block, 0, s>>>(
      static_cast<unsigned int const*>(draws.data()), slots,
      static_cast<unsigned long long*>(profile.data()));
  JOINERY_CHECK_LAUNCH();
  unsigned long long h[3] = {};
  JOINERY_CUDA_TRY(cudaMemcpyAsync(h, profile.data(), sizeof(h), cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  return groups_from_profile(static_cast<size_type>(h[0]), static_cast<size_type>(h[1]),
                             static_cast<size_type>(h[2]), samples, n);
}

namespace {

/// The global table's slots of 4-byte keys hold 32-bit values (first rows, group ids) with all
/// ones marking an empty slot: fewer than 2^32 - 1 rows.
template <class K>
void check_slot_values(size_type n, char const* algorithm) {
  if constexpr (sizeof(K) == 4) {
    JOINERY_EXPECTS(n < static_cast<size_type>(0xffffffffLL),
                    std::string(algorithm) +
                      " group-by with 4-byte keys takes fewer than 2^32 - 1 rows, got " +
                      std::to_string(n) + "; use the sort algorithm");
  }
}

}  // namespace

template <class K>
group_parts hash_groupby(K const* keys, size_type n, table_view const& input,
                         agg_plan const& plan, bool baseline, groupby_tuning const& tuning,
                         phase_clock& clock, stream_ref stream, memory_resource* mr) {
  check_slot_values<K>(n, baseline ? "global_hash" : "hash");
  int const sms = current_sm_count();
  return baseline ? run_global_hash<K>(keys, n, input, plan, sms, clock, stream, mr)
                  : run_hgb<K>(keys, n, input, plan, tuning, sms, clock, stream, mr);
}

#define JOINERY_INSTANTIATE_HASH_GROUPBY(K)                                                    \
  template group_parts hash_groupby<K>(K const*, size_type, table_view const&, agg_plan const&, \
                                       bool, groupby_tuning const&, phase_clock&, stream_ref,   \
                                       memory_resource*);                                       \
  template size_type estimate_groups<K>(K const*, size_type, int, stream_ref, memory_resource*);
JOINERY_INSTANTIATE_HASH_GROUPBY(std::int32_t)
JOINERY_INSTANTIATE_HASH_GROUPBY(std::int64_t)
JOINERY_INSTANTIATE_HASH_GROUPBY(std::uint32_t)
JOINERY_INSTANTIATE_HASH_GROUPBY(std::uint64_t)
#undef JOINERY_INSTANTIATE_HASH_GROUPBY

}  // namespace joinery::detail::gpu::gb
