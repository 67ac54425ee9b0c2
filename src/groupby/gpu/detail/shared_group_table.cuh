#pragma once
// Internal: the per-block hash table of group keys in shared memory that HGB's tier 1 and the
// partition group-by aggregate into (hash_groupby.cu, partition_groupby.cu).
#include "groupby/gpu/detail/common.cuh"
#include "primitives/detail/hash.cuh"

#include <cuda/std/type_traits>

#include <cstdint>

namespace joinery::detail::gpu::gb {

/// Tier 1's per-block table: `slots` keys (a power of two) in shared memory, claimed by CAS; the
/// key whose bits are all ones (the empty marker) has slot `slots` of its own. Accumulators
/// have slots + 1 entries.
template <class K>
struct shared_group_table {
  using bits_type = cuda::std::conditional_t<sizeof(K) == 4, unsigned int, unsigned long long>;
  static constexpr bits_type empty = ~bits_type{0};
  bits_type* keys;
  int slots;
  int max_groups;
  int* groups;  // shared counter of claimed slots

  /// Slots read by one 16-byte shared load; the probe walks whole aligned groups of them.
  static constexpr int group = 16 / static_cast<int>(sizeof(bits_type));

  /// The aligned group of slots starting at slot g (a multiple of `group`), in one load.
  __device__ __forceinline__ void load_group(int g, bits_type (&out)[group]) const {
    auto const addr = static_cast<unsigned>(__cvta_generic_to_shared(keys + g));
    if constexpr (group == 4) {
      asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
                   : "r"(addr));
    } else {
      asm volatile("ld.volatile.shared.v2.u64 {%0, %1}, [%2];"
                   : "=l"(out[0]), "=l"(out[1])
                   : "r"(addr));
    }
  }

  /// k's slot, claimed if new; -1 when claiming it makes more than max_groups groups. Capped: no
  /// claim once max_groups + Slack groups are counted (PGB, Slack 0: a full table; tier 1,
  /// Slack 1: once a claim failed, so that a key another thread is claiming as the last group
  /// is still found by its CAS).
  /// The slots form buckets of `group` (one 16-byte shared load). A key's probe order is its home
  /// slot, the rest of its home bucket (wrapping around within it), then whole buckets: most keys
  /// sit in their home slot (one 4- or 8-byte load), and nearly all others in the home bucket,
  /// so a lane that misses its home costs its warp one bucket load, not a walk into the next
  /// bucket (spread int32 keys, g = 2^10 in 2^14 slots: 4.7% of keys off their home slot, and
  /// with plain linear probing the warps ran at half their lanes). Slots are never emptied and
  /// every key claims the first empty slot of its order, so the slots before a key's own are
  /// occupied: matching a bucket's other slots finds nothing false.
  template <bool Capped = false, int Slack = 0>
  __device__ int insert(K key) const {
    auto const k = static_cast<bits_type>(key_bits(key));
    if (k == empty) { return slots; }
    int const home = static_cast<int>(static_cast<std::uint32_t>(murmur_hash{}(key)) &
                                      static_cast<std::uint32_t>(slots - 1));
    if (*reinterpret_cast<bits_type volatile*>(keys + home) == k) { return home; }
    int g = home & ~(group - 1);
    int from = home & (group - 1);
    for (int step = 0; step < slots / group; ++step) {
      bits_type cur[group];
      load_group(g, cur);
#pragma unroll
      for (int i = 0; i < group; ++i) {
        if (cur[i] == k) { return g + i; }
      }
      // Claims in the key's order: slots from..group-1 of the bucket, then 0..from-1 (slot i's
      // key picked by selects: a loop of 2 * group predicated claims cost the partition
      // group-by 5-20%).
#pragma unroll
      for (int t = 0; t < group; ++t) {
        int const i = (from + t) & (group - 1);
        bits_type slot_key = cur[0];
#pragma unroll
        for (int q = 1; q < group; ++q) { slot_key = i == q ? cur[q] : slot_key; }
        if (slot_key != empty) { continue; }
        // Capped: a full table claims no more slots, they stay empty, so that probes for the
        // keys it holds stop early (PGB goes on past a full table with every new key; tier 1's
        // rows in flight after an overflow).
        if (Capped && *static_cast<int volatile*>(groups) >= max_groups + Slack) { return -1; }
        bits_type const old = atomicCAS(keys + g + i, empty, k);
        if (old == empty) { return atomicAdd(groups, 1) < max_groups ? g + i : -1; }
        if (old == k) { return g + i; }
      }
      from = 0;
      g = (g + group) & (slots - 1);
    }
    return -1;
  }

  /// k's slot when k sits in its home slot (or is the marker key), else -1: insert's first
  /// probe alone, so that a caller with several keys a thread can take the rest of the probes
  /// of its misses together (one divergent walk a warp, not one per key).
  __device__ __forceinline__ int find_home(K key) const {
    auto const k = static_cast<bits_type>(key_bits(key));
    if (k == empty) { return slots; }
    int const home = static_cast<int>(static_cast<std::uint32_t>(murmur_hash{}(key)) &
                                      static_cast<std::uint32_t>(slots - 1));
    return *reinterpret_cast<bits_type volatile*>(keys + home) == k ? home : -1;
  }

  /// k's slot when k sits in its home bucket (or is the marker key), else -1: one 16-byte
  /// load, no claim; the second step of a caller that took find_home's answers first.
  __device__ __forceinline__ int find_in_bucket(K key) const {
    auto const k = static_cast<bits_type>(key_bits(key));
    if (k == empty) { return slots; }
    int const bucket = static_cast<int>(static_cast<std::uint32_t>(murmur_hash{}(key)) &
                                        static_cast<std::uint32_t>(slots - group));
    bits_type cur[group];
    load_group(bucket, cur);
    int found = -1;
#pragma unroll
    for (int i = 0; i < group; ++i) { found = cur[i] == k ? bucket + i : found; }
    return found;
  }

  /// The reset, merge and read-out of slot i (i <= slots: slot `slots` holds the marker key).
  __device__ void clear(int i) const { keys[i] = empty; }
  __device__ bool occupied(int i, int has_marker) const {
    return i < slots ? keys[i] != empty : has_marker != 0;
  }
  __device__ K key_at(int i) const { return static_cast<K>(i < slots ? keys[i] : empty); }
};

}  // namespace joinery::detail::gpu::gb
