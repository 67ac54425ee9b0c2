#pragma once
// Internal: the device code of HGB's hashed tiers (hash_groupby.cu): tier 1's per-tile agent
// (number a tile's keys in the block's shared table, update the shared accumulators, merge the
// block's groups into the global table) and hgb_shared_kernel; tier 2's hgb_global_kernel; the
// global_hash baseline's kernel; the load and update helpers the dense tier shares
// (hgb_dense_agent.cuh). Included only by the units that compile the kernels (hgb_kernels/).
#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/common.cuh"
#include "groupby/gpu/detail/group_table.cuh"
#include "groupby/gpu/detail/hgb_kernel_sets.cuh"
#include "groupby/gpu/detail/lo32_sum.cuh"
#include "groupby/gpu/detail/shared_group_table.cuh"

#include <cooperative_groups.h>
#include <cuda/std/type_traits>

#include <cstdint>

namespace joinery::detail::gpu::gb::hgb {

namespace cg = cooperative_groups;
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

template <class B>
hashed_kernel_set<B> hashed_kernels() {
  return {hgb_shared_kernel<B, policy::fused_accs, false>,
          hgb_shared_kernel<B, policy::fused_accs, true>, hgb_global_kernel<B, policy::fused_accs>,
          global_hash_kernel<B>};
}

}  // namespace joinery::detail::gpu::gb::hgb
